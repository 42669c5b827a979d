// The parameter-server transport's chunk: the payload of one push or pull
// message, the unit of the push/pull pipeline (worker/strategies/
// ps_session.h). Shared by the workers and the cost model
// (experiments/cost/cost_model.h), which charges the pipeline's fill and
// drain per chunk. Pure; thread-safe.
#ifndef RINGSIDE_CORE_PS_CHUNKS_H_
#define RINGSIDE_CORE_PS_CHUNKS_H_

#include <cstdint>

namespace ringside {

// The chunk size when SyncOptions::chunk_bytes is 0: about 16 chunks per
// server, within [128 KiB, 1 MiB] (whole KiB). Chunks are the unit of the
// pipeline: the server applies and serves chunk c while later chunks are
// still being pushed, so on a slow full-duplex link a step costs about
// max(push, pull), not push + pull, once a server's range has enough of
// them. Measured on a shaped 0.1 Gbit/s link (compare --workers=2
// --servers=2 --link_gbit=0.1, the 4.5 MB MLP) against the alpha-beta
// model's full-duplex step: 4 MiB chunks SPS 1.91x, DPS 2.09x; 512 KiB
// 1.26x, 1.58x; 128 KiB 1.14x, 1.16x. Below 128 KiB per-message costs
// dominate on loopback (64 MiB model: 128 KiB chunks 0.27x a TCP stream),
// hence the floor. The ceiling is 1 MiB, not 4: a server holds each
// worker's current chunk whole until it is summed (gRPC hands over whole
// messages), so with N = 4 workers on a 68 MB model 4 MiB chunks cost
// ps_server 62 MB of peak RSS over its state, 1 MiB chunks 22 MB
// (parity_bench's ps memory pair), and loopback goodput is no worse
// (transport_bench --model_mb=64: 1 MiB 0.46-0.48x TCP at N = 1,
// 0.48-0.51x at N = 4; 4 MiB 0.47-0.49x, 0.44-0.48x). The price where the
// CPU, not the link, is the bottleneck: dps with 4 workers and 4 servers on
// the 2-core machine's loopback runs at 1740 samples/s with auto-sized
// chunks (128 KiB here) against 2320 with --chunk_kb=4096.
int64_t AutoChunkBytes(int64_t model_bytes, int num_servers);

}  // namespace ringside

#endif  // RINGSIDE_CORE_PS_CHUNKS_H_
