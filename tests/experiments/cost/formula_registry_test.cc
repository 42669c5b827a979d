// The cost formulas (experiments/cost/formulas/) against the strategy
// registry (worker/sync_strategy.h), every strategy linked:
// - each registered strategy's StrategyInfo::modelled_as ("" when no
//   formula predicts it) names a registered formula;
// - the rule for options, per strategy: a formula reads its options()
//   from the settings of each strategy it predicts, so every strategy
//   modelled by a formula lists each of that formula's options in its
//   StrategyInfo::options (a formula shared by several strategies reads
//   only options all of them have);
// - a formula's study flags (the setting predict evaluates) are those of
//   each strategy it models (the setting compare runs);
// - every formula predicts some registered strategy, and is registered
//   under its own name(), in CostModelStrategies()' order.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiments/cost/cost_model.h"
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"
#include "gtest/gtest.h"
#include "worker/sync_strategy.h"

namespace ringside {
namespace {

TEST(FormulaRegistryTest, EveryModelledAsNamesARegisteredFormula) {
  for (const StrategyInfo& info : StrategyRegistry::List()) {
    if (info.modelled_as.empty()) continue;
    EXPECT_NE(FormulaRegistry::Find(info.modelled_as), nullptr)
        << info.name << " is modelled as '" << info.modelled_as
        << "', which no formula in experiments/cost/formulas/ registers";
  }
}

TEST(FormulaRegistryTest, FormulaOptionsAreOptionsOfEachStrategyItModels) {
  for (const StrategyInfo& info : StrategyRegistry::List()) {
    const StrategyFormula* formula = FormulaRegistry::Find(info.modelled_as);
    if (formula == nullptr) continue;
    for (const std::string& option : formula->options()) {
      EXPECT_TRUE(info.Reads(option))
          << "formula '" << formula->name() << "' reads option '" << option
          << "', which strategy '" << info.name
          << "' (modelled by it) does not list in its options";
    }
  }
}

TEST(FormulaRegistryTest, OptionNumberReadsTheStrategysOptionOrFallsBack) {
  CostInputs in;
  in.strategy_options = {{"staleness", "3"}, {"mode", "fast"}};
  EXPECT_EQ(OptionNumber(in, "staleness", 0), 3);
  EXPECT_EQ(OptionNumber(in, "mode", 7), 7);     // not a number
  EXPECT_EQ(OptionNumber(in, "missing", 5), 5);  // not given
}

TEST(FormulaRegistryTest, StudyFlagsAgreeWithEachStrategyItModels) {
  for (const StrategyInfo& info : StrategyRegistry::List()) {
    const StrategyFormula* formula = FormulaRegistry::Find(info.modelled_as);
    if (formula == nullptr) continue;
    EXPECT_EQ(formula->study_flags(), info.study_flags)
        << "formula '" << formula->name() << "' and strategy '" << info.name
        << "' disagree on the study's setting";
  }
}

TEST(FormulaRegistryTest, StudyFlagReadsAFormulasStudySetting) {
  EXPECT_EQ(FormulaRegistry::StudyFlag("ring_powersgd", "powersgd_rank"),
            std::optional<std::string>("4"));
  EXPECT_EQ(FormulaRegistry::StudyFlag("async_ps", "staleness"),
            std::optional<std::string>("2"));
  EXPECT_EQ(FormulaRegistry::StudyFlag("async_ps", "stale"), std::nullopt);
  EXPECT_EQ(FormulaRegistry::StudyFlag("ring", "ring_bucket_kb"),
            std::nullopt);
  EXPECT_EQ(FormulaRegistry::StudyFlag("no_such_formula", "x"), std::nullopt);
}

TEST(FormulaRegistryTest, EveryFormulaModelsARegisteredStrategy) {
  std::set<std::string> modelled;
  for (const StrategyInfo& info : StrategyRegistry::List()) {
    modelled.insert(info.modelled_as);
  }
  for (const std::string& name : FormulaRegistry::Names()) {
    EXPECT_EQ(modelled.count(name), 1u)
        << "formula '" << name << "' predicts no registered strategy";
  }
}

TEST(FormulaRegistryTest, RegisteredUnderTheirNamesInTableOrder) {
  const std::vector<std::string> names = FormulaRegistry::Names();
  EXPECT_EQ(names, CostModelStrategies());
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "baseline");
  for (const std::string& name : names) {
    const StrategyFormula* formula = FormulaRegistry::Find(name);
    ASSERT_NE(formula, nullptr) << name;
    EXPECT_EQ(formula->name(), name);
    const std::vector<std::string> options = formula->options();
    EXPECT_EQ(std::set<std::string>(options.begin(), options.end()).size(),
              options.size())
        << name << " lists an option twice";
  }
  EXPECT_EQ(FormulaRegistry::Find("nope"), nullptr);
}

}  // namespace
}  // namespace ringside
