// Fuzz target: the bulk data path's frame and handshake parsers
// (common/bulk_wire.h), which a parameter server runs on bytes from any
// peer that connects to its bulk port. Input byte 0 picks what to parse
// and the limits: bits 0-1 the parser (frame header as the server, as the
// worker, a handshake Auth, a Welcome), bit 2 the push or pull role; the
// rest are the bytes.
//
// Invariants: a parser refuses or returns a value; an accepted frame
// header lies within the limits (its kind allowed for the direction, its
// shard and rank the connection's, a chunk non-empty, at most the largest
// chunk and inside the range, an error message at most 4096 bytes) and
// re-encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/bulk_wire.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  using ringside::BulkKind;
  switch (mode & 3) {
    case 0:
    case 1: {
      ringside::BulkLimits limits;
      limits.server = (mode & 3) == 0;
      limits.role = (mode & 4) ? ringside::BulkRole::kPull
                               : ringside::BulkRole::kPush;
      limits.shard = 1;
      limits.rank = 2;
      limits.max_chunk_elements = 4096;
      limits.range_begin = 1000;
      limits.range_end = 9000;
      absl::StatusOr<ringside::BulkHeader> h =
          ringside::ParseBulkHeader(bytes, limits);
      if (!h.ok()) {
        FUZZ_CHECK(absl::IsInvalidArgument(h.status()),
                   "unexpected error code: %s", h.status().ToString().c_str());
        return 0;
      }
      FUZZ_CHECK(h->shard == 1 && h->rank == 2 && h->step >= 0 &&
                     h->count >= 0,
                 "accepted shard %d rank %d step %lld count %lld", h->shard,
                 h->rank, static_cast<long long>(h->step),
                 static_cast<long long>(h->count));
      if (h->kind == BulkKind::kPushChunk || h->kind == BulkKind::kPullChunk) {
        FUZZ_CHECK(h->count > 0 && h->count <= 4096 && h->offset >= 1000 &&
                       h->offset + h->count <= 9000,
                   "accepted a chunk of %lld at %lld",
                   static_cast<long long>(h->count),
                   static_cast<long long>(h->offset));
      }
      if (h->kind == BulkKind::kError) {
        FUZZ_CHECK(h->count <= ringside::kBulkMaxErrorBytes,
                   "accepted an error message of %lld bytes",
                   static_cast<long long>(h->count));
      }
      FUZZ_CHECK(ringside::EncodeBulkHeader(*h) == bytes,
                 "an accepted header does not re-encode to its bytes");
      return 0;
    }
    case 2: {
      absl::StatusOr<ringside::BulkAuth> a = ringside::ParseBulkAuth(bytes);
      if (a.ok()) {
        FUZZ_CHECK(ringside::EncodeBulkAuth(*a) == bytes,
                   "an accepted handshake does not re-encode to its bytes");
      }
      return 0;
    }
    default: {
      absl::StatusOr<std::string> proof = ringside::ParseBulkWelcome(bytes);
      if (proof.ok()) {
        FUZZ_CHECK(proof->size() == ringside::kBulkProofBytes,
                   "a proof of %zu bytes", proof->size());
      }
      return 0;
    }
  }
}
