// Conversions between absl::Status and grpc::Status, for use at the RPC
// edge only. Thread-safe (pure functions).
#ifndef RINGSIDE_COMMON_GRPC_STATUS_H_
#define RINGSIDE_COMMON_GRPC_STATUS_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ringside {

grpc::Status ToGrpcStatus(const absl::Status& status);

// `what` names the call (e.g. "Push to 127.0.0.1:5000"); it prefixes the
// message so the user sees which RPC failed.
absl::Status FromGrpcStatus(const grpc::Status& status, absl::string_view what);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_GRPC_STATUS_H_
