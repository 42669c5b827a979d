// Job token authentication for every gRPC call (parameter servers and the
// rendezvous store).
//
// Every process of a job reads the same secret token from --auth_token_file.
// Clients send it with every call as the metadata entry
//   authorization: Bearer <token>
// (common/grpc_credentials.h attaches it to every call of a channel), and
// every server handler starts with CheckAuthToken, which rejects a call
// without the token or with another one as UNAUTHENTICATED. The comparison
// takes the same time wherever the tokens differ, and no message ever
// contains a token.
//
// The token works the same over insecure channels and TLS; without TLS it
// travels in clear text, so jobs crossing untrusted networks use both.
//
// Thread-safe: pure functions (LoadAuthToken/WriteAuthTokenFile touch only
// their file).
#ifndef RINGSIDE_COMMON_AUTH_H_
#define RINGSIDE_COMMON_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

// Metadata key and value prefix that carry the token.
inline constexpr char kAuthMetadataKey[] = "authorization";
inline constexpr char kAuthScheme[] = "Bearer ";
// Longest token accepted (bytes).
inline constexpr size_t kMaxAuthTokenBytes = 4096;

// INVALID_ARGUMENT unless `token` is 1..kMaxAuthTokenBytes printable ASCII
// characters without spaces (what a metadata value can carry unchanged).
absl::Status ValidateAuthToken(absl::string_view token);

// Reads the token from `path`: the file's content with leading and trailing
// whitespace (a final newline) removed, validated as above. Blocking (reads
// the file). NOT_FOUND / PERMISSION_DENIED when unreadable, INVALID_ARGUMENT
// when empty, whitespace only or otherwise invalid; messages name the path,
// never the content. Sets *warning (if non-null) when other users may read
// the file (mode bits for group/other), else clears it.
absl::StatusOr<std::string> LoadAuthToken(const std::string& path,
                                          std::string* warning = nullptr);

// A fresh random token: 64 hex digits from the OS's random source.
// INTERNAL if /dev/urandom cannot be read.
absl::StatusOr<std::string> GenerateAuthToken();

// Writes `token` to a new file at `path` readable by its owner only (0600);
// fails (ALREADY_EXISTS) rather than overwrite an existing file. Blocking.
absl::Status WriteAuthTokenFile(const std::string& path,
                                absl::string_view token);

// The metadata value a client sends: "Bearer <token>".
std::string AuthMetadataValue(absl::string_view token);

// Whether `a` equals `b`, in time that depends on b's length only.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

// The server-side check every handler runs first. OK when `expected` is
// empty (no token configured) or the call carries "Bearer <expected>";
// UNAUTHENTICATED saying whether the token was missing, malformed or wrong
// otherwise. Non-blocking.
grpc::Status CheckAuthToken(const grpc::ServerContextBase& context,
                            absl::string_view expected);
// The same check on a call's client metadata.
grpc::Status CheckAuthMetadata(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
    absl::string_view expected);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_AUTH_H_
