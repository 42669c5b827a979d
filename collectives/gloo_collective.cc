#include "collectives/gloo_collective.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "collectives/gloo_device.h"
#include "collectives/gloo_error.h"
#include "collectives/gloo_store.h"
#include "common/status_macros.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/broadcast.h"
#include "gloo/math.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/context.h"

namespace ringside {
namespace {

using GlooAlgorithm = gloo::AllreduceOptions::Algorithm;

// Slot prefix of ReduceScatter's messages (Gloo's own prefixes are 0x01 to
// 0x08, gloo/types.h).
constexpr uint8_t kReduceScatterSlotPrefix = 0x20;
// Slot prefix of AllGatherV's messages.
constexpr uint8_t kAllGatherVSlotPrefix = 0x21;
// Receive first (ReduceScatter, AllGatherV; their pieces are
// RingPieceFloats(counts), collective.h).
//
// Both rings post every receive of a step before any of its sends. Gloo's
// TCP pair sends an unbound buffer's data only once the peer has said it
// posted the matching receive (a "recv ready" message), and that message
// joins the same per-pair send queue as the data: a rank that posts a
// large send before its receive makes its peer wait until (most of) that
// data has left before the peer may start sending its own. On a link of
// finite rate this serialises the two directions of a pair, halving the
// rate of an exchange (gloo::allgatherv posts its send first: 2 ranks
// exchanging 7 MB each over 1 Gbit/s netns links took 92-116 ms where
// 56 ms is the link time; receive-first took 58 ms).
// ReduceScatter's receive window: pieces in flight from the left neighbour
// (4 MiB of scratch at most).
constexpr int64_t kReduceScatterWindow = 4;

// A wait on an unbound buffer that returned false was aborted: as Gloo
// does for its own operations, throw (RS_GLOO_CALL turns it into a Status).
// Gloo throws its own timeout message when the deadline passes.
void WaitOrThrow(bool completed, const char* what) {
  if (!completed) {
    throw gloo::IoException(std::string(what) + " aborted");
  }
}

absl::StatusOr<GlooAlgorithm> ParseAlgorithm(absl::string_view name) {
  if (name == "ring") return GlooAlgorithm::RING;
  if (name == "halving_doubling") return GlooAlgorithm::BCUBE;
  return absl::InvalidArgumentError(
      absl::StrCat("GlooCollectiveOptions.algorithm must be \"ring\" or "
                   "\"halving_doubling\", got \"",
                   name, "\""));
}

// Gloo's per-operation timeout: at least 1 ms; an infinite duration means
// Gloo's "no timeout".
absl::StatusOr<std::chrono::milliseconds> ToGlooTimeout(
    absl::string_view op, absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return gloo::kNoTimeout;
  if (timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": timeout must be positive, got ", absl::FormatDuration(timeout)));
  }
  return std::chrono::milliseconds(std::max<int64_t>(
      1,
      absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1)))));
}

// The ranks (0..size-1) whose key(i) is not in the store right now.
std::vector<int> AbsentRanks(Store& store, int size,
                             const std::function<std::string(int)>& key) {
  std::vector<int> absent;
  for (int i = 0; i < size; ++i) {
    absl::StatusOr<std::string> v = store.Get(key(i), absl::ZeroDuration());
    if (v.status().code() == absl::StatusCode::kDeadlineExceeded) {
      absent.push_back(i);
    }
  }
  return absent;
}

class GlooCollective final : public Collective {
 public:
  GlooCollective(std::shared_ptr<gloo::rendezvous::Context> context,
                 GlooAlgorithm algorithm, std::string algorithm_name)
      : context_(std::move(context)),
        algorithm_(algorithm),
        algorithm_name_(std::move(algorithm_name)) {}

