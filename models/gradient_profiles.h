// Gradient profiles: the gradient-tensor lists (name and shape of every
// trainable parameter, in definition order) of real networks, so that
// communication studies can move exactly the tensors a real training step
// moves without running the network. Each list is generated in code from
// the architecture's definition (loops over stages, blocks and layers), in
// the order the reference implementation registers its parameters
// (torchvision / HuggingFace `named_parameters()`), which is the order a
// synchronous data-parallel runtime sees them; backward produces them in
// the reverse order.
//
// Profiles (published totals from the reference implementations):
//   resnet50   torchvision resnet50 (V1.5, 1000 classes): conv weights,
//              BatchNorm weight+bias (running statistics are buffers, not
//              gradients), fc — 161 tensors, 25,557,032 parameters.
//   vgg16      torchvision vgg16 (no BN, 1000 classes) — 32 tensors,
//              138,357,544 parameters.
//   bert-base  HuggingFace BertModel, bert-base-uncased (with pooler) —
//              199 tensors, 109,482,240 parameters.
//   gpt2       HuggingFace GPT2Model, GPT-2 small (124M); the LM head is
//              tied to wte, so not a separate tensor — 148 tensors,
//              124,439,808 parameters.
//   mobilenet_v2  torchvision mobilenet_v2 (width 1.0, 1000 classes) —
//              158 tensors, 3,504,872 parameters (14 MB: small enough for
//              shaped links of 0.1 Gbit/s).
//
// Pure functions; thread-safe.
#ifndef RINGSIDE_MODELS_GRADIENT_PROFILES_H_
#define RINGSIDE_MODELS_GRADIENT_PROFILES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor_layout.h"

namespace ringside {

struct GradientProfile {
  // Registry name, e.g. "resnet50".
  std::string name;
  // One line: the network and the reference implementation it follows.
  std::string description;
  // (parameter name, shape) in definition order, shapes as the reference
  // implementation stores them (e.g. nn.Linear weight is (out, in); GPT-2's
  // Conv1D weight is (in, out)).
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors;
  // The parameter count the reference publishes (torchvision's num_params,
  // the HuggingFace model's num_parameters()); tests check that `tensors`
  // sums to it.
  int64_t published_parameters = 0;

  int num_tensors() const { return static_cast<int>(tensors.size()); }
  // Sum over tensors of the product of their shapes.
  int64_t num_parameters() const;
  // The tensors packed back to back (TensorLayout::FromShapes).
  absl::StatusOr<TensorLayout> Layout() const;
};

// The registered profile names, in a fixed order.
std::vector<std::string> GradientProfileNames();

// The same, comma-separated (for flag help and error messages).
std::string GradientProfileNameList();

// Builds the named profile, or a tensor mix spelled "tensors:ITEM,ITEM,..."
// where ITEM is E (one tensor of E float elements) or E*C (C of them), in
// definition order, e.g. "tensors:1000000,4096*12,10" (names t0, t1, ...;
// at most 100000 tensors and 2^31 elements in all). INVALID_ARGUMENT on an
// unknown name, listing the known ones (the same answer as an unknown
// --strategy or --model), or on a malformed mix, naming the item.
absl::StatusOr<GradientProfile> FindGradientProfile(absl::string_view name);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_GRADIENT_PROFILES_H_
