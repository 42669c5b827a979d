// Large blocks come from the heap and go back to it, not to the kernel:
// glibc by default serves blocks over 128 KiB (rising with use) with a
// fresh mmap and unmaps them on free, so every multi-megabyte message
// buffer of the transports (gRPC's receive buffers, chunk payloads, Gloo's
// staging) would fault in and zero new pages each step — a tenth of a
// parameter server's time in `perf`. With the mmap threshold at glibc's
// maximum (32 MiB on 64-bit) and trimming only above 1 GiB of free heap,
// freed buffers are reused; the peak resident size is unchanged, it is
// just not returned between steps.
//
// Linked into every binary and test through @system//:absl (like
// cpu_check.cc); runs before main. ps_server's main sets its own, lower
// threshold afterwards (ps_server_main.cc: resident memory across many RPC
// threads' arenas matters more there); in-process servers (tests,
// transport_bench) keep this one. Measured with
//   transport_bench --model_mb=64 --shard_counts=
// ps/tcp 0.50 -> 0.55 (N = 1), 0.46 -> 0.55 (N = 4) on the 2-core machine.
#include <malloc.h>

namespace {

__attribute__((constructor(102))) void TuneMalloc() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace
