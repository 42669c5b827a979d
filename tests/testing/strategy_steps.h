// Runs a registered strategy's steps on N ranks as threads over gradients
// a test makes by hand (no model): each rank's Init, then per step the
// gradients written into the buffer, every tensor reported ready in
// reverse layout order (as backward reports them), FinishStep, and at the
// end Shutdown. testonly. Blocking: it joins every thread; a rank's error
// fails the calling test (ExpectAllOk).
#ifndef RINGSIDE_TESTS_TESTING_STRATEGY_STEPS_H_
#define RINGSIDE_TESTS_TESTING_STRATEGY_STEPS_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/in_memory_store.h"
#include "core/optimizer_config.h"
#include "tests/testing/rank_threads.h"
#include "worker/strategy_option_set.h"
#include "worker/sync_strategy.h"

namespace ringside::testing {

// Per rank, per step: what FinishStep left in the gradient buffer (the
// averaged gradients) and its stats.
struct StrategySteps {
  std::vector<std::vector<std::vector<float>>> grads;  // [rank][step]
  std::vector<std::vector<StepStats>> stats;           // [rank][step]
};

// RunStrategySteps' default optimizer: SGD at lr 0.01.
inline OptimizerConfig StepsSgd() {
  OptimizerConfig sgd;
  sgd.type = "sgd";
  sgd.lr = 0.01f;
  return sgd;
}

// `strategy` on `n` ranks for `steps` steps of `layout` (parameters 0.5,
// `optimizer`: the tests read the gradients), with the gradients
// grads_of(rank, step) and the strategy's `options`.
inline StrategySteps RunStrategySteps(
    const std::string& strategy, int n, const TensorLayout& layout, int steps,
    const std::function<std::vector<float>(int, int)>& grads_of,
    const StrategyOptionSet& options = {},
    const OptimizerConfig& optimizer = StepsSgd()) {
  InMemoryStore store;
  StrategySteps out;
  out.grads.resize(n);
  out.stats.resize(n);
  ExpectAllOk(RunRanks(n, [&](int r) -> absl::Status {
    absl::StatusOr<std::unique_ptr<SyncStrategy>> s =
        StrategyRegistry::Create(strategy);
    if (!s.ok()) return s.status();
    std::vector<float> params(layout.total_elements(), 0.5f);
    std::vector<float> grads(layout.total_elements());
    SyncContext context;
    context.rank = r;
    context.world_size = n;
    context.layout = layout;
    context.params = absl::MakeSpan(params);
    context.grads = absl::MakeSpan(grads);
    context.optimizer = optimizer;
    context.options.store = &store;
    context.options.rpc_timeout = absl::Seconds(20);
    context.options.connect_timeout = absl::Seconds(10);
    context.options.strategy = options;
    if (absl::Status st = (*s)->Init(context); !st.ok()) return st;
    for (int t = 0; t < steps; ++t) {
      const std::vector<float> g = grads_of(r, t);
      if (g.size() != grads.size()) {
        return absl::InvalidArgumentError("grads_of: wrong size");
      }
      std::copy(g.begin(), g.end(), grads.begin());  // the span stays valid
      for (int i = layout.num_tensors() - 1; i >= 0; --i) {
        (*s)->OnGradientReady(i);
      }
      absl::StatusOr<StepStats> stats = (*s)->FinishStep(t);
      if (!stats.ok()) return stats.status();
      out.grads[r].push_back(grads);
      out.stats[r].push_back(*stats);
    }
    return (*s)->Shutdown();
  }));
  return out;
}

}  // namespace ringside::testing

#endif  // RINGSIDE_TESTS_TESTING_STRATEGY_STEPS_H_
