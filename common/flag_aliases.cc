#include "common/flag_aliases.h"

#include <iostream>
#include <utility>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

std::vector<std::pair<std::string, std::string>>& Aliases() {
  static auto* aliases = new std::vector<std::pair<std::string, std::string>>;
  return *aliases;
}

}  // namespace

bool RegisterFlagAlias(const char* old_name, const char* new_name) {
  Aliases().emplace_back(old_name, new_name);
  return true;
}

absl::Status ApplyFlagAliases() {
  for (const auto& [old_name, new_name] : Aliases()) {
    absl::CommandLineFlag* old_flag = absl::FindCommandLineFlag(old_name);
    absl::CommandLineFlag* new_flag = absl::FindCommandLineFlag(new_name);
    if (old_flag == nullptr || new_flag == nullptr) {
      return absl::InternalError(absl::StrCat("flag alias --", old_name,
                                              " -> --", new_name,
                                              ": a flag is not defined"));
    }
    // Given: the alias's default is "" (this absl keeps
    // IsSpecifiedOnCommandLine private).
    if (old_flag->CurrentValue().empty()) continue;
    std::cerr << "note: --" << old_name << " is deprecated; use --"
              << new_name << " (same value)\n";
    if (new_flag->CurrentValue() != new_flag->DefaultValue()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", old_name, " is a deprecated name of --",
                       new_name, "; give one of them, not both"));
    }
    std::string error;
    if (!new_flag->ParseFrom(old_flag->CurrentValue(), &error)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", old_name, "=", old_flag->CurrentValue(), " (now --",
          new_name, "): ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace ringside
