#include "experiments/cost/builtin_link_tables.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ringside {
namespace {

struct Table {
  std::string stem;
  MeasuredCollectives parsed;
};

// Every built-in file, parsed once. A file that does not parse is a build
// defect (tests/experiments/cost:builtin_link_tables_test parses each).
const std::vector<Table>& Tables() {
  static const auto* tables = [] {
    auto* out = new std::vector<Table>;
    for (const BuiltinLinkFile& f : BuiltinLinkFiles()) {
      absl::StatusOr<MeasuredCollectives> m =
          MeasuredCollectives::Parse(f.text, f.path);
      if (!m.ok()) continue;
      out->push_back({std::filesystem::path(f.path).stem().string(),
                      *std::move(m)});
    }
    return out;
  }();
  return *tables;
}

}  // namespace

absl::StatusOr<MeasuredCollectives> FindBuiltinLinkTable(
    const std::string& name, std::string* table) {
  const std::vector<Table>& tables = Tables();
  auto found = std::find_if(tables.begin(), tables.end(),
                            [&](const Table& t) { return t.stem == name; });
  if (found == tables.end()) {  // a link type: its first table
    found = std::find_if(tables.begin(), tables.end(), [&](const Table& t) {
      return t.parsed.link() == name;
    });
  }
  if (found == tables.end()) {
    return absl::NotFoundError(absl::StrCat(
        "'", name, "' is neither a built-in link table nor a link type (",
        BuiltinLinkTableList(), ")"));
  }
  if (table != nullptr) *table = found->stem;
  return found->parsed;
}

std::string BuiltinLinkTableList() {
  std::vector<std::pair<std::string, std::vector<std::string>>> types;
  for (const Table& t : Tables()) {
    auto it = std::find_if(types.begin(), types.end(), [&](const auto& e) {
      return e.first == t.parsed.link();
    });
    if (it == types.end()) {
      types.push_back({t.parsed.link(), {}});
      it = types.end() - 1;
    }
    it->second.push_back(t.stem);
  }
  std::vector<std::string> parts;
  for (const auto& [type, stems] : types) {
    parts.push_back(absl::StrCat(type, " (", absl::StrJoin(stems, ", "), ")"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace ringside
