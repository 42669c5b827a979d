// GrpcSecurity: how one process secures its gRPC traffic — the job's token
// (common/auth.h) and optional TLS — and the one place that turns it into
// server credentials and client channels, so every server and client of the
// job (parameter servers, rendezvous store) is secured the same way.
//
//   token only      insecure transport, every call carries the token;
//   TLS             servers present --tls_cert/--tls_key, clients verify
//                   them against --tls_ca (empty: the system's roots);
//   mutual TLS      a server given --tls_ca also requires client
//                   certificates signed by it (clients present their
//                   --tls_cert/--tls_key).
// Token and TLS combine; the README shows a job with both.
//
// Thread-safe: GrpcSecurity is a value; the functions are pure apart from
// reading files (LoadGrpcSecurity).
#ifndef RINGSIDE_COMMON_GRPC_CREDENTIALS_H_
#define RINGSIDE_COMMON_GRPC_CREDENTIALS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ringside {

struct GrpcSecurity {
  // The job's token; every call carries it and every handler checks it.
  // Empty (default): no token sent or checked.
  std::string auth_token;
  // Use TLS (default false: plaintext).
  bool tls = false;
  // This process's certificate chain and private key (PEM text). Required
  // for a TLS server; a TLS client presents them when set (mutual TLS).
  std::string tls_cert_pem;
  std::string tls_key_pem;
  // Root certificates (PEM text). A TLS client verifies servers with them
  // (empty: gRPC's default roots, which do not know a job's own CA); a TLS
  // server given them requires client certificates they sign.
  std::string tls_ca_pem;
  // Name a TLS client checks the server certificate against instead of the
  // host it dials (e.g. the one name of a job-wide certificate). Default
  // empty: the dialled host.
  std::string tls_server_name;

  // INVALID_ARGUMENT on a bad token, a certificate without its key (or the
  // reverse), PEM fields that are not PEM, or TLS fields without tls.
  absl::Status Validate() const;
  // Also requires a certificate and key when tls is on.
  absl::Status ValidateForServer() const;
  // "insecure", "token", "TLS", "token+TLS" or "token+mTLS" (for logs).
  std::string Describe() const;
};

// Paths as given on the command line (common/security_flags.h).
struct GrpcSecurityFiles {
  std::string auth_token_file;  // empty: no token
  std::string tls_cert;         // PEM file; empty: none
  std::string tls_key;          // PEM file; empty: none
  std::string tls_ca;           // PEM file; empty: none
  std::string tls_server_name;  // a name, not a file
};

// Reads the files into a validated GrpcSecurity; tls is on when any TLS
// file is given. Blocking. Errors name the file and never show a secret.
// `warning` (if non-null) gets a note for a token file other users can
// read, or is cleared.
absl::StatusOr<GrpcSecurity> LoadGrpcSecurity(const GrpcSecurityFiles& files,
                                              std::string* warning = nullptr);

// Credentials for a server listening with `security`. INVALID_ARGUMENT
// when ValidateForServer fails.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const GrpcSecurity& security);

// A channel to `target` ("host:port") with TLS or insecure credentials per
// `security`, whose every call carries the token (if any). `args` are
// passed on (tls_server_name is added to them). Does not connect.
// Precondition: security.Validate() is OK.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           const GrpcSecurity& security,
                                           grpc::ChannelArguments args);

// A hint to append to a client's error when a call failed with `code`:
// what to check about TLS or the token, or "" when there is nothing to add.
std::string SecurityHint(grpc::StatusCode code, const GrpcSecurity& security);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_GRPC_CREDENTIALS_H_
