#include "collectives/nccl_rendezvous.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

// Entries are "+<value>" or "!<failure message>".
constexpr char kValue = '+';
constexpr char kFailure = '!';

std::string Plural(int n, absl::string_view noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

}  // namespace

NcclRendezvous::NcclRendezvous(Store& store, std::string prefix, int rank,
                               int size, absl::Duration timeout)
    : store_(store),
      prefix_(std::move(prefix)),
      rank_(rank),
      size_(size),
      timeout_(timeout),
      deadline_(absl::Now() + timeout),
      where_(absl::StrCat("nccl rendezvous (store prefix \"", prefix_,
                          "\", rank ", rank, " of ", size, ")")) {}

std::string NcclRendezvous::Key(absl::string_view phase, int rank) const {
  return absl::StrCat(prefix_, "/", phase, "/", rank);
}

absl::StatusOr<std::vector<std::string>> NcclRendezvous::Exchange(
    absl::string_view phase, absl::string_view missing_verb,
    absl::string_view value) {
  RS_RETURN_IF_ERROR(
      Annotate(store_.Set(Key(phase, rank_),
                          absl::StrCat(std::string(1, kValue), value)),
               where_));
  std::vector<std::string> keys;
  for (int i = 0; i < size_; ++i) keys.push_back(Key(phase, i));
  const absl::Status waited = store_.Wait(keys, deadline_ - absl::Now());
  if (waited.code() == absl::StatusCode::kDeadlineExceeded) {
    std::vector<int> absent;
    for (int i = 0; i < size_; ++i) {
      if (store_.Get(keys[i], absl::ZeroDuration()).status().code() ==
          absl::StatusCode::kDeadlineExceeded) {
        absent.push_back(i);
      }
    }
    return absl::DeadlineExceededError(absl::StrCat(
        where_, ": timed out after ", absl::FormatDuration(timeout_),
        ": rank(s) [", absl::StrJoin(absent, ", "), "] of ", size_, " did not ",
        missing_verb));
  }
  RS_RETURN_IF_ERROR(Annotate(waited, where_));
  std::vector<std::string> values;
  for (int i = 0; i < size_; ++i) {
    RS_ASSIGN_OR_RETURN(std::string entry,
                        store_.Get(keys[i], absl::ZeroDuration()));
    if (entry.empty() || entry[0] != kValue) {
      return absl::AbortedError(absl::StrCat(
          where_, ": rank ", i,
          " failed: ", entry.empty() ? "(no message)" : entry.substr(1)));
    }
    values.push_back(entry.substr(1));
  }
  return values;
}

absl::Status NcclRendezvous::Fail(absl::string_view phase,
                                  const absl::Status& failure) {
  // Best effort: if even the Store fails, the peers time out instead.
  store_
      .Set(Key(phase, rank_),
           absl::StrCat(std::string(1, kFailure), failure.ToString()))
      .IgnoreError();
  return Annotate(failure, where_);
}

absl::Status NcclRendezvous::PublishUniqueId(absl::string_view id) {
  return Annotate(store_.Set(Key(kUniqueIdPhase, 0),
                             absl::StrCat(std::string(1, kValue),
                                          absl::BytesToHexString(id))),
                  where_);
}

absl::StatusOr<std::string> NcclRendezvous::FetchUniqueId(size_t id_size) {
  const std::string key = Key(kUniqueIdPhase, 0);
  absl::StatusOr<std::string> entry = store_.Get(key, deadline_ - absl::Now());
  if (entry.status().code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(absl::StrCat(
        where_, ": timed out after ", absl::FormatDuration(timeout_),
        ": rank 0 did not publish the NCCL unique id (key \"", key, "\")"));
  }
  RS_RETURN_IF_ERROR(Annotate(entry.status(), where_));
  if (entry->empty() || (*entry)[0] != kValue) {
    return absl::AbortedError(
        absl::StrCat(where_, ": rank 0 failed: ",
                     entry->empty() ? "(no message)" : entry->substr(1)));
  }
  const std::string id = absl::HexStringToBytes(entry->substr(1));
  if (id.size() != id_size) {
    return absl::DataLossError(
        absl::StrCat(where_, ": the NCCL unique id under \"", key, "\" has ",
                     id.size(), " bytes, expected ", id_size));
  }
  return id;
}

LocalRank LocalRankOf(const std::vector<std::string>& hosts, int rank) {
  LocalRank local;
  for (int i = 0; i < static_cast<int>(hosts.size()); ++i) {
    if (hosts[i] != hosts[rank]) continue;
    if (i < rank) ++local.rank;
    ++local.size;
  }
  return local;
}

absl::Status CheckDistinctGpus(const std::vector<std::string>& hosts,
                               const std::vector<std::string>& gpus) {
  // Hosts in order of their lowest rank, so every rank reports the same one.
  std::vector<std::string> order;
  for (const std::string& host : hosts) {
    if (std::find(order.begin(), order.end(), host) == order.end()) {
      order.push_back(host);
    }
  }
  for (const std::string& host : order) {
    std::map<std::string, int> first_rank_on_gpu;
    int ranks = 0;
    int shared_a = -1, shared_b = -1;
    for (int i = 0; i < static_cast<int>(hosts.size()); ++i) {
      if (hosts[i] != host) continue;
      ++ranks;
      auto [it, inserted] = first_rank_on_gpu.emplace(gpus[i], i);
      if (!inserted && shared_a < 0) {
        shared_a = it->second;
        shared_b = i;
      }
    }
    if (shared_a < 0) continue;
    const int distinct = first_rank_on_gpu.size();
    return absl::FailedPreconditionError(absl::StrCat(
        "NCCL needs a distinct GPU per rank: ", Plural(ranks, "rank"), ", ",
        Plural(distinct, "GPU"), " on host \"", host, "\" (ranks ", shared_a,
        " and ", shared_b, " both use GPU ", gpus[shared_a], "); run at most ",
        Plural(distinct, "rank"),
        " there, or give each rank its own GPU (NcclCollectiveOptions.device, "
        "CUDA_VISIBLE_DEVICES)"));
  }
  return absl::OkStatus();
}

}  // namespace ringside
