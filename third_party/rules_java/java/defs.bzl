"""Offline stub: forwards rules_java's macros to Bazel 4's native rules."""

def java_import(**kwargs):
    native.java_import(**kwargs)

def java_runtime(**kwargs):
    native.java_runtime(**kwargs)

def java_toolchain(**kwargs):
    native.java_toolchain(**kwargs)
