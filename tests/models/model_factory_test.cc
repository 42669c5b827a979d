#include "models/model_factory.h"

#include <vector>

#include "gtest/gtest.h"
#include "models/precision.h"

namespace ringside {
namespace {

TEST(ModelFactoryTest, BuildsMlpWithMatchingData) {
  ModelOptions o;
  o.mlp_widths = {12, 16, 3};
  o.train_examples = 64;
  o.eval_examples = 16;
  auto bundle = MakeModel(o);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->model->name(), "mlp");
  EXPECT_EQ(bundle->dataset->train_size(), 64);
  std::vector<float> params(bundle->model->layout().total_elements());
  bundle->model->InitParams(1, absl::MakeSpan(params));
  Batch eval;
  ASSERT_TRUE(bundle->dataset->EvalBatch(&eval).ok());
  EXPECT_EQ(eval.size, 16);
  auto loss = bundle->model->Evaluate(eval, params);
  EXPECT_TRUE(loss.ok()) << loss.status();
}

TEST(ModelFactoryTest, BuildsSyntheticProfileWithOneFeatureData) {
  ModelOptions o;
  o.name = "synthetic";
  o.profile = "bert-base";
  o.emulated_compute_ms = 2.5;
  o.train_examples = 64;
  o.eval_examples = 16;
  auto bundle = MakeModel(o);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->model->name(), "synthetic:bert-base");
  EXPECT_TRUE(bundle->model->emulated());
  EXPECT_EQ(bundle->model->layout().num_tensors(), 199);
  EXPECT_EQ(bundle->model->layout().total_elements(), 109482240);
  EXPECT_EQ(bundle->dataset->train_size(), 64);
  Batch batch;
  ASSERT_TRUE(bundle->dataset->TrainBatch(0, 4, &batch).ok());
  EXPECT_EQ(batch.features.size(), 4u);
}

TEST(ModelFactoryTest, SyntheticDefaultsToResNet50AndMlpIsNotEmulated) {
  ModelOptions o;
  o.name = "synthetic";
  auto bundle = MakeModel(o);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->model->name(), "synthetic:resnet50");
  EXPECT_EQ(bundle->model->layout().total_elements(), 25557032);
  o.name = "mlp";
  o.mlp_widths = {4, 2};
  bundle = MakeModel(o);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_FALSE(bundle->model->emulated());
}

TEST(ModelFactoryTest, BadSyntheticOptionsAreInvalidArgument) {
  ModelOptions o;
  o.name = "synthetic";
  o.profile = "alexnet";
  absl::Status s = MakeModel(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("resnet50, vgg16, bert-base, gpt2"),
            std::string::npos)
      << s;
  o.profile = "gpt2";
  o.emulated_compute_ms = -1;
  EXPECT_EQ(MakeModel(o).status().code(), absl::StatusCode::kInvalidArgument);
}

// --emulation_scale shrinks the synthetic model's tensors and is refused
// for a real model, naming it.
TEST(ModelFactoryTest, EmulationScaleOnlyForTheSyntheticModel) {
  ModelOptions o;
  o.name = "synthetic";
  o.profile = "tensors:6400,640";
  o.emulation_scale = 64;
  absl::StatusOr<ModelBundle> b = MakeModel(o);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->model->layout().total_elements(), 100 + 10);
  o.name = "mlp";
  absl::StatusOr<ModelBundle> mlp = MakeModel(o);
  EXPECT_EQ(mlp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mlp.status().message().find("--emulation_scale=64 needs "
                                        "--model=synthetic"),
            std::string::npos)
      << mlp.status();
}

TEST(ModelFactoryTest, UnknownNameListsKnownOnes) {
  ModelOptions o;
  o.name = "resnet";
  absl::Status s = MakeModel(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "unknown model 'resnet' (known: mlp, synthetic, charlm)");
  EXPECT_EQ(ModelNames(), "mlp, synthetic, charlm");
}

TEST(ModelFactoryTest, CharLmOnItsTextsVocabulary) {
  ModelOptions o;
  o.name = "charlm";
  o.charlm.n_layer = 1;
  o.charlm.n_head = 2;
  o.charlm.n_embd = 8;
  o.charlm.block_size = 16;
  o.charlm.synthetic_chars = 5000;
  o.eval_examples = 10;
  absl::StatusOr<ModelBundle> b = MakeModel(o);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->model->name(), "charlm");
  Batch batch;
  ASSERT_TRUE(b->dataset->TrainBatch(0, 3, &batch).ok());
  EXPECT_EQ(batch.tokens.size(), 3u * 17);
  std::vector<float> params(b->model->layout().total_elements());
  std::vector<float> grads(params.size());
  b->model->InitParams(1, absl::MakeSpan(params));
  EXPECT_TRUE(
      b->model->ForwardBackward(batch, params, absl::MakeSpan(grads), nullptr)
          .ok());
  ASSERT_TRUE(b->dataset->EvalBatch(&batch).ok());
  EXPECT_EQ(batch.size, 10);

  o.charlm.n_head = 3;  // does not divide 8
  absl::Status s = MakeModel(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("n_head"), std::string::npos) << s;
  o.charlm.n_head = 2;
  o.charlm.text_path = "/nonexistent/ringside/input.txt";
  EXPECT_EQ(MakeModel(o).status().code(), absl::StatusCode::kNotFound);
}

// --precision reaches the models with bf16 arithmetic (their products'
// operands rounded: the first gradient differs from float32's); the
// synthetic model has none and says so.
TEST(ModelFactoryTest, PrecisionReachesTheMlpAndCharLmOnly) {
  ModelOptions o;
  o.mlp_widths = {12, 16, 3};
  o.train_examples = 64;
  o.eval_examples = 16;
  o.charlm.n_layer = 1;
  o.charlm.n_head = 2;
  o.charlm.n_embd = 8;
  o.charlm.block_size = 8;
  o.charlm.synthetic_chars = 2000;
  for (const char* name : {"mlp", "charlm"}) {
    o.name = name;
    std::vector<float> grads[2];
    for (Precision precision : {Precision::kFp32, Precision::kBf16}) {
      o.precision = precision;
      absl::StatusOr<ModelBundle> b = MakeModel(o);
      ASSERT_TRUE(b.ok()) << b.status();
      std::vector<float> params(b->model->layout().total_elements());
      std::vector<float>& g = grads[precision == Precision::kBf16];
      g.resize(params.size());
      b->model->InitParams(1, absl::MakeSpan(params));
      Batch batch;
      ASSERT_TRUE(b->dataset->TrainBatch(0, 4, &batch).ok());
      ASSERT_TRUE(
          b->model->ForwardBackward(batch, params, absl::MakeSpan(g), nullptr)
              .ok());
    }
    EXPECT_NE(grads[0], grads[1]) << name;
  }
  o.name = "synthetic";
  o.precision = Precision::kBf16;
  absl::Status s = MakeModel(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--model=synthetic has no bf16 arithmetic"),
            std::string::npos)
      << s;
}

TEST(ModelFactoryTest, BadSizesAreInvalidArgument) {
  ModelOptions o;
  o.mlp_widths = {8};
  EXPECT_EQ(MakeModel(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.mlp_widths = {8, 1};  // one class
  EXPECT_EQ(MakeModel(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.mlp_widths = {8, 4};
  o.train_examples = 0;
  EXPECT_EQ(MakeModel(o).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside
