#include "collectives/fusion/coordinator.h"

#include "absl/strings/str_cat.h"

namespace ringside {

absl::Status Coordinator::Add(int rank, const proto::RequestList& requests,
                              double now_s) {
  if (rank < 0 || rank >= world_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("request from unknown rank ", rank));
  }
  // Validate everything first so a bad list leaves the table unchanged.
  for (const proto::TensorRequest& r : requests.requests()) {
    if (r.index() < 0 || r.index() >= layout_->num_tensors()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rank ", rank, " requested unknown tensor index ", r.index(),
          " (the layout has ", layout_->num_tensors(), ")"));
    }
    const TensorSpec& spec = layout_->tensor(r.index());
    if (r.elements() != spec.size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rank ", rank, " submitted tensor '", spec.name, "' with ",
          r.elements(), " elements; the layout has ", spec.size));
    }
    auto it = table_.find(r.index());
    if (it != table_.end() && it->second.submitted[rank]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rank ", rank, " submitted tensor '", spec.name,
          "' again before every rank had submitted it once"));
    }
  }
  for (const proto::TensorRequest& r : requests.requests()) {
    Entry& entry = table_[r.index()];
    if (entry.count == 0) {
      entry.submitted.assign(world_size_, false);
      entry.first_s = now_s;
    }
    entry.submitted[rank] = true;
    if (++entry.count == world_size_) {
      ready_.push_back(r.index());
      table_.erase(r.index());
    }
  }
  return absl::OkStatus();
}

std::vector<int> Coordinator::TakeReady() {
  std::vector<int> out;
  out.swap(ready_);
  return out;
}

std::vector<StallReport> Coordinator::TakeStalled(double now_s,
                                                  double threshold_s) {
  std::vector<StallReport> out;
  for (auto& [tensor, entry] : table_) {
    if (now_s - entry.first_s < threshold_s) continue;
    if (entry.reported_s >= 0 && now_s - entry.reported_s < threshold_s) {
      continue;
    }
    entry.reported_s = now_s;
    StallReport report;
    report.tensor = tensor;
    report.name = layout_->tensor(tensor).name;
    report.waiting_s = now_s - entry.first_s;
    for (int r = 0; r < world_size_; ++r) {
      (entry.submitted[r] ? report.submitted_ranks : report.missing_ranks)
          .push_back(r);
    }
    out.push_back(std::move(report));
  }
  return out;
}

}  // namespace ringside
