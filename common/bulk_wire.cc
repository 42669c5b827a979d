#include "common/bulk_wire.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

constexpr uint32_t kFrameMagic = 0x46425352;  // "RSBF" little-endian

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t GetLe(absl::string_view in, int at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i]))
         << (8 * i);
  }
  return v;
}

absl::Status Refused(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("bulk path: refused frame: ", what));
}

bool ServerReads(BulkRole role, BulkKind kind) {
  return role == BulkRole::kPush
             ? (kind == BulkKind::kPushChunk || kind == BulkKind::kPushEnd)
             : kind == BulkKind::kPullRequest;
}

bool ClientReads(BulkRole role, BulkKind kind) {
  if (kind == BulkKind::kError) return true;
  return role == BulkRole::kPush
             ? kind == BulkKind::kPushAck
             : (kind == BulkKind::kPullChunk || kind == BulkKind::kPullEnd);
}

}  // namespace

const char* BulkKindName(BulkKind kind) {
  switch (kind) {
    case BulkKind::kPushChunk: return "push chunk";
    case BulkKind::kPushEnd: return "push end";
    case BulkKind::kPushAck: return "push ack";
    case BulkKind::kPullRequest: return "pull request";
    case BulkKind::kPullChunk: return "pull chunk";
    case BulkKind::kPullEnd: return "pull end";
    case BulkKind::kError: return "error";
  }
  return "unknown";
}

int64_t BulkHeader::payload_bytes() const {
  switch (kind) {
    case BulkKind::kPushChunk:
    case BulkKind::kPullChunk:
      return 4 * count;
    case BulkKind::kError:
      return count;
    default:
      return 0;
  }
}

BulkHeader MakeBulkHeader(BulkKind kind, int32_t shard, int32_t rank,
                          int64_t step, int64_t count) {
  BulkHeader h;
  h.kind = kind;
  h.shard = shard;
  h.rank = rank;
  h.step = step;
  h.count = count;
  return h;
}

std::string EncodeBulkHeader(const BulkHeader& h) {
  std::string out;
  out.reserve(kBulkHeaderBytes);
  PutLe(&out, kFrameMagic, 4);
  PutLe(&out, static_cast<uint16_t>(h.kind), 2);
  PutLe(&out, 0, 2);
  PutLe(&out, static_cast<uint32_t>(h.shard), 4);
  PutLe(&out, static_cast<uint32_t>(h.rank), 4);
  PutLe(&out, static_cast<uint64_t>(h.step), 8);
  PutLe(&out, static_cast<uint64_t>(h.offset), 8);
  PutLe(&out, static_cast<uint64_t>(h.count), 8);
  return out;
}

absl::StatusOr<BulkHeader> ParseBulkHeader(absl::string_view bytes,
                                           const BulkLimits& limits) {
  if (bytes.size() != kBulkHeaderBytes) {
    return Refused(absl::StrCat("header of ", bytes.size(), " bytes, not ",
                                kBulkHeaderBytes));
  }
  if (GetLe(bytes, 0, 4) != kFrameMagic) return Refused("bad magic");
  const uint16_t kind = static_cast<uint16_t>(GetLe(bytes, 4, 2));
  if (kind < 1 || kind > 7) return Refused(absl::StrCat("unknown kind ", kind));
  if (GetLe(bytes, 6, 2) != 0) return Refused("flags not 0");
  BulkHeader h;
  h.kind = static_cast<BulkKind>(kind);
  h.shard = static_cast<int32_t>(GetLe(bytes, 8, 4));
  h.rank = static_cast<int32_t>(GetLe(bytes, 12, 4));
  h.step = static_cast<int64_t>(GetLe(bytes, 16, 8));
  h.offset = static_cast<int64_t>(GetLe(bytes, 24, 8));
  h.count = static_cast<int64_t>(GetLe(bytes, 32, 8));
  const bool allowed = limits.server ? ServerReads(limits.role, h.kind)
                                     : ClientReads(limits.role, h.kind);
  if (!allowed) {
    return Refused(absl::StrCat(
        "a ", BulkKindName(h.kind), " frame on a ",
        limits.role == BulkRole::kPush ? "push" : "pull", " connection to the ",
        limits.server ? "server" : "worker"));
  }
  if (h.shard != limits.shard) {
    return Refused(absl::StrCat("shard ", h.shard, " on a connection of shard ",
                                limits.shard));
  }
  if (h.rank != limits.rank) {
    return Refused(absl::StrCat("rank ", h.rank, " on a connection of rank ",
                                limits.rank));
  }
  if (h.step < 0) return Refused(absl::StrCat("step ", h.step));
  if (h.count < 0) return Refused(absl::StrCat("count ", h.count));
  switch (h.kind) {
    case BulkKind::kPushChunk:
    case BulkKind::kPullChunk:
      if (h.count == 0 || h.count > limits.max_chunk_elements) {
        return Refused(absl::StrCat("a chunk of ", h.count,
                                    " elements (at most ",
                                    limits.max_chunk_elements, ")"));
      }
      if (h.offset < limits.range_begin ||
          h.offset > limits.range_end - h.count) {
        return Refused(absl::StrCat("a chunk of ", h.count, " at offset ",
                                    h.offset, " outside the shard's range [",
                                    limits.range_begin, ", ",
                                    limits.range_end, ")"));
      }
      break;
    case BulkKind::kError:
      if (h.count > kBulkMaxErrorBytes) {
        return Refused(absl::StrCat("an error message of ", h.count,
                                    " bytes (at most ", kBulkMaxErrorBytes,
                                    ")"));
      }
      [[fallthrough]];
    default:
      if (h.offset != 0) return Refused(absl::StrCat("offset ", h.offset));
      break;
  }
  return h;
}

