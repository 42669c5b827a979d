#include "common/grpc_credentials.h"

#include <grpcpp/support/client_interceptor.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/auth.h"

namespace ringside {
namespace {

// Adds "authorization: Bearer <token>" to the initial metadata of a call.
class AuthTokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit AuthTokenInterceptor(std::shared_ptr<const std::string> value)
      : value_(std::move(value)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::
                PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kAuthMetadataKey, *value_);
    }
    methods->Proceed();
  }

 private:
  std::shared_ptr<const std::string> value_;
};

class AuthTokenInterceptorFactory
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit AuthTokenInterceptorFactory(absl::string_view token)
      : value_(std::make_shared<const std::string>(AuthMetadataValue(token))) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new AuthTokenInterceptor(value_);
  }

 private:
  std::shared_ptr<const std::string> value_;
};

absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", flag, " file ",
                                            path, ": ", std::strerror(errno)));
  }
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " file ", path, " is empty"));
  }
  return text;
}

// INVALID_ARGUMENT unless `pem` holds a PEM block whose label contains
// `label` (e.g. "CERTIFICATE", "PRIVATE KEY").
absl::Status CheckPem(const std::string& pem, absl::string_view label,
                      absl::string_view what) {
  const size_t begin = pem.find("-----BEGIN ");
  if (begin == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not PEM (no -----BEGIN line)"));
  }
  const size_t end = pem.find("-----", begin + 11);
  if (end == std::string::npos ||
      !absl::StrContains(
          absl::string_view(pem).substr(begin + 11, end - begin - 11), label)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " holds no ", label, " PEM block"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status GrpcSecurity::Validate() const {
  if (!auth_token.empty()) {
    if (absl::Status s = ValidateAuthToken(auth_token); !s.ok()) return s;
  }
  if (!tls) {
    if (!tls_cert_pem.empty() || !tls_key_pem.empty() || !tls_ca_pem.empty() ||
        !tls_server_name.empty()) {
      return absl::InvalidArgumentError(
          "TLS certificates, keys or names given but TLS is off");
    }
    return absl::OkStatus();
  }
  if (tls_cert_pem.empty() != tls_key_pem.empty()) {
    return absl::InvalidArgumentError(
        tls_cert_pem.empty() ? "--tls_key given without --tls_cert"
                             : "--tls_cert given without --tls_key");
  }
  if (!tls_cert_pem.empty()) {
    if (absl::Status s = CheckPem(tls_cert_pem, "CERTIFICATE", "--tls_cert");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckPem(tls_key_pem, "PRIVATE KEY", "--tls_key");
        !s.ok()) {
      return s;
    }
  }
  if (!tls_ca_pem.empty()) {
    if (absl::Status s = CheckPem(tls_ca_pem, "CERTIFICATE", "--tls_ca");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status GrpcSecurity::ValidateForServer() const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  if (tls && tls_cert_pem.empty()) {
    return absl::InvalidArgumentError(
        "a TLS server needs --tls_cert and --tls_key");
  }
  return absl::OkStatus();
}

std::string GrpcSecurity::Describe() const {
  std::string transport =
      !tls ? "" : (!tls_ca_pem.empty() && !tls_cert_pem.empty() ? "mTLS" : "TLS");
  if (auth_token.empty()) return transport.empty() ? "insecure" : transport;
  return transport.empty() ? "token" : absl::StrCat("token+", transport);
}

absl::StatusOr<GrpcSecurity> LoadGrpcSecurity(const GrpcSecurityFiles& files,
                                              std::string* warning) {
  if (warning != nullptr) warning->clear();
  GrpcSecurity security;
  if (!files.auth_token_file.empty()) {
    absl::StatusOr<std::string> token =
        LoadAuthToken(files.auth_token_file, warning);
    if (!token.ok()) return token.status();
    security.auth_token = *std::move(token);
  }
  security.tls = !files.tls_cert.empty() || !files.tls_key.empty() ||
                 !files.tls_ca.empty();
  struct Field {
    const std::string& path;
    const char* flag;
    std::string* pem;
  };
  for (const Field& f :
       {Field{files.tls_cert, "--tls_cert", &security.tls_cert_pem},
        Field{files.tls_key, "--tls_key", &security.tls_key_pem},
        Field{files.tls_ca, "--tls_ca", &security.tls_ca_pem}}) {
    if (f.path.empty()) continue;
    absl::StatusOr<std::string> pem = ReadPemFile(f.path, f.flag);
    if (!pem.ok()) return pem.status();
    *f.pem = *std::move(pem);
  }
  if (!files.tls_server_name.empty() && !security.tls) {
    return absl::InvalidArgumentError(
        "--tls_server_name needs TLS (--tls_ca, --tls_cert/--tls_key)");
  }
  security.tls_server_name = files.tls_server_name;
  if (absl::Status s = security.Validate(); !s.ok()) return s;
  return security;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const GrpcSecurity& security) {
  if (absl::Status s = security.ValidateForServer(); !s.ok()) return s;
  if (!security.tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      security.tls_ca_pem.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = security.tls_ca_pem;
  options.pem_key_cert_pairs.push_back(
      {security.tls_key_pem, security.tls_cert_pem});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           const GrpcSecurity& security,
                                           grpc::ChannelArguments args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (security.tls) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = security.tls_ca_pem;
    options.pem_private_key = security.tls_key_pem;
    options.pem_cert_chain = security.tls_cert_pem;
    credentials = grpc::SslCredentials(options);
    if (!security.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(security.tls_server_name);
    }
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  if (security.auth_token.empty()) {
    return grpc::CreateCustomChannel(target, credentials, args);
  }
  std::vector<std::unique_ptr<
      grpc::experimental::ClientInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(
      std::make_unique<AuthTokenInterceptorFactory>(security.auth_token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      target, credentials, args, std::move(interceptors));
}

std::string SecurityHint(grpc::StatusCode code, const GrpcSecurity& security) {
  switch (code) {
    case grpc::StatusCode::UNAUTHENTICATED:
      return security.auth_token.empty()
                 ? " (the server requires the job's token: pass the same "
                   "--auth_token_file as the server's)"
                 : " (pass the same --auth_token_file as the server's)";
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      if (!security.tls) {
        return " (if the server uses TLS, pass --tls_ca with the CA that "
               "signed its certificate)";
      }
      return security.tls_ca_pem.empty()
                 ? " (TLS without --tls_ca verifies the server against the "
                   "system's roots: pass --tls_ca with the CA that signed the "
                   "server's certificate; does the server use TLS?)"
                 : " (TLS: is --tls_ca the CA that signed the server's "
                   "certificate, does that certificate name the host dialled "
                   "(or --tls_server_name), and does the server use TLS?)";
    default:
      return "";
  }
}

}  // namespace ringside
