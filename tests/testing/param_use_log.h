// ParamUseLog: parameter-use hooks (models/model.h) and a readiness
// callback that log a model's calls as "n3" (needed(3)), "d3"
// (forward_done(3)) and "r3" (on_ready(3)), for tests of the contract.
#ifndef RINGSIDE_TESTS_TESTING_PARAM_USE_LOG_H_
#define RINGSIDE_TESTS_TESTING_PARAM_USE_LOG_H_

#include <string>
#include <vector>

#include "models/model.h"

namespace ringside::testing {

struct ParamUseLog {
  ParamUseLog() {
    hooks.needed = [this](int i) { calls.push_back("n" + std::to_string(i)); };
    hooks.forward_done = [this](int i) {
      calls.push_back("d" + std::to_string(i));
    };
  }
  ParamUseLog(const ParamUseLog&) = delete;
  ParamUseLog& operator=(const ParamUseLog&) = delete;

  GradientReadyFn Ready() {
    return [this](int i) { calls.push_back("r" + std::to_string(i)); };
  }

  ParamUseHooks hooks;
  std::vector<std::string> calls;
};

}  // namespace ringside::testing

#endif  // RINGSIDE_TESTS_TESTING_PARAM_USE_LOG_H_
