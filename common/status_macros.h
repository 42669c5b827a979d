// Status propagation macros (absl 20220623 ships none).
//
// RS_RETURN_IF_ERROR(expr): returns the absl::Status of `expr` if not ok.
// RS_ASSIGN_OR_RETURN(lhs, expr): evaluates the absl::StatusOr `expr`,
//   returns its status if not ok, else moves its value into `lhs`.
#ifndef RINGSIDE_COMMON_STATUS_MACROS_H_
#define RINGSIDE_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RS_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status rs_status_ = (expr);      \
    if (!rs_status_.ok()) return rs_status_; \
  } while (0)

#define RS_CONCAT_INNER_(a, b) a##b
#define RS_CONCAT_(a, b) RS_CONCAT_INNER_(a, b)

#define RS_ASSIGN_OR_RETURN(lhs, expr) \
  RS_ASSIGN_OR_RETURN_IMPL_(RS_CONCAT_(rs_statusor_, __LINE__), lhs, expr)

#define RS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()

// Prefixes a non-ok status's message with context, keeping its code.
namespace ringside {
inline absl::Status Annotate(const absl::Status& s, absl::string_view what) {
  if (s.ok()) return s;
  return absl::Status(s.code(),
                      std::string(what) + ": " + std::string(s.message()));
}
}  // namespace ringside

#endif  // RINGSIDE_COMMON_STATUS_MACROS_H_
