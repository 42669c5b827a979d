"""cc_grpc_proto: compiles one .proto with the system protoc + grpc_cpp_plugin."""

load("@rules_cc//cc:defs.bzl", "cc_library")

def cc_grpc_proto(name, src, deps = [], grpc = False, **kwargs):
    """Generates <src>.pb.{h,cc} (and .grpc.pb.{h,cc} when grpc) as a cc_library.

    Args:
      name: the cc_library's name.
      src: the .proto file in this package.
      deps: other cc_grpc_proto libraries whose .proto files src imports.
      grpc: also generate gRPC service stubs.
      **kwargs: passed to cc_library (visibility, ...).
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    cmd = "protoc -I. --cpp_out=$(GENDIR) $(location " + src + ")"
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
        cmd += (" && protoc -I. --grpc_out=$(GENDIR)" +
                " --plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin)" +
                " $(location " + src + ")")
    native.genrule(
        name = name + "_gen",
        srcs = [src] + [d + "_srcs" for d in deps],
        outs = outs,
        cmd = cmd,
    )
    native.filegroup(name = name + "_srcs", srcs = [src])
    cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + ["@system//:grpc"],
        **kwargs
    )
