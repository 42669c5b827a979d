#include "common/chunk_wire.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutTag(int field, int wire_type, std::string* out) {
  PutVarint(static_cast<uint64_t>(field << 3 | wire_type), out);
}

// Reads bytes across the slices of a message.
class SliceCursor {
 public:
  explicit SliceCursor(const std::vector<grpc::Slice>& slices)
      : slices_(slices) {
    Settle();
  }
  bool done() const { return index_ == slices_.size(); }
  bool Byte(uint8_t* b) {
    if (done()) return false;
    *b = slices_[index_].begin()[at_];
    ++at_;
    Settle();
    return true;
  }
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!Byte(&b)) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  // The next n bytes as pieces pointing into the slices.
  bool Take(uint64_t n, std::vector<absl::string_view>* pieces) {
    while (n > 0) {
      if (done()) return false;
      const grpc::Slice& s = slices_[index_];
      const size_t here = std::min<uint64_t>(n, s.size() - at_);
      pieces->emplace_back(reinterpret_cast<const char*>(s.begin()) + at_,
                           here);
      at_ += here;
      n -= here;
      Settle();
    }
    return true;
  }
  bool Skip(uint64_t n) {
    std::vector<absl::string_view> ignored;
    return Take(n, &ignored);
  }

 private:
  // Moves past exhausted (or empty) slices.
  void Settle() {
    while (index_ < slices_.size() && at_ == slices_[index_].size()) {
      ++index_;
      at_ = 0;
    }
  }
  const std::vector<grpc::Slice>& slices_;
  size_t index_ = 0;
  size_t at_ = 0;
};

}  // namespace

grpc::ByteBuffer EncodeChunk(const ChunkHeader& header,
                             absl::Span<const float> payload) {
  std::string head;
  head.reserve(48);
  PutTag(1, kVarint, &head);
  PutVarint(static_cast<uint64_t>(static_cast<int64_t>(header.rank)), &head);
  PutTag(2, kVarint, &head);
  PutVarint(static_cast<uint64_t>(header.step), &head);
  PutTag(3, kVarint, &head);
  PutVarint(static_cast<uint64_t>(header.offset), &head);
  PutTag(4, kLengthDelimited, &head);
  PutVarint(header.dtype.size(), &head);
  head += header.dtype;
  PutTag(5, kLengthDelimited, &head);
  PutVarint(payload.size() * sizeof(float), &head);
  grpc::Slice slices[2] = {
      grpc::Slice(head),
      grpc::Slice(payload.data(), payload.size() * sizeof(float),
                  grpc::Slice::STATIC_SLICE)};
  return grpc::ByteBuffer(slices, payload.empty() ? 1 : 2);
}

absl::Status DecodeChunk(const grpc::ByteBuffer& buffer, DecodedChunk* out) {
  *out = DecodedChunk();
  out->header.dtype.clear();
  if (grpc::Status s = buffer.Dump(&out->slices); !s.ok()) {
    return absl::DataLossError(
        absl::StrCat("chunk message unreadable: ", s.error_message()));
  }
  SliceCursor in(out->slices);
  auto bad = [](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("malformed chunk message: ", what));
  };
  while (!in.done()) {
    uint64_t tag = 0;
    if (!in.Varint(&tag)) return bad("truncated tag");
    const int field = static_cast<int>(tag >> 3);
    const int type = static_cast<int>(tag & 7);
    if (type == kVarint) {
      uint64_t v = 0;
      if (!in.Varint(&v)) return bad("truncated varint");
      if (field == 1) out->header.rank = static_cast<int32_t>(v);
      if (field == 2) out->header.step = static_cast<int64_t>(v);
      if (field == 3) out->header.offset = static_cast<int64_t>(v);
    } else if (type == kLengthDelimited) {
      uint64_t n = 0;
      if (!in.Varint(&n)) return bad("truncated length");
      if (field == 5) {
        out->payload.clear();
        if (!in.Take(n, &out->payload)) return bad("truncated data");
        out->payload_bytes = static_cast<int64_t>(n);
      } else if (field == 4) {
        std::vector<absl::string_view> pieces;
        if (n > 64 || !in.Take(n, &pieces)) return bad("bad dtype");
        out->header.dtype.clear();
        for (absl::string_view p : pieces) out->header.dtype.append(p.data(), p.size());
      } else if (!in.Skip(n)) {
        return bad(absl::StrCat("truncated field ", field));
      }
    } else if (type == kFixed64 || type == kFixed32) {
      if (!in.Skip(type == kFixed64 ? 8 : 4)) return bad("truncated fixed");
    } else {
      return bad(absl::StrCat("wire type ", type, " of field ", field));
    }
  }
  return absl::OkStatus();
}

void CopyPayload(const DecodedChunk& chunk, float* out) {
  char* at = reinterpret_cast<char*>(out);
  for (absl::string_view piece : chunk.payload) {
    std::memcpy(at, piece.data(), piece.size());
    at += piece.size();
  }
}

}  // namespace ringside
