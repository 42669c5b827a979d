// Gradient profiles as JSON files, so that any model's gradients can be
// studied without code: the tensors a data-parallel step reduces, in the
// order their gradients become ready (or in definition order, as
// "order" says), and optionally the compute measured for them. Written
// by tools/export_profile.py from a PyTorch model; ringside's built-in
// profiles are files in this format (models/profiles/).
//
//   {
//     "format": "ringside-profile/1",
//     "name": "resnet50",
//     "description": "ResNet-50 (torchvision ...)",      optional
//     "order": "definition" | "gradient_ready",            optional (definition)
//     "published_parameters": 25557032,                    optional
//     "tensors": [
//       {"name": "conv1.weight", "shape": [64, 3, 7, 7], "dtype": "float32"},
//       ...
//     ],
//     "compute": {                                         optional
//       "batch_size": 32, "device": "cpu" | "cuda",
//       "forward_ms": 41.0, "backward_ms": 83.5,
//       "ready_ms": [0.9, 1.7, ...],   per tensor, in "tensors" order,
//                                      from backward's start; optional
//       "peak_activation_bytes": 123456789                optional
//     }
//   }
//
// A tensor's dtype is "float32" (ringside's gradients; others are refused,
// naming the tensor). Shapes hold positive dimensions; a scalar is [].
// Unknown fields are refused (a misspelt optional field would otherwise be
// silently lost). Every refusal is INVALID_ARGUMENT naming the source, the
// field and, for a tensor's fault, the tensor's index and name.
//
// Pure functions; thread-safe.
#ifndef RINGSIDE_MODELS_PROFILE_FILE_H_
#define RINGSIDE_MODELS_PROFILE_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/gradient_profiles.h"

namespace ringside {

inline constexpr char kProfileFormat[] = "ringside-profile/1";

// Parses `text`; `source` names it in errors (a path, "built-in resnet50").
absl::StatusOr<GradientProfile> ParseProfileJson(absl::string_view text,
                                                 absl::string_view source);

// Reads and parses the file at `path` (NOT_FOUND naming it when missing).
absl::StatusOr<GradientProfile> ReadProfileFile(const std::string& path);

// `profile` in the format above (ParseProfileJson reads it back equal).
std::string ProfileToJson(const GradientProfile& profile);

// `profile` in ringside's layout order, the reverse of the order backward
// makes the gradients ready (the synthetic model reports the last tensor
// first, as a real backward does): a profile in gradient-ready order is
// reversed, with its ready times; one in definition order is returned as
// it is.
GradientProfile InLayoutOrder(GradientProfile profile);

// Whether a --profile value names a file: it contains '/' or ends in
// ".json"; anything else is a built-in name or a tensor mix.
bool IsProfilePath(absl::string_view value);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_PROFILE_FILE_H_
