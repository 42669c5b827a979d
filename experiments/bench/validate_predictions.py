#!/usr/bin/env python3
"""validate_predictions: the cost model's predictions tested out of sample.

  tools/validate_predictions.sh [--seed=N] [--configs=12]
  python3 experiments/bench/validate_predictions.py --bin_dir=bazel-bin

Draws configurations from a seeded generator -- a gradient profile or a
random tensor mix (worker --profile=tensors:...), a shaped link of 0.05-10
Gbit/s with 0-2 ms latency, n = 2-4 workers, K = 1-4 servers, a ring bucket
and a fusion threshold, 1-2 accumulation steps, emulated compute -- sized so
that the model's bytes take at most --max_link_s on the link per step (each
configuration finishes within a bounded time); then --real_configs draws
of real compute (an MLP of drawn widths and batch, n = 2 with one compute
thread each on the 2 cores, loopback). For each it runs compare on
that link (every strategy below at that n, --repeats=2) and reads each
row's predicted and measured step (compare.json's cost_model.runs: the
predictions come from the baseline's compute, the link's probe and the
calibration, never from the row's own run). It prints, per strategy and
overall, the median and 90th-percentile |error| over the counted rows, how
often the predicted fastest strategy is the measured fastest within its
measured spread, and the mean Spearman rank correlation of predicted and
measured steps per configuration. Rows whose processes, by the model's
own estimate from the inputs it had before the run (the baseline's
compute CPU, the calibration, the link probe's CPU per byte), would keep
at least CORE_BOUND_SHARE of the machine's cores busy (compare.json's
core_share) are labelled core-bound and reported apart: there the cores,
not the link, decide the step, and the model prices their contention only
as a bound (experiments/cost/cost_model.h). All rows are reported too.

The seed defaults to one derived from the checked-out commit, printed in
the output: a fresh draw per commit, reported as drawn, never redrawn.
Needs root and network namespaces (compare's shaped links).
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

STRATEGIES = ["sps", "dps", "ring", "fusion", "ring_fp16", "zero1",
              "zero2", "zero3"]
PROFILES = {  # parameters (float32), for sizing
    "mobilenet_v2": 3504872,
    "resnet50": 25557032,
}


def commit_seed(repo_dir):
    """A seed from the checked-out commit (its first 8 hex digits)."""
    try:
        sha = subprocess.run(["git", "-C", repo_dir, "rev-parse", "HEAD"],
                             capture_output=True, text=True,
                             check=True).stdout.strip()
        return int(sha[:8], 16)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 1


def tensor_mix(rng, total_elements):
    """A random mix of 3-40 tensors summing to about total_elements: a few
    large ones and many small ones, as real networks have."""
    count = rng.randint(3, 40)
    weights = [rng.paretovariate(1.2) for _ in range(count)]
    scale = total_elements / sum(weights)
    sizes = [max(16, int(w * scale)) for w in weights]
    return "tensors:" + ",".join(str(s) for s in sizes), sum(sizes)


def draw(rng, max_link_s):
    """One configuration: link, n, K, model, compute, bucket, fusion, k."""
    gbit = math.exp(rng.uniform(math.log(0.05), math.log(10.0)))
    latency_us = rng.choice([0, 0, 50, 200, 500, 1000, 2000])
    bytes_per_s = gbit * 1e9 / 8
    # The model's bytes over the link within [0.1, 1] x max_link_s.
    budget_bytes = bytes_per_s * max_link_s * rng.uniform(0.1, 1.0)
    fitting = [p for p, params in PROFILES.items()
               if 4 * params <= budget_bytes]
    if fitting and rng.random() < 0.4:
        profile = rng.choice(fitting)
        elements = PROFILES[profile]
    else:
        profile, elements = tensor_mix(rng, max(4096, budget_bytes / 4))
    link_s = 4 * elements / bytes_per_s
    return {
        "link_gbit": round(gbit, 4),
        "latency_us": latency_us,
        "workers": rng.randint(2, 4),
        "servers": rng.randint(1, 4),
        "profile": profile,
        "model_bytes": 4 * elements,
        "link_s": link_s,
        # Compute from a tenth to twice the link's seconds.
        "compute_ms": round(1000 * link_s * rng.uniform(0.1, 2.0), 2),
        "ring_bucket_kb": rng.choice([0, 1024, 4096, 25600]),
        "fusion_threshold_mb": rng.choice([4, 16, 64]),
        "accumulate_steps": rng.choice([1, 1, 2]),
    }


# A row whose predicted CPU demand keeps this share of the cores busy or
# more is core-bound (compare's report uses the same share,
# experiments/cost/cost_types.h's kCoreBoundShare).
CORE_BOUND_SHARE = 0.8


def core_bound(row):
    """The model's estimate says the row's processes keep most of the
    cores busy: the cores, not the link, decide its step."""
    return row[4] is not None and row[4] >= CORE_BOUND_SHARE


def draw_real(rng):
    """One real-compute configuration on loopback: an MLP of 1-3 hidden
    layers of the main job's scale (512-2048 wide: steps of milliseconds,
    not the fixed costs of a tiny model), a batch, n = 2 workers with one
    compute thread each (n x threads <= the 2 cores), K = 1-2 servers, a
    ring bucket."""
    hidden = [rng.choice([512, 1024, 2048])
              for _ in range(rng.randint(1, 3))]
    return {
        "real": True,
        "mlp_widths": ",".join(str(w) for w in [64] + hidden + [10]),
        "batch_size": rng.choice([32, 64, 128]),
        "workers": 2,
        "servers": rng.randint(1, 2),
        "ring_bucket_kb": rng.choice([0, 1024, 25600]),
        "accumulate_steps": rng.choice([1, 1, 2]),
    }


def run_args(config, out_dir, strategies):
    """compare's flags every configuration shares: its workers, servers
    and strategies, two timing runs of bounded windows, no evaluation."""
    return [f"--workers={config['workers']}",
            f"--servers={config['servers']}",
            "--strategies=" + ",".join(strategies),
            "--repeats=2", "--min_window_s=1", "--min_window_steps=10",
            "--steps=8", "--warmup_steps=3", "--eval_every=0",
            f"--accumulate_steps={config['accumulate_steps']}",
            "--plots=false", "--noddp", f"--out_dir={out_dir}"]


def compare_args_real(config, out_dir, strategies):
    return (["--model=mlp", f"--batch_size={config['batch_size']}"] +
            run_args(config, out_dir, strategies) +
            ["--", f"--mlp_widths={config['mlp_widths']}",
             f"--ring_bucket_kb={config['ring_bucket_kb']}"])


def compare_args(config, out_dir, strategies):
    return (["--model=synthetic", f"--profile={config['profile']}",
             f"--emulated_compute_ms={config['compute_ms']}",
             f"--link_gbit={config['link_gbit']}",
             f"--link_latency_us={config['latency_us']}"] +
            run_args(config, out_dir, strategies) +
            ["--", f"--ring_bucket_kb={config['ring_bucket_kb']}",
             "--fusion_threshold_bytes="
             f"{config['fusion_threshold_mb'] << 20}"])


def rows_of(report, workers):
    """(strategy, predicted, measured, runs, core_share) of the counted
    rows at n and of the core-bound ones (compare leaves those out of its
    own count; here they are reported apart), core_share None where the
    model had no core count."""
    rows = []
    for r in report.get("cost_model", {}).get("runs", []):
        core_bound_only = (r.get("predicted_step_s") is not None and
                           "core-bound" in (r.get("not_counted") or ""))
        if r.get("workers") != workers or not (r.get("counted") or
                                               core_bound_only):
            continue
        runs = r.get("measured_step_runs_s") or [r["measured_step_s"]]
        rows.append((r["strategy"], r["predicted_step_s"],
                     r["measured_step_s"], runs, r.get("core_share")))
    return rows


def percentile(values, q):
    """The q-quantile (0..1) by linear interpolation; None when empty."""
    if not values:
        return None
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def ranks(values):
    """Average ranks (1-based) with ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs, ys):
    """Spearman's rank correlation; None for fewer than 2 values or no
    variation."""
    if len(xs) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def fastest_agrees(rows):
    """Whether the predicted fastest strategy is the measured fastest
    within its spread: its measured step at most the slowest run of the
    measured fastest. None for fewer than 2 rows."""
    if len(rows) < 2:
        return None
    predicted = min(rows, key=lambda r: r[1])
    measured = min(rows, key=lambda r: r[2])
    return predicted[2] <= max(measured[3])


