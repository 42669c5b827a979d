#include "core/tensor_layout.h"

#include <vector>

#include "gtest/gtest.h"

namespace ringside {
namespace {

TensorLayout MakeLayout() {
  auto layout = TensorLayout::FromShapes(
      {{"fc0.weight", {3, 4}}, {"fc0.bias", {4}}, {"fc1.weight", {4, 2}}});
  EXPECT_TRUE(layout.ok()) << layout.status();
  return *layout;
}

TEST(TensorLayoutTest, FromShapesPacksBackToBack) {
  TensorLayout layout = MakeLayout();
  ASSERT_EQ(layout.num_tensors(), 3);
  EXPECT_EQ(layout.tensor(0).offset, 0);
  EXPECT_EQ(layout.tensor(0).size, 12);
  EXPECT_EQ(layout.tensor(1).offset, 12);
  EXPECT_EQ(layout.tensor(1).size, 4);
  EXPECT_EQ(layout.tensor(2).offset, 16);
  EXPECT_EQ(layout.tensor(2).size, 8);
  EXPECT_EQ(layout.total_elements(), 24);
  EXPECT_EQ(layout.total_bytes(), 96);
  EXPECT_EQ(layout.tensor(2).name, "fc1.weight");
  EXPECT_EQ(layout.tensor(2).shape, (std::vector<int64_t>{4, 2}));

  std::vector<float> flat(24);
  absl::Span<float> view = layout.View(1, absl::MakeSpan(flat));
  EXPECT_EQ(view.data(), flat.data() + 12);
  EXPECT_EQ(view.size(), 4u);
}

TEST(TensorLayoutTest, FromShapesRejectsBadInput) {
  EXPECT_EQ(TensorLayout::FromShapes({{"", {2}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TensorLayout::FromShapes({{"a", {2}}, {"a", {3}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TensorLayout::FromShapes({{"a", {2, 0}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TensorLayout::FromShapes({{"a", {-1}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorLayoutTest, ProtoRoundTrip) {
  TensorLayout layout = MakeLayout();
  proto::TensorLayout p = layout.ToProto();
  EXPECT_EQ(p.dtype(), "float32");
  ASSERT_EQ(p.tensors_size(), 3);
  EXPECT_EQ(p.tensors(1).offset(), 12);
  auto back = TensorLayout::FromProto(p);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, layout) << back->DebugString() << "vs\n"
                           << layout.DebugString();
  EXPECT_FALSE(*back != layout);
}

TEST(TensorLayoutTest, FromProtoRejectsGapsAndOverlaps) {
  proto::TensorLayout p = MakeLayout().ToProto();
  p.mutable_tensors(1)->set_offset(13);  // gap after tensor 0
  auto status = TensorLayout::FromProto(p).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("fc0.bias"), std::string::npos) << status;

  p = MakeLayout().ToProto();
  p.mutable_tensors(2)->set_offset(0);  // overlaps tensor 0
  EXPECT_EQ(TensorLayout::FromProto(p).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorLayoutTest, FromProtoRejectsWrongDtype) {
  proto::TensorLayout p = MakeLayout().ToProto();
  p.set_dtype("float16");
  auto status = TensorLayout::FromProto(p).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("float16"), std::string::npos) << status;
  p.clear_dtype();
  EXPECT_EQ(TensorLayout::FromProto(p).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorLayoutTest, FromProtoRejectsSizeNotProductOfShape) {
  proto::TensorLayout p = MakeLayout().ToProto();
  p.mutable_tensors(2)->set_size(9);
  auto status = TensorLayout::FromProto(p).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("fc1.weight"), std::string::npos) << status;
}

// A tests/fuzz/ps_request_fuzzer case under UBSan: unchecked, the product
// of a shape (and the running offset) overflows int64 instead of failing,
// and a shape of 2^32 x 2^32 packs as 0 elements.
TEST(TensorLayoutTest, RefusesMoreThanTwoToTheSixtyElements) {
  auto huge = TensorLayout::FromShapes({{"w", {int64_t{1} << 32, int64_t{1} << 32}}});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.status().message().find("more than 2^60"), std::string::npos)
      << huge.status();
  auto total = TensorLayout::FromShapes(
      {{"a", {int64_t{1} << 59}}, {"b", {int64_t{1} << 59}}, {"c", {1}}});
  EXPECT_EQ(total.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(total.status().message().find("'c'"), std::string::npos)
      << total.status();
  auto edge = TensorLayout::FromShapes(
      {{"a", {int64_t{1} << 59}}, {"b", {int64_t{1} << 30, int64_t{1} << 29}}});
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_EQ(edge->total_elements(), TensorLayout::kMaxElements);
  // Through the wire format too (a Register request's layout).
  proto::TensorLayout p;
  p.set_dtype("float32");
  proto::TensorSpec* t = p.add_tensors();
  t->set_name("w");
  t->add_shape(int64_t{1} << 32);
  t->add_shape(int64_t{1} << 32);
  EXPECT_EQ(TensorLayout::FromProto(p).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorLayoutTest, EqualityComparesNamesShapesOffsets) {
  TensorLayout a = MakeLayout();
  auto renamed = TensorLayout::FromShapes(
      {{"fc0.weight", {3, 4}}, {"fc0.b", {4}}, {"fc1.weight", {4, 2}}});
  auto reshaped = TensorLayout::FromShapes(
      {{"fc0.weight", {4, 3}}, {"fc0.bias", {4}}, {"fc1.weight", {4, 2}}});
  ASSERT_TRUE(renamed.ok() && reshaped.ok());
  EXPECT_NE(a, *renamed);
  EXPECT_NE(a, *reshaped);
  EXPECT_NE(a, TensorLayout());
}

}  // namespace
}  // namespace ringside
