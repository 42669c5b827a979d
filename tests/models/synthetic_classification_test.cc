#include "models/synthetic_classification.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace ringside {
namespace {

constexpr int64_t kDim = 8;
constexpr int64_t kTrain = 100;

std::unique_ptr<SyntheticClassification> MustCreate(uint64_t seed) {
  SyntheticClassificationOptions o;
  o.feature_dim = kDim;
  o.num_classes = 5;
  o.train_examples = kTrain;
  o.eval_examples = 40;
  o.seed = seed;
  auto data = SyntheticClassification::Create(o);
  EXPECT_TRUE(data.ok()) << data.status();
  return data.ok() ? *std::move(data) : nullptr;
}

Batch MustTrain(SyntheticClassification* d, int64_t begin, int64_t count) {
  Batch b;
  absl::Status s = d->TrainBatch(begin, count, &b);
  EXPECT_TRUE(s.ok()) << s;
  return b;
}

// Example i of a batch as (features, label), a key that identifies it.
using Row = std::pair<std::vector<float>, int32_t>;
Row RowOf(const Batch& b, int64_t i) {
  return {std::vector<float>(b.features.begin() + i * kDim,
                             b.features.begin() + (i + 1) * kDim),
          b.labels[i]};
}

// The definition TeacherLabels meets: argmax of the double score summed in
// j order, the first class on a tie.
std::vector<int32_t> ExactLabels(const std::vector<float>& teacher, int64_t dim,
                                 int64_t classes, const std::vector<float>& x) {
  const int64_t count = static_cast<int64_t>(x.size()) / dim;
  std::vector<int32_t> labels(count);
  for (int64_t i = 0; i < count; ++i) {
    double best_score = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c) {
      double score = 0;
      for (int64_t j = 0; j < dim; ++j) {
        score += double{teacher[c * dim + j]} * x[i * dim + j];
      }
      if (score > best_score) {
        best_score = score;
        labels[i] = static_cast<int32_t>(c);
      }
    }
  }
  return labels;
}

std::vector<float> Gaussian(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = normal(rng);
  return v;
}

TEST(SyntheticClassificationTest, TeacherLabelsAreTheExactArgmax) {
  // Several blocks of rows (the last one ragged), many classes.
  const int64_t dim = 300, classes = 200, count = 600;
  const std::vector<float> teacher = Gaussian(classes * dim, 1);
  const std::vector<float> x = Gaussian(count * dim, 2);
  EXPECT_EQ(TeacherLabels(teacher, dim, classes, x.data(), count),
            ExactLabels(teacher, dim, classes, x));
}

TEST(SyntheticClassificationTest, TeacherLabelsBreakTiesAndNearTiesExactly) {
  const int64_t dim = 64, classes = 12, count = 400;
  std::vector<float> teacher = Gaussian(classes * dim, 3);
  // Class 9 equals class 4 (an exact tie: 4 wins), and class 7 is class 2
  // with its weights nudged by one ulp (a near tie float scores cannot
  // settle).
  std::copy_n(teacher.begin() + 4 * dim, dim, teacher.begin() + 9 * dim);
  for (int64_t j = 0; j < dim; ++j) {
    teacher[7 * dim + j] =
        std::nextafter(teacher[2 * dim + j], j % 2 == 0 ? 10.0f : -10.0f);
  }
  const std::vector<float> x = Gaussian(count * dim, 4);
  const std::vector<int32_t> labels =
      TeacherLabels(teacher, dim, classes, x.data(), count);
  EXPECT_EQ(labels, ExactLabels(teacher, dim, classes, x));
  EXPECT_EQ(std::count(labels.begin(), labels.end(), 9), 0);  // 4 wins
  EXPECT_GT(std::count(labels.begin(), labels.end(), 4), 0);
}

TEST(SyntheticClassificationTest, SameSeedSameBatches) {
  auto a = MustCreate(7), b = MustCreate(7), c = MustCreate(8);
  ASSERT_TRUE(a && b && c);
  Batch ba = MustTrain(a.get(), 37, 150);  // crosses an epoch boundary
  Batch bb = MustTrain(b.get(), 37, 150);
  EXPECT_EQ(ba.size, 150);
  EXPECT_EQ(ba.features.size(), 150u * kDim);
  EXPECT_EQ(ba.features, bb.features);
  EXPECT_EQ(ba.labels, bb.labels);
  EXPECT_NE(ba.features, MustTrain(c.get(), 37, 150).features);
  Batch ea, eb;
  ASSERT_TRUE(a->EvalBatch(&ea).ok());
  ASSERT_TRUE(b->EvalBatch(&eb).ok());
  EXPECT_EQ(ea.size, 40);
  EXPECT_EQ(ea.features.size(), 40u * kDim);
  EXPECT_EQ(ea.features, eb.features);
  EXPECT_EQ(ea.labels, eb.labels);
}

