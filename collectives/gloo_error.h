// Gloo error translation: runs a piece of Gloo code and turns whatever it
// throws (gloo::IoException, gloo::EnforceNotMet, gloo::Exception,
// std::exception) into an absl::Status that keeps Gloo's own message and
// names our call site. Nothing Gloo throws crosses our API boundary.
//
// Codes: a message that reads as a timeout -> DEADLINE_EXCEEDED; other
// I/O errors -> UNAVAILABLE; failed Gloo checks and anything else ->
// INTERNAL. Thread-safe (pure functions).
#ifndef RINGSIDE_COLLECTIVES_GLOO_ERROR_H_
#define RINGSIDE_COLLECTIVES_GLOO_ERROR_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ringside {

// Runs `fn`; OK if it returns, else the translated exception, prefixed
// "<what> [<file>:<line>]: ". Blocking (as `fn` is).
absl::Status CallGloo(absl::string_view what, const char* file, int line,
                      absl::FunctionRef<void()> fn);

// True if Gloo's message `text` describes a timeout.
bool IsGlooTimeoutMessage(absl::string_view text);

}  // namespace ringside

// RS_GLOO_CALL(what, statement...): CallGloo with this file and line.
#define RS_GLOO_CALL(what, ...) \
  ::ringside::CallGloo((what), __FILE__, __LINE__, [&]() { __VA_ARGS__; })

#endif  // RINGSIDE_COLLECTIVES_GLOO_ERROR_H_
