// JSON-lines output: one JSON object per line on a FILE* (stdout by
// default), each line written and flushed atomically. Thread-safe.
#ifndef RINGSIDE_COMMON_JSON_LINES_H_
#define RINGSIDE_COMMON_JSON_LINES_H_

#include <cstdio>
#include <nlohmann/json.hpp>

#include "absl/synchronization/mutex.h"

namespace ringside {

class JsonLinesWriter {
 public:
  // Does not take ownership of `out`, which must outlive the writer.
  explicit JsonLinesWriter(std::FILE* out = stdout) : out_(out) {}

  // Writes `record` as one line and flushes. Blocking.
  void Write(const nlohmann::json& record);

 private:
  absl::Mutex mu_;
  std::FILE* out_;
};

}  // namespace ringside

#endif  // RINGSIDE_COMMON_JSON_LINES_H_