  std::string backend() const override { return "gloo"; }
  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }
  bool Supports(Device device) const override { return device == Device::kCpu; }

  absl::Status AllReduce(absl::Span<float> data, ReduceOp op,
                         absl::Duration timeout) override {
    const std::string what = Describe("AllReduce", data.size(), timeout);
    RS_RETURN_IF_ERROR(Usable(what));
    RS_ASSIGN_OR_RETURN(const std::chrono::milliseconds t,
                        ToGlooTimeout(what, timeout));
    if (data.empty()) return absl::OkStatus();
    const uint32_t tag = NextTag();
    RS_RETURN_IF_ERROR(Record(RS_GLOO_CALL(what, {
      gloo::AllreduceOptions opts(context_);
      opts.setOutput(data.data(), data.size());
      opts.setAlgorithm(algorithm_);
      opts.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(
              &gloo::sum<float>));
      opts.setTag(tag);
      opts.setTimeout(t);
      gloo::allreduce(opts);
    })));
    if (op == ReduceOp::kAverage && size() > 1) {
      const float scale = 1.0f / static_cast<float>(size());
      for (float& x : data) x *= scale;
    }
    return absl::OkStatus();
  }

  absl::Status Broadcast(absl::Span<float> data, int root,
                         absl::Duration timeout) override {
    const std::string what = absl::StrCat(
        Describe("Broadcast", data.size(), timeout), " from root ", root);
    RS_RETURN_IF_ERROR(Usable(what));
    if (root < 0 || root >= size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": root must be in [0, ", size(), ")"));
    }
    RS_ASSIGN_OR_RETURN(const std::chrono::milliseconds t,
                        ToGlooTimeout(what, timeout));
    if (data.empty()) return absl::OkStatus();
    const uint32_t tag = NextTag();
    return Record(RS_GLOO_CALL(what, {
      gloo::BroadcastOptions opts(context_);
      opts.setOutput(data.data(), data.size());
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(t);
      gloo::broadcast(opts);
    }));
  }

  absl::Status AllGather(absl::Span<const float> in, absl::Span<float> out,
                         absl::Duration timeout) override {
    const std::string what = Describe("AllGather", in.size(), timeout);
    RS_RETURN_IF_ERROR(Usable(what));
    if (out.size() != in.size() * static_cast<size_t>(size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": out has ", out.size(), " floats, expected ",
                       size(), " x ", in.size()));
    }
    RS_ASSIGN_OR_RETURN(const std::chrono::milliseconds t,
                        ToGlooTimeout(what, timeout));
    if (in.empty()) return absl::OkStatus();
    const uint32_t tag = NextTag();
    // `in` may already be this rank's slice of `out` (in-place gather).
    const bool in_place = in.data() == out.data() + rank() * in.size();
    return Record(RS_GLOO_CALL(what, {
      gloo::AllgatherOptions opts(context_);
      if (!in_place) opts.setInput(const_cast<float*>(in.data()), in.size());
      opts.setOutput(out.data(), out.size());
      opts.setTag(tag);
      opts.setTimeout(t);
      gloo::allgather(opts);
    }));
  }

  // A ring over Gloo's unbound buffers (Gloo's own reduce-scatter,
  // ReduceScatterHalvingDoubling, has no per-call timeout or tag). Step s
  // of n-1: send shard (r-1-s) mod n to the right neighbour, receive shard
  // (r-2-s) mod n from the left one and add it in; the shard received last
  // is r, complete. Shards of 0 floats are skipped by both ends. Shards
  // travel in pieces of RingPieceFloats(counts), and each piece received is
  // added in and forwarded at once (what step s+1 sends is what step s
  // received), so a shard crosses the n-1 links as a pipeline, not one
  // link after another: a shard that one rank alone holds (zero3's
  // tensors) costs about its own size on the busiest link, not n-1 times
  // it (worker/strategies/sharded/sharded_optimizer.h, PipelinedRingCriticalBytes,
  // as for AllGatherV). Pieces land in a window of kReduceScatterWindow
  // scratch slots, each slot posted again once its piece is added in;
  // receives are posted before sends (see "Receive first" above).
  absl::Status ReduceScatter(absl::Span<float> data,
                             absl::Span<const int64_t> counts, ReduceOp op,
                             absl::Duration timeout) override {
    const std::string what = Describe("ReduceScatter", data.size(), timeout);
    RS_RETURN_IF_ERROR(Usable(what));
    RS_RETURN_IF_ERROR(CheckShardCounts(what, size(), counts, data.size()));
    RS_ASSIGN_OR_RETURN(const std::chrono::milliseconds t,
                        ToGlooTimeout(what, timeout));
    const int n = size(), r = rank();
    const uint32_t tag = NextTag();
    if (n == 1 || data.empty()) return absl::OkStatus();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    const int64_t piece = RingPieceFloats(counts);
    // Every piece this rank receives, in the order the left one sends them:
    // shard (r-2-s) mod n for s = 0..n-2, each piece forwarded but the last
    // step's.
    struct Piece {
      int64_t at = 0;  // floats into data
      int64_t len = 0;
      bool forward = false;
    };
    std::vector<Piece> pieces;
    for (int s = 0; s < n - 1; ++s) {
      const int shard = ((r - 2 - s) % n + n) % n;
      const int64_t offset = ShardOffset(counts, shard);
      for (int64_t at = 0; at < counts[shard]; at += piece) {
        pieces.push_back(
            {offset + at, std::min(piece, counts[shard] - at), s < n - 2});
      }
    }
    const int64_t slots =
        std::min<int64_t>(kReduceScatterWindow, pieces.size());
    const size_t scratch = static_cast<size_t>(slots * piece);
    if (scratch_.size() < scratch) scratch_.resize(scratch);
    const auto deadline = std::chrono::steady_clock::now() + t;
    RS_RETURN_IF_ERROR(Record(RS_GLOO_CALL(what, {
      const uint64_t slot = gloo::Slot::build(kReduceScatterSlotPrefix, tag);
      auto out = context_->createUnboundBuffer(data.data(),
                                               data.size() * sizeof(float));
      std::unique_ptr<gloo::transport::UnboundBuffer> in;
      if (slots > 0) {
        in = context_->createUnboundBuffer(scratch_.data(),
                                           scratch * sizeof(float));
      }
      auto post = [&](size_t i) {
        const int64_t at = static_cast<int64_t>(i) % slots * piece;
        in->recv(left, slot, at * sizeof(float), pieces[i].len * sizeof(float));
      };
      for (int64_t i = 0; i < slots; ++i) post(i);
      int64_t sends = 0;
      const int first = ((r - 1) % n + n) % n;  // step 0 sends its own
      const int64_t first_at = ShardOffset(counts, first);
      for (int64_t at = 0; at < counts[first]; at += piece) {
        out->send(right, slot, (first_at + at) * sizeof(float),
                  std::min(piece, counts[first] - at) * sizeof(float));
        ++sends;
      }
      for (size_t i = 0; i < pieces.size(); ++i) {
        WaitOrThrow(in->waitRecv(deadline), "ReduceScatter receive");
        const float* incoming =
            scratch_.data() + static_cast<int64_t>(i) % slots * piece;
        float* target = data.data() + pieces[i].at;
        for (int64_t k = 0; k < pieces[i].len; ++k) target[k] += incoming[k];
        if (i + slots < pieces.size()) post(i + slots);
        if (pieces[i].forward) {
          out->send(right, slot, pieces[i].at * sizeof(float),
                    pieces[i].len * sizeof(float));
          ++sends;
        }
      }
      for (int64_t k = 0; k < sends; ++k) {
        WaitOrThrow(out->waitSend(deadline), "ReduceScatter send");
      }
    })));
    if (op == ReduceOp::kAverage) {
      const float scale = 1.0f / static_cast<float>(n);
      float* own = data.data() + ShardOffset(counts, r);
      for (int64_t i = 0; i < counts[r]; ++i) own[i] *= scale;
    }
    return absl::OkStatus();
  }

  absl::Status AllGatherV(absl::Span<float> data,
                          absl::Span<const int64_t> counts,
                          absl::Duration timeout) override {
    const std::string what = Describe("AllGatherV", data.size(), timeout);
    RS_RETURN_IF_ERROR(Usable(what));
    RS_RETURN_IF_ERROR(CheckShardCounts(what, size(), counts, data.size()));
    RS_ASSIGN_OR_RETURN(const std::chrono::milliseconds t,
                        ToGlooTimeout(what, timeout));
    const uint32_t tag = NextTag();
    const int n = size(), r = rank();
    if (n == 1 || data.empty()) return absl::OkStatus();
    // A ring over one unbound buffer on `data` (in place), not
    // gloo::allgatherv, which posts its send before its receive (see
    // "Receive first" above). Step s of n-1 receives shard (r-1-s) mod n from
    // the left neighbour and sends shard (r-s) mod n (its own at step 0,
    // then the one received the step before) to the right one. Every
    // receive is posted first; each piece received is forwarded as soon as
    // it lands. Shards of 0 floats are skipped by both ends.
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    const int64_t piece = RingPieceFloats(counts);
    const auto deadline = std::chrono::steady_clock::now() + t;
    auto shard_of_step = [n, r](int s) { return ((r - 1 - s) % n + n) % n; };
    return Record(RS_GLOO_CALL(what, {
      const uint64_t slot = gloo::Slot::build(kAllGatherVSlotPrefix, tag);
      auto buffer = context_->createUnboundBuffer(data.data(),
                                                  data.size() * sizeof(float));
      auto for_pieces = [&](int shard, const auto& fn) {
        const int64_t offset = ShardOffset(counts, shard);
        for (int64_t at = 0; at < counts[shard]; at += piece) {
          fn((offset + at) * sizeof(float),
             std::min(piece, counts[shard] - at) * sizeof(float));
        }
      };
      for (int s = 0; s < n - 1; ++s) {
        for_pieces(shard_of_step(s), [&](size_t offset, size_t bytes) {
          buffer->recv(left, slot, offset, bytes);
        });
      }
      int sends = 0;
      for_pieces(r, [&](size_t offset, size_t bytes) {
        buffer->send(right, slot, offset, bytes);
        ++sends;
      });
      for (int s = 0; s < n - 1; ++s) {
        const bool forward = s < n - 2;
        for_pieces(shard_of_step(s), [&](size_t offset, size_t bytes) {
          WaitOrThrow(buffer->waitRecv(deadline), "AllGatherV receive");
          if (forward) {
            buffer->send(right, slot, offset, bytes);
            ++sends;
          }
        });
      }
      for (int k = 0; k < sends; ++k) {
        WaitOrThrow(buffer->waitSend(deadline), "AllGatherV send");
      }
    }));
  }

  absl::Status Barrier(absl::Duration timeout) override {
    const std::string what = Describe("Barrier", 0, timeout);
    RS_RETURN_IF_ERROR(Usable(what));
    RS_ASSIGN_OR_RETURN(const std::chrono::milliseconds t,
                        ToGlooTimeout(what, timeout));
    const uint32_t tag = NextTag();
    return Record(RS_GLOO_CALL(what, {
      gloo::BarrierOptions opts(context_);
      opts.setTag(tag);
      opts.setTimeout(t);
      gloo::barrier(opts);
    }));
  }

 private:
  std::string Describe(absl::string_view op, size_t floats,
                       absl::Duration timeout) const {
    return absl::StrCat(op, " (gloo ", algorithm_name_, ", rank ", rank(),
                        " of ", size(), ", ", floats, " floats, timeout ",
                        absl::FormatDuration(timeout), ")");
  }
  absl::Status Usable(absl::string_view what) const {
    if (broken_.ok()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": group unusable after an earlier error: ", broken_.message()));
  }
  absl::Status Record(absl::Status s) {
    if (!s.ok() && broken_.ok()) broken_ = s;
    return s;
  }
  // Tags keep consecutive operations apart; every rank issues the same
  // sequence of calls, so the counters agree.
  uint32_t NextTag() { return next_tag_++; }

  std::shared_ptr<gloo::rendezvous::Context> context_;
  GlooAlgorithm algorithm_;
  std::string algorithm_name_;
  absl::Status broken_;
  uint32_t next_tag_ = 0;
  // ReduceScatter's receive slots (kReduceScatterWindow pieces at most),
  // kept from call to call so that their pages fault in once.
  std::vector<float> scratch_;
};

}  // namespace

