// CharDataset: a character-level language-model data set for CharLm.
//
// The text is a file's bytes (--text=PATH) or, with no path, a built-in
// seeded synthetic text (SyntheticText). The vocabulary is the sorted set
// of distinct bytes of the whole text (so the same text always gives the
// same ids). The first (1 - val_fraction) of the text is the training
// split, the rest the validation split.
//
// An example is a window of block_size + 1 consecutive characters (inputs
// are the first block_size, targets the last block_size). The training set
// is every window that starts in the training split and fits in it
// (train_chars - block_size of them); the training order is an infinite
// sequence whose epoch e is a permutation of those start offsets seeded by
// (seed, e), so the equivalence oracle's slicing holds: global batch t is
// examples [t*N*b, (t+1)*N*b). The evaluation set is min(eval_examples,
// available) windows of the validation split at evenly spaced offsets,
// non-overlapping when the split is long enough.
//
// Thread-compatible (caches the current epoch's permutation).
#ifndef RINGSIDE_MODELS_TRANSFORMER_CHAR_DATASET_H_
#define RINGSIDE_MODELS_TRANSFORMER_CHAR_DATASET_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/dataset.h"

namespace ringside {

// Sorted distinct bytes of a text and the id of each. Immutable, copyable.
class CharVocab {
 public:
  // INVALID_ARGUMENT for an empty text.
  static absl::StatusOr<CharVocab> FromText(absl::string_view text);

  int size() const { return static_cast<int>(chars_.size()); }
  // The vocabulary's characters, in id order.
  const std::string& chars() const { return chars_; }
  // Id of `c`, or -1 when it is not in the vocabulary.
  int Id(char c) const { return ids_[static_cast<unsigned char>(c)]; }
  // Character of id (0 <= id < size(); unchecked).
  char Char(int id) const { return chars_[id]; }
  // Ids of every character of `text`; INVALID_ARGUMENT naming the first one
  // not in the vocabulary.
  absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text) const;
  std::string Decode(const std::vector<int32_t>& ids) const;

 private:
  std::string chars_;
  std::array<int, 256> ids_{};
};

struct CharDatasetOptions {
  // Text file (read as bytes). Empty: SyntheticText(seed, synthetic_chars).
  std::string text_path;
  // Context length of the model; an example has block_size + 1 chars. >= 1.
  int64_t block_size = 32;
  // Fraction of the text (its end) held out for the evaluation loss; in
  // (0, 1).
  double val_fraction = 0.1;
  // Most evaluation windows; > 0.
  int64_t eval_examples = 1024;
  // Length of the synthetic text in chars (no text_path); > 0.
  int64_t synthetic_chars = 200000;
  // Seed of the training order and of the synthetic text.
  uint64_t seed = 1;
};

class CharDataset : public Dataset {
 public:
  // Errors: NOT_FOUND for a missing file, UNAVAILABLE for an unreadable
  // one, INVALID_ARGUMENT for bad options or a text whose training or
  // validation split is shorter than block_size + 1 chars (the message
  // says how long each is and how much is needed).
  static absl::StatusOr<std::unique_ptr<CharDataset>> Create(
      const CharDatasetOptions& options);

  // The text Create would use (file contents or the synthetic text), and
  // its vocabulary: what the sampler needs to map ids back to characters.
  static absl::StatusOr<std::string> LoadText(
      const CharDatasetOptions& options);

  const CharVocab& vocab() const { return vocab_; }
  int64_t train_chars() const { return split_; }
  int64_t val_chars() const {
    return static_cast<int64_t>(ids_.size()) - split_;
  }
  int64_t eval_examples() const {
    return static_cast<int64_t>(eval_offsets_.size());
  }

  int64_t train_size() const override { return split_ - options_.block_size; }
  // Rows of block_size + 1 ids in out->tokens (features/labels cleared).
  absl::Status TrainBatch(int64_t begin, int64_t count, Batch* out) override;
  absl::Status EvalBatch(Batch* out) override;

 private:
  CharDataset(const CharDatasetOptions& options, CharVocab vocab,
              std::vector<uint8_t> ids, int64_t split);
  const std::vector<int64_t>& EpochOrder(int64_t epoch);
  void CopyWindow(int64_t offset, int32_t* out) const;

  CharDatasetOptions options_;
  CharVocab vocab_;
  std::vector<uint8_t> ids_;  // the whole text as ids
  int64_t split_;             // first validation char
  std::vector<int64_t> eval_offsets_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> order_;
};

// A seeded, learnable stand-in text of `chars` characters: sentences of
// pseudo-words (lowercase letters) drawn from a small lexicon with a
// seeded word-to-word transition table, capitalized, ending in '.', some
// followed by a newline. Same seed => same text.
std::string SyntheticText(uint64_t seed, int64_t chars);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_TRANSFORMER_CHAR_DATASET_H_
