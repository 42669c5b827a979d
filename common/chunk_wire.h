// Chunk messages of the parameter-server protocol (proto GradChunk and
// ParamChunk, proto/parameter_server.proto: rank = 1, step or version = 2,
// offset = 3, dtype = 4, data = 5) encoded and decoded over grpc::ByteBuffer
// without copying the payload. The bytes on the wire are exactly protobuf's,
// so any protobuf peer reads and writes them; what changes is who copies:
//   - EncodeChunk: the payload slice points at the caller's floats (a
//     static slice, no reference count). The caller keeps them unchanged
//     until the peer has received the message (for pushes: until the RPC's
//     Finish; for pulls, ParamShard's versioning guarantees it).
//   - DecodeChunk: the payload stays in the transport's slices; the decoded
//     chunk lists the pieces (a float may straddle two), and ForEachFloatRun
//     walks them as runs of floats, so the server sums a gradient straight
//     from the receive buffers and the client copies a pull once, into
//     place.
// Before, each push and each pull copied the payload into a protobuf
// string, then into gRPC slices, then out again on the other side.
//
// Thread-compatible.
#ifndef RINGSIDE_COMMON_CHUNK_WIRE_H_
#define RINGSIDE_COMMON_CHUNK_WIRE_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ringside {

struct ChunkHeader {
  int32_t rank = 0;
  int64_t step = 0;  // GradChunk.step or ParamChunk.version
  int64_t offset = 0;
  std::string dtype = "float32";
};

// The message header + `payload` as float32 bytes (field 5), the payload
// not copied (see above).
grpc::ByteBuffer EncodeChunk(const ChunkHeader& header,
                             absl::Span<const float> payload);

struct DecodedChunk {
  ChunkHeader header;
  // Payload bytes in order; they point into `slices`.
  std::vector<absl::string_view> payload;
  int64_t payload_bytes = 0;
  std::vector<grpc::Slice> slices;  // keeps the bytes alive
};

// Parses `buffer` (any valid encoding of the message: fields in any order,
// unknown fields skipped, split across slices anywhere). DATA_LOSS naming
// what is malformed.
absl::Status DecodeChunk(const grpc::ByteBuffer& buffer, DecodedChunk* out);

// Copies `chunk`'s payload, its pieces in order, to `out`, which has room
// for payload_bytes: the one copy of a received chunk into place.
void CopyPayload(const DecodedChunk& chunk, float* out);

// Calls run(first_element, bytes, count) for consecutive runs of whole
// float32 values of `pieces` (bytes: `count` floats, not necessarily
// aligned; read them with memcpy). A float split between two pieces comes
// as a run of one from a local copy. Trailing bytes short of a float are
// ignored (callers check the byte count first).
template <typename Fn>
void ForEachFloatRun(absl::Span<const absl::string_view> pieces, Fn run) {
  int64_t element = 0;
  char carry[4];
  int carried = 0;
  for (absl::string_view piece : pieces) {
    const char* p = piece.data();
    size_t left = piece.size();
    if (carried > 0) {
      const size_t take = std::min<size_t>(4 - carried, left);
      std::memcpy(carry + carried, p, take);
      carried += static_cast<int>(take);
      p += take;
      left -= take;
      if (carried < 4) continue;
      run(element++, carry, int64_t{1});
      carried = 0;
    }
    const int64_t whole = static_cast<int64_t>(left / 4);
    if (whole > 0) run(element, p, whole);
    element += whole;
    p += whole * 4;
    left -= whole * 4;
    std::memcpy(carry, p, left);
    carried = static_cast<int>(left);
  }
}

}  // namespace ringside

#endif  // RINGSIDE_COMMON_CHUNK_WIRE_H_
