#include "collectives/gloo_error.h"

#include <exception>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gloo/common/error.h"
#include "gloo/common/logging.h"

namespace ringside {

bool IsGlooTimeoutMessage(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  return absl::StrContains(lower, "timed out") ||
         absl::StrContains(lower, "timeout");
}

absl::Status CallGloo(absl::string_view what, const char* file, int line,
                      absl::FunctionRef<void()> fn) {
  absl::StatusCode code = absl::StatusCode::kInternal;
  std::string kind;
  std::string message;
  try {
    fn();
    return absl::OkStatus();
  } catch (const gloo::IoException& e) {
    kind = "gloo::IoException";
    message = e.what();
    code = absl::StatusCode::kUnavailable;
  } catch (const gloo::EnforceNotMet& e) {
    kind = "gloo::EnforceNotMet";
    message = e.what();
  } catch (const gloo::Exception& e) {
    kind = "gloo::Exception";
    message = e.what();
  } catch (const std::exception& e) {
    kind = "std::exception";
    message = e.what();
  }
  if (IsGlooTimeoutMessage(message)) code = absl::StatusCode::kDeadlineExceeded;
  return absl::Status(code, absl::StrCat(what, " [", file, ":", line,
                                         "]: ", kind, ": ", message));
}

}  // namespace ringside
