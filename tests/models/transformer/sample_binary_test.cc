// End to end: the worker trains a small charlm on the built-in synthetic text
// and saves its parameters; //experiments:sample continues a prompt from
// them. Checks the output (prompt first, the asked length, only characters
// of the text's vocabulary, same seed => same text) and the errors (no
// --params, a params file of another shape, a prompt character outside the
// vocabulary, --model other than charlm) with exit status 2 and a message.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "models/transformer/char_dataset.h"

namespace ringside {
namespace {

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir != nullptr ? srcdir : ".") + "/ringside/" + path;
}

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

Result RunCommand(const std::string& args) {
  const std::string out = TmpDir() + "/cmd.out";
  const std::string err = TmpDir() + "/cmd.err";
  const int status = std::system((args + " > " + out + " 2> " + err).c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// The model of every run: small and fast.
constexpr char kModelFlags[] =
    " --n_layer=1 --n_head=2 --n_embd=16 --block_size=16 --data_seed=5";

class SampleBinaryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    params_ = new std::string(TmpDir() + "/charlm.params");
    const Result train = RunCommand(
        Runfile("worker/worker") + " --model=charlm" + kModelFlags +
        " --steps=30 --warmup_steps=1 --batch_size=8 --optimizer=adam "
        "--lr=0.01 --eval_examples=16 --save_params=" +
        *params_);
    ASSERT_EQ(train.code, 0) << train.err;
    ASSERT_NE(train.out.find("\"eval_loss\""), std::string::npos);
  }
  static void TearDownTestSuite() { delete params_; }

  Result Sample(const std::string& flags) {
    return RunCommand(Runfile("experiments/sample") + kModelFlags +
                      " --params=" + *params_ + " " + flags);
  }

  static std::string* params_;
};

std::string* SampleBinaryTest::params_ = nullptr;

TEST_F(SampleBinaryTest, ContinuesThePromptWithVocabularyCharacters) {
  const Result r = Sample("--prompt=Ba --length=120 --seed=3");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.out.size(), 2u + 120u + 1u) << r.out;
  EXPECT_EQ(r.out.substr(0, 2), "Ba");
  EXPECT_EQ(r.out.back(), '\n');
  absl::StatusOr<CharVocab> vocab =
      CharVocab::FromText(SyntheticText(5, 200000));
  ASSERT_TRUE(vocab.ok());
  for (size_t i = 0; i + 1 < r.out.size(); ++i) {
    EXPECT_GE(vocab->Id(r.out[i]), 0) << "char " << i << " of " << r.out;
  }
  EXPECT_EQ(Sample("--prompt=Ba --length=120 --seed=3").out, r.out);
  EXPECT_NE(Sample("--prompt=Ba --length=120 --seed=4").out, r.out);
  // Greedy decoding ignores the seed; an empty prompt starts at a newline.
  const Result greedy = Sample("--length=40 --temperature=0 --seed=1");
  ASSERT_EQ(greedy.code, 0) << greedy.err;
  EXPECT_EQ(greedy.out[0], '\n');
  EXPECT_EQ(Sample("--length=40 --temperature=0 --seed=9").out, greedy.out);
}

TEST_F(SampleBinaryTest, BadFlagsSayWhat) {
  Result r = RunCommand(Runfile("experiments/sample") + kModelFlags);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--params"), std::string::npos) << r.err;

  r = RunCommand(Runfile("experiments/sample") +
                 " --n_layer=2 --n_head=2 --n_embd=16 --block_size=16 "
                 "--data_seed=5 --params=" +
                 *params_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("trained with"), std::string::npos) << r.err;

  r = Sample("--prompt=Q~ --length=5");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not in the vocabulary"), std::string::npos) << r.err;

  r = Sample("--model=mlp");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("charlm"), std::string::npos) << r.err;

  r = Sample("--text=/nonexistent/ringside.txt");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nonexistent/ringside.txt"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ringside
