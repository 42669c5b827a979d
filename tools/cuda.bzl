# cuda_library: CUDA sources (.cu) compiled by /usr/local/cuda's nvcc into
# objects that a cc_library links, next to @cuda//:cuda (cudart, cuBLAS,
# NCCL). Bazel 4.2.3 has no CUDA rules and the project builds offline, so
# each .cu becomes a genrule running
#   nvcc -c -Xcompiler -fPIC -std=c++17 -O2 -gencode ... -I. -I$(GENDIR)
# for sm_80 and sm_90 machine code plus compute_90 PTX (JIT-compiled on newer
# GPUs), and the objects go into a cc_library's srcs (linkstatic, so they
# land in the binary as they are).
#
# Contract:
# - The .cu files may include their own `hdrs` (by workspace path, e.g.
#   "models/cuda/mlp_kernels.h"), CUDA and system headers, and whatever is
#   listed in `nvcc_hdrs`; nvcc sees nothing from `deps` (keep .cu files free
#   of absl and project libraries: return cudaError_t, wrap it in C++).
# - Both generated targets are tagged "manual": wildcards (//...) skip them,
#   so the default CPU build never runs nvcc. Depend on them only under
#   select({"//tools:cuda_enabled": [...]}) (bazel build --config=cuda).
# - Device code is whole-program (no -rdc): kernels are launched from the
#   .cu file that defines them.

_GENCODE = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

NVCC = "/usr/local/cuda/bin/nvcc"

def cuda_library(
        name,
        srcs,
        hdrs = [],
        deps = [],
        nvcc_hdrs = [],
        nvcc_copts = [],
        visibility = None,
        tags = [],
        **kwargs):
    """A cc_library of .cu sources compiled by nvcc (see the file comment).

    Args:
      name: the cc_library's name.
      srcs: .cu files, one object each.
      hdrs: the library's public headers (also visible to nvcc).
      deps: cc deps of the wrapping cc_library; @cuda//:cuda is added.
      nvcc_hdrs: further headers the .cu files include.
      nvcc_copts: extra nvcc flags (e.g. ["-lineinfo"]).
      visibility: of the cc_library.
      tags: added to "manual".
      **kwargs: passed to the cc_library.
    """
    objs = []
    for src in srcs:
        if not src.endswith(".cu"):
            fail("cuda_library %s: %s is not a .cu file" % (name, src))
        stem = src[:-len(".cu")].replace("/", "_")
        obj = "_%s_nvcc/%s.o" % (name, stem)
        native.genrule(
            name = "%s_%s_nvcc" % (name, stem),
            srcs = [src] + hdrs + nvcc_hdrs,
            outs = [obj],
            cmd = " ".join([
                NVCC,
                "-c",
                "-Xcompiler -fPIC",
                "-std=c++17",
                "-O2",
            ] + _GENCODE + nvcc_copts + [
                "-I.",
                "-I$(GENDIR)",
                "$(location %s)" % src,
                "-o $@",
            ]),
            message = "nvcc %s" % src,
            tags = ["manual"],
            visibility = ["//visibility:private"],
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:cuda"],
        linkstatic = True,
        visibility = visibility,
        tags = ["manual"] + tags,
        **kwargs
    )
