#include "models/model_factory.h"

#include "gtest/gtest.h"

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

TEST(ModelFactoryTest, UnknownNameListsKnownOnes) {
  ModelOptions o;
  o.name = "resnet";
  absl::Status s = MakeModel(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "unknown model 'resnet' (known: mlp)");
  EXPECT_EQ(ModelNames(), "mlp");
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
