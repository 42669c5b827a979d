#include "experiments/comparison/output_files.h"

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside::compare {

namespace fs = std::filesystem;

absl::Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out)
    return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

fs::path UserPath(const std::string& path) {
  fs::path p = path;
  if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
      p.is_relative() && cwd != nullptr) {
    p = fs::path(cwd) / p;
  }
  return p;
}

absl::Status MakeDir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ReportImage>> CopyImagesBeside(
    const fs::path& md, const fs::path& from, std::vector<ReportImage> images) {
  const fs::path assets = md.parent_path() / "results";
  RS_RETURN_IF_ERROR(MakeDir(assets));
  for (ReportImage& image : images) {
    std::error_code ec;
    fs::copy_file(from / image.path, assets / image.path,
                  fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot copy ", image.path, " to ", assets.string()));
    }
    image.path = "results/" + image.path;
  }
  return images;
}

}  // namespace ringside::compare
