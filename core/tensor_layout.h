// TensorLayout: the named tensors of a model as views (offset, size) into
// one contiguous float32 buffer. The worker owns one parameter buffer and
// one gradient buffer of layout.total_elements() floats each; strategies,
// servers and collectives work on plain spans of them with no copies.
// Immutable after construction, so thread-safe to share.
#ifndef RINGSIDE_CORE_TENSOR_LAYOUT_H_
#define RINGSIDE_CORE_TENSOR_LAYOUT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/tensor_layout.pb.h"

namespace ringside {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0;  // elements
  int64_t size = 0;    // elements
};

class TensorLayout {
 public:
  TensorLayout() = default;

  // Most elements a layout may hold: 2^60, so that its byte count (and any
  // offset into it) fits int64_t.
  static constexpr int64_t kMaxElements = int64_t{1} << 60;

  // Packs tensors back to back in the given order. Fails on an empty name,
  // a duplicate name, a non-positive dimension, or more than kMaxElements
  // elements in all (checked before any product overflows).
  static absl::StatusOr<TensorLayout> FromShapes(
      const std::vector<std::pair<std::string, std::vector<int64_t>>>& shapes);

  // Validates offsets (contiguous, in order, sizes = product of shape) and
  // dtype "float32".
  static absl::StatusOr<TensorLayout> FromProto(const proto::TensorLayout& p);
  proto::TensorLayout ToProto() const;

  const std::vector<TensorSpec>& tensors() const { return tensors_; }
  int num_tensors() const { return static_cast<int>(tensors_.size()); }
  const TensorSpec& tensor(int i) const { return tensors_[i]; }
  int64_t total_elements() const { return total_elements_; }
  int64_t total_bytes() const { return total_elements_ * 4; }

  // The view of tensor i inside a flat buffer of total_elements() floats.
  absl::Span<float> View(int i, absl::Span<float> flat) const {
    return flat.subspan(tensors_[i].offset, tensors_[i].size);
  }
  absl::Span<const float> View(int i, absl::Span<const float> flat) const {
    return flat.subspan(tensors_[i].offset, tensors_[i].size);
  }

  // Equal names, shapes and offsets.
  bool operator==(const TensorLayout& other) const;
  bool operator!=(const TensorLayout& other) const { return !(*this == other); }

  // One line per tensor, for error messages and logs.
  std::string DebugString() const;

 private:
  std::vector<TensorSpec> tensors_;
  int64_t total_elements_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_CORE_TENSOR_LAYOUT_H_
