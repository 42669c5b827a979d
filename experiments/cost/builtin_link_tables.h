// ringside's built-in link tables: published nccl-tests measurements, one
// file a source in experiments/cost/links/ (measured_collectives.h's
// format, each with its `# link:`, `# source:` and `# nominal_gbit:`
// lines), compiled into the binaries by tools/embed_files.sh. A cluster
// file's `intra_node_link` / `inter_node_link` names one by its file's
// stem, or a link type (nvlink, nvswitch, pcie, infiniband, roce, tcp),
// which means that type's default: the first file of the type in
// experiments/cost/BUILD's list. Thread-safe.
#ifndef RINGSIDE_EXPERIMENTS_COST_BUILTIN_LINK_TABLES_H_
#define RINGSIDE_EXPERIMENTS_COST_BUILTIN_LINK_TABLES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/cost/measured_collectives.h"

namespace ringside {

struct BuiltinLinkFile {
  const char* path;  // where it lives in the source tree
  const char* text;
};

// In experiments/cost/BUILD's order (generated).
const std::vector<BuiltinLinkFile>& BuiltinLinkFiles();

// The parsed table named `name` (a file's stem, e.g. "tcp_25g_2node"), or
// the default table of the link type `name`; `table` (may be null) gets
// the file's stem. NOT_FOUND listing the names and types known.
absl::StatusOr<MeasuredCollectives> FindBuiltinLinkTable(
    const std::string& name, std::string* table);

// "nvlink (nvlink_dgx1_v100, ...), pcie (...), ...": every type with its
// tables, the default first.
std::string BuiltinLinkTableList();

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_BUILTIN_LINK_TABLES_H_
