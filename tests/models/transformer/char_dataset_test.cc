// CharDataset: vocabulary, the 90/10 split, windows and the seeded order
// the equivalence oracle relies on (any slicing of the order gives the same
// examples), the evaluation windows, the synthetic text, the errors, and
// tinyshakespeare from the project's shared folder when it is there.
#include "models/transformer/char_dataset.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace ringside {
namespace {

std::string TempFile(const std::string& name, const std::string& contents) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

// The shared folder's tinyshakespeare.txt: $RINGSIDE_SHARED_DATA, else
// ../shared/data next to the workspace this test's sources came from.
std::string ShakespearePath() {
  if (const char* dir = std::getenv("RINGSIDE_SHARED_DATA");
      dir != nullptr && *dir != '\0') {
    return std::string(dir) + "/tinyshakespeare.txt";
  }
  std::error_code ec;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "";
  // A runfile symlink leads back into the source tree.
  const std::filesystem::path source = std::filesystem::canonical(
      std::filesystem::path(srcdir) / workspace /
          "tests/models/transformer/char_dataset_test.cc",
      ec);
  if (ec) return "";
  return (source.parent_path()
              .parent_path()
              .parent_path()
              .parent_path()
              .parent_path() /
          "shared/data/tinyshakespeare.txt")
      .string();
}

std::vector<int32_t> Window(const CharDataset& data, const std::string& text,
                            int64_t offset, int64_t block) {
  std::vector<int32_t> w;
  for (int64_t j = 0; j <= block; ++j)
    w.push_back(data.vocab().Id(text[offset + j]));
  return w;
}

TEST(CharVocabTest, SortedDistinctBytes) {
  absl::StatusOr<CharVocab> v = CharVocab::FromText("hello, world\n");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->chars(), std::string("\n ,dehlorw"));
  EXPECT_EQ(v->size(), 10);
  EXPECT_EQ(v->Id('\n'), 0);
  EXPECT_EQ(v->Id('w'), 9);
  EXPECT_EQ(v->Id('z'), -1);
  absl::StatusOr<std::vector<int32_t>> ids = v->Encode("low");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(v->Decode(*ids), "low");
  absl::StatusOr<std::vector<int32_t>> bad = v->Encode("lz");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'z'"), std::string::npos);
  EXPECT_FALSE(CharVocab::FromText("").ok());
}

TEST(CharDatasetTest, SplitWindowsAndEval) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text.push_back("abcdefghij"[(i * 7) % 10]);
  CharDatasetOptions o;
  o.text_path = TempFile("split.txt", text);
  o.block_size = 8;
  o.eval_examples = 5;
  absl::StatusOr<std::unique_ptr<CharDataset>> data = CharDataset::Create(o);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ((*data)->vocab().size(), 10);
  EXPECT_EQ((*data)->train_chars(), 900);
  EXPECT_EQ((*data)->val_chars(), 100);
  EXPECT_EQ((*data)->train_size(), 900 - 8);

  Batch batch;
  ASSERT_TRUE((*data)->TrainBatch(0, 3 * (*data)->train_size(), &batch).ok());
  EXPECT_EQ(batch.size, 3 * (*data)->train_size());
  EXPECT_EQ(batch.tokens.size(), batch.size * 9);
  EXPECT_TRUE(batch.features.empty());
  EXPECT_TRUE(batch.labels.empty());
  // Every epoch is a permutation of the training windows, all inside the
  // training split; different epochs are ordered differently.
  const int64_t n = (*data)->train_size();
  std::vector<std::vector<int32_t>> expected;
  for (int64_t off = 0; off < n; ++off) {
    expected.push_back(Window(**data, text, off, 8));
  }
  std::multiset<std::vector<int32_t>> want(expected.begin(), expected.end());
  std::vector<std::vector<int32_t>> epochs[3];
  for (int e = 0; e < 3; ++e) {
    std::multiset<std::vector<int32_t>> got;
    for (int64_t i = 0; i < n; ++i) {
      auto begin = batch.tokens.begin() + (e * n + i) * 9;
      epochs[e].emplace_back(begin, begin + 9);
      got.insert(epochs[e].back());
    }
    EXPECT_EQ(got, want) << "epoch " << e;
  }
  EXPECT_NE(epochs[0], epochs[1]);

  Batch eval;
  ASSERT_TRUE((*data)->EvalBatch(&eval).ok());
  EXPECT_EQ(eval.size, 5);
  // Evenly spaced over the validation split, first and last window
  // included.
  EXPECT_EQ(std::vector<int32_t>(eval.tokens.begin(), eval.tokens.begin() + 9),
            Window(**data, text, 900, 8));
  EXPECT_EQ(std::vector<int32_t>(eval.tokens.end() - 9, eval.tokens.end()),
            Window(**data, text, 1000 - 9, 8));
}

