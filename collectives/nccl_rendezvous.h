// NcclRendezvous: the Store protocol that sets up one NCCL group before NCCL
// itself runs, in plain C++ (no CUDA), so it is tested on any machine.
//
//   1. Every rank publishes a value under "<prefix>/<phase>/<rank>" and waits
//      for all others (Exchange): first its host name ("host": who shares a
//      host, hence each rank's local rank), then its GPU's PCI bus id
//      ("gpu": NCCL's distinct-GPU rule, CheckDistinctGpus).
//   2. Rank 0 publishes the NCCL unique id (hex) as its entry of phase
//      kUniqueIdPhase, "<prefix>/unique_id/0" (PublishUniqueId); the others
//      read it (FetchUniqueId).
//
// A rank that fails locally publishes its failure instead (Fail), so its
// peers stop at once with ABORTED naming it rather than waiting out the
// deadline. A rank that never shows up is named in DEADLINE_EXCEEDED.
// Every wait is bounded by one deadline for the whole rendezvous.
//
// Thread-safety: one NcclRendezvous per rank, used by one thread; ranks may
// run concurrently on one thread-safe Store (tests run one thread per rank).
#ifndef RINGSIDE_COLLECTIVES_NCCL_RENDEZVOUS_H_
#define RINGSIDE_COLLECTIVES_NCCL_RENDEZVOUS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collectives/store.h"

namespace ringside {

class NcclRendezvous {
 public:
  // The phase under which rank 0 publishes the unique id (or its failure).
  static constexpr char kUniqueIdPhase[] = "unique_id";

  // `store` is not owned and must outlive this object. `timeout` is the
  // bound on the whole rendezvous, counted from now; precondition:
  // 0 <= rank < size, non-empty prefix.
  NcclRendezvous(Store& store, std::string prefix, int rank, int size,
                 absl::Duration timeout);

  // Publishes `value` as this rank's entry of `phase` and blocks until every
  // rank has published one; returns all entries in rank order.
  // DEADLINE_EXCEEDED "... rank(s) [i, j] of N did not <missing_verb>";
  // ABORTED naming the first rank that published a failure in this phase.
  absl::StatusOr<std::vector<std::string>> Exchange(
      absl::string_view phase, absl::string_view missing_verb,
      absl::string_view value);

  // Publishes `failure` as this rank's entry of `phase` (so peers stop) and
  // returns it annotated with where(). Non-blocking (one Store::Set).
  absl::Status Fail(absl::string_view phase, const absl::Status& failure);

  // Rank 0: publishes the unique id bytes. Non-blocking.
  absl::Status PublishUniqueId(absl::string_view id);
  // Other ranks: blocks until rank 0 has published the id (or a failure in
  // its place) or the deadline passes: DEADLINE_EXCEEDED naming rank 0;
  // ABORTED if rank 0 failed; DATA_LOSS if the id is not `id_size` bytes.
  absl::StatusOr<std::string> FetchUniqueId(size_t id_size);

  // "nccl rendezvous (store prefix \"<prefix>\", rank <r> of <n>)".
  const std::string& where() const { return where_; }
  absl::Time deadline() const { return deadline_; }

 private:
  std::string Key(absl::string_view phase, int rank) const;

  Store& store_;
  const std::string prefix_;
  const int rank_;
  const int size_;
  const absl::Duration timeout_;
  const absl::Time deadline_;
  const std::string where_;
};

// This rank's place among the ranks on its host: `hosts[i]` is rank i's
// host; the local rank counts lower ranks on the same host.
struct LocalRank {
  int rank = 0;
  int size = 0;
};
LocalRank LocalRankOf(const std::vector<std::string>& hosts, int rank);

// NCCL's rule that no two ranks of a group share a GPU: `hosts[i]` and
// `gpus[i]` (a PCI bus id) say where rank i runs. OK, or FAILED_PRECONDITION
// "NCCL needs a distinct GPU per rank: N ranks, M GPUs on host \"h\" (ranks
// a and b both use GPU x) ..." for the first host that breaks it, where N
// counts that host's ranks and M the distinct GPUs they were given.
absl::Status CheckDistinctGpus(const std::vector<std::string>& hosts,
                               const std::vector<std::string>& gpus);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_NCCL_RENDEZVOUS_H_