def error_table(rows):
    """Markdown lines: per strategy and overall, rows, median and p90
    |error| of [(strategy, predicted, measured, ...)]."""
    errors = {}
    for s, predicted, measured, *_ in rows:
        errors.setdefault(s, []).append(abs(predicted - measured) / measured)
    lines = ["| Strategy | Rows | Median abs error | p90 abs error |",
             "| :-- | --: | --: | --: |"]
    every = []
    for s in sorted(errors):
        e = errors[s]
        every += e
        lines.append(f"| {s} | {len(e)} | {100 * percentile(e, 0.5):.1f}% "
                     f"| {100 * percentile(e, 0.9):.1f}% |")
    if every:
        lines.append(f"| all | {len(every)} | "
                     f"{100 * percentile(every, 0.5):.1f}% | "
                     f"{100 * percentile(every, 0.9):.1f}% |")
    return lines


def summarize(results):
    """The report's lines from [(config, rows)]: the median and p90
    |error| per strategy and overall, for every row, then link-bound and
    core-bound rows apart; how often the fastest agrees and the rank
    correlation, per configuration over all its rows."""
    everything = [row for _, rows in results for row in rows]
    lines = [f"### All rows: {len(everything)}", ""]
    lines += error_table(everything)
    agree = [a for a in (fastest_agrees(rows) for _, rows in results)
             if a is not None]
    rhos = [r for r in (spearman([x[1] for x in rows], [x[2] for x in rows])
                        for _, rows in results) if r is not None]
    lines.append("")
    if agree:
        lines.append(f"Fastest strategy agrees (predicted fastest within "
                     f"the measured fastest's spread): {sum(agree)} of "
                     f"{len(agree)} configurations "
                     f"({100 * sum(agree) / len(agree):.0f}%).")
    if rhos:
        lines.append(f"Rank correlation (Spearman, per configuration): "
                     f"mean {statistics.mean(rhos):.2f}, lowest "
                     f"{min(rhos):.2f}.")
    lines.append("")
    for label, bound in (("link-bound", False), ("core-bound", True)):
        chosen = [row for row in everything if core_bound(row) == bound]
        lines.append(f"### {label} rows: {len(chosen)}"
                     + (f" (the model's estimate keeps at least "
                        f"{CORE_BOUND_SHARE:.0%} of the cores busy)"
                        if bound else ""))
        lines.append("")
        if chosen:
            lines += error_table(chosen)
            lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin_dir", default="bazel-bin")
    ap.add_argument("--seed", type=int, default=None,
                    help="default: from the checked-out commit")
    ap.add_argument("--configs", type=int, default=12)
    ap.add_argument("--real_configs", type=int, default=3,
                    help="also this many real-compute configurations on "
                    "loopback (n x threads <= cores)")
    ap.add_argument("--max_link_s", type=float, default=0.15,
                    help="the most seconds the model's bytes take on a link")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--timeout_s", type=int, default=600,
                    help="bound on one configuration's compare")
    ap.add_argument("--json_out", default="")
    args = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    seed = args.seed if args.seed is not None else commit_seed(repo)
    rng = random.Random(seed)
    strategies = ["baseline"] + [s for s in args.strategies.split(",") if s]
    results, real, failed, record = [], [], [], []
    configs = [draw(rng, args.max_link_s) for _ in range(args.configs)]
    configs += [draw_real(rng) for _ in range(args.real_configs)]
    for i, config in enumerate(configs):
        print(f"[{i + 1}/{len(configs)}] {json.dumps(config)}",
              file=sys.stderr)
        with tempfile.TemporaryDirectory() as out:
            make_args = compare_args_real if config.get("real") \
                else compare_args
            cmd = [os.path.join(args.bin_dir, "experiments/compare")] + \
                make_args(config, out, strategies)
            try:
                subprocess.run(cmd, check=False, timeout=args.timeout_s,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
                report = json.load(open(os.path.join(out, "compare.json")))
            except (OSError, ValueError, subprocess.TimeoutExpired) as e:
                failed.append((config, str(e)[:200]))
                continue
        if config.get("real"):
            rows = rows_of(report, config["workers"])
            real.append((config, rows))
            record.append({"config": config, "rows": rows})
            continue
        nets = {r.get("network", "") for r in report.get("runs", [])}
        if not any(str(n).startswith("netns") for n in nets):
            failed.append((config, "the link was not shaped: "
                           + "; ".join(sorted(map(str, nets)))[:200]))
            continue
        # Where the kernel has no netem the runs go without the drawn
        # latency (the link's probe measures what there is): said below.
        config["latency_emulated"] = not any(
            "latency emulation unavailable" in str(w)
            for r in report.get("runs", []) for w in r.get("warnings", []))
        rows = rows_of(report, config["workers"])
        results.append((config, rows))
        record.append({"config": config, "rows": rows})
    print(f"## Predictions out of sample (seed {seed})")
    print()
    print(f"`validate_predictions.py --seed={seed} --configs={args.configs} "
          f"--real_configs={args.real_configs} "
          f"--max_link_s={args.max_link_s}`: {len(results) + len(real)} "
          f"configurations ran, {len(failed)} failed; strategies "
          f"{', '.join(strategies[1:])}; each row's prediction from the "
          "baseline's compute and gradient-ready times, the link's probe "
          "and the calibration.")
    print()
    print(f"## Emulated compute on shaped links: {len(results)} "
          "configurations")
    print()
    for line in summarize(results):
        print(line)
    if args.real_configs > 0:
        print(f"## Real compute (the MLP) on loopback, n x threads <= cores: "
              f"{len(real)} configurations")
        print()
        print("Rows whose processes outnumber the cores (the parameter "
              "servers' beside 2 workers) are outside the model's domain "
              "and not counted; so are rows at n > 1 whose compute threads "
              "fill the cores while their communication runs during the "
              "compute (the transport's threads then take cores and cache "
              "from the compute, which the model does not price). Each "
              "row's reason is in its report.")
        print()
        for line in summarize(real):
            print(line)
    no_latency = [c for c, _ in results
                  if c["latency_us"] > 0 and not c["latency_emulated"]]
    if no_latency:
        print(f"Latency not emulated in {len(no_latency)} of the "
              f"{len(results)} configurations that drew one (no netem qdisc "
              "in this kernel): they ran at the link's own latency, which "
              "the probe measured and the predictions used.")
        print()
    for config, why in failed:
        print(f"- failed: {json.dumps(config)}: {why}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"seed": seed, "results": record,
                       "failed": [{"config": c, "why": w}
                                  for c, w in failed]}, f, indent=2)
    return 1 if failed and not results and not real else 0


if __name__ == "__main__":
    sys.exit(main())
