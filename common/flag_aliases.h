// Deprecated flag names: a renamed flag keeps its old name as an alias, so
// presets, job scripts and users' command lines keep working.
//
//   ABSL_FLAG(double, link_gbit, 25, "...");
//   RINGSIDE_FLAG_ALIAS(bandwidth_gbps, link_gbit);  // at namespace scope
//   ...
//   absl::ParseCommandLine(argc, argv);
//   if (absl::Status s = ringside::ApplyFlagAliases(); !s.ok()) ...
//
// RINGSIDE_FLAG_ALIAS defines --<old> as a string flag (default "") and
// registers it. ApplyFlagAliases, after parsing: for each alias given on
// the command line (a non-empty value), prints "--old is deprecated; use
// --new" to stderr and sets --new from its value (parsed as --new's type),
// unless --new was set away from its default too, which is an error naming
// both. Call it once, on the main
// thread.
#ifndef RINGSIDE_COMMON_FLAG_ALIASES_H_
#define RINGSIDE_COMMON_FLAG_ALIASES_H_

#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"

namespace ringside {

// Registers --old_name as a deprecated alias of --new_name (the
// RINGSIDE_FLAG_ALIAS macro calls it during static initialization).
bool RegisterFlagAlias(const char* old_name, const char* new_name);

// Applies every registered alias that was given (see the file comment).
// INVALID_ARGUMENT when an alias and its flag are both given, or the
// alias's value does not parse as the new flag's type.
absl::Status ApplyFlagAliases();

}  // namespace ringside

#define RINGSIDE_FLAG_ALIAS(old_name, new_name)                            \
  ABSL_FLAG(std::string, old_name, "",                                     \
            "Deprecated: use --" #new_name " (same value).");              \
  static const bool ringside_flag_alias_##old_name =                       \
      ::ringside::RegisterFlagAlias(#old_name, #new_name)

#endif  // RINGSIDE_COMMON_FLAG_ALIASES_H_
