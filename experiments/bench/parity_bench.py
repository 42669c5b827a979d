#!/usr/bin/env python3
"""parity_bench: every ringside component beside what a user would pick
instead, measured in one invocation, rounds interleaved, as ratios.

  tools/parity_bench.sh --torch_python=$HOME/torchenv/bin/python
  python3 experiments/bench/parity_bench.py --bin_dir=bazel-bin --rounds=3

Pairs (ratio = ringside's throughput / the reference's; >= 1 is parity):
  compute, mlp      worker --strategy=baseline (forward + backward +
                    optimizer, one thread) vs PyTorch eager on the same
                    shapes and optimizer, one thread
  compute, mlp, long  the same over steps 1000-1500, where SGD momentum
                    has decayed into denormal floats: vs PyTorch eager as
                    it comes and with torch.set_flush_denormal(True)
  compute, charlm   charlm_bench CPU step (forward + backward) vs PyTorch
                    eager on the CPU (charlm_torch_ref.py), one thread
  ring, fusion      compare's throughput vs its PyTorch DDP row (gloo),
                    n = 2 and 4
  ps push + pull    transport_bench: PsSession goodput over gRPC and over
                    the bulk path vs plain TCP streams
                    at 4 and 64 MiB, N = 1 and 4; beside it the same chunks
                    over bare gRPC streams (no parameter server) vs TCP,
                    and PsSession vs that bare gRPC (target >= 1.0: the
                    parameter server adds nothing to its transport)
  ps memory         ps_server's peak RSS with N = 4 sps workers on a 68 MB
                    MLP (64-4096-4096-10) vs 3x the model's bytes
                    (parameters, momentum, one accumulator); ratio = peak
                    RSS / model bytes, lower is better, target <= 3.5
  ps shaped link    compare --workers=2 --servers=2 --strategies=sps,dps
                    --link_gbit=0.1: each step time vs the alpha-beta
                    model's full-duplex step (push and pull overlapped);
                    ratio = measured / modelled, lower is better, target
                    <= 1.2 (root and network namespaces needed; else "not
                    run" with the reason)

Each pair's two sides alternate within a round; the table gives the median
over rounds of each side and of the per-round ratio. Without torch in
--torch_python the torch pairs print "not run" with the reason; the rest
still runs. stdout: a Markdown table; --json_out: the rows as JSON.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

TORCH_MLP = r"""
import json, statistics, sys, time, torch
widths, b, steps, warmup, *rest = json.loads(sys.argv[1])
if rest and rest[0]:
    torch.set_flush_denormal(True)
torch.set_num_threads(1)
g = torch.Generator().manual_seed(1)
W = [torch.nn.Parameter(torch.randn(i, o, generator=g) * (2.0 / i) ** 0.5)
     for i, o in zip(widths, widths[1:])]
B = [torch.nn.Parameter(torch.zeros(o)) for o in widths[1:]]
opt = torch.optim.SGD(W + B, lr=0.05, momentum=0.9)
x = torch.randn(b, widths[0], generator=g)
y = torch.randint(0, widths[-1], (b,), generator=g)
times = []
for step in range(steps):
    t = time.perf_counter()
    opt.zero_grad(set_to_none=False)
    h = x
    for i, (w, bias) in enumerate(zip(W, B)):
        h = torch.addmm(bias, h, w)
        if i < len(W) - 1:
            h = torch.relu(h)
    torch.nn.functional.cross_entropy(h, y).backward()
    opt.step()
    times.append(time.perf_counter() - t)
print(json.dumps({"step_s": statistics.median(times[warmup:]),
                  "torch": torch.__version__}))
