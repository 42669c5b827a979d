#include "collectives/fusion/byte_messages.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

// Lengths travel as floats; every integer below 2^24 is exact.
constexpr int64_t kMaxMessageBytes = int64_t{1} << 24;

int64_t FloatsFor(int64_t bytes) { return (bytes + 3) / 4; }

absl::Status CheckLength(int64_t bytes) {
  if (bytes >= kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "control message of ", bytes, " bytes exceeds the ",
        kMaxMessageBytes, "-byte limit"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> AllGatherBytes(
    Collective& collective, const std::string& mine, absl::Duration timeout) {
  RS_RETURN_IF_ERROR(CheckLength(mine.size()));
  const int n = collective.size();
  std::vector<float> lengths(n);
  const float my_length = static_cast<float>(mine.size());
  RS_RETURN_IF_ERROR(Annotate(
      collective.AllGather(absl::MakeConstSpan(&my_length, 1),
                           absl::MakeSpan(lengths), timeout),
      "all-gathering control message lengths"));
  int64_t max_bytes = 0;
  for (float l : lengths) max_bytes = std::max<int64_t>(max_bytes, l);
  const int64_t stride = FloatsFor(max_bytes);
  std::vector<std::string> out(n);
  if (stride == 0) return out;
  std::vector<float> padded(stride, 0.0f);
  std::memcpy(padded.data(), mine.data(), mine.size());
  std::vector<float> gathered(stride * n);
  RS_RETURN_IF_ERROR(Annotate(
      collective.AllGather(padded, absl::MakeSpan(gathered), timeout),
      "all-gathering control messages"));
  for (int r = 0; r < n; ++r) {
    out[r].assign(reinterpret_cast<const char*>(gathered.data() + r * stride),
                  static_cast<size_t>(lengths[r]));
  }
  return out;
}

absl::Status BroadcastBytes(Collective& collective, std::string* message,
                            int root, absl::Duration timeout) {
  float length = static_cast<float>(message->size());
  if (collective.rank() == root) RS_RETURN_IF_ERROR(CheckLength(message->size()));
  RS_RETURN_IF_ERROR(Annotate(
      collective.Broadcast(absl::MakeSpan(&length, 1), root, timeout),
      "broadcasting a control message length"));
  const int64_t bytes = static_cast<int64_t>(length);
  std::vector<float> buffer(FloatsFor(bytes), 0.0f);
  if (collective.rank() == root) {
    std::memcpy(buffer.data(), message->data(), bytes);
  }
  if (!buffer.empty()) {
    RS_RETURN_IF_ERROR(Annotate(
        collective.Broadcast(absl::MakeSpan(buffer), root, timeout),
        "broadcasting a control message"));
  }
  message->assign(reinterpret_cast<const char*>(buffer.data()), bytes);
  return absl::OkStatus();
}

}  // namespace ringside
