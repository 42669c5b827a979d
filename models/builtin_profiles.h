// The text of ringside's built-in gradient profiles (models/profiles/*.json,
// the one source of their tensor lists), compiled into the binary by
// tools/embed_files.sh so that no binary needs the files at run time.
// FindGradientProfile (gradient_profiles.h) parses them. Thread-safe.
#ifndef RINGSIDE_MODELS_BUILTIN_PROFILES_H_
#define RINGSIDE_MODELS_BUILTIN_PROFILES_H_

#include <vector>

namespace ringside {

struct BuiltinProfileFile {
  const char* path;  // where it lives in the source tree
  const char* text;  // its JSON (models/profile_file.h)
};

// In the order of the built-in profile list.
const std::vector<BuiltinProfileFile>& BuiltinProfileFiles();

}  // namespace ringside

#endif  // RINGSIDE_MODELS_BUILTIN_PROFILES_H_
