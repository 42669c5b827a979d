#include "tests/testing/test_pki.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/auth.h"

namespace ringside {
namespace {

absl::Status Run(const std::string& command) {
  const std::string line = absl::StrCat(command, " >/dev/null 2>&1");
  if (std::system(line.c_str()) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("failed: ", command,
                     " (is openssl installed? tools/setup.sh installs it)"));
  }
  return absl::OkStatus();
}

// A self-signed CA certificate and its key.
absl::Status MakeCa(const std::string& dir, const std::string& name) {
  return Run(absl::StrCat(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes -days 36500 -subj /CN=",
      name, " -keyout ", dir, "/", name, ".key -out ", dir, "/", name,
      ".pem"));
}

}  // namespace

GrpcSecurityFiles TestPki::Files(const std::string& ca,
                                 const std::string& token_file) const {
  GrpcSecurityFiles files;
  files.auth_token_file = token_file;
  files.tls_cert = node_cert;
  files.tls_key = node_key;
  files.tls_ca = ca;
  return files;
}

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (absl::Status s = MakeCa(dir, "ca"); !s.ok()) return s;
  if (absl::Status s = MakeCa(dir, "other_ca"); !s.ok()) return s;
  {
    std::ofstream ext(absl::StrCat(dir, "/node.ext"));
    ext << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
           "extendedKeyUsage=serverAuth,clientAuth\n"
           "basicConstraints=CA:FALSE\n";
  }
  if (absl::Status s = Run(absl::StrCat(
          "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
          "-nodes -subj /CN=localhost -keyout ",
          dir, "/node.key -out ", dir, "/node.csr"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Run(absl::StrCat(
          "openssl x509 -req -days 36500 -in ", dir, "/node.csr -CA ", dir,
          "/ca.pem -CAkey ", dir, "/ca.key -CAcreateserial -extfile ", dir,
          "/node.ext -out ", dir, "/node.pem"));
      !s.ok()) {
    return s;
  }
  TestPki pki;
  pki.ca_cert = absl::StrCat(dir, "/ca.pem");
  pki.node_cert = absl::StrCat(dir, "/node.pem");
  pki.node_key = absl::StrCat(dir, "/node.key");
  pki.other_ca_cert = absl::StrCat(dir, "/other_ca.pem");
  return pki;
}

std::string WriteTokenFile(const std::string& path, const std::string& token) {
  unlink(path.c_str());
  const absl::Status s = WriteAuthTokenFile(path, token);
  if (!s.ok()) {
    std::fprintf(stderr, "WriteTokenFile: %s\n", s.ToString().c_str());
    std::abort();
  }
  return path;
}

}  // namespace ringside
