// The zero-copy chunk encoding reads and writes protobuf's bytes exactly:
// protobuf parses what EncodeChunk writes, DecodeChunk parses what protobuf
// writes however the bytes are split into slices, and ForEachFloatRun
// yields every float once, in order, also across slice boundaries.
#include "common/chunk_wire.h"

#include <numeric>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/parameter_server.pb.h"

namespace ringside {
namespace {

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// `bytes` cut into slices at `cuts`.
grpc::ByteBuffer Split(const std::string& bytes, std::vector<size_t> cuts) {
  cuts.push_back(bytes.size());
  std::vector<grpc::Slice> slices;
  size_t at = 0;
  for (size_t cut : cuts) {
    slices.emplace_back(bytes.data() + at, cut - at);
    at = cut;
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

std::vector<float> Floats(int n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), -3.25f);
  return v;
}

std::vector<float> Gather(const DecodedChunk& chunk) {
  std::vector<float> out(chunk.payload_bytes / 4, -1.0f);
  int runs = 0;
  ForEachFloatRun(chunk.payload, [&](int64_t at, const char* p, int64_t n) {
    std::memcpy(out.data() + at, p, n * 4);
    ++runs;
  });
  EXPECT_GE(runs, 1);
  return out;
}

TEST(ChunkWireTest, ProtobufParsesTheEncoding) {
  const std::vector<float> data = Floats(1000);
  const grpc::ByteBuffer buffer =
      EncodeChunk({3, 17, 4096, "float32"}, absl::MakeConstSpan(data));
  proto::GradChunk grad;
  ASSERT_TRUE(grad.ParseFromString(Flatten(buffer)));
  EXPECT_EQ(grad.rank(), 3);
  EXPECT_EQ(grad.step(), 17);
  EXPECT_EQ(grad.offset(), 4096);
  EXPECT_EQ(grad.dtype(), "float32");
  ASSERT_EQ(grad.data().size(), data.size() * 4);
  EXPECT_EQ(std::memcmp(grad.data().data(), data.data(), grad.data().size()),
            0);
  // The payload is sent from the caller's memory, not a copy.
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(buffer.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(static_cast<const void*>(slices[1].begin()),
            static_cast<const void*>(data.data()));
}

TEST(ChunkWireTest, DecodesProtobufBytesSplitAnywhere) {
  const std::vector<float> data = Floats(64);
  proto::ParamChunk message;
  message.set_rank(1);
  message.set_version(9);
  message.set_offset(123456789012);
  message.set_dtype("float32");
  message.set_data(reinterpret_cast<const char*>(data.data()),
                   data.size() * 4);
  const std::string bytes = message.SerializeAsString();
  for (const std::vector<size_t>& cuts :
       std::vector<std::vector<size_t>>{{}, {1}, {5, 6, 7}, {30, 31, 33, 101},
                                        {bytes.size() - 1}}) {
    DecodedChunk chunk;
    ASSERT_TRUE(DecodeChunk(Split(bytes, cuts), &chunk).ok());
    EXPECT_EQ(chunk.header.rank, 1);
    EXPECT_EQ(chunk.header.step, 9);
    EXPECT_EQ(chunk.header.offset, 123456789012);
    EXPECT_EQ(chunk.header.dtype, "float32");
    EXPECT_EQ(chunk.payload_bytes, 256);
    EXPECT_EQ(Gather(chunk), data);
  }
}

TEST(ChunkWireTest, SkipsUnknownFieldsAndRejectsTruncation) {
  std::string bytes = proto::GradChunk().SerializeAsString();
  bytes += std::string("\x30\x05", 2);             // field 6, varint 5
  bytes += std::string("\x3a\x02xy", 4);           // field 7, 2 bytes
  bytes += std::string("\x45\x01\x02\x03\x04", 5);  // field 8, fixed32
  DecodedChunk chunk;
  ASSERT_TRUE(DecodeChunk(Split(bytes, {}), &chunk).ok());
  EXPECT_EQ(chunk.payload_bytes, 0);

  const std::vector<float> data = Floats(8);
  const std::string whole =
      Flatten(EncodeChunk({0, 1, 0, "float32"}, absl::MakeConstSpan(data)));
  absl::Status s =
      DecodeChunk(Split(whole.substr(0, whole.size() - 3), {}), &chunk);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("truncated data"));
}

}  // namespace
}  // namespace ringside
