"""ringside_predict, ringside_compare: the tools with more cost formulas.

A strategy built outside this repository (see worker/ringside_worker.bzl)
brings its cost formula as a cc_library with alwayslink = True whose .cc
registers it (RINGSIDE_REGISTER_FORMULA,
experiments/cost/formulas/formula_registry.h) under the name its
StrategyInfo's ModelledAs gives. These macros link it into predict and
compare:

    load("@ringside//experiments:ringside_tools.bzl",
         "ringside_compare", "ringside_predict")
    ringside_predict(name = "predict", formulas = [":my_formula"])
    ringside_compare(name = "compare", formulas = [":my_formula"])

predict then prints the strategy's column beside ringside's; compare (run
with --worker_bin=<the ringside_worker binary>) predicts its rows.
"""

def ringside_predict(name, formulas, **kwargs):
    native.cc_binary(
        name = name,
        deps = [str(Label("//experiments:predict_main"))] + formulas,
        **kwargs
    )

def ringside_compare(name, formulas, **kwargs):
    native.cc_binary(
        name = name,
        deps = [str(Label("//experiments:compare_main"))] + formulas,
        **kwargs
    )
