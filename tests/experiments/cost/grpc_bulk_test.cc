// RunGrpcBulk: the bare-gRPC reference moves every byte both ways (the
// client checks the server's chunk count and the downloaded payload) for
// whole and ragged chunkings and several clients, and refuses bad counts.
#include "experiments/cost/grpc_bulk.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

TEST(GrpcBulkTest, MovesEveryByteBothWays) {
  struct Case {
    int clients;
    int64_t bytes, chunk_bytes;
  };
  for (const Case& c : {Case{1, 1 << 20, 256 << 10}, Case{2, 1 << 20, 1 << 20},
                        Case{3, (1 << 20) + 12, 100 << 10},
                        Case{1, 40, 1 << 20}}) {
    absl::StatusOr<GrpcBulkResult> r =
        RunGrpcBulk(c.clients, c.bytes, c.chunk_bytes, /*rounds=*/2,
                    /*warmup_rounds=*/1, absl::Seconds(30));
    ASSERT_TRUE(r.ok()) << r.status() << " clients " << c.clients << " bytes "
                        << c.bytes << " chunk " << c.chunk_bytes;
    EXPECT_EQ(r->bytes_moved, 2 * (c.bytes / 4 * 4) * 2 * c.clients);
    EXPECT_GT(r->seconds, 0.0);
  }
}

TEST(GrpcBulkTest, RefusesBadCounts) {
  for (auto [clients, bytes, chunk, rounds, warmup] :
       {std::tuple{0, 64, 64, 1, 0}, std::tuple{1, 0, 64, 1, 0},
        std::tuple{1, 64, 0, 1, 0}, std::tuple{1, 64, 64, 0, 0},
        std::tuple{1, 64, 64, 1, -1}}) {
    EXPECT_EQ(RunGrpcBulk(clients, bytes, chunk, rounds, warmup,
                          absl::Seconds(5))
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace ringside
