#include "core/tensor_layout.h"

#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ringside {
namespace {

constexpr char kDtype[] = "float32";

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

}  // namespace

absl::StatusOr<TensorLayout> TensorLayout::FromShapes(
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& shapes) {
  TensorLayout layout;
  std::unordered_set<std::string> seen;
  int64_t offset = 0;
  for (const auto& [name, shape] : shapes) {
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor ", layout.tensors_.size(), " has an empty name"));
    }
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate tensor name '", name, "'"));
    }
    int64_t size = 1;
    for (int64_t d : shape) {
      if (d <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", name, "' has a non-positive dimension in ",
                         ShapeString(shape)));
      }
      if (d > kMaxElements / size) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", name, "' of shape ", ShapeString(shape),
                         " has more than 2^60 elements"));
      }
      size *= d;
    }
    if (size > kMaxElements - offset) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model has more than 2^60 elements (at tensor '",
                       name, "' of shape ", ShapeString(shape), ")"));
    }
    layout.tensors_.push_back(TensorSpec{name, shape, offset, size});
    offset += size;
  }
  layout.total_elements_ = offset;
  return layout;
}

absl::StatusOr<TensorLayout> TensorLayout::FromProto(
    const proto::TensorLayout& p) {
  if (p.dtype() != kDtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor layout dtype is '", p.dtype(), "', want '", kDtype, "'"));
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const proto::TensorSpec& t : p.tensors()) {
    shapes.emplace_back(
        t.name(), std::vector<int64_t>(t.shape().begin(), t.shape().end()));
  }
  TensorLayout layout;
  {
    absl::StatusOr<TensorLayout> packed = FromShapes(shapes);
    if (!packed.ok()) return packed.status();
    layout = *std::move(packed);
  }
  for (int i = 0; i < p.tensors_size(); ++i) {
    const proto::TensorSpec& t = p.tensors(i);
    const TensorSpec& want = layout.tensors_[i];
    if (t.size() != want.size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", t.name(), "' has size ", t.size(), " but its shape ",
          ShapeString(want.shape), " holds ", want.size));
    }
    if (t.offset() != want.offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", t.name(), "' is at offset ", t.offset(), ", want ",
          want.offset, " (tensors must be contiguous and in order)"));
    }
  }
  return layout;
}

proto::TensorLayout TensorLayout::ToProto() const {
  proto::TensorLayout p;
  p.set_dtype(kDtype);
  for (const TensorSpec& t : tensors_) {
    proto::TensorSpec* s = p.add_tensors();
    s->set_name(t.name);
    for (int64_t d : t.shape) s->add_shape(d);
    s->set_offset(t.offset);
    s->set_size(t.size);
  }
  return p;
}

bool TensorLayout::operator==(const TensorLayout& other) const {
  if (tensors_.size() != other.tensors_.size()) return false;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorSpec& a = tensors_[i];
    const TensorSpec& b = other.tensors_[i];
    if (a.name != b.name || a.shape != b.shape || a.offset != b.offset ||
        a.size != b.size) {
      return false;
    }
  }
  return total_elements_ == other.total_elements_;
}

std::string TensorLayout::DebugString() const {
  std::string out;
  for (const TensorSpec& t : tensors_) {
    absl::StrAppend(&out, t.name, " ", ShapeString(t.shape),
                    " offset=", t.offset, " size=", t.size, "\n");
  }
  return out;
}

}  // namespace ringside
