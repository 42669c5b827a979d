// Experiment presets: absl flagfiles in experiments/presets/<name>.flags
// (one flag per line, '#' comments) that `compare --preset=<name>` applies
// before the flags given on the command line, so explicit flags override
// the preset's:
//
//   compare --preset=study4                # as the file says
//   compare --preset=study4 --steps=80     # the same with 80 steps
//
// Presets are found under `bazel run` (the binary's runfiles; the files are
// a data dependency) and from the source tree (the workspace of `bazel
// run`, then the current folder), or in --preset_dir.
//
// Thread-safety: pure functions over the file system; thread-safe.
#ifndef RINGSIDE_EXPERIMENTS_PRESETS_H_
#define RINGSIDE_EXPERIMENTS_PRESETS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

// File name extension of a preset.
inline constexpr absl::string_view kPresetExtension = ".flags";

// Folders to look for presets in, in order: `preset_dir` alone when not
// empty (a relative one under `bazel run` is relative to
// $BUILD_WORKING_DIRECTORY); otherwise experiments/presets in this binary's
// runfiles (from `argv0`), under $BUILD_WORKSPACE_DIRECTORY, and under the
// current folder (those that exist).
std::vector<std::string> PresetDirs(const std::string& argv0,
                                    const std::string& preset_dir);

// Names of the presets in `dirs` (file stems of *.flags), sorted, without
// duplicates.
std::vector<std::string> ListPresets(const std::vector<std::string>& dirs);

// Path of preset `name` in the first of `dirs` that has it. NOT_FOUND
// naming the known presets ("unknown preset 'x'; known: a, b") when none
// has it; INVALID_ARGUMENT for a name with a '/'.
absl::StatusOr<std::string> FindPreset(absl::string_view name,
                                       const std::vector<std::string>& dirs);

// The value of --<name>=V or "--<name> V" among `args` (args[0] is the
// program; scanning stops at "--"); the last one wins. nullopt if absent.
std::optional<std::string> FlagValue(const std::vector<std::string>& args,
                                     absl::string_view name);

// With --preset=NAME among `args`: args with "--flagfile=<preset path>"
// inserted right after args[0], so that every flag given explicitly (they
// come later) overrides the preset's. Without --preset: args unchanged.
// Fails like FindPreset.
absl::StatusOr<std::vector<std::string>> ExpandPreset(
    const std::vector<std::string>& args, const std::vector<std::string>& dirs);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_PRESETS_H_