TEST(SyntheticClassificationTest, EachEpochIsAPermutationOfTheTrainingSet) {
  auto d = MustCreate(1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->train_size(), kTrain);
  std::map<Row, int> epoch0, epoch1;
  const Batch b0 = MustTrain(d.get(), 0, kTrain);
  const Batch b1 = MustTrain(d.get(), kTrain, kTrain);
  for (int64_t i = 0; i < kTrain; ++i) {
    ++epoch0[RowOf(b0, i)];
    ++epoch1[RowOf(b1, i)];
  }
  EXPECT_EQ(epoch0.size(), static_cast<size_t>(kTrain))
      << "an example repeats within epoch 0";
  EXPECT_EQ(epoch0, epoch1) << "epochs 0 and 1 hold different examples";
  // Held-out examples are not training examples.
  Batch eval;
  ASSERT_TRUE(d->EvalBatch(&eval).ok());
  for (int64_t i = 0; i < eval.size; ++i) {
    EXPECT_EQ(epoch0.count(RowOf(eval, i)), 0u) << "eval example " << i;
  }
  // Labels in range, and every class occurs.
  std::set<int32_t> classes(b0.labels.begin(), b0.labels.end());
  EXPECT_EQ(classes, (std::set<int32_t>{0, 1, 2, 3, 4}));
}

TEST(SyntheticClassificationTest, DifferentEpochsGiveDifferentOrders) {
  auto d = MustCreate(1);
  ASSERT_NE(d, nullptr);
  const Batch e0 = MustTrain(d.get(), 0, kTrain);
  const Batch e1 = MustTrain(d.get(), kTrain, kTrain);
  const Batch e2 = MustTrain(d.get(), 2 * kTrain, kTrain);
  EXPECT_NE(e0.features, e1.features);
  EXPECT_NE(e1.features, e2.features);
  EXPECT_NE(e0.features, e2.features);
  // Going back to an earlier epoch reproduces it (the cache is not state).
  EXPECT_EQ(MustTrain(d.get(), 0, kTrain).features, e0.features);
}

// Appends b's rows to *out.
void Append(const Batch& b, Batch* out) {
  out->features.insert(out->features.end(), b.features.begin(),
                       b.features.end());
  out->labels.insert(out->labels.end(), b.labels.begin(), b.labels.end());
}

TEST(SyntheticClassificationTest, BatchesSliceTheOneOrder) {
  auto d = MustCreate(2);
  ASSERT_NE(d, nullptr);
  const Batch whole = MustTrain(d.get(), 90, 30);  // epochs 0 and 1
  // Worker-style slices of [90, 120), one of them across the epoch end.
  const std::vector<int64_t> cuts = {90, 97, 100, 111, 120};
  Batch pieces;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    Append(MustTrain(d.get(), cuts[k], cuts[k + 1] - cuts[k]), &pieces);
  }
  EXPECT_EQ(whole.features, pieces.features);
  EXPECT_EQ(whole.labels, pieces.labels);
}

// A batch large enough to be gathered on several threads where there are
// cores (2.4 MiB of features: CopyThreads gives 2, across an epoch's end)
// holds the rows one-example batches (gathered on one thread) hold.
TEST(SyntheticClassificationTest, LargeBatchesGatherTheSameRows) {
  SyntheticClassificationOptions o;
  o.feature_dim = 784;
  o.num_classes = 10;
  o.train_examples = 600;
  o.eval_examples = 8;
  auto d = SyntheticClassification::Create(o);
  ASSERT_TRUE(d.ok()) << d.status();
  const Batch whole = MustTrain(d->get(), 400, 800);
  Batch rows;
  for (int64_t g = 400; g < 1200; ++g) Append(MustTrain(d->get(), g, 1), &rows);
  EXPECT_EQ(whole.features, rows.features);
  EXPECT_EQ(whole.labels, rows.labels);
}

TEST(SyntheticClassificationTest, BadArgumentsAreInvalidArgument) {
  auto d = MustCreate(1);
  ASSERT_NE(d, nullptr);
  Batch b;
  EXPECT_EQ(d->TrainBatch(-1, 4, &b).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d->TrainBatch(0, 0, &b).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d->TrainBatch(0, -3, &b).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d->TrainBatch(0, 4, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  SyntheticClassificationOptions o;
  o.num_classes = 1;
  EXPECT_EQ(SyntheticClassification::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = SyntheticClassificationOptions();
  o.feature_dim = 0;
  EXPECT_EQ(SyntheticClassification::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = SyntheticClassificationOptions();
  o.train_examples = 0;
  EXPECT_EQ(SyntheticClassification::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = SyntheticClassificationOptions();
  o.eval_examples = -1;
  EXPECT_EQ(SyntheticClassification::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside
