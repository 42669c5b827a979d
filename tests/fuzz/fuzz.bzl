"""fuzz_test: a libFuzzer-style target run as an ordinary, bounded test."""

load("@rules_cc//cc:defs.bzl", "cc_test")

def fuzz_test(name, src, corpus, deps = [], runs = 20000, max_seconds = 20):
    """A cc_test running LLVMFuzzerTestOneInput in `src` on its corpus.

    The test links tests/fuzz/standalone_fuzz_main.cc, runs every file of the
    corpus folder (seeds and regression inputs), then `runs` seeded random
    mutations of them, for at most `max_seconds`. tools/fuzz.sh builds the
    same `src` with clang's libFuzzer and sanitizers for real fuzzing.

    Args:
      name: the test's name.
      src: the .cc defining LLVMFuzzerTestOneInput.
      corpus: folder (in this package) of the seed corpus.
      deps: what `src` needs.
      runs: mutated inputs after the corpus.
      max_seconds: stop mutating after this long.
    """
    cc_test(
        name = name,
        size = "medium",
        srcs = [src],
        data = native.glob([corpus + "/**"]),
        args = [
            "--runs=%d" % runs,
            "--max_seconds=%d" % max_seconds,
            native.package_name() + "/" + corpus,
        ],
        deps = deps + [":standalone_fuzz_main"],
    )
