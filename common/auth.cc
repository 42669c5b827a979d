#include "common/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ringside {

absl::Status ValidateAuthToken(absl::string_view token) {
  if (token.empty()) {
    return absl::InvalidArgumentError("the auth token is empty");
  }
  if (token.size() > kMaxAuthTokenBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the auth token has ", token.size(),
                     " bytes; at most ", kMaxAuthTokenBytes, " are allowed"));
  }
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c <= 0x20 || c >= 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the auth token has a space, control or non-ASCII byte at position ",
          i, "; use printable ASCII without spaces"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> LoadAuthToken(const std::string& path,
                                          std::string* warning) {
  if (warning != nullptr) warning->clear();
  if (path.empty()) {
    return absl::InvalidArgumentError("empty auth token file name");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string why = absl::StrCat("cannot read auth token file ", path,
                                         ": ", std::strerror(err));
    if (err == EACCES) return absl::PermissionDeniedError(why);
    return absl::NotFoundError(why);
  }
  // Read at most a little more than the longest token (plus whitespace).
  std::string content(kMaxAuthTokenBytes + 64, '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  content.resize(static_cast<size_t>(in.gcount()));
  const absl::string_view token = absl::StripAsciiWhitespace(content);
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "auth token file ", path, " is empty or holds only whitespace"));
  }
  if (absl::Status s = ValidateAuthToken(token); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("auth token file ", path, ": ", s.message()));
  }
  struct stat st;
  if (warning != nullptr && stat(path.c_str(), &st) == 0 &&
      (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%03o", st.st_mode & 0777);
    *warning = absl::StrCat("auth token file ", path,
                            " is accessible to other users (mode ", mode,
                            "); chmod 600 it");
  }
  return std::string(token);
}

absl::StatusOr<std::string> GenerateAuthToken() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string bytes(32, '\0');
  random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!random || random.gcount() != static_cast<std::streamsize>(bytes.size())) {
    return absl::InternalError("cannot read 32 bytes from /dev/urandom");
  }
  return absl::BytesToHexString(bytes);
}

absl::Status WriteAuthTokenFile(const std::string& path,
                                absl::string_view token) {
  if (absl::Status s = ValidateAuthToken(token); !s.ok()) return s;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                      S_IRUSR | S_IWUSR);
  if (fd < 0) {
    const int err = errno;
    const std::string why = absl::StrCat("cannot create auth token file ",
                                         path, ": ", std::strerror(err));
    if (err == EEXIST) return absl::AlreadyExistsError(why);
    return absl::UnavailableError(why);
  }
  const std::string line = absl::StrCat(token, "\n");
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      close(fd);
      unlink(path.c_str());
      return absl::UnavailableError(absl::StrCat(
          "cannot write auth token file ", path, ": ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    unlink(path.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot write auth token file ", path));
  }
  return absl::OkStatus();
}

std::string AuthMetadataValue(absl::string_view token) {
  return absl::StrCat(kAuthScheme, token);
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Walk all of b whatever a is; a length mismatch only sets a bit.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff = diff | (x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

grpc::Status CheckAuthMetadata(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
    absl::string_view expected) {
  if (expected.empty()) return grpc::Status::OK;
  const auto it = metadata.find(kAuthMetadataKey);
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing auth token: this server requires the job's "
                        "token (--auth_token_file)");
  }
  absl::string_view value(it->second.data(), it->second.size());
  const absl::string_view scheme(kAuthScheme);
  if (value.substr(0, scheme.size()) != scheme) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "malformed auth token: the authorization metadata "
                        "must be 'Bearer <token>'");
  }
  value.remove_prefix(scheme.size());
  if (!ConstantTimeEquals(value, expected)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "wrong auth token: it differs from this server's "
                        "(check --auth_token_file)");
  }
  return grpc::Status::OK;
}

grpc::Status CheckAuthToken(const grpc::ServerContextBase& context,
                            absl::string_view expected) {
  return CheckAuthMetadata(context.client_metadata(), expected);
}

}  // namespace ringside
