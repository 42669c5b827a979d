// Fuzz target: the checkpoint reader (core/checkpoint.h ParseCheckpoint),
// which every restarted server runs on a file from disk. Input byte 0
// chooses the mode, the rest is the file: with bit 0 set the harness
// appends the file's correct CRC-32 first, so the fuzzer gets past the
// checksum into the header and payload checks; otherwise the bytes are
// parsed as they are (checksum included).
//
// Invariants: the reader either refuses with DATA_LOSS / INVALID_ARGUMENT,
// or returns a checkpoint whose sizes agree (params = key range, range
// inside the model) and that survives Serialize + Parse unchanged.
#include <google/protobuf/stubs/logging.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/checkpoint.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

void AppendCrc32(std::string* bytes) {
  uint32_t crc = static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes->data()),
            static_cast<uInt>(bytes->size())));
  for (int i = 0; i < 4; ++i) bytes->push_back(static_cast<char>(crc >> (8 * i)));
}

bool SameFloats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

}  // namespace

// Protobuf logs every header string with invalid UTF-8 it refuses to parse.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) AppendCrc32(&bytes);
  absl::StatusOr<Checkpoint> c = ParseCheckpoint(bytes);
  if (!c.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(c.status()) || absl::IsInvalidArgument(c.status()),
               "unexpected error code: %s", c.status().ToString().c_str());
    return 0;
  }
  int64_t after = 0;
  for (const KeyRange& piece : c->pieces) {
    FUZZ_CHECK(piece.begin >= after && piece.begin < piece.end &&
                   piece.end <= c->layout.total_elements(),
               "piece [%lld, %lld) out of order or outside a model of %lld",
               static_cast<long long>(piece.begin),
               static_cast<long long>(piece.end),
               static_cast<long long>(c->layout.total_elements()));
    after = piece.end;
  }
  FUZZ_CHECK(static_cast<int64_t>(c->params.size()) == HeldElements(*c),
             "%zu parameters for pieces of %lld", c->params.size(),
             static_cast<long long>(HeldElements(*c)));
  FUZZ_CHECK(c->step >= 0 && c->shard >= 0 && c->shard < c->num_shards,
             "step %lld shard %d of %d", static_cast<long long>(c->step),
             c->shard, c->num_shards);
  FUZZ_CHECK(CheckCheckpointModel(*c, c->layout, c->optimizer).ok(),
             "a checkpoint does not match its own layout/optimizer");

  absl::StatusOr<Checkpoint> again = ParseCheckpoint(SerializeCheckpoint(*c));
  FUZZ_CHECK(again.ok(), "re-serialized checkpoint refused: %s",
             again.status().ToString().c_str());
  FUZZ_CHECK(again->step == c->step && again->shard == c->shard &&
                 again->num_shards == c->num_shards &&
                 again->pieces == c->pieces && again->layout == c->layout &&
                 again->optimizer == c->optimizer &&
                 again->writer == c->writer &&
                 SameFloats(again->params, c->params) &&
                 SameFloats(again->optimizer_state, c->optimizer_state),
             "checkpoint changed through Serialize + Parse");
  return 0;
}
