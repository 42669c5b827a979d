// The bulk data path's framing and handshake (common/bulk_wire.h): headers
// round-trip, every field a connection does not allow is refused naming
// it (bad magic, unknown kind, a kind of the other direction, another
// shard or rank, a chunk too large, empty or outside the range, a negative
// step, an error message too long, a truncated header), and the keyed
// handshake accepts only the job's token, in both directions.
#include "common/bulk_wire.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace ringside {
namespace {

BulkLimits ServerPushLimits() {
  BulkLimits limits;
  limits.shard = 1;
  limits.rank = 2;
  limits.server = true;
  limits.role = BulkRole::kPush;
  limits.max_chunk_elements = 256;
  limits.range_begin = 1000;
  limits.range_end = 2000;
  return limits;
}

BulkHeader Chunk() {
  BulkHeader h;
  h.kind = BulkKind::kPushChunk;
  h.shard = 1;
  h.rank = 2;
  h.step = 7;
  h.offset = 1256;
  h.count = 256;
  return h;
}

void ExpectRefused(const std::string& bytes, const BulkLimits& limits,
                   const std::string& naming) {
  absl::StatusOr<BulkHeader> h = ParseBulkHeader(bytes, limits);
  ASSERT_FALSE(h.ok()) << naming;
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find(naming), std::string::npos)
      << h.status();
}

TEST(BulkWireTest, HeadersRoundTrip) {
  const std::string bytes = EncodeBulkHeader(Chunk());
  ASSERT_EQ(bytes.size(), static_cast<size_t>(kBulkHeaderBytes));
  absl::StatusOr<BulkHeader> h = ParseBulkHeader(bytes, ServerPushLimits());
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->kind, BulkKind::kPushChunk);
  EXPECT_EQ(h->step, 7);
  EXPECT_EQ(h->offset, 1256);
  EXPECT_EQ(h->count, 256);
  EXPECT_EQ(h->payload_bytes(), 1024);
}

TEST(BulkWireTest, EveryFieldOutsideTheLimitsIsRefused) {
  const BulkLimits limits = ServerPushLimits();
  std::string bad = EncodeBulkHeader(Chunk());
  bad[0] ^= 1;
  ExpectRefused(bad, limits, "bad magic");
  ExpectRefused(EncodeBulkHeader(Chunk()).substr(0, 39), limits,
                "header of 39 bytes");
  bad = EncodeBulkHeader(Chunk());
  bad[4] = 9;
  ExpectRefused(bad, limits, "unknown kind 9");
  bad = EncodeBulkHeader(Chunk());
  bad[6] = 1;
  ExpectRefused(bad, limits, "flags");
  BulkHeader h = Chunk();
  h.kind = BulkKind::kPullChunk;  // the server's own kind
  ExpectRefused(EncodeBulkHeader(h), limits, "a pull chunk frame on a push");
  h = Chunk();
  h.shard = 0;
  ExpectRefused(EncodeBulkHeader(h), limits, "shard 0 on a connection of "
                                             "shard 1");
  h = Chunk();
  h.rank = 3;
  ExpectRefused(EncodeBulkHeader(h), limits, "rank 3");
  h = Chunk();
  h.step = -1;
  ExpectRefused(EncodeBulkHeader(h), limits, "step -1");
  h = Chunk();
  h.count = 257;  // oversize
  ExpectRefused(EncodeBulkHeader(h), limits, "a chunk of 257 elements");
  h.count = 0;
  ExpectRefused(EncodeBulkHeader(h), limits, "a chunk of 0 elements");
  h = Chunk();
  h.offset = 1800;  // runs past the range's end
  ExpectRefused(EncodeBulkHeader(h), limits, "outside the shard's range");
  h.offset = 999;
  ExpectRefused(EncodeBulkHeader(h), limits, "outside the shard's range");
  h.offset = std::numeric_limits<int64_t>::max();  // no overflow
  ExpectRefused(EncodeBulkHeader(h), limits, "outside the shard's range");
  // What the worker reads on its push connection: an ack or an error.
  BulkLimits worker = limits;
  worker.server = false;
  h = Chunk();
  h.kind = BulkKind::kError;
  h.offset = 0;
  h.count = kBulkMaxErrorBytes + 1;
  ExpectRefused(EncodeBulkHeader(h), worker, "an error message of 4097");
  h.count = 10;
  EXPECT_TRUE(ParseBulkHeader(EncodeBulkHeader(h), worker).ok());
  EXPECT_FALSE(ParseBulkHeader(EncodeBulkHeader(Chunk()), worker).ok());
}

TEST(BulkWireTest, TheHandshakeAcceptsOnlyTheJobsToken) {
  const std::string server_nonce = NewBulkNonce();
  ASSERT_EQ(server_nonce.size(), static_cast<size_t>(kBulkNonceBytes));
  EXPECT_NE(server_nonce, NewBulkNonce());
  absl::StatusOr<std::string> nonce =
      ParseBulkHello(EncodeBulkHello(server_nonce));
  ASSERT_TRUE(nonce.ok());
  EXPECT_EQ(*nonce, server_nonce);

  BulkAuth auth;
  auth.rank = 3;
  auth.shard = 1;
  auth.role = BulkRole::kPull;
  auth.client_nonce = NewBulkNonce();
  auth.proof = BulkProof("job-token", true, server_nonce, auth.client_nonce,
                         3, 1, BulkRole::kPull);
  absl::StatusOr<BulkAuth> back = ParseBulkAuth(EncodeBulkAuth(auth));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->role, BulkRole::kPull);
  // The server's check: the same token, nonces, rank, shard and role.
  EXPECT_TRUE(BulkProofsEqual(
      back->proof, BulkProof("job-token", true, server_nonce,
                             back->client_nonce, 3, 1, BulkRole::kPull)));
  EXPECT_FALSE(BulkProofsEqual(
      back->proof, BulkProof("other-token", true, server_nonce,
                             back->client_nonce, 3, 1, BulkRole::kPull)));
  EXPECT_FALSE(BulkProofsEqual(
      back->proof, BulkProof("job-token", true, NewBulkNonce(),
                             back->client_nonce, 3, 1, BulkRole::kPull)));
  EXPECT_FALSE(BulkProofsEqual(
      back->proof, BulkProof("job-token", true, server_nonce,
                             back->client_nonce, 4, 1, BulkRole::kPull)));
  // The server's proof differs from the client's (another label).
  EXPECT_FALSE(BulkProofsEqual(
      back->proof, BulkProof("job-token", false, server_nonce,
                             back->client_nonce, 3, 1, BulkRole::kPull)));
  // No token text in what crosses the wire.
  EXPECT_EQ(EncodeBulkAuth(auth).find("job-token"), std::string::npos);

  absl::StatusOr<std::string> proof =
      ParseBulkWelcome(EncodeBulkWelcome(true, std::string(32, 'p')));
  ASSERT_TRUE(proof.ok());
  EXPECT_EQ(*proof, std::string(32, 'p'));
  EXPECT_EQ(ParseBulkWelcome(EncodeBulkWelcome(false, "")).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(ParseBulkAuth("RSBULK1\nshort").ok());
  std::string role = EncodeBulkAuth(auth);
  role[16] = 5;
  EXPECT_FALSE(ParseBulkAuth(role).ok());
}

}  // namespace
}  // namespace ringside