"""


def run(cmd, timeout, env=None, both=False):
    """stdout of `cmd` (with both: stdout and stderr); raises on failure."""
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                         env=env)
    if out.returncode != 0:
        tail = "\n".join(out.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exit {out.returncode}: "
                           f"{tail}")
    return (out.stdout, out.stderr) if both else out.stdout


def json_lines(text):
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def torch_works(python):
    try:
        run([python, "-c", "import torch, torch.distributed"], 120)
        return ""
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        return f"no torch in {python} ({str(e).splitlines()[-1][:120]})"


class Table:
    def __init__(self):
        self.rows = []

    def add(self, component, reference, ours, ref, unit, ratios, target,
            note="", lower_is_better=False):
        row = {"component": component, "reference": reference,
               "ours": ours, "ref": ref, "unit": unit, "target": target,
               "note": note, "lower_is_better": lower_is_better}
        if ratios:
            row["ratio"] = statistics.median(ratios)
            row["ratios"] = ratios
            row["met"] = (row["ratio"] <= target if lower_is_better
                          else row["ratio"] >= target)
        self.rows.append(row)

    def markdown(self):
        lines = ["| Component | Reference | ringside | reference | ratio "
                 "(median) | target | met |",
                 "| :-- | :-- | --: | --: | --: | --: | :-: |"]
        for r in self.rows:
            bound = f"{'<=' if r['lower_is_better'] else '>='} {r['target']}"
            if "ratio" not in r:
                lines.append(f"| {r['component']} | {r['reference']} | - | - "
                             f"| not run: {r['note']} | {bound} | - |")
                continue
            fmt = lambda v: f"{v:.2f} {r['unit']}" if v else "-"
            lines.append(
                f"| {r['component']} | {r['reference']} | {fmt(r['ours'])} | "
                f"{fmt(r['ref'])} | {r['ratio']:.2f}x | {bound} | "
                f"{'yes' if r['met'] else '**no**'} |")
        return "\n".join(lines)


MLP_WIDTHS = [64, 1024, 1024, 10]
MLP_COMPONENT = "compute: mlp 64-1024-1024-10, b=32, fwd+bwd+SGD momentum"


def mlp_steps(args, widths, steps, warmup, flushes, why_no_torch):
    """Per round: ringside's baseline worker's ms/step over the measured
    steps, then PyTorch eager's median ms/step (one per entry of `flushes`:
    torch.set_flush_denormal) on the same shapes and optimizer."""
    ours, refs = [], [[] for _ in flushes]
    for _ in range(args.rounds):
        final = json_lines(run(
            [os.path.join(args.bin_dir, "worker/worker"),
             "--strategy=baseline", f"--steps={steps}",
             f"--warmup_steps={warmup}", "--batch_size=32",
             "--mlp_widths=" + ",".join(map(str, widths))], 600))[-1]
        ours.append(final["wall_s"] / final["measured_steps"] * 1e3)
        if why_no_torch:
            continue
        for ref, flush in zip(refs, flushes):
            t = json.loads(run([args.torch_python, "-c", TORCH_MLP,
                                json.dumps([widths, 32, steps, warmup,
                                            flush])], 600))
            ref.append(t["step_s"] * 1e3)
    return ours, refs


def add_mlp_row(table, component, reference, ours, ref, why_no_torch):
    ratios = [r / o for r, o in zip(ref, ours)]
    table.add(component, reference, statistics.median(ours),
              statistics.median(ref) if ref else 0, "ms/step", ratios, 1.0,
              why_no_torch)


def mlp_compute(args, table, why_no_torch):
    ours, (ref,) = mlp_steps(args, MLP_WIDTHS, 60, 10, [False], why_no_torch)
    add_mlp_row(table, MLP_COMPONENT, "PyTorch eager, 1 thread", ours, ref,
                why_no_torch)


def mlp_long_compute(args, table, why_no_torch):
    """Steps 1000-1500: SGD momentum of parameters whose gradient stays 0
    has decayed into denormal floats by then (about 800 steps at 0.9).
    ringside flushes them to zero (common/denormals.h); PyTorch does not
    unless asked (torch.set_flush_denormal), so both are shown."""
    ours, (ref, ref_flush) = mlp_steps(args, MLP_WIDTHS, 1500, 1000,
                                       [False, True], why_no_torch)
    component = MLP_COMPONENT + ", steps 1000-1500"
    add_mlp_row(table, component, "PyTorch eager, 1 thread", ours, ref,
                why_no_torch)
    add_mlp_row(table, component, "PyTorch eager, 1 thread, "
                "set_flush_denormal(True)", ours, ref_flush, why_no_torch)


def charlm_compute(args, table, why_no_torch):
    widths = [64, 128]
    per = {w: ([], [], []) for w in widths}
    for _ in range(args.rounds):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            run([os.path.join(args.bin_dir, "experiments/bench/charlm_bench"),
                 "--n_embd=" + ",".join(map(str, widths)), "--n_layer=4",
                 "--block_size=64", "--threads=1",
                 "--cuda=false", f"--torch={'false' if why_no_torch else 'true'}",
                 f"--torch_cpu={'false' if why_no_torch else 'true'}",
                 f"--python={args.torch_python}", f"--json_out={f.name}"],
                1200)
            rows = json.load(open(f.name))
        for r in rows:
            w = r.get("n_embd")
            if w not in per or not str(r.get("device")).startswith("cpu"):
                continue
            ours_ms = r.get("step_ms")
            ref_ms = r.get("torch_step_ms")
            if ours_ms:
                per[w][0].append(ours_ms)
            if ours_ms and ref_ms:
                per[w][1].append(ref_ms)
                per[w][2].append(ref_ms / ours_ms)
    for w in widths:
        ours, ref, ratios = per[w]
        table.add(f"compute: charlm n_embd={w}, fwd+bwd",
                  "PyTorch eager CPU, 1 thread",
                  statistics.median(ours) if ours else 0,
                  statistics.median(ref) if ref else 0, "ms/step", ratios,
                  1.0, why_no_torch or ("" if ratios else
                                        "charlm_bench gave no torch row"))


def allreduce(args, table, why_no_torch):
    counts = [2, 4]
    got = {(s, n): [] for s in ("ring", "fusion") for n in counts}
    tputs = {(s, n): [] for s in ("ring", "fusion", "ddp") for n in counts}
    if not why_no_torch:
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as out:
                run([os.path.join(args.bin_dir, "experiments/compare"),
                     "--workers=" + ",".join(map(str, counts)),
                     "--strategies=ring,fusion", "--plots=false",
                     "--cost_model=false", "--repeats=1", f"--out_dir={out}",
                     f"--torch_python={args.torch_python}"], 1800)
                report = json.load(open(os.path.join(out, "compare.json")))
            # Each row's timing run (compare's measurement protocol: a
            # window of at least 2 s), not its short training run.
            tput = {(r["strategy"], r["workers"]):
                    r["finals"][0]["throughput"] for r in report["runs"]
                    if r.get("phase", "timing") == "timing"}
            for n in counts:
                if ("ddp", n) not in tput:
                    continue
                tputs[("ddp", n)].append(tput[("ddp", n)])
                for s in ("ring", "fusion"):
                    if (s, n) in tput:
                        tputs[(s, n)].append(tput[(s, n)])
                        got[(s, n)].append(tput[(s, n)] / tput[("ddp", n)])
    med = lambda v: statistics.median(v) if v else 0
    for s in ("ring", "fusion"):
        for n in counts:
            table.add(f"{s}, n={n} (mlp, throughput)", "PyTorch DDP (gloo)",
                      med(tputs[(s, n)]), med(tputs[("ddp", n)]),
                      "samples/s", got[(s, n)], 1.0, why_no_torch)


def ps_transport(args, table):
    """Four rows per size and N: PsSession over gRPC vs TCP, PsSession over
    the bulk path (--ps_transport=tcp) vs TCP, bare gRPC vs TCP (gRPC's own
    ceiling) and PsSession over gRPC vs bare gRPC (what the parameter server
    adds to its transport; >= 1.0). Each ratio is taken within one
    transport_bench repeat, where the four ran back to back."""
    for mb in (4, 64):
        got = {}  # (n, key) -> per-round values
        for _ in range(args.rounds):
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                run([os.path.join(args.bin_dir, "experiments/bench/transport_bench"),
                     f"--model_mb={mb}", "--workers=1,4", "--shard_counts=",
                     "--repeats=1", "--steps=20", "--warmup_steps=3",
                     f"--json_out={f.name}"], 1200)
                for r in json_lines(open(f.name).read()):
                    if r.get("section") != "goodput":
                        continue
                    n = r["workers"]
                    for key in ("ps_grpc_gbps", "ps_tcp_gbps", "tcp_gbps",
                                "grpc_gbps"):
                        got.setdefault((n, key), []).append(r[key])
                    for key in ("ps_grpc_ratio", "ps_tcp_ratio", "grpc_ratio"):
                        got.setdefault((n, key), []).extend(r[key])
                    got.setdefault((n, "ps_vs_grpc"), []).append(
                        r["ps_grpc_gbps"] / r["grpc_gbps"])
        grpc_targets = {1: 0.6 if mb == 4 else 0.85, 4: 0.5}
        tcp_targets = {1: 0.8, 4: 0.6}
        for n in sorted({n for n, _ in got}):
            med = lambda key: statistics.median(got[(n, key)])
            streams = f"{n} plain TCP stream(s)"
            table.add(f"ps push+pull over gRPC, {mb} MiB, N={n} (goodput)",
                      streams, med("ps_grpc_gbps"), med("tcp_gbps"), "GB/s",
                      got[(n, "ps_grpc_ratio")], grpc_targets.get(n, 0.5))
            table.add(f"ps push+pull over the bulk path, {mb} MiB, N={n} "
                      "(goodput)", streams, med("ps_tcp_gbps"),
                      med("tcp_gbps"), "GB/s", got[(n, "ps_tcp_ratio")],
                      tcp_targets.get(n, 0.6),
                      note="--ps_transport=tcp")
            table.add(f"bare gRPC push+pull, {mb} MiB, N={n} (goodput)",
                      streams, med("grpc_gbps"), med("tcp_gbps"), "GB/s",
                      got[(n, "grpc_ratio")], grpc_targets.get(n, 0.5),
                      note="the transport alone, no parameter server")
            table.add(f"ps push+pull over gRPC, {mb} MiB, N={n} (vs its "
                      "transport)", "the same chunks over bare gRPC streams",
                      med("ps_grpc_gbps"), med("grpc_gbps"), "GB/s",
                      got[(n, "ps_vs_grpc")], 1.0)


def ps_memory(args, table):
    """Peak RSS of one ps_server serving 4 sps workers, 68 MB model, with
    the pushes and pulls over gRPC and over the bulk path."""
    widths, workers, steps = "64,4096,4096,10", 4, 12
    for transport in ("grpc", "tcp"):
        ratios, peaks, model = [], [], 0
        for _ in range(args.rounds):
            # launch relays the server's lines to stderr as "[server/0] {...}".
            out, err = run([os.path.join(args.bin_dir, "experiments/launch"),
                            "--strategy=sps", f"--workers={workers}",
                            f"--steps={steps}", "--", f"--mlp_widths={widths}",
                            "--warmup_steps=2", f"--ps_transport={transport}"],
                           900, both=True)
            finals = [r for r in json_lines(
                "\n".join(l.split("] ", 1)[-1] for l in err.splitlines()
                          if l.startswith("[server/0] ")))
                      if r.get("event") == "server_final"]
            if not finals:
                raise RuntimeError("launch printed no server_final line")
            peak = finals[-1]["peak_rss_bytes"]
            model = [r for r in json_lines(out)
                     if r.get("event") == "final"][0]["model_bytes"]
            peaks.append(peak / 1e6)
            ratios.append(peak / model)
        table.add(f"ps_server peak RSS, sps N={workers} over {transport}, "
                  f"mlp {widths} ({model / 1e6:.0f} MB)",
                  "3x model bytes (params, momentum, accumulator)",
                  statistics.median(peaks), 3 * model / 1e6, "MB", ratios,
                  3.5, lower_is_better=True)


def ps_shaped_link(args, table):
    """sps and dps on a shaped 0.1 Gbit/s link vs the full-duplex model."""
    got = {s: ([], [], []) for s in ("sps", "dps")}
    why = ""
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as out:
            try:
                run([os.path.join(args.bin_dir, "experiments/compare"),
                     "--workers=2", "--servers=2", "--strategies=sps,dps",
                     "--link_gbit=0.1", "--steps=20", "--repeats=1",
                     "--plots=false",
                     "--noddp", f"--out_dir={out}"],
                    1800)
            except RuntimeError as e:
                why = str(e).splitlines()[-1][:160]
                break
            report = json.load(open(os.path.join(out, "compare.json")))
        unshaped = [r.get("network", "") for r in report["runs"]
                    if not str(r.get("network", "")).startswith("netns")]
        if unshaped:
            why = f"the link was not shaped: {unshaped[0][:140]}"
            break
        for r in report["cost_model"]["runs"]:
            if r["strategy"] in got and r["workers"] == 2 and \
                    r.get("predicted_step_s"):
                ours, ref, ratios = got[r["strategy"]]
                ours.append(r["measured_step_s"] * 1e3)
                ref.append(r["predicted_step_s"] * 1e3)
                ratios.append(r["measured_step_s"] / r["predicted_step_s"])
    for s, (ours, ref, ratios) in got.items():
        table.add(f"{s} step, n=2, K=2, shaped 0.1 Gbit/s link (mlp)",
                  "alpha-beta model, full duplex",
                  statistics.median(ours) if ours else 0,
                  statistics.median(ref) if ref else 0, "ms/step", ratios,
                  1.2, why, lower_is_better=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin_dir", default="bazel-bin",
                    help="where bazel put worker/worker, experiments/...")
    ap.add_argument("--torch_python", default="python3")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sections",
                    default="mlp,mlp_long,charlm,allreduce,ps,ps_memory,"
                            "ps_link")
    ap.add_argument("--json_out", default="")
    ap.add_argument("--append_md", default="",
                    help="also append the table, with the command, to this "
                         "Markdown file (e.g. docs/RESULTS.md after compare "
                         "--results_md wrote it)")
    args = ap.parse_args()
    why = torch_works(args.torch_python)
    table = Table()
    sections = set(args.sections.split(","))
    if "mlp" in sections:
        mlp_compute(args, table, why)
    if "mlp_long" in sections:
        mlp_long_compute(args, table, why)
    if "charlm" in sections:
        charlm_compute(args, table, why)
    if "allreduce" in sections:
        allreduce(args, table, why)
    if "ps" in sections:
        ps_transport(args, table)
    if "ps_memory" in sections:
        ps_memory(args, table)
    if "ps_link" in sections:
        ps_shaped_link(args, table)
    head = (f"parity_bench: {args.rounds} interleaved rounds; ratio = "
            "ringside throughput / reference throughput (per round, median); "
            "the RSS and shaped-link rows are lower-is-better (measured / "
            "reference)")
    print(head + "\n")
    print(table.markdown())
    if args.append_md:
        command = "tools/parity_bench.sh " + " ".join(
            a for a in sys.argv[1:] if not a.startswith("--bin_dir"))
        with open(args.append_md, "a") as f:
            f.write(f"\n## Parity with what users would pick instead\n\n"
                    f"`{command}`: {head}.\n\n{table.markdown()}\n")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(table.rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
