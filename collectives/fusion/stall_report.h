// StallReport: a tensor some ranks submitted to the fusion runtime and
// others have not, for longer than the stall warning (Horovod's stall
// inspector). Plain data.
#ifndef RINGSIDE_COLLECTIVES_FUSION_STALL_REPORT_H_
#define RINGSIDE_COLLECTIVES_FUSION_STALL_REPORT_H_

#include <string>
#include <vector>

namespace ringside {

struct StallReport {
  int tensor = -1;
  std::string name;
  std::vector<int> submitted_ranks;
  std::vector<int> missing_ranks;
  double waiting_s = 0.0;
  std::string ToString() const;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_STALL_REPORT_H_
