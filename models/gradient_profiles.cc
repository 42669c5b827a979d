#include "models/gradient_profiles.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/emulation_scale_check.h"
#include "models/builtin_profiles.h"
#include "models/profile_file.h"

namespace ringside {
namespace {

// The built-in profiles, parsed once from their embedded files (a defect in
// one is a build's defect: it dies naming the file).
const std::vector<GradientProfile>& BuiltinProfiles() {
  static const auto* profiles = [] {
    auto* parsed = new std::vector<GradientProfile>();
    for (const BuiltinProfileFile& file : BuiltinProfileFiles()) {
      absl::StatusOr<GradientProfile> p = ParseProfileJson(file.text, file.path);
      CHECK(p.ok()) << p.status();
      parsed->push_back(*std::move(p));
    }
    return parsed;
  }();
  return *profiles;
}

}  // namespace

int64_t GradientProfile::num_parameters() const {
  int64_t total = 0;
  for (const auto& [name, shape] : tensors) {
    int64_t size = 1;
    for (int64_t d : shape) size *= d;
    total += size;
  }
  return total;
}

absl::StatusOr<TensorLayout> GradientProfile::Layout() const {
  return TensorLayout::FromShapes(tensors);
}

std::vector<std::string> GradientProfileNames() {
  std::vector<std::string> names;
  for (const GradientProfile& p : BuiltinProfiles()) names.push_back(p.name);
  return names;
}

std::string GradientProfileNameList() {
  return absl::StrJoin(GradientProfileNames(), ", ");
}

namespace {

constexpr absl::string_view kMixPrefix = "tensors:";
constexpr int64_t kMaxMixTensors = 100000;
constexpr int64_t kMaxMixElements = int64_t{1} << 31;

absl::StatusOr<GradientProfile> TensorMix(absl::string_view spec) {
  GradientProfile p;
  p.name = absl::StrCat(kMixPrefix, spec);
  p.description = "a tensor mix (--profile=tensors:...)";
  int64_t total = 0;
  for (absl::string_view item : absl::StrSplit(spec, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, '*');
    int64_t elements = 0, count = 1;
    if (parts.size() > 2 || !absl::SimpleAtoi(parts[0], &elements) ||
        (parts.size() == 2 && !absl::SimpleAtoi(parts[1], &count)) ||
        elements < 1 || count < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor mix item '", item,
          "': expected E or E*C (E elements per tensor, C tensors, both "
          ">= 1)"));
    }
    if (count > kMaxMixTensors - p.num_tensors() ||
        elements > (kMaxMixElements - total) / count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor mix '", spec, "': more than ", kMaxMixTensors,
          " tensors or 2^31 elements"));
    }
    total += elements * count;
    for (int64_t i = 0; i < count; ++i) {
      p.tensors.push_back({absl::StrCat("t", p.tensors.size()), {elements}});
    }
  }
  p.published_parameters = total;
  return p;
}

}  // namespace

absl::StatusOr<GradientProfile> FindGradientProfile(absl::string_view name) {
  if (absl::StartsWith(name, kMixPrefix)) {
    return TensorMix(name.substr(kMixPrefix.size()));
  }
  if (IsProfilePath(name)) {
    absl::StatusOr<GradientProfile> file = ReadProfileFile(std::string(name));
    if (!file.ok()) return file.status();
    return InLayoutOrder(*std::move(file));
  }
  for (const GradientProfile& p : BuiltinProfiles()) {
    if (name == p.name) return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown gradient profile '", name,
                   "' (known: ", GradientProfileNameList(), ")"));
}

absl::StatusOr<GradientProfile> ScaledProfile(GradientProfile profile,
                                              double scale) {
  if (absl::Status s = CheckEmulationScale(scale); !s.ok()) return s;
  if (scale == 1) return profile;
  for (auto& [name, shape] : profile.tensors) {
    int64_t size = 1;
    for (int64_t d : shape) size *= d;
    shape = {std::max<int64_t>(
        1, std::llround(static_cast<double>(size) / scale))};
  }
  profile.published_parameters = profile.num_parameters();
  absl::StrAppend(&profile.description, " (emulation scale ", scale,
                  ": 1/", scale, " of each tensor's elements)");
  return profile;
}

}  // namespace ringside
