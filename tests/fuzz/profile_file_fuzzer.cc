// Fuzz target: the gradient-profile file reader (models/profile_file.h),
// which reads files users bring (tools/export_profile.py's, or written by
// hand). The input is the file.
//
// Invariants: the reader either refuses with INVALID_ARGUMENT, or returns a
// profile that holds what the format promises (tensors, positive
// dimensions, the published count equal to the tensors', one ready time
// per tensor when there are any) and that survives ProfileToJson + parse
// unchanged (times within rounding).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/profile_file.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool Near(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::fmax(1.0, std::fabs(a));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<GradientProfile> p = ParseProfileJson(text, "fuzz");
  if (!p.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(p.status()), "unexpected error: %s",
               p.status().ToString().c_str());
    return 0;
  }
  FUZZ_CHECK(!p->name.empty() && p->num_tensors() > 0, "empty profile");
  for (const auto& [name, shape] : p->tensors) {
    FUZZ_CHECK(!name.empty(), "a tensor without a name");
    for (int64_t d : shape) FUZZ_CHECK(d >= 1, "dimension %lld", (long long)d);
  }
  FUZZ_CHECK(p->published_parameters == p->num_parameters(),
             "published %lld, tensors %lld",
             (long long)p->published_parameters,
             (long long)p->num_parameters());
  if (p->compute.has_value() && !p->compute->ready_s.empty()) {
    FUZZ_CHECK(p->compute->ready_s.size() == p->tensors.size(),
               "%zu ready times for %zu tensors", p->compute->ready_s.size(),
               p->tensors.size());
  }
  absl::StatusOr<GradientProfile> again =
      ParseProfileJson(ProfileToJson(*p), "again");
  FUZZ_CHECK(again.ok(), "its own output refused: %s",
             again.status().ToString().c_str());
  FUZZ_CHECK(again->name == p->name && again->description == p->description &&
                 again->order == p->order && again->tensors == p->tensors &&
                 again->published_parameters == p->published_parameters &&
                 again->compute.has_value() == p->compute.has_value(),
             "profile changed through ProfileToJson + parse");
  if (p->compute.has_value()) {
    const ProfileCompute& a = *p->compute;
    const ProfileCompute& b = *again->compute;
    FUZZ_CHECK(a.batch_size == b.batch_size && a.device == b.device &&
                   Near(a.forward_s, b.forward_s) &&
                   Near(a.backward_s, b.backward_s) &&
                   a.ready_s.size() == b.ready_s.size() &&
                   a.peak_activation_bytes == b.peak_activation_bytes,
               "compute changed through ProfileToJson + parse");
    for (size_t i = 0; i < a.ready_s.size(); ++i) {
      FUZZ_CHECK(Near(a.ready_s[i], b.ready_s[i]), "ready time %zu", i);
    }
  }
  return 0;
}
