// Dataset: a seeded, deterministic source of training and evaluation
// batches. The training order is an infinite sequence of examples, epoch e
// being a seeded permutation of the training set; the equivalence oracle
// relies on it: the global batch of step t is examples [t*N*b, (t+1)*N*b)
// of that order, and worker r takes slice r.
//
// Thread-compatible: const methods may be called concurrently only if the
// implementation says so; give each worker thread its own Dataset.
#ifndef RINGSIDE_MODELS_DATASET_H_
#define RINGSIDE_MODELS_DATASET_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace ringside {

// A batch of `size` examples. Models define how they read it:
// a classifier reads `features` (size x feature_dim, row-major) and
// `labels` (size); a language model reads `tokens` (size x (block+1)).
struct Batch {
  int64_t size = 0;
  std::vector<float> features;
  std::vector<int32_t> labels;
  std::vector<int32_t> tokens;
};

class Dataset {
 public:
  virtual ~Dataset() = default;

  // Number of distinct training examples (one epoch).
  virtual int64_t train_size() const = 0;

  // Fills `out` with examples [begin, begin + count) of the seeded infinite
  // training order. Blocking; deterministic for a given seed.
  virtual absl::Status TrainBatch(int64_t begin, int64_t count, Batch* out) = 0;

  // Fills `out` with the whole held-out evaluation set.
  virtual absl::Status EvalBatch(Batch* out) = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_DATASET_H_
