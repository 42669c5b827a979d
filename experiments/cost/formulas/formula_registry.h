// One cost formula per strategy, registered under its cost-model name (the
// name a StrategyInfo::modelled_as gives, worker/sync_strategy.h). Each
// formula sits in its own file here, <name>_formula.cc, whose header
// comment is its contract: the terms it adds, in cost_model.h's symbols.
// experiments/cost/cost_model.cc looks the formula up by name and assembles
// its terms into a step (the shared machinery: the wire, the overlap with
// compute or backward, the cores' bound).
//
// A formula registers itself in its .cc (the :formulas library is
// alwayslink, so linking //experiments/cost:cost_model links them all):
//   RINGSIDE_REGISTER_FORMULA(RingFormula, 3);
// the number being its place in CostModelStrategies()' table order.
#ifndef RINGSIDE_EXPERIMENTS_COST_FORMULAS_FORMULA_REGISTRY_H_
#define RINGSIDE_EXPERIMENTS_COST_FORMULAS_FORMULA_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "experiments/cost/cost_types.h"

namespace ringside {

// What the overlap with backward works with (cost_model.h): O, the
// overlappable seconds of comm, and the schedule's bytes in all.
struct BackwardBudget {
  double overlappable_s = 0;
  double total_bytes = 0;  // > 0
};

// One communication thread's calls in backward: the last call's end (from
// the compute's start) and the seconds they took in all; what runs after
// backward (after_s) and the fixed overhead the step pays besides
// (fixed_s).
struct BackwardRun {
  double end_s = 0;
  double busy_s = 0;
  double after_s = 0;
  double fixed_s = 0;
};

// A strategy's cost formula. Stateless; thread-safe.
class StrategyFormula {
 public:
  virtual ~StrategyFormula() = default;

  // The cost-model name: one of CostModelStrategies().
  virtual std::string name() const = 0;

  // The strategy options (worker flag names without "--", as in
  // StrategyInfo::options) whose values this formula reads from CostInputs
  // (e.g. "ring_bucket_kb" for bucket_bytes). Every strategy modelled by
  // this formula lists each of them (formula_registry_test.cc).
  virtual std::vector<std::string> options() const { return {}; }
  // The worker flags a study runs the strategies it models with, as their
  // StrategyInfo::study_flags ("--staleness=2" for async_ps), so that
  // predict and compare evaluate the same setting (formula_registry_test.cc
  // checks they agree). Default: none.
  virtual std::vector<std::string> study_flags() const { return {}; }

  // The plain steps a run may take before its own kind of step (PowerSGD's
  // --powersgd_start_step: plain all-reduces first): the option counting
  // them (one of options()), the formula that prices one such step and
  // the options it prices it with (local SGD's warm-up: local_sgd at
  // local_steps=1). This formula's Terms price the later steps only;
  // PredictMeasuredWindow (cost_model.h) weighs the two over a window.
  struct PlainFirstSteps {
    std::string option;
    std::string formula;
    std::map<std::string, std::string> formula_options;
  };
  // nullopt (the default): every step is of one kind.
  virtual std::optional<PlainFirstSteps> plain_first_steps() const {
    return std::nullopt;
  }

  // Fills p's communication terms from `in`: bandwidth_s, latency_s,
  // overhead_s, cpu_s and streamed_cpu_s, and p.servers (and p.workers
  // where the strategy runs another n). p arrives with workers = n and the
  // rest 0.
  virtual void Terms(const CostInputs& in, Prediction& p) const = 0;

  // W of the cores' demand: the bytes all the processes send a step.
  virtual double BytesSentPerStep(const CostInputs& in) const = 0;

  // The cores' demand's CPU terms: the CPU seconds all the processes'
  // communication asks of the cores a step (not their compute or the
  // link's bytes). Default: each of the n workers' cpu_s.
  virtual double CommCpuDemandSeconds(const CostInputs& in,
                                      const Prediction& p) const;

  // With in.gradient_ready: runs this strategy's calls in backward over
  // `budget` into `run` and returns true; false (the default) for a
  // strategy that starts nothing before backward ends (it hides nothing).
  // p holds the terms (Terms) and wire_s and comm_s.
  virtual bool SimulateBackward(const CostInputs& in, const Prediction& p,
                                const BackwardBudget& budget,
                                BackwardRun& run) const {
    return false;
  }

  // Whether its communication runs on a thread of its own beside the
  // compute under `in` (o = 1); if so, fills p.hidden_cpu_s,
  // p.step_compute_s and p.core_bound_s (its own cores' bound) too. The
  // default: false, nothing filled.
  virtual bool RunsInBackground(const CostInputs& in, Prediction& p) const {
    return false;
  }

  // Whether its calls run during the compute where the formula prices
  // none of them as hidden (no SimulateBackward run, not in background):
  // zero3's prefetched all-gathers. Prediction::communicates_during_compute
  // is this, a simulated backward run or a background thread. Default:
  // false.
  virtual bool CommunicatesDuringCompute(const CostInputs& in) const {
    return false;
  }

  // How its update compares with one worker's at `staleness`.
  virtual Updates UpdatesAt(int64_t staleness) const {
    return Updates::kExact;
  }
  // For a lossy one: what it loses, for the label "lossy (...)" (ring_fp16:
  // "fp16 gradients").
  virtual std::string LossyNote() const { return ""; }

  // The memory formula in cost_model.h's symbols ("2P + s·P/n") and its
  // bytes per rank for P, s, n >= 1 and K >= 1 (checked by the caller).
  virtual std::string MemoryFormula() const = 0;
  virtual MemoryPerRank Memory(double P, double s, int64_t n,
                               int64_t k) const = 0;

  // Whether the strategy always runs on one worker (a sweep predicts it
  // at n = 1 only).
  virtual bool OneWorkerOnly() const { return false; }
};

// Process-wide registry of the formulas. Thread-safe.
class FormulaRegistry {
 public:
  // Takes `formula` under its name(); returns true; dies on a duplicate
  // name (a programmer error).
  static bool Register(std::unique_ptr<StrategyFormula> formula,
                       int table_order);
  // nullptr for an unknown name. The formula lives as long as the process.
  static const StrategyFormula* Find(absl::string_view name);
  // The names in table order, then by name.
  static std::vector<std::string> Names();
  // Every registered formula's options() (worker flag names), sorted, each
  // once: the flags whose values CostInputs::strategy_options carries.
  static std::vector<std::string> OptionFlags();
  // The value `formula`'s study_flags() give `flag` (no "--"): "4" for
  // ring_powersgd's powersgd_rank; nullopt for an unknown formula or a
  // flag its study does not set.
  static std::optional<std::string> StudyFlag(absl::string_view formula,
                                              absl::string_view flag);
};

}  // namespace ringside

// Registers a default-constructible `Class` at `table_order`.
#define RINGSIDE_REGISTER_FORMULA(Class, table_order)                 \
  static const bool ringside_registered_formula_##Class =             \
      ::ringside::FormulaRegistry::Register(std::make_unique<Class>(), \
                                            table_order)

#endif  // RINGSIDE_EXPERIMENTS_COST_FORMULAS_FORMULA_REGISTRY_H_
