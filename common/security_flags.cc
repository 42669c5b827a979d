#include "common/security_flags.h"

#include <glog/logging.h>

#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, auth_token_file, "",
          "File holding the job's secret token (printable ASCII, no spaces; "
          "a final newline is ignored). Every RPC carries it; servers reject "
          "calls without it. Empty: no token.");
ABSL_FLAG(std::string, tls_cert, "",
          "TLS: this process's certificate chain (PEM). Servers need it with "
          "--tls_key; clients present it for mutual TLS.");
ABSL_FLAG(std::string, tls_key, "", "TLS: the private key of --tls_cert (PEM).");
ABSL_FLAG(std::string, tls_ca, "",
          "TLS: root certificate(s) (PEM) that signed the servers' "
          "certificates; a server given it also requires client "
          "certificates it signed (mutual TLS).");
ABSL_FLAG(std::string, tls_server_name, "",
          "TLS: check server certificates against this name instead of the "
          "host dialled. Empty: the host.");

namespace ringside {
namespace {

// `path` relative to where the user typed the command: under `bazel run`
// the process runs in its runfiles tree, BUILD_WORKING_DIRECTORY names the
// user's folder.
std::string FromUserDirectory(const std::string& path) {
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || cwd == nullptr || *cwd == '\0') {
    return path;
  }
  return std::string(cwd) + "/" + path;
}

}  // namespace

GrpcSecurityFiles SecurityFilesFromFlags() {
  GrpcSecurityFiles files;
  files.auth_token_file =
      FromUserDirectory(absl::GetFlag(FLAGS_auth_token_file));
  files.tls_cert = FromUserDirectory(absl::GetFlag(FLAGS_tls_cert));
  files.tls_key = FromUserDirectory(absl::GetFlag(FLAGS_tls_key));
  files.tls_ca = FromUserDirectory(absl::GetFlag(FLAGS_tls_ca));
  files.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  return files;
}

absl::StatusOr<GrpcSecurity> SecurityFromFlags() {
  std::string warning;
  absl::StatusOr<GrpcSecurity> security =
      LoadGrpcSecurity(SecurityFilesFromFlags(), &warning);
  if (!warning.empty()) LOG(WARNING) << warning;
  return security;
}

}  // namespace ringside
