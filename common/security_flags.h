// The job-security flags every ringside process takes, defined once:
//   --auth_token_file  the job's token (common/auth.h)
//   --tls_cert, --tls_key, --tls_ca, --tls_server_name
//                      TLS (common/grpc_credentials.h)
// Linking this library adds the flags to a binary.
#ifndef RINGSIDE_COMMON_SECURITY_FLAGS_H_
#define RINGSIDE_COMMON_SECURITY_FLAGS_H_

#include "absl/status/statusor.h"
#include "common/grpc_credentials.h"

namespace ringside {

// The flags' values as file names (nothing read yet); under `bazel run`,
// relative paths are taken from where the user typed the command
// (BUILD_WORKING_DIRECTORY).
GrpcSecurityFiles SecurityFilesFromFlags();

// Reads the files the flags name into a validated GrpcSecurity; logs a
// warning for a token file other users can read. Blocking. INVALID_ARGUMENT
// / NOT_FOUND naming the flag and file on bad input.
absl::StatusOr<GrpcSecurity> SecurityFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_COMMON_SECURITY_FLAGS_H_