std::string NewBulkNonce() {
  std::string nonce(kBulkNonceBytes, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), kBulkNonceBytes);
  return nonce;
}

std::string EncodeBulkHello(absl::string_view server_nonce) {
  return absl::StrCat(kBulkMagic, server_nonce);
}

absl::StatusOr<std::string> ParseBulkHello(absl::string_view bytes) {
  if (bytes.size() != kBulkHelloBytes || bytes.substr(0, 8) != kBulkMagic) {
    return absl::InvalidArgumentError(
        "bulk path: the server's hello is not ringside's (bad magic)");
  }
  return std::string(bytes.substr(8));
}

std::string EncodeBulkAuth(const BulkAuth& a) {
  std::string out(kBulkMagic);
  PutLe(&out, static_cast<uint32_t>(a.rank), 4);
  PutLe(&out, static_cast<uint32_t>(a.shard), 4);
  PutLe(&out, static_cast<uint32_t>(a.role), 4);
  out += a.client_nonce;
  out += a.proof;
  return out;
}

absl::StatusOr<BulkAuth> ParseBulkAuth(absl::string_view bytes) {
  if (bytes.size() != kBulkAuthBytes || bytes.substr(0, 8) != kBulkMagic) {
    return absl::InvalidArgumentError(
        "bulk path: the peer's handshake is not ringside's (bad magic)");
  }
  BulkAuth a;
  a.rank = static_cast<int32_t>(GetLe(bytes, 8, 4));
  a.shard = static_cast<int32_t>(GetLe(bytes, 12, 4));
  const int32_t role = static_cast<int32_t>(GetLe(bytes, 16, 4));
  if (role != 1 && role != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("bulk path: handshake names role ", role));
  }
  a.role = static_cast<BulkRole>(role);
  a.client_nonce = std::string(bytes.substr(20, kBulkNonceBytes));
  a.proof = std::string(bytes.substr(20 + kBulkNonceBytes, kBulkProofBytes));
  return a;
}

std::string EncodeBulkWelcome(bool accepted, absl::string_view server_proof) {
  std::string out(kBulkMagic);
  PutLe(&out, accepted ? 0 : 1, 4);
  out += accepted ? std::string(server_proof)
                  : std::string(kBulkProofBytes, '\0');
  return out;
}

absl::StatusOr<std::string> ParseBulkWelcome(absl::string_view bytes) {
  if (bytes.size() != kBulkWelcomeBytes || bytes.substr(0, 8) != kBulkMagic) {
    return absl::InvalidArgumentError(
        "bulk path: the server's answer is not ringside's (bad magic)");
  }
  if (GetLe(bytes, 8, 4) != 0) {
    return absl::PermissionDeniedError(
        "bulk path: the parameter server refused the handshake (another "
        "job's token, or another rank or shard)");
  }
  return std::string(bytes.substr(12));
}

std::string BulkProof(absl::string_view token, bool client,
                      absl::string_view server_nonce,
                      absl::string_view client_nonce, int32_t rank,
                      int32_t shard, BulkRole role) {
  std::string message(client ? "ringside bulk client" : "ringside bulk server");
  message.append(server_nonce.data(), server_nonce.size());
  message.append(client_nonce.data(), client_nonce.size());
  PutLe(&message, static_cast<uint32_t>(rank), 4);
  PutLe(&message, static_cast<uint32_t>(shard), 4);
  PutLe(&message, static_cast<uint32_t>(role), 4);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // HMAC keys of any length, the empty one included.
  static const unsigned char kNoKey = 0;
  HMAC(EVP_sha256(),
       token.empty() ? &kNoKey : reinterpret_cast<const unsigned char*>(token.data()),
       static_cast<int>(token.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

bool BulkProofsEqual(absl::string_view a, absl::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace ringside
