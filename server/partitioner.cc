#include "server/partitioner.h"

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

class EvenBytesPartitioner : public Partitioner {
 public:
  std::string name() const override { return "even_bytes"; }

  absl::StatusOr<std::vector<KeyRange>> Partition(
      const TensorLayout& layout, int num_shards) const override {
    if (num_shards < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_shards must be >= 1, got ", num_shards));
    }
    const int64_t total = layout.total_elements();
    std::vector<KeyRange> ranges(num_shards);
    for (int i = 0; i < num_shards; ++i) {
      ranges[i].begin = total * i / num_shards;
      ranges[i].end = total * (i + 1) / num_shards;
    }
    return ranges;
  }
};

}  // namespace

std::unique_ptr<Partitioner> MakeEvenBytesPartitioner() {
  return std::make_unique<EvenBytesPartitioner>();
}

absl::StatusOr<std::unique_ptr<Partitioner>> MakePartitioner(
    const std::string& name) {
  if (name == "even_bytes") return MakeEvenBytesPartitioner();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown partitioner '", name, "' (known: even_bytes)"));
}

std::vector<KeyRange> ChunkRange(const KeyRange& range,
                                 int64_t chunk_elements) {
  std::vector<KeyRange> chunks;
  for (int64_t b = range.begin; b < range.end; b += chunk_elements) {
    chunks.push_back({b, std::min(range.end, b + chunk_elements)});
  }
  return chunks;
}

}  // namespace ringside
