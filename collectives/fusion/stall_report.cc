#include "collectives/fusion/stall_report.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ringside {

std::string StallReport::ToString() const {
  return absl::StrFormat(
      "tensor '%s' (index %d) submitted by rank(s) [%s] but not by rank(s) "
      "[%s] for %.1f s",
      name, tensor, absl::StrJoin(submitted_ranks, ","),
      absl::StrJoin(missing_ranks, ","), waiting_s);
}

}  // namespace ringside
