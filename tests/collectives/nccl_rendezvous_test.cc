// NcclRendezvous: the Store side of NCCL group set-up, with ranks as threads
// over an in-memory store. Needs no GPU, so it runs everywhere.
#include "collectives/nccl_rendezvous.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/in_memory_store.h"
#include "tests/testing/rank_threads.h"

namespace ringside {
namespace {

using ::ringside::testing::RunRanks;

TEST(NcclRendezvousTest, ExchangeReturnsEveryRanksValueInRankOrder) {
  InMemoryStore store;
  std::vector<std::vector<std::string>> seen(3);
  for (const absl::Status& s : RunRanks({0, 1, 2}, [&](int r) -> absl::Status {
         NcclRendezvous rendezvous(store, "g", r, 3, absl::Seconds(10));
         absl::StatusOr<std::vector<std::string>> values =
             rendezvous.Exchange("host", "join", absl::StrCat("host", r % 2));
         if (!values.ok()) return values.status();
         seen[r] = *values;
         return absl::OkStatus();
       })) {
    EXPECT_TRUE(s.ok()) << s;
  }
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(seen[r], (std::vector<std::string>{"host0", "host1", "host0"}));
  }
}

TEST(NcclRendezvousTest, MissingRankIsNamedAfterTheTimeout) {
  InMemoryStore store;
  const absl::Time start = absl::Now();
  // Rank 0 never shows up.
  for (const absl::Status& s : RunRanks({1, 2}, [&](int r) {
         NcclRendezvous rendezvous(store, "g", r, 3, absl::Seconds(1));
         return rendezvous.Exchange("host", "join", "h").status();
       })) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("rank(s) [0] of 3 did not join"),
              std::string::npos)
        << s;
    EXPECT_NE(s.message().find("store prefix \"g\""), std::string::npos) << s;
  }
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(900));
  EXPECT_LT(took, absl::Seconds(3));
}

TEST(NcclRendezvousTest, RankThatFailsStopsItsPeersAtOnce) {
  InMemoryStore store;
  const absl::Time start = absl::Now();
  std::vector<absl::Status> status = RunRanks({0, 1}, [&](int r) {
    NcclRendezvous rendezvous(store, "g", r, 2, absl::Seconds(20));
    if (r == 1) {
      return rendezvous.Fail(
          "host", absl::UnavailableError("no GPU here: test says so"));
    }
    return rendezvous.Exchange("host", "join", "h").status();
  });
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(status[0].code(), absl::StatusCode::kAborted) << status[0];
  EXPECT_NE(status[0].message().find("rank 1 failed"), std::string::npos)
      << status[0];
  EXPECT_NE(status[0].message().find("no GPU here: test says so"),
            std::string::npos)
      << status[0];
  // The failing rank returns its own error, annotated.
  EXPECT_EQ(status[1].code(), absl::StatusCode::kUnavailable) << status[1];
  EXPECT_NE(status[1].message().find("rank 1 of 2"), std::string::npos);
}

TEST(NcclRendezvousTest, UniqueIdTravelsByteForByte) {
  InMemoryStore store;
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(i * 37);
  std::string fetched;
  for (const absl::Status& s : RunRanks({0, 1}, [&](int r) -> absl::Status {
         NcclRendezvous rendezvous(store, "g", r, 2, absl::Seconds(10));
         if (r == 0) return rendezvous.PublishUniqueId(id);
         absl::StatusOr<std::string> got = rendezvous.FetchUniqueId(id.size());
         if (!got.ok()) return got.status();
         fetched = *got;
         return absl::OkStatus();
       })) {
    EXPECT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(fetched, id);
  NcclRendezvous other(store, "g", 1, 2, absl::Seconds(1));
  EXPECT_EQ(other.FetchUniqueId(64).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(NcclRendezvousTest, MissingUniqueIdNamesRankZero) {
  InMemoryStore store;
  NcclRendezvous rendezvous(store, "g", 1, 2, absl::Milliseconds(300));
  absl::Status s = rendezvous.FetchUniqueId(128).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("rank 0 did not publish the NCCL unique id"),
            std::string::npos)
      << s;
}

TEST(NcclRendezvousTest, RankZeroFailingToMakeTheIdStopsThePeers) {
  InMemoryStore store;
  NcclRendezvous zero(store, "g", 0, 2, absl::Seconds(10));
  zero.Fail(NcclRendezvous::kUniqueIdPhase,
            absl::InternalError("ncclGetUniqueId: boom"))
      .IgnoreError();
  NcclRendezvous one(store, "g", 1, 2, absl::Seconds(10));
  absl::Status s = one.FetchUniqueId(128).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_NE(s.message().find("rank 0 failed"), std::string::npos) << s;
  EXPECT_NE(s.message().find("ncclGetUniqueId: boom"), std::string::npos) << s;
}

TEST(NcclRendezvousTest, LocalRankCountsLowerRanksOnTheSameHost) {
  const std::vector<std::string> hosts = {"a", "b", "a", "a", "b"};
  const LocalRank r3 = LocalRankOf(hosts, 3);
  EXPECT_EQ(r3.rank, 2);
  EXPECT_EQ(r3.size, 3);
  const LocalRank r4 = LocalRankOf(hosts, 4);
  EXPECT_EQ(r4.rank, 1);
  EXPECT_EQ(r4.size, 2);
  const LocalRank r0 = LocalRankOf({"solo"}, 0);
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.size, 1);
}

TEST(NcclRendezvousTest, DistinctGpusPerHostPass) {
  EXPECT_TRUE(CheckDistinctGpus({"a"}, {"0000:01:00.0"}).ok());
  EXPECT_TRUE(
      CheckDistinctGpus({"a", "a"}, {"0000:01:00.0", "0000:02:00.0"}).ok());
  // The same bus id on two hosts is two GPUs.
  EXPECT_TRUE(
      CheckDistinctGpus({"a", "b"}, {"0000:01:00.0", "0000:01:00.0"}).ok());
}

TEST(NcclRendezvousTest, MoreRanksThanGpusOnAHostIsFailedPrecondition) {
  // Three ranks on a two-GPU host, devices picked by local rank mod 2.
  absl::Status s = CheckDistinctGpus(
      {"h", "h", "h"}, {"0000:01:00.0", "0000:02:00.0", "0000:01:00.0"});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find(
                "NCCL needs a distinct GPU per rank: 3 ranks, 2 GPUs on host "
                "\"h\" (ranks 0 and 2 both use GPU 0000:01:00.0)"),
            std::string::npos)
      << s;
  // Two single-GPU processes given the same GPU, next to a fine host.
  s = CheckDistinctGpus(
      {"ok", "ok", "bad", "bad"},
      {"0000:01:00.0", "0000:02:00.0", "0000:07:00.0", "0000:07:00.0"});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("2 ranks, 1 GPU on host \"bad\" (ranks 2 and 3"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringside
