#include "models/transformer/char_dataset.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

// SplitMix64 finalizer: decorrelates nearby (seed, stream, index) tuples.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

enum Stream : uint64_t { kText = 1, kOrder = 2 };

uint64_t StreamSeed(uint64_t seed, uint64_t stream, uint64_t index = 0) {
  return Mix(Mix(Mix(seed) ^ stream) ^ index);
}

// "a" for printable characters, "\x0a" style otherwise.
std::string Printable(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  return absl::StrFormat("\\x%02x", u);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("text file '", path, "' is a directory"));
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    const std::string message = absl::StrCat("cannot open text file '", path,
                                             "': ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  std::string text;
  char buf[1 << 16];
  size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, got);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) {
    return absl::UnavailableError(
        absl::StrCat("cannot read text file '", path, "'"));
  }
  return text;
}

}  // namespace

absl::StatusOr<CharVocab> CharVocab::FromText(absl::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("vocabulary of an empty text");
  }
  std::array<bool, 256> seen{};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  CharVocab vocab;
  vocab.ids_.fill(-1);
  for (int b = 0; b < 256; ++b) {
    if (!seen[b]) continue;
    vocab.ids_[b] = static_cast<int>(vocab.chars_.size());
    vocab.chars_.push_back(static_cast<char>(b));
  }
  return vocab;
}

absl::StatusOr<std::vector<int32_t>> CharVocab::Encode(
    absl::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int id = Id(text[i]);
    if (id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("character '", Printable(text[i]), "' (position ", i,
                       ") is not in the vocabulary of the text"));
    }
    ids.push_back(id);
  }
  return ids;
}

std::string CharVocab::Decode(const std::vector<int32_t>& ids) const {
  std::string text;
  text.reserve(ids.size());
  for (int32_t id : ids) text.push_back(chars_[id]);
  return text;
}

std::string SyntheticText(uint64_t seed, int64_t chars) {
  constexpr int kWords = 64;
  constexpr int kSuccessors = 4;
  static constexpr char kConsonants[] = "bcdfghjklmnprstvwz";
  static constexpr char kVowels[] = "aeiou";
  std::mt19937_64 rng(StreamSeed(seed, kText));
  std::uniform_int_distribution<int> length(2, 7);
  std::uniform_int_distribution<int> consonant(0, sizeof(kConsonants) - 2);
  std::uniform_int_distribution<int> vowel(0, sizeof(kVowels) - 2);
  std::uniform_int_distribution<int> word(0, kWords - 1);
  std::uniform_int_distribution<int> sentence_words(3, 9);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  // Pronounceable words: consonants and vowels alternate.
  std::vector<std::string> lexicon(kWords);
  for (std::string& w : lexicon) {
    const int n = length(rng);
    bool use_vowel = coin(rng) < 0.3;
    for (int i = 0; i < n; ++i, use_vowel = !use_vowel) {
      w.push_back(use_vowel ? kVowels[vowel(rng)]
                            : kConsonants[consonant(rng)]);
    }
  }
  // Each word's likely successors, taken with probabilities .5 .3 .15 .05.
  std::vector<std::array<int, kSuccessors>> next(kWords);
  for (auto& s : next) {
    for (int& w : s) w = word(rng);
  }
  constexpr double kCumulative[kSuccessors] = {0.5, 0.8, 0.95, 1.0};
  std::string text;
  text.reserve(static_cast<size_t>(chars) + 64);
  while (static_cast<int64_t>(text.size()) < chars) {
    const int n = sentence_words(rng);
    int w = word(rng);
    for (int i = 0; i < n; ++i) {
      if (i > 0) {
        text.push_back(' ');
        if (coin(rng) < 0.9) {
          const double u = coin(rng);
          int k = 0;
          while (k + 1 < kSuccessors && u >= kCumulative[k]) ++k;
          w = next[w][k];
        } else {
          w = word(rng);
        }
      }
      std::string token = lexicon[w];
      if (i == 0) token[0] = static_cast<char>(token[0] - 'a' + 'A');
      text += token;
    }
    text.push_back('.');
    text.push_back(coin(rng) < 0.25 ? '\n' : ' ');
  }
  text.resize(static_cast<size_t>(chars));
  return text;
}

absl::StatusOr<std::string> CharDataset::LoadText(
    const CharDatasetOptions& options) {
  if (!options.text_path.empty()) return ReadFile(options.text_path);
  if (options.synthetic_chars <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic_chars must be > 0, got ", options.synthetic_chars));
  }
  return SyntheticText(options.seed, options.synthetic_chars);
}

