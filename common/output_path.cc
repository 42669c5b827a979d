#include "common/output_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

namespace fs = std::filesystem;

// Creates and removes a probe file in `dir`.
absl::Status CanCreateIn(const fs::path& dir, absl::string_view flag,
                         const std::string& value) {
  const fs::path probe =
      dir / absl::StrCat(".ringside-write-check-", getpid());
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", value, ": cannot create files in ",
                     dir.string(), ": ", std::strerror(errno)));
  }
  close(fd);
  unlink(probe.c_str());
  return absl::OkStatus();
}

}  // namespace

absl::Status PrepareOutputDir(const std::string& dir, absl::string_view flag) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", dir, ": cannot create the folder: ", ec.message()));
  }
  return CanCreateIn(dir, flag, dir);
}

absl::Status CheckOutputFile(const std::string& path, absl::string_view flag) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", path, ": the folder ", parent.string(),
        " does not exist"));
  }
  return CanCreateIn(parent, flag, path);
}

}  // namespace ringside