// The oracle's contract: examples [t*N*b, (t+1)*N*b) of the order are the
// same however they are fetched (one call, per-worker slices, another
// instance with the same seed).
TEST(CharDatasetTest, OrderIsDeterministicAndSliceable) {
  CharDatasetOptions o;
  o.block_size = 16;
  o.synthetic_chars = 5000;
  o.seed = 3;
  auto a = CharDataset::Create(o);
  auto b = CharDataset::Create(o);
  ASSERT_TRUE(a.ok() && b.ok());
  const int64_t begin = (*a)->train_size() - 20;  // spans an epoch boundary
  Batch whole, part0, part1;
  ASSERT_TRUE((*a)->TrainBatch(begin, 40, &whole).ok());
  ASSERT_TRUE((*b)->TrainBatch(begin + 20, 20, &part1).ok());
  ASSERT_TRUE((*b)->TrainBatch(begin, 20, &part0).ok());
  std::vector<int32_t> joined = part0.tokens;
  joined.insert(joined.end(), part1.tokens.begin(), part1.tokens.end());
  EXPECT_EQ(joined, whole.tokens);

  o.seed = 4;
  auto c = CharDataset::Create(o);
  ASSERT_TRUE(c.ok());
  Batch other;
  ASSERT_TRUE((*c)->TrainBatch(begin, 40, &other).ok());
  EXPECT_NE(other.tokens, whole.tokens);
}

TEST(CharDatasetTest, SyntheticTextIsSeededAndWordy) {
  const std::string a = SyntheticText(1, 3000);
  EXPECT_EQ(a.size(), 3000u);
  EXPECT_EQ(a, SyntheticText(1, 3000));
  EXPECT_NE(a, SyntheticText(2, 3000));
  EXPECT_NE(a.find(". "), std::string::npos);
  EXPECT_NE(a.find('\n'), std::string::npos);
  absl::StatusOr<CharVocab> v = CharVocab::FromText(a);
  ASSERT_TRUE(v.ok());
  EXPECT_GT(v->size(), 20);
  EXPECT_LT(v->size(), 60);
}

TEST(CharDatasetTest, Errors) {
  CharDatasetOptions o;
  o.text_path = "/nonexistent/ringside/text.txt";
  absl::StatusOr<std::unique_ptr<CharDataset>> d = CharDataset::Create(o);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(d.status().message().find("/nonexistent/ringside/text.txt"),
            std::string::npos)
      << d.status();

  o.text_path = std::getenv("TEST_TMPDIR") != nullptr
                    ? std::getenv("TEST_TMPDIR")
                    : "/tmp";
  d = CharDataset::Create(o);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("directory"), std::string::npos);

  o.text_path = TempFile("empty.txt", "");
  d = CharDataset::Create(o);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("empty"), std::string::npos);

  // 100 chars: validation split 10 < block_size + 1 = 33.
  o.text_path = TempFile("short.txt", std::string(100, 'x'));
  o.block_size = 32;
  d = CharDataset::Create(o);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("block_size + 1 = 33"), std::string::npos)
      << d.status();
  o.block_size = 8;
  EXPECT_TRUE(CharDataset::Create(o).ok());

  o.val_fraction = 1.0;
  EXPECT_EQ(CharDataset::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o.val_fraction = 0.1;
  o.block_size = 0;
  EXPECT_EQ(CharDataset::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);

  o.block_size = 8;
  o.text_path = "";
  auto ok = CharDataset::Create(o);
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE((*ok)->TrainBatch(-1, 2, nullptr).ok());
  Batch b;
  EXPECT_FALSE((*ok)->TrainBatch(-1, 2, &b).ok());
  EXPECT_FALSE((*ok)->TrainBatch(0, 0, &b).ok());
}

TEST(CharDatasetTest, TinyShakespeareWhenPresent) {
  const std::string path = ShakespearePath();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) {
    GTEST_SKIP() << "no tinyshakespeare.txt (set RINGSIDE_SHARED_DATA to "
                    "the folder holding it)";
  }
  CharDatasetOptions o;
  o.text_path = path;
  o.block_size = 64;
  o.eval_examples = 100;
  auto d = CharDataset::Create(o);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->vocab().size(), 65);  // Karpathy's char-rnn vocabulary
  EXPECT_EQ((*d)->train_chars() + (*d)->val_chars(), 1115394);
  EXPECT_EQ((*d)->eval_examples(), 100);
  Batch b;
  ASSERT_TRUE((*d)->TrainBatch(0, 4, &b).ok());
  EXPECT_EQ(b.tokens.size(), 4u * 65);
}

}  // namespace
}  // namespace ringside
