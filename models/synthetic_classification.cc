#include "models/synthetic_classification.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/parallel_copy.h"

namespace ringside {
namespace {

// Fraction of examples whose label is replaced by a uniformly random class.
constexpr double kLabelNoise = 0.05;

// Independent random streams derived from the one seed.
enum Stream : uint64_t { kTeacher = 1, kTrain = 2, kEval = 3, kOrder = 4 };

// SplitMix64 finalizer: decorrelates nearby (seed, stream, index) tuples.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t StreamSeed(uint64_t seed, uint64_t stream, uint64_t index = 0) {
  return Mix(Mix(Mix(seed) ^ stream) ^ index);
}

// Draws `count` examples: Gaussian features, label = the teacher's
// (TeacherLabels) with kLabelNoise of them relabelled at random. The
// random draws come in one order per example (its features, the coin, the
// random class when the coin says so), so the data set depends on the seed
// alone.
void Sample(const std::vector<float>& teacher, int64_t dim, int64_t classes,
            int64_t count, uint64_t seed, std::vector<float>* x,
            std::vector<int32_t>* y) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::uniform_int_distribution<int32_t> random_class(
      0, static_cast<int32_t>(classes - 1));
  x->resize(count * dim);
  constexpr int32_t kTeacherLabel = -1;
  std::vector<int32_t> noisy(count, kTeacherLabel);
  for (int64_t i = 0; i < count; ++i) {
    float* row = x->data() + i * dim;
    for (int64_t j = 0; j < dim; ++j) row[j] = normal(rng);
    if (coin(rng) < kLabelNoise) noisy[i] = random_class(rng);
  }
  *y = TeacherLabels(teacher, dim, classes, x->data(), count);
  for (int64_t i = 0; i < count; ++i) {
    if (noisy[i] != kTeacherLabel) (*y)[i] = noisy[i];
  }
}

// The exact score that defines a label (TeacherLabels).
double ExactScore(const float* w, const float* row, int64_t dim) {
  double score = 0;
  for (int64_t j = 0; j < dim; ++j) score += double{w[j]} * row[j];
  return score;
}

}  // namespace

// Fast: the float scores of a block of rows come from one matrix product
// (Eigen; the blocks shared among up to 16 threads), and only the classes
// whose float score lies within its error bound of the best are scored
// exactly. A float dot product of length d errs from the exact one by at
// most γ_d·Σ_j|w_cj·x_j| ≤ γ_d·‖w_c‖·‖x‖ (γ_d = d·u/(1 − d·u), u = 2^-24,
// whatever the summation order: Higham, Accuracy and Stability, §3.1), so
// a class more than twice that below the best float score cannot win.
std::vector<int32_t> TeacherLabels(const std::vector<float>& teacher,
                                   int64_t dim, int64_t classes, const float* x,
                                   int64_t count) {
  using RowMatrix =
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const RowMatrix> w(teacher.data(), classes, dim);
  double max_w_norm = 0;
  for (int64_t c = 0; c < classes; ++c) {
    max_w_norm = std::max(max_w_norm, w.row(c).cast<double>().norm());
  }
  const double u = std::ldexp(1.0, -24);
  const double gamma = dim * u / (1.0 - dim * u);
  std::vector<int32_t> labels(count);
  if (count <= 0) return labels;
  constexpr int64_t kBlockRows = 256;  // scores: 256 × classes floats
  const int64_t blocks = (count + kBlockRows - 1) / kBlockRows;
  // Blocks t, t + T, ... on thread t: each row's label depends on that row
  // alone, so the labels are the same whatever T.
  auto label_blocks = [&](int64_t t, int64_t threads) {
    RowMatrix scores;
    std::vector<int64_t> candidates;
    for (int64_t k = t; k < blocks; k += threads) {
      const int64_t first = k * kBlockRows;
      const int64_t rows = std::min(kBlockRows, count - first);
      const Eigen::Map<const RowMatrix> block(x + first * dim, rows, dim);
      scores.noalias() = block * w.transpose();
      for (int64_t i = 0; i < rows; ++i) {
        const float* row = x + (first + i) * dim;
        const double x_norm = block.row(i).cast<double>().norm();
        // 2·bound, with room for the exact score's own (double) rounding.
        const double slack = 2.0 * gamma * max_w_norm * x_norm * 1.01 + 1e-30;
        const float best_float = scores.row(i).maxCoeff();
        candidates.clear();
        for (int64_t c = 0; c < classes; ++c) {
          if (double{scores(i, c)} >= double{best_float} - slack) {
            candidates.push_back(c);
          }
        }
        int32_t best = 0;
        double best_score = -std::numeric_limits<double>::infinity();
        for (int64_t c : candidates) {  // in class order: the first wins ties
          const double score = ExactScore(w.row(c).data(), row, dim);
          if (score > best_score) {
            best_score = score;
            best = static_cast<int32_t>(c);
          }
        }
        labels[first + i] = best;
      }
    }
  };
  const int64_t threads = std::clamp<int64_t>(
      std::thread::hardware_concurrency(), 1, std::min<int64_t>(blocks, 16));
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < threads; ++t) {
    workers.emplace_back(label_blocks, t, threads);
  }
  label_blocks(0, threads);
  for (std::thread& worker : workers) worker.join();
  return labels;
}

