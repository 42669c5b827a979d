// Coordinator: rank 0's table of tensors requested by some ranks and not yet
// by all (Horovod's message table). Each negotiation round feeds it every
// rank's new requests; it answers which tensors are now ready on all ranks,
// in the order they became ready, and which have waited too long, naming the
// ranks that have not submitted them (the stall check).
// Thread-compatible (owned by rank 0's background thread).
#ifndef RINGSIDE_COLLECTIVES_FUSION_COORDINATOR_H_
#define RINGSIDE_COLLECTIVES_FUSION_COORDINATOR_H_

#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "collectives/fusion/stall_report.h"
#include "core/tensor_layout.h"
#include "proto/fusion_control.pb.h"

namespace ringside {

class Coordinator {
 public:
  Coordinator(int world_size, const TensorLayout* layout)
      : world_size_(world_size), layout_(layout) {}

  // Records `rank`'s new requests at time `now_s`. INVALID_ARGUMENT (state
  // unchanged) for an unknown tensor, a size that differs from the layout,
  // or a rank requesting a tensor it already has pending.
  absl::Status Add(int rank, const proto::RequestList& requests,
                   double now_s);

  // Tensors every rank has requested since the last call, in the order
  // they became complete, removed from the table.
  std::vector<int> TakeReady();

  // Pending tensors first requested at least `threshold_s` before `now_s`
  // and not reported in the last `threshold_s`; each is reported once per
  // threshold period.
  std::vector<StallReport> TakeStalled(double now_s, double threshold_s);

  int pending() const { return static_cast<int>(table_.size()); }

 private:
  struct Entry {
    std::vector<bool> submitted;
    int count = 0;
    double first_s = 0.0;
    double reported_s = -1.0;
  };
  const int world_size_;
  const TensorLayout* layout_;
  absl::btree_map<int, Entry> table_;  // tensor -> who has submitted
  std::vector<int> ready_;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_COORDINATOR_H_
