// Output paths checked before the work that fills them: a missing or
// read-only folder fails at start-up, naming the flag, instead of after
// every training step has run (the way --timeline always behaved).
#ifndef RINGSIDE_COMMON_OUTPUT_PATH_H_
#define RINGSIDE_COMMON_OUTPUT_PATH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ringside {

// Creates `dir` and its parents as needed (mkdir -p) and checks that a
// file can be created in it. INVALID_ARGUMENT "--<flag>=<dir>: ..." with
// the reason otherwise.
absl::Status PrepareOutputDir(const std::string& dir, absl::string_view flag);

// Checks that the folder of `path` exists and that a file can be created
// in it (the file itself is not created). INVALID_ARGUMENT naming the flag
// otherwise.
absl::Status CheckOutputFile(const std::string& path, absl::string_view flag);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_OUTPUT_PATH_H_
