"""ringside_worker: a worker binary offering the given strategies.

A strategy built outside this repository (its own Bazel package or
repository, depending only on ringside's public targets) is a cc_library
with alwayslink = True whose .cc registers it (RINGSIDE_REGISTER_STRATEGY,
worker/sync_strategy.h). This macro links it into a worker:

    load("@ringside//worker:ringside_worker.bzl", "ringside_worker")
    ringside_worker(
        name = "worker",
        strategies = [":my_strategy"],
    )

launch and compare then run it with --worker_bin=<that binary>: they learn
its strategies from `worker --list_strategies`. With builtin = True
(default) ringside's own strategies are linked too.
"""

def ringside_worker(name, strategies, builtin = True, **kwargs):
    deps = [str(Label("//worker:worker_main"))] + strategies
    if builtin:
        deps.append(str(Label("//worker/strategies:all_strategies")))
    native.cc_binary(name = name, deps = deps, **kwargs)
