// Fuzz target: the parameter server's request handling. The input is a
// fuzz::PsFuzzInput — a shard's shape and a sequence of Register, PushInit,
// Push, Pull, Finish and Heartbeat requests (the wire messages of
// proto/parameter_server.proto) — replayed against one ParamShard the way
// ParameterServerService does (RegistrationFromProto, then the shard).
//
// Invariants checked after every call:
//   - a rejected call leaves the shard exactly as it was (parameters,
//     versions, memory, key range);
//   - versions never go backwards; the key range never changes once set;
//   - a pull hands out only whole chunks of the shard's range, each once;
//   - a registration is accepted only with tensors and chunk_bytes within
//     ParamShard::kMaxChunkBytes; a heartbeat exactly from the ranks
//     [0, num_workers).
// The shard's memory bound (ParamShardOptions::max_state_bytes) is set to
// 256 KiB, so that models the fuzzer declares stay small; bigger ones must be
// refused with RESOURCE_EXHAUSTED, state unchanged.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "server/param_shard.h"
#include "server/ps_service.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_inputs.pb.h"

namespace ringside {
namespace {

constexpr int64_t kMaxStateBytes = 1 << 18;
constexpr int kMaxCalls = 64;

struct Snapshot {
  std::vector<float> params;
  int64_t min_version = 0;
  int64_t memory_bytes = 0;
  KeyRange range;

  static Snapshot Of(const ParamShard& shard) {
    Snapshot s;
    s.params = shard.Parameters();
    s.min_version = shard.MinVersion();
    s.memory_bytes = shard.MemoryBytes();
    s.range = shard.range();
    return s;
  }
  // Bitwise, so that NaN parameters compare equal to themselves.
  bool operator==(const Snapshot& o) const {
    return params.size() == o.params.size() &&
           (params.empty() ||
            std::memcmp(params.data(), o.params.data(), params.size() * 4) ==
                0) &&
           min_version == o.min_version && memory_bytes == o.memory_bytes &&
           range == o.range;
  }
};

int Bounded(int32_t value, int lo, int n) {
  return lo + static_cast<int>(static_cast<uint32_t>(value) % n);
}

void Pull(ParamShard& shard, const proto::PullRequest& request) {
  absl::StatusOr<ParamShard::PullCursor> cursor =
      shard.StartPull(request.rank(), request.version());
  if (!cursor.ok()) return;
  const KeyRange range = shard.range();
  int64_t bytes = 0;
  const int total = cursor->remaining;
  for (int i = 0; i < total + 1 && cursor->remaining > 0; ++i) {
    int64_t offset = -1;
    std::string data;
    // A deadline in the past: only chunks ready now.
    absl::Status s = shard.NextReadyChunk(&*cursor, absl::Now(), &offset, &data);
    if (!s.ok()) break;
    FUZZ_CHECK(offset >= range.begin && offset < range.end,
               "chunk offset %lld outside [%lld, %lld)",
               static_cast<long long>(offset),
               static_cast<long long>(range.begin),
               static_cast<long long>(range.end));
    FUZZ_CHECK(!data.empty() && data.size() % 4 == 0 &&
                   offset + static_cast<int64_t>(data.size() / 4) <= range.end,
               "chunk at %lld has %zu bytes", static_cast<long long>(offset),
               data.size());
    bytes += data.size();
  }
  FUZZ_CHECK(bytes <= range.size() * 4, "pulled %lld bytes of a %lld range",
             static_cast<long long>(bytes),
             static_cast<long long>(range.size()));
}

}  // namespace
}  // namespace ringside

// Protobuf logs every string field with invalid UTF-8 it refuses to parse;
// the fuzzer makes many.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  fuzz::PsFuzzInput input;
  if (!input.ParseFromArray(data, static_cast<int>(size))) return 0;
  ParamShardOptions options;
  options.num_workers = Bounded(input.num_workers(), 1, 4);
  options.num_shards = Bounded(input.num_shards(), 1, 3);
  options.shard = Bounded(input.shard(), 0, options.num_shards);
  options.max_state_bytes = kMaxStateBytes;
  ParamShard shard(options);

  bool configured = false;
  KeyRange range;
  int64_t min_version = shard.MinVersion();
  int calls = 0;
  for (const fuzz::PsCall& call : input.calls()) {
    if (++calls > kMaxCalls) break;
    const Snapshot before = Snapshot::Of(shard);
    absl::Status status;
    switch (call.call_case()) {
      case fuzz::PsCall::kRegister: {
        absl::StatusOr<Registration> r = RegistrationFromProto(call.register_());
        if (!r.ok()) {
          status = r.status();
          break;
        }
        absl::StatusOr<KeyRange> got = shard.Register(*r);
        status = got.status();
        if (got.ok()) {
          FUZZ_CHECK(r->layout.num_tensors() > 0 &&
                         r->chunk_bytes <= ParamShard::kMaxChunkBytes,
                     "accepted a registration with %d tensors and "
                     "chunk_bytes %lld",
                     r->layout.num_tensors(),
                     static_cast<long long>(r->chunk_bytes));
          FUZZ_CHECK(!configured || *got == range,
                     "Register returned another key range");
          FUZZ_CHECK(got->begin >= 0 && got->begin <= got->end &&
                         got->end <= r->layout.total_elements(),
                     "key range [%lld, %lld) outside the model",
                     static_cast<long long>(got->begin),
                     static_cast<long long>(got->end));
          configured = true;
          range = *got;
        }
        break;
      }
      case fuzz::PsCall::kPushInit:
        status = shard.PushInit(call.push_init().rank(),
                                call.push_init().offset(),
                                call.push_init().dtype(),
                                call.push_init().data());
        break;
      case fuzz::PsCall::kPush:
        status = shard.PushGradient(call.push().rank(), call.push().step(),
                                    call.push().offset(), call.push().dtype(),
                                    call.push().data());
        break;
      case fuzz::PsCall::kPull:
        Pull(shard, call.pull());
        break;
      case fuzz::PsCall::kFinish:
        status = shard.Finish(call.finish().rank());
        break;
      case fuzz::PsCall::kHeartbeat: {
        // The service's check before it records the heartbeat.
        const int rank = call.heartbeat().rank();
        status = shard.CheckRank(rank);
        FUZZ_CHECK(status.ok() == (rank >= 0 && rank < options.num_workers),
                   "heartbeat from rank %d of %d: %s", rank,
                   options.num_workers, status.ToString().c_str());
        break;
      }
      case fuzz::PsCall::CALL_NOT_SET:
        continue;
    }
    const Snapshot after = Snapshot::Of(shard);
    if (!status.ok()) {
      FUZZ_CHECK(after == before, "a rejected call changed the shard: %s",
                 status.ToString().c_str());
    }
    if (configured) {
      FUZZ_CHECK(after.range == range, "the key range changed");
      FUZZ_CHECK(static_cast<int64_t>(after.params.size()) == range.size(),
                 "%zu parameters for a range of %lld", after.params.size(),
                 static_cast<long long>(range.size()));
    }
    FUZZ_CHECK(after.min_version >= min_version,
               "versions went back from %lld to %lld",
               static_cast<long long>(min_version),
               static_cast<long long>(after.min_version));
    min_version = after.min_version;
  }
  return 0;
}
