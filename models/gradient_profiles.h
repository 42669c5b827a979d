// Gradient profiles: the gradient-tensor lists (name and shape of every
// trainable parameter) of real networks, so that communication studies can
// move exactly the tensors a real training step moves without running the
// network. A profile is a JSON file (models/profile_file.h): ringside's
// built-in ones live in models/profiles/ (the one source of their lists,
// compiled in), in the order the reference implementation registers its
// parameters (torchvision / HuggingFace `named_parameters()`), which is the
// order a synchronous data-parallel runtime sees them; backward produces
// them in the reverse order. A user's own (tools/export_profile.py) is read
// from its path.
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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor_layout.h"

namespace ringside {

// The compute a profile file measured for its model (models/profile_file.h).
struct ProfileCompute {
  int64_t batch_size = 0;   // examples per step it was measured at, > 0
  std::string device;       // "cpu" or "cuda"
  double forward_s = 0;     // per step, >= 0
  double backward_s = 0;    // per step, >= 0
  // Each tensor's gradient-ready time from backward's start (seconds, in
  // `tensors` order); empty: not measured.
  std::vector<double> ready_s;
  int64_t peak_activation_bytes = -1;  // < 0: not measured
};

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
  // The order of `tensors`: definition order (the built-in profiles:
  // backward makes them ready in reverse) or the order their gradients
  // became ready (an exported profile).
  enum class Order { kDefinition, kGradientReady };
  Order order = Order::kDefinition;
  // The measured compute, where a profile file carries it.
  std::optional<ProfileCompute> compute;

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

// Builds the named profile, reads a profile file (a value with '/' or
// ending in ".json": models/profile_file.h; its tensors returned in layout
// order, InLayoutOrder), or builds a tensor mix spelled "tensors:ITEM,ITEM,..."
// where ITEM is E (one tensor of E float elements) or E*C (C of them), in
// definition order, e.g. "tensors:1000000,4096*12,10" (names t0, t1, ...;
// at most 100000 tensors and 2^31 elements in all). INVALID_ARGUMENT on an
// unknown name, listing the known ones (the same answer as an unknown
// --strategy or --model), or on a malformed mix, naming the item.
absl::StatusOr<GradientProfile> FindGradientProfile(absl::string_view name);

// The profile at emulation scale S (compare --emulation_scale): every
// tensor keeps its name and place in the order but holds 1/S of its
// elements, rounded to the nearest and at least one, as one dimension, so
// the bytes shrink S-fold while the tensor count (the per-message costs)
// stays; published_parameters becomes the scaled sum and the description
// says the scale. A measured compute is kept as it is (the time is not
// scaled). INVALID_ARGUMENT unless S is finite and >= 1.
absl::StatusOr<GradientProfile> ScaledProfile(GradientProfile profile,
                                              double scale);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_GRADIENT_PROFILES_H_
