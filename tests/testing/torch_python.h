// Tests that need PyTorch: the Python to use ($RINGSIDE_TORCH_PYTHON, which
// .bazelrc passes through, else python3), whether a module imports there,
// and a shell command's exit status and output. Such tests skip, saying
// so, where torch does not import: the build and the test command never
// need it.
#ifndef RINGSIDE_TESTS_TESTING_TORCH_PYTHON_H_
#define RINGSIDE_TESTS_TESTING_TORCH_PYTHON_H_

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace testing {

inline std::string TorchPython() {
  const char* python = std::getenv("RINGSIDE_TORCH_PYTHON");
  return python != nullptr && *python != '\0' ? python : "python3";
}

// Runs `command` through the shell, stderr with stdout; its exit status
// (-1 when it did not exit normally), its output appended to `out`.
inline int RunShell(const std::string& command, std::string* out) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    out->append(buffer, n);
  }
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline bool TorchImports(const std::string& module) {
  std::string out;
  return RunShell(absl::StrCat(TorchPython(), " -c 'import ", module, "'"),
                  &out) == 0;
}

}  // namespace testing
}  // namespace ringside

#endif  // RINGSIDE_TESTS_TESTING_TORCH_PYTHON_H_
