#include "common/json_lines.h"

#include <string>

namespace ringside {

void JsonLinesWriter::Write(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  absl::MutexLock lock(&mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace ringside