absl::StatusOr<std::unique_ptr<SyntheticClassification>>
SyntheticClassification::Create(const SyntheticClassificationOptions& options) {
  if (options.feature_dim <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic feature_dim must be > 0, got ", options.feature_dim));
  }
  if (options.num_classes < 2 ||
      options.num_classes > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic num_classes must be >= 2, got ", options.num_classes));
  }
  if (options.train_examples <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic train_examples must be > 0, got ", options.train_examples));
  }
  if (options.eval_examples <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic eval_examples must be > 0, got ", options.eval_examples));
  }
  auto data = std::unique_ptr<SyntheticClassification>(
      new SyntheticClassification(options));
  data->Generate();
  return data;
}

SyntheticClassification::SyntheticClassification(
    const SyntheticClassificationOptions& o)
    : options_(o) {}

void SyntheticClassification::Generate() {
  const int64_t dim = options_.feature_dim;
  const int64_t classes = options_.num_classes;
  std::vector<float> teacher(classes * dim);
  {
    std::mt19937_64 rng(StreamSeed(options_.seed, kTeacher));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& w : teacher) w = normal(rng);
  }
  Sample(teacher, dim, classes, options_.train_examples,
         StreamSeed(options_.seed, kTrain), &train_x_, &train_y_);
  Sample(teacher, dim, classes, options_.eval_examples,
         StreamSeed(options_.seed, kEval), &eval_x_, &eval_y_);
}

const std::vector<int64_t>& SyntheticClassification::EpochOrder(int64_t epoch) {
  if (epoch != cached_epoch_) {
    order_.resize(options_.train_examples);
    std::iota(order_.begin(), order_.end(), int64_t{0});
    std::mt19937_64 rng(
        StreamSeed(options_.seed, kOrder, static_cast<uint64_t>(epoch)));
    std::shuffle(order_.begin(), order_.end(), rng);
    cached_epoch_ = epoch;
  }
  return order_;
}

absl::Status SyntheticClassification::TrainBatch(int64_t begin, int64_t count,
                                                 Batch* out) {
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
  const int64_t n = options_.train_examples;
  const int64_t dim = options_.feature_dim;
  out->size = count;
  out->features.resize(count * dim);
  out->labels.resize(count);
  out->tokens.clear();
  // The examples first (EpochOrder caches one epoch), then their rows,
  // gathered on several threads when the batch is large (ParallelCopy's
  // rule): a GPU worker reads a batch of thousands of wide examples ahead
  // of every step.
  examples_.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t g = begin + i;
    examples_[i] = EpochOrder(g / n)[g % n];
    out->labels[i] = train_y_[examples_[i]];
  }
  const int threads = CopyThreads(count * dim * int64_t{sizeof(float)});
  const float* x = train_x_.data();
  float* features = out->features.data();
  const int64_t* examples = examples_.data();
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    std::copy_n(x + examples[i] * dim, dim, features + i * dim);
  }
  return absl::OkStatus();
}

absl::Status SyntheticClassification::EvalBatch(Batch* out) {
  if (out == nullptr) {
    return absl::InvalidArgumentError("EvalBatch: out is null");
  }
  out->size = options_.eval_examples;
  out->features = eval_x_;
  out->labels = eval_y_;
  out->tokens.clear();
  return absl::OkStatus();
}

}  // namespace ringside
