// The files compare writes: text files, folders, the user's paths under
// `bazel run`, and a report's images copied beside a Markdown file
// elsewhere. Blocking file-system calls; no state of their own, so safe
// from any thread as long as two calls do not write the same path.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_OUTPUT_FILES_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_OUTPUT_FILES_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "experiments/report/sweep_report.h"

namespace ringside::compare {

// Writes `text` to `path`, replacing it; INTERNAL when it cannot.
absl::Status WriteFile(const std::filesystem::path& path,
                       const std::string& text);

// Creates `dir` and its parents; INTERNAL with the reason when it cannot.
absl::Status MakeDir(const std::filesystem::path& dir);

// `path` as the user meant it: under `bazel run` the process runs in its
// runfiles tree, so a relative path is taken from where the user typed the
// command ($BUILD_WORKING_DIRECTORY).
std::filesystem::path UserPath(const std::string& path);

// Copies `images` (in `from`) to results/ beside the Markdown file `md`
// and returns them with their paths relative to `md`; INTERNAL naming the
// image that could not be copied.
absl::StatusOr<std::vector<ReportImage>> CopyImagesBeside(
    const std::filesystem::path& md, const std::filesystem::path& from,
    std::vector<ReportImage> images);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_OUTPUT_FILES_H_