absl::Status GlooCollectiveOptions::Validate() const {
  if (host.empty() && interface.empty()) {
    return absl::InvalidArgumentError(
        "GlooCollectiveOptions: host or interface must be set");
  }
  RS_RETURN_IF_ERROR(ParseAlgorithm(algorithm).status());
  if (connect_timeout <= absl::ZeroDuration() ||
      connect_timeout == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GlooCollectiveOptions.connect_timeout must be positive and finite, "
        "got ",
        absl::FormatDuration(connect_timeout)));
  }
  if (store_prefix.empty()) {
    return absl::InvalidArgumentError(
        "GlooCollectiveOptions.store_prefix must not be empty");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Collective>> CreateGlooCollective(
    Store& store, int rank, int size, const GlooCollectiveOptions& options) {
  RS_RETURN_IF_ERROR(options.Validate());
  if (size < 1 || rank < 0 || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("CreateGlooCollective: need 0 <= rank < size, got rank ",
                     rank, ", size ", size));
  }
  RS_ASSIGN_OR_RETURN(const GlooAlgorithm algorithm,
                      ParseAlgorithm(options.algorithm));
  const std::string& prefix = options.store_prefix;
  const std::string where =
      absl::StrCat("gloo rendezvous (store prefix \"", prefix, "\", rank ",
                   rank, " of ", size, ")");
  const absl::Time deadline = absl::Now() + options.connect_timeout;

  // The TCP transport: one listening device per group.
  RS_ASSIGN_OR_RETURN(
      std::shared_ptr<gloo::transport::Device> device,
      CreateGlooTcpDevice(options.host, options.interface,
                          options.event_loop, where));

  // Join: announce this rank, wait for every other one.
  auto join_key = [&prefix](int i) {
    return absl::StrCat(prefix, "/joined/", i);
  };
  RS_RETURN_IF_ERROR(Annotate(store.Set(join_key(rank), "1"), where));
  std::vector<std::string> join_keys;
  for (int i = 0; i < size; ++i) join_keys.push_back(join_key(i));
  absl::Status joined = store.Wait(join_keys, deadline - absl::Now());
  if (joined.code() == absl::StatusCode::kDeadlineExceeded) {
    const std::vector<int> absent = AbsentRanks(store, size, join_key);
    return absl::DeadlineExceededError(absl::StrCat(
        where, ": timed out after ",
        absl::FormatDuration(options.connect_timeout), ": rank(s) [",
        absl::StrJoin(absent, ", "), "] of ", size, " did not join"));
  }
  RS_RETURN_IF_ERROR(Annotate(joined, where));

  // Connect: Gloo exchanges the pair addresses through the store.
  const absl::Duration left =
      std::max(deadline - absl::Now(), absl::Milliseconds(1));
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  GlooStore gloo_store(&store, absl::StrCat(prefix, "/mesh"), left);
  absl::Status connected = RS_GLOO_CALL(where, {
    context->setTimeout(std::chrono::milliseconds(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(left))));
    context->connectFullMesh(gloo_store, device);
  });
  if (!connected.ok()) {
    absl::Status cause = gloo_store.first_error();
    if (cause.code() == absl::StatusCode::kDeadlineExceeded) {
      // Gloo's connectFullMesh first sets "rank_<i>" (its host name, for
      // local ranks), then "<i>" (its pair addresses).
      std::vector<int> absent = AbsentRanks(store, size, [&](int i) {
        return gloo_store.FullKey(absl::StrCat("rank_", i));
      });
      if (absent.empty()) {
        absent = AbsentRanks(store, size, [&](int i) {
          return gloo_store.FullKey(absl::StrCat(i));
        });
      }
      return absl::DeadlineExceededError(absl::StrCat(
          where, ": timed out connecting: rank(s) [",
          absl::StrJoin(absent, ", "),
          "] joined but did not publish their addresses: ", cause.message()));
    }
    return connected;
  }
  return std::unique_ptr<Collective>(
      new GlooCollective(std::move(context), algorithm, options.algorithm));
}

}  // namespace ringside
