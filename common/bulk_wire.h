// The parameter server's bulk data path (--ps_transport=tcp): ringside's
// own framing for push and pull chunks over persistent TCP connections,
// beside gRPC (which stays the control plane: registration, heartbeats,
// finish), as ps-lite and BytePS carry their data.
//
// Connection (one per worker, server and direction):
//   server -> client  Hello: "RSBULK1\n", 32-byte server nonce
//   client -> server  Auth:  "RSBULK1\n", int32 rank, int32 shard,
//                     int32 role (1 push, 2 pull), 32-byte client nonce,
//                     32-byte client proof
//   server -> client  Welcome: "RSBULK1\n", int32 status (0 accepted,
//                     1 refused), 32-byte server proof (refused: zeros)
// Each proof is HMAC-SHA256 keyed with the job's token over a label
// ("ringside bulk client" / "ringside bulk server"), both nonces, rank,
// shard and role: the token never crosses the wire, a replayed proof fails
// against a fresh nonce, and the client knows the server holds the token
// too. An empty token (a job without one) keys the HMAC with nothing.
//
// Frames (little-endian), then the payload:
//   uint32 magic "RSBF", uint16 kind, uint16 flags (0), int32 shard,
//   int32 rank, int64 step, int64 offset (elements), int64 count
// kinds and their payloads:
//   kPushChunk    client: `count` float32 of the gradient at `offset`
//   kPushEnd      client: none; `count` chunks were sent for `step`
//   kPushAck      server: none; `count` chunks were accepted
//   kPullRequest  client: none; `step` is the version, `count` the chunks
//   kPullChunk    server: `count` float32 parameters at `offset`
//   kPullEnd      server: none; `count` chunks were sent
//   kError        either: `count` bytes of UTF-8 message (<= 4096);
//                 `step` holds the absl::StatusCode
// ParseBulkHeader checks every field against what the connection allows
// (its shard and rank, the kinds its direction may receive, the largest
// chunk, step and offset within bounds) and refuses anything else,
// naming the field. Pure functions; thread-safe.
#ifndef RINGSIDE_COMMON_BULK_WIRE_H_
#define RINGSIDE_COMMON_BULK_WIRE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

inline constexpr absl::string_view kBulkMagic = "RSBULK1\n";
inline constexpr int kBulkNonceBytes = 32;
inline constexpr int kBulkProofBytes = 32;
inline constexpr int kBulkHelloBytes = 8 + kBulkNonceBytes;
inline constexpr int kBulkAuthBytes = 8 + 12 + kBulkNonceBytes + kBulkProofBytes;
inline constexpr int kBulkWelcomeBytes = 8 + 4 + kBulkProofBytes;
inline constexpr int kBulkHeaderBytes = 40;
inline constexpr int64_t kBulkMaxErrorBytes = 4096;

enum class BulkRole : int32_t { kPush = 1, kPull = 2 };

enum class BulkKind : uint16_t {
  kPushChunk = 1,
  kPushEnd = 2,
  kPushAck = 3,
  kPullRequest = 4,
  kPullChunk = 5,
  kPullEnd = 6,
  kError = 7,
};
const char* BulkKindName(BulkKind kind);

struct BulkHeader {
  BulkKind kind = BulkKind::kError;
  int32_t shard = 0;
  int32_t rank = 0;
  int64_t step = 0;
  int64_t offset = 0;
  int64_t count = 0;
  // Payload bytes that follow: 4·count for chunks, count for kError.
  int64_t payload_bytes() const;
};

// A header of `kind` with these fields (offset 0).
BulkHeader MakeBulkHeader(BulkKind kind, int32_t shard, int32_t rank,
                          int64_t step, int64_t count);
std::string EncodeBulkHeader(const BulkHeader& header);

// What a connection accepts from its peer.
struct BulkLimits {
  int32_t shard = 0;
  int32_t rank = 0;
  // Which side reads: the server reads a push connection's kPushChunk and
  // kPushEnd and a pull connection's kPullRequest; the client the answers.
  bool server = true;
  BulkRole role = BulkRole::kPush;
  // Largest chunk in elements, and the key range chunks lie in (the
  // server's shard of the flat buffer).
  int64_t max_chunk_elements = 0;
  int64_t range_begin = 0;
  int64_t range_end = 0;
};

// INVALID_ARGUMENT naming the field for a header `limits` does not allow;
// `bytes` must be kBulkHeaderBytes long (else INVALID_ARGUMENT).
absl::StatusOr<BulkHeader> ParseBulkHeader(absl::string_view bytes,
                                           const BulkLimits& limits);

// The handshake's messages.
struct BulkAuth {
  int32_t rank = 0;
  int32_t shard = 0;
  BulkRole role = BulkRole::kPush;
  std::string client_nonce;  // kBulkNonceBytes
  std::string proof;         // kBulkProofBytes
};
std::string NewBulkNonce();  // kBulkNonceBytes from the OS's CSPRNG
std::string EncodeBulkHello(absl::string_view server_nonce);
absl::StatusOr<std::string> ParseBulkHello(absl::string_view bytes);
std::string EncodeBulkAuth(const BulkAuth& auth);
absl::StatusOr<BulkAuth> ParseBulkAuth(absl::string_view bytes);
std::string EncodeBulkWelcome(bool accepted, absl::string_view server_proof);
// The server's proof, or PERMISSION_DENIED when it refused.
absl::StatusOr<std::string> ParseBulkWelcome(absl::string_view bytes);

// HMAC-SHA256(token, label || server_nonce || client_nonce || rank ||
// shard || role); `client` picks the label.
std::string BulkProof(absl::string_view token, bool client,
                      absl::string_view server_nonce,
                      absl::string_view client_nonce, int32_t rank,
                      int32_t shard, BulkRole role);
// Compares in time independent of where they differ.
bool BulkProofsEqual(absl::string_view a, absl::string_view b);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_BULK_WIRE_H_
