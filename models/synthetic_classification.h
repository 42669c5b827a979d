// SyntheticClassification: a seeded classification data set. A fixed random
// "teacher" (a random linear map followed by argmax, plus label noise) labels
// Gaussian feature vectors, so an MLP can learn it and eval loss falls.
// Training order: epoch e is a permutation of the training set seeded by
// (seed, e). Thread-compatible (caches the current epoch's permutation).
#ifndef RINGSIDE_MODELS_SYNTHETIC_CLASSIFICATION_H_
#define RINGSIDE_MODELS_SYNTHETIC_CLASSIFICATION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "models/dataset.h"

namespace ringside {

struct SyntheticClassificationOptions {
  int64_t feature_dim = 64;        // > 0
  int64_t num_classes = 10;        // >= 2
  int64_t train_examples = 16384;  // > 0
  int64_t eval_examples = 1024;    // > 0
  uint64_t seed = 1;
};

// The labels a teacher (`classes` rows of `dim` weights, row-major) gives
// `count` feature rows of `x` (row-major): for each row the class c of the
// largest score Σ_j w_cj·x_j, summed in double in j order, the first class
// on a tie. The same labels on every machine, computed with one matrix
// product per block of rows.
std::vector<int32_t> TeacherLabels(const std::vector<float>& teacher,
                                   int64_t dim, int64_t classes,
                                   const float* x, int64_t count);

class SyntheticClassification : public Dataset {
 public:
  static absl::StatusOr<std::unique_ptr<SyntheticClassification>> Create(
      const SyntheticClassificationOptions& options);

  int64_t train_size() const override { return options_.train_examples; }
  absl::Status TrainBatch(int64_t begin, int64_t count, Batch* out) override;
  absl::Status EvalBatch(Batch* out) override;

 private:
  explicit SyntheticClassification(const SyntheticClassificationOptions& o);
  void Generate();
  const std::vector<int64_t>& EpochOrder(int64_t epoch);

  SyntheticClassificationOptions options_;
  std::vector<float> train_x_, eval_x_;
  std::vector<int32_t> train_y_, eval_y_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> order_;
  std::vector<int64_t> examples_;  // TrainBatch's, reused
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_SYNTHETIC_CLASSIFICATION_H_
