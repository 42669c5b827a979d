// Test-only TLS material, made at test time with the openssl command line
// (Debian package openssl; tools/setup.sh installs it): a CA, a node
// certificate it signs for "localhost" and 127.0.0.1 (usable by servers and,
// for mutual TLS, by clients), and a second CA that signed nothing here.
// EC P-256 keys, 100-year validity; a few milliseconds to make.
#ifndef RINGSIDE_TESTS_TESTING_TEST_PKI_H_
#define RINGSIDE_TESTS_TESTING_TEST_PKI_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/grpc_credentials.h"

namespace ringside {

struct TestPki {
  std::string ca_cert;        // PEM file paths
  std::string node_cert;
  std::string node_key;
  std::string other_ca_cert;  // a CA that did not sign node_cert

  // Files for LoadGrpcSecurity: the node's certificate and key, `ca` as
  // --tls_ca (empty: none), `token_file` as --auth_token_file.
  GrpcSecurityFiles Files(const std::string& ca,
                          const std::string& token_file = "") const;
};

// Makes the material under `dir` (created if missing). Blocking (runs
// openssl). FAILED_PRECONDITION when openssl is missing or fails.
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir);

// Writes `token` to `path` (0600; replaces an existing file). Dies on error.
std::string WriteTokenFile(const std::string& path, const std::string& token);

}  // namespace ringside

#endif  // RINGSIDE_TESTS_TESTING_TEST_PKI_H_
