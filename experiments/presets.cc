#include "experiments/presets.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/cpp/runfiles/runfiles.h"

namespace ringside {
namespace {

namespace fs = std::filesystem;

bool IsDir(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_directory(path, ec);
}

}  // namespace

std::vector<std::string> PresetDirs(const std::string& argv0,
                                    const std::string& preset_dir) {
  if (!preset_dir.empty()) {
    // Under `bazel run`, relative to where the user typed the command.
    const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
    if (cwd != nullptr && fs::path(preset_dir).is_relative()) {
      return {(fs::path(cwd) / preset_dir).string()};
    }
    return {preset_dir};
  }
  std::vector<std::string> candidates;
  using bazel::tools::cpp::runfiles::Runfiles;
  std::string error;
  std::unique_ptr<Runfiles> runfiles(Runfiles::Create(argv0, &error));
  if (runfiles != nullptr) {
    candidates.push_back(runfiles->Rlocation("ringside/experiments/presets"));
  }
  if (const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY")) {
    candidates.push_back(absl::StrCat(ws, "/experiments/presets"));
  }
  candidates.push_back("experiments/presets");
  std::vector<std::string> dirs;
  for (const std::string& c : candidates) {
    if (IsDir(c) && std::find(dirs.begin(), dirs.end(), c) == dirs.end()) {
      dirs.push_back(c);
    }
  }
  return dirs;
}

std::vector<std::string> ListPresets(const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (absl::EndsWith(file, kPresetExtension) &&
          file.size() > kPresetExtension.size()) {
        names.insert(file.substr(0, file.size() - kPresetExtension.size()));
      }
    }
  }
  return {names.begin(), names.end()};
}

absl::StatusOr<std::string> FindPreset(absl::string_view name,
                                       const std::vector<std::string>& dirs) {
  if (absl::StrContains(name, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad preset name '", name, "'"));
  }
  for (const std::string& dir : dirs) {
    const fs::path path = fs::path(dir) / absl::StrCat(name, kPresetExtension);
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return path.string();
  }
  const std::vector<std::string> known = ListPresets(dirs);
  return absl::NotFoundError(absl::StrCat(
      "unknown preset '", name, "'; known: ",
      known.empty() ? "none" : absl::StrJoin(known, ", "), " (looked in ",
      dirs.empty() ? "no folder" : absl::StrJoin(dirs, ", "), ")"));
}

std::optional<std::string> FlagValue(const std::vector<std::string>& args,
                                     absl::string_view name) {
  std::optional<std::string> value;
  const std::string eq = absl::StrCat("--", name, "=");
  const std::string bare = absl::StrCat("--", name);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (absl::StartsWith(args[i], eq)) {
      value = args[i].substr(eq.size());
    } else if (args[i] == bare && i + 1 < args.size()) {
      value = args[++i];
    }
  }
  return value;
}

absl::StatusOr<std::vector<std::string>> ExpandPreset(
    const std::vector<std::string>& args,
    const std::vector<std::string>& dirs) {
  const std::optional<std::string> name = FlagValue(args, "preset");
  if (!name || args.empty()) return args;
  absl::StatusOr<std::string> path = FindPreset(*name, dirs);
  if (!path.ok()) return path.status();
  std::vector<std::string> out = {args[0], absl::StrCat("--flagfile=", *path)};
  out.insert(out.end(), args.begin() + 1, args.end());
  return out;
}

}  // namespace ringside
