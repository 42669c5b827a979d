#include "core/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "proto/checkpoint.pb.h"

namespace ringside {
namespace {

constexpr absl::string_view kMagicPrefix = "RSCKPT";
constexpr int kFormat = 2;
constexpr size_t kMagicSize = 8;

std::string Magic(int version) {
  return absl::StrCat(kMagicPrefix, version, "\n");
}

uint32_t Crc32(absl::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large buffers in pieces.
  while (!bytes.empty()) {
    const size_t n = std::min<size_t>(bytes.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), n);
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

void AppendLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t ReadLe(absl::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  return v;
}

void AppendFloats(std::string* out, const std::vector<float>& v) {
  if (v.empty()) return;  // data() may be null
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

// `count` floats from `bytes` starting at float `first` (in range).
std::vector<float> FloatsAt(absl::string_view bytes, uint64_t first,
                            uint64_t count) {
  std::vector<float> out(count);
  // No memcpy of nothing: an empty vector's data() may be null.
  if (count > 0) std::memcpy(out.data(), bytes.data() + 4 * first, 4 * count);
  return out;
}

}  // namespace

std::string SerializeCheckpoint(const Checkpoint& c) {
  proto::CheckpointHeader header;
  header.set_step(c.step);
  header.set_shard(c.shard);
  header.set_num_shards(c.num_shards);
  for (const KeyRange& piece : c.pieces) {
    proto::PieceRange* p = header.add_pieces();
    p->set_begin(piece.begin);
    p->set_end(piece.end);
  }
  *header.mutable_layout() = c.layout.ToProto();
  *header.mutable_optimizer() = c.optimizer.ToProto();
  header.set_num_params(c.params.size());
  header.set_num_state(c.optimizer_state.size());
  header.set_writer(c.writer);
  const std::string header_bytes = header.SerializeAsString();
  std::string out = Magic(kFormat);
  AppendLe(&out, header_bytes.size(), 8);
  out += header_bytes;
  AppendFloats(&out, c.params);
  AppendFloats(&out, c.optimizer_state);
  AppendLe(&out, Crc32(out), 4);
  return out;
}

absl::StatusOr<Checkpoint> ParseCheckpoint(absl::string_view bytes) {
  if (bytes.size() < kMagicSize + 8 + 4 ||
      bytes.substr(0, kMagicPrefix.size()) != kMagicPrefix ||
      bytes[kMagicSize - 1] != '\n') {
    return absl::DataLossError("not a ringside checkpoint (bad magic)");
  }
  const absl::string_view body = bytes.substr(0, bytes.size() - 4);
  const uint32_t stored = ReadLe(bytes.substr(bytes.size() - 4), 4);
  if (Crc32(body) != stored) {
    return absl::DataLossError(
        "checkpoint checksum mismatch: the file is corrupt or truncated");
  }
  const absl::string_view version =
      bytes.substr(kMagicPrefix.size(), kMagicSize - 1 - kMagicPrefix.size());
  if (version != "1" && version != "2") {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint format version ", absl::CHexEscape(version),
        " is not one this build reads (1 and 2; it writes 2)"));
  }
  const bool format1 = version == "1";
  absl::string_view rest = body.substr(kMagicSize);
  const uint64_t header_size = ReadLe(rest, 8);
  rest.remove_prefix(8);
  if (header_size > rest.size()) {
    return absl::DataLossError("checkpoint header runs past the end");
  }
  proto::CheckpointHeader header;
  if (!header.ParseFromArray(rest.data(), static_cast<int>(header_size))) {
    return absl::DataLossError("checkpoint header does not parse");
  }
  rest.remove_prefix(header_size);
  // Compared without arithmetic that could overflow: the header's numbers
  // are whatever the file says.
  std::vector<KeyRange> pieces;
  if (format1) {
    if (header.pieces_size() != 0 || header.range_begin() < 0 ||
        header.range_end() < header.range_begin()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "format-1 checkpoint header has range [", header.range_begin(),
          ", ", header.range_end(), ")"));
    }
    if (header.range_end() > header.range_begin()) {
      pieces.push_back(KeyRange{header.range_begin(), header.range_end()});
    }
  } else {
    int64_t after = 0;
    for (const proto::PieceRange& p : header.pieces()) {
      if (p.begin() < after || p.end() <= p.begin()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "checkpoint piece ", pieces.size(), " is [", p.begin(), ", ",
            p.end(), "): pieces must be non-empty, disjoint and in order"));
      }
      pieces.push_back(KeyRange{p.begin(), p.end()});
      after = p.end();
    }
  }
  int64_t held = 0;
  for (const KeyRange& p : pieces) {
    if (p.size() > header.num_params() - held) {
      held = -1;
      break;
    }
    held += p.size();
  }
  if (header.num_params() < 0 || header.num_state() < 0 ||
      held != header.num_params()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint header sizes disagree: ", pieces.size(),
        " piece(s) ending at ", pieces.empty() ? 0 : pieces.back().end,
        " with ", header.num_params(), " parameters"));
  }
  // Each count is checked against the bytes there before any is
  // multiplied, so that no count wraps around into an allocation.
  const uint64_t floats = rest.size() / 4;
  const uint64_t num_params = static_cast<uint64_t>(header.num_params());
  const uint64_t num_state = static_cast<uint64_t>(header.num_state());
  if (rest.size() % 4 != 0 || num_params > floats ||
      num_state != floats - num_params) {
    return absl::DataLossError(absl::StrCat(
        "checkpoint payload is ", rest.size(), " bytes; the header says ",
        header.num_params(), " parameters and ", header.num_state(),
        " optimizer-state values (4 bytes each)"));
  }
  if (header.step() < 0 || header.num_shards() <= 0 || header.shard() < 0 ||
      header.shard() >= header.num_shards()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint header has step ", header.step(), ", shard ",
        header.shard(), " of ", header.num_shards()));
  }
  Checkpoint c;
  RS_ASSIGN_OR_RETURN(c.layout, TensorLayout::FromProto(header.layout()));
  if (!pieces.empty() && pieces.back().end > c.layout.total_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint range ends at ", pieces.back().end, " past the model's ",
        c.layout.total_elements(), " elements"));
  }
  c.optimizer = OptimizerConfig::FromProto(header.optimizer());
  RS_RETURN_IF_ERROR(Annotate(c.optimizer.Validate(), "checkpoint optimizer"));
  c.step = header.step();
  c.shard = header.shard();
  c.num_shards = header.num_shards();
  c.pieces = std::move(pieces);
  c.writer = header.writer();
  c.params = FloatsAt(rest, 0, num_params);
  c.optimizer_state = FloatsAt(rest, num_params, num_state);
  return c;
}