absl::StatusOr<std::unique_ptr<CharDataset>> CharDataset::Create(
    const CharDatasetOptions& options) {
  if (options.block_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "char dataset block_size must be >= 1, got ", options.block_size));
  }
  if (!(options.val_fraction > 0.0 && options.val_fraction < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("char dataset val_fraction must be in (0, 1), got ",
                     options.val_fraction));
  }
  if (options.eval_examples <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "char dataset eval_examples must be > 0, got ", options.eval_examples));
  }
  RS_ASSIGN_OR_RETURN(std::string text, LoadText(options));
  const std::string source =
      options.text_path.empty()
          ? std::string("the synthetic text")
          : absl::StrCat("text '", options.text_path, "'");
  if (text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, " is empty"));
  }
  const int64_t total = static_cast<int64_t>(text.size());
  const int64_t split = static_cast<int64_t>(static_cast<double>(total) *
                                             (1.0 - options.val_fraction));
  const int64_t need = options.block_size + 1;
  if (split < need || total - split < need) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, " has ", total, " chars: its training split has ", split,
        " and its validation split (val_fraction ", options.val_fraction, ") ",
        total - split, ", each needs at least block_size + 1 = ", need,
        " (a longer text or a smaller --block_size)"));
  }
  RS_ASSIGN_OR_RETURN(CharVocab vocab, CharVocab::FromText(text));
  std::vector<uint8_t> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    ids[i] = static_cast<uint8_t>(vocab.Id(text[i]));
  }
  return std::unique_ptr<CharDataset>(
      new CharDataset(options, std::move(vocab), std::move(ids), split));
}

CharDataset::CharDataset(const CharDatasetOptions& options, CharVocab vocab,
                         std::vector<uint8_t> ids, int64_t split)
    : options_(options),
      vocab_(std::move(vocab)),
      ids_(std::move(ids)),
      split_(split) {
  // Evenly spaced windows over the validation split, first and last
  // included.
  const int64_t last = val_chars() - (options_.block_size + 1);
  const int64_t count = std::min(options_.eval_examples, last + 1);
  eval_offsets_.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t step =
        count > 1 ? static_cast<int64_t>(static_cast<double>(i) *
                                         static_cast<double>(last) /
                                         static_cast<double>(count - 1))
                  : 0;
    eval_offsets_[i] = split_ + step;
  }
}

const std::vector<int64_t>& CharDataset::EpochOrder(int64_t epoch) {
  if (epoch != cached_epoch_) {
    order_.resize(train_size());
    std::iota(order_.begin(), order_.end(), int64_t{0});
    std::mt19937_64 rng(
        StreamSeed(options_.seed, kOrder, static_cast<uint64_t>(epoch)));
    std::shuffle(order_.begin(), order_.end(), rng);
    cached_epoch_ = epoch;
  }
  return order_;
}

void CharDataset::CopyWindow(int64_t offset, int32_t* out) const {
  for (int64_t j = 0; j <= options_.block_size; ++j) out[j] = ids_[offset + j];
}

absl::Status CharDataset::TrainBatch(int64_t begin, int64_t count, Batch* out) {
  if (out == nullptr) {
    return absl::InvalidArgumentError("TrainBatch: out is null");
  }
  if (begin < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TrainBatch: begin must be >= 0, got ", begin));
  }
  if (count <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TrainBatch: count must be > 0, got ", count));
  }
  if (count > std::numeric_limits<int64_t>::max() - begin) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TrainBatch: begin ", begin, " + count ", count, " overflows"));
  }
  const int64_t n = train_size();
  const int64_t row = options_.block_size + 1;
  out->size = count;
  out->features.clear();
  out->labels.clear();
  out->tokens.resize(count * row);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t g = begin + i;
    CopyWindow(EpochOrder(g / n)[g % n], out->tokens.data() + i * row);
  }
  return absl::OkStatus();
}

absl::Status CharDataset::EvalBatch(Batch* out) {
  if (out == nullptr) {
    return absl::InvalidArgumentError("EvalBatch: out is null");
  }
  const int64_t row = options_.block_size + 1;
  out->size = eval_examples();
  out->features.clear();
  out->labels.clear();
  out->tokens.resize(eval_examples() * row);
  for (int64_t i = 0; i < eval_examples(); ++i) {
    CopyWindow(eval_offsets_[i], out->tokens.data() + i * row);
  }
  return absl::OkStatus();
}

}  // namespace ringside
