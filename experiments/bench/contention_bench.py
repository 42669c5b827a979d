#!/usr/bin/env python3
"""The two terms of the cost model that nominal links leave out, measured on
your own machines in about two minutes (experiments/cost/cost_model.h):

  sigma  compute_slowdown: how much slower the compute runs while a
         collective runs beside it (kernels, SMs and memory bandwidth
         shared), and
  f      sync_fixed_ms: the framework's fixed cost of synchronizing a step
         (PyTorch DDP's hooks, bucket copies and launches) without the
         communication itself.

  contention_bench.py [--device=cuda|cpu] [--size=4096] [--matmuls=20]
                      [--bucket_mb=25] [--rounds=5] [--layers=8]
                      [--width=2048] [--batch=64] [--out=FILE]

Two ranks on one node (two GPUs, NCCL; --device=cpu: two processes, Gloo):
  sigma: each rank times --matmuls products of --size x --size float32
         matrices alone, and again while a thread on a stream of its own
         all-reduces --bucket_mb buffers back to back for longer than the
         products take (the count fixed beforehand from a timing alone, the
         same on both ranks); sigma = median(beside) / median(alone) - 1
         over --rounds interleaved rounds;
  f:     each rank times a training step (forward, backward, SGD) of an MLP
         of --layers Linear layers of --width, plain and wrapped in
         DistributedDataParallel with a communication hook that returns
         each bucket as it is (no all-reduce): f = median(DDP) -
         median(plain), DDP's hooks and bucket copies alone.
With one GPU, sigma's collective is NCCL at world size 1 on that GPU (a
reduction kernel with no link: the SMs and memory are shared, the wire is
not), and the output says so.

Prints both with the medians and their spread, and the two lines a cluster
file takes (experiments/cost/cluster_file.h):
  compute_slowdown = 0.123
  sync_fixed_ms = 0.45
PyTorch comes from PyPI (pip install torch); ringside's build never needs it.
"""
import argparse
import os
import statistics
import sys
import threading
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--matmuls", type=int, default=20)
    p.add_argument("--bucket_mb", type=float, default=25.0)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--out", default="")
    p.add_argument("--port", type=int, default=29533)
    args = p.parse_args(argv)
    for name in ("size", "matmuls", "rounds", "layers", "width", "batch"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if not args.bucket_mb > 0:
        p.error(f"--bucket_mb must be > 0, got {args.bucket_mb}")
    return args


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_matmuls(torch, device, a, b, count):
    sync(torch, device)
    start = time.perf_counter()
    for _ in range(count):
        torch.mm(a, b)
    sync(torch, device)
    return time.perf_counter() - start


def all_reduces(torch, dist, device, buf, count, stream):
    if stream is not None:
        with torch.cuda.stream(stream):
            for _ in range(count):
                dist.all_reduce(buf)
            stream.synchronize()
    else:
        for _ in range(count):
            dist.all_reduce(buf)


def measure_sigma(torch, dist, device, args):
    a = torch.randn(args.size, args.size, device=device)
    b = torch.randn(args.size, args.size, device=device)
    buf = torch.zeros(int(args.bucket_mb * 1e6 / 4), device=device)
    stream = torch.cuda.Stream(device) if device.type == "cuda" else None
    time_matmuls(torch, device, a, b, 2)  # warm-up
    all_reduces(torch, dist, device, buf, 2, stream)
    alone = time_matmuls(torch, device, a, b, args.matmuls)
    start = time.perf_counter()
    all_reduces(torch, dist, device, buf, 4, stream)
    per_call = (time.perf_counter() - start) / 4
    # The same count on both ranks: the slower rank's estimate.
    estimate = torch.tensor([alone * 1.5 / max(per_call, 1e-6)],
                            device=device)
    dist.all_reduce(estimate, op=dist.ReduceOp.MAX)
    count = max(4, int(estimate.item()) + 1)
    alone_s, beside_s = [], []
    for _ in range(args.rounds):
        dist.barrier()
        alone_s.append(time_matmuls(torch, device, a, b, args.matmuls))
        dist.barrier()
        comm = threading.Thread(
            target=all_reduces,
            args=(torch, dist, device, buf, count, stream))
        comm.start()
        beside_s.append(time_matmuls(torch, device, a, b, args.matmuls))
        comm.join()
    return alone_s, beside_s, count


def measure_fixed(torch, dist, device, args):
    from torch.nn.parallel import DistributedDataParallel as DDP

    def mlp():
        torch.manual_seed(0)
        layers = []
        for _ in range(args.layers):
            layers += [torch.nn.Linear(args.width, args.width),
                       torch.nn.ReLU()]
        return torch.nn.Sequential(*layers).to(device)

    def no_allreduce(state, bucket):
        future = torch.futures.Future()
        future.set_result(bucket.buffer())
        return future

    plain = mlp()
    wrapped = DDP(mlp(), device_ids=[device.index]
                  if device.type == "cuda" else None)
    wrapped.register_comm_hook(None, no_allreduce)
    x = torch.randn(args.batch, args.width, device=device)

    def step_time(model, steps):
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        sync(torch, device)
        start = time.perf_counter()
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            model(x).square().mean().backward()
            opt.step()
        sync(torch, device)
        return (time.perf_counter() - start) / steps

    step_time(plain, 3)
    step_time(wrapped, 3)
    plain_s, ddp_s = [], []
    for _ in range(args.rounds):
        plain_s.append(step_time(plain, 10))
        ddp_s.append(step_time(wrapped, 10))
    return plain_s, ddp_s


def spread(values):
    return f"{1e3 * min(values):.3f}-{1e3 * max(values):.3f} ms"


def rank_main(rank, world, args, results):
    import torch
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    if args.device == "cuda":
        device = torch.device("cuda", rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    dist.init_process_group(backend, rank=rank, world_size=world)
    try:
        alone, beside, count = measure_sigma(torch, dist, device, args)
        plain, ddp = measure_fixed(torch, dist, device, args)
        if rank == 0:
            name = (torch.cuda.get_device_name(device)
                    if device.type == "cuda" else "CPU")
            results.put({"alone": alone, "beside": beside, "count": count,
                         "plain": plain, "ddp": ddp, "device": name,
                         "torch": torch.__version__})
    finally:
        dist.destroy_process_group()


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError as e:
        print(f"contention_bench: torch does not import ({e}); "
              "pip install torch (PyPI) into a virtual environment",
              file=sys.stderr)
        return 2
    world = 2
    note = "two ranks, one per GPU, NCCL"
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("contention_bench: no CUDA device (try --device=cpu)",
                  file=sys.stderr)
            return 2
        if torch.cuda.device_count() < 2:
            world = 1
            note = ("one GPU: NCCL at world size 1 (a reduction kernel "
                    "sharing the SMs and memory, no link)")
    else:
        note = "two processes on the CPU, Gloo"
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    procs = [ctx.Process(target=rank_main, args=(r, world, args, results))
             for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
    if any(p.exitcode != 0 for p in procs) or results.empty():
        for p in procs:
            if p.is_alive():
                p.kill()
        print("contention_bench: a rank failed (exit codes "
              f"{[p.exitcode for p in procs]})", file=sys.stderr)
        return 1
    r = results.get()
    alone = statistics.median(r["alone"])
    beside = statistics.median(r["beside"])
    sigma = max(0.0, beside / alone - 1)
    plain = statistics.median(r["plain"])
    ddp = statistics.median(r["ddp"])
    fixed_ms = max(0.0, (ddp - plain) * 1e3)
    lines = [
        f"# contention_bench on {r['device']} ({note}), torch {r['torch']}, "
        f"{time.strftime('%Y-%m-%d')}, {args.rounds} interleaved rounds:",
        f"# {args.matmuls} matmuls of {args.size}^2 alone "
        f"{1e3 * alone:.3f} ms ({spread(r['alone'])}), beside "
        f"{r['count']} all-reduces of {args.bucket_mb:g} MB "
        f"{1e3 * beside:.3f} ms ({spread(r['beside'])}): "
        f"{beside / alone:.3f}x",
        f"# MLP {args.layers} x {args.width}, batch {args.batch}: step plain "
        f"{1e3 * plain:.3f} ms ({spread(r['plain'])}), in DDP with a no-op "
        f"hook {1e3 * ddp:.3f} ms ({spread(r['ddp'])}): "
        f"{ddp / plain:.3f}x",
        f"compute_slowdown = {sigma:.3f}",
        f"sync_fixed_ms = {fixed_ms:.3f}",
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