absl::Status WriteCheckpointFile(const std::string& path,
                                 const Checkpoint& checkpoint) {
  const std::string bytes = SerializeCheckpoint(checkpoint);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot write checkpoint ", tmp, ": ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return absl::DataLossError(absl::StrCat("writing checkpoint ", tmp,
                                              ": ", std::strerror(err)));
    }
    done += n;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return absl::DataLossError(absl::StrCat("flushing checkpoint ", tmp, ": ",
                                            std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::DataLossError(absl::StrCat("renaming ", tmp, " to ", path,
                                            ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("no checkpoint at ", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<Checkpoint> c = ParseCheckpoint(buffer.str());
  if (!c.ok()) return Annotate(c.status(), absl::StrCat("checkpoint ", path));
  return c;
}

absl::StatusOr<int64_t> ReadCheckpointStep(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("no checkpoint at ", path));
  }
  std::string start(kMagicSize + 8, '\0');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  if (!in || start.substr(0, kMagicPrefix.size()) != kMagicPrefix ||
      start[kMagicSize - 1] != '\n') {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", path, ": not a ringside checkpoint "
                     "(bad magic)"));
  }
  const uint64_t header_size = ReadLe(start.substr(kMagicSize), 8);
  // No header is near this size; a larger count is a corrupt file.
  constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 30;
  std::string header_bytes(std::min(header_size, kMaxHeaderBytes), '\0');
  in.read(header_bytes.data(),
          static_cast<std::streamsize>(header_bytes.size()));
  proto::CheckpointHeader header;
  if (header_size > kMaxHeaderBytes || !in ||
      !header.ParseFromString(header_bytes)) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", path, ": header does not parse"));
  }
  return header.step();
}

absl::Status CheckCheckpointModel(const Checkpoint& c,
                                  const TensorLayout& layout,
                                  const OptimizerConfig& optimizer) {
  if (c.layout != layout) {
    return absl::FailedPreconditionError(
        "checkpoint was written for a different model layout");
  }
  if (!(c.optimizer == optimizer)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint was written with optimizer {", c.optimizer.DebugString(),
        "}, this job uses {", optimizer.DebugString(), "}"));
  }
  return absl::OkStatus();
}

absl::Status CheckCheckpointMatches(const Checkpoint& c,
                                    const TensorLayout& layout,
                                    const OptimizerConfig& optimizer,
                                    const KeyRange& range) {
  RS_RETURN_IF_ERROR(CheckCheckpointModel(c, layout, optimizer));
  const std::vector<KeyRange> want =
      range.size() > 0 ? std::vector<KeyRange>{range}
                       : std::vector<KeyRange>{};
  if (c.pieces != want) {
    const KeyRange held =
        c.pieces.empty() ? KeyRange{}
                         : KeyRange{c.pieces.front().begin, c.pieces.back().end};
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint holds key range [", held.begin, ", ", held.end, ") in ",
        c.pieces.size(), " piece(s) but this shard owns [", range.begin,
        ", ", range.end, "): different servers or partitioner"));
  }
  return absl::OkStatus();
}

int64_t HeldElements(const Checkpoint& c) {
  int64_t held = 0;
  for (const KeyRange& p : c.pieces) held += p.size();
  return held;
}

std::string ShardCheckpointPath(const std::string& dir, int shard,
                                int num_shards) {
  return absl::StrCat(dir, "/shard-", shard, "-of-", num_shards, ".ckpt");
}

std::string AllReduceCheckpointPath(const std::string& dir) {
  return absl::StrCat(dir, "/allreduce.ckpt");
}

std::string RankStateCheckpointPath(const std::string& dir, int rank,
                                    int num_ranks) {
  return absl::StrCat(dir, "/rank-", rank, "-of-", num_ranks, ".ckpt");
}

}  // namespace ringside
