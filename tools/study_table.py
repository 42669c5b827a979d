#!/usr/bin/env python3
"""The GPT-2 data-parallel study's table beside ringside's emulation of it.

  tools/study_table.py OUT_DIR [--host_terms=FILE]
      OUT_DIR: a `compare --preset=study_gpt2` run (or study_gpt2_gpu:
      real GPUs); FILE: experiments/bench/dataparallel_host_bench.py's
      output, DataParallel's host work as measured, added to the SPS
      row's account with where it was measured

Reads OUT_DIR/compare.json and prints markdown: the study's utilization
table (arXiv 2206.06356, 4 GPUs, its 106 M-parameter GPT-2) row by row
beside the emulated rows that stand for them (the study's SPS, PyTorch DataParallel,
beside ringside's sps with its server beside rank 0, DataParallel's layout,
or beside plain sps where the run has no such row; its DPS, PyTorch DDP,
beside ring; Horovod beside fusion), ringside's further rows, the targets (per-worker utilization
within 10 points, Totals within 0.4) met or missed, the mixed-precision
(Apex) speed-ups against the study's, each pair at the batches the study
ran it (a row's b= and compute_ms= in its name, else the run's), and for every miss what the cost
model says the step holds. Rows that compare did not run for want of GPUs
(study_gpt2_gpu on a machine with fewer than 4) are listed as not run,
with the reason; the mixed-precision baseline against the fp32 one gives
the compute's own speed-up on the run's GPU. Exit status 1 when the file
has neither an n = 4 row nor a row left out at n = 4.
"""

import json
import os
import re
import sys

# The study's table (its Table of GPU utilization, 4 GPUs in one node):
# per-GPU utilization in percent and the Total it reports.
STUDY = {
    "baseline": ("Baseline", [85], 0.94),
    "sps": ("SPS (PyTorch DataParallel)", [17, 13, 11, 14], 0.55),
    "ring": ("DPS (PyTorch DDP)", [94, 94, 89, 94], 3.71),
}
# Its mixed-precision finding: Apex made DDP about 2x and Horovod about 4x
# faster.
STUDY_APEX = {"ring": 2.0, "fusion": 4.0}
# Its Horovod rows were not one setup in two precisions: fp32 ran on 2 nodes
# of 4, Apex on one node of 4 (../shared/study/SETUP.md); compare runs one
# n = 4 job, so both here are one node.
HOROVOD_AS_RUN = ("; its fp32 row ran on 2 nodes of 4 and its Apex row on "
                  "one, both one node here")
POINTS = 10     # per-worker utilization target, percentage points
TOTAL = 0.4     # Total target
# DataParallel gathers every replica's outputs into GPU0, bytes the
# emulation does not move (its rows move gradients and parameters only):
# the study's GPT-2 returns its logits and every layer's `presents` (keys
# and values), batch x n_ctx x (vocabulary + 2 n_layer n_embd) float32
# values a replica (../shared/study/SETUP.md: its config's n_ctx 512,
# vocabulary 26679, 12 layers of 768). Its loss is each replica's own, so
# no gradient of them flows back. Keyed by the run's profile.
DATAPARALLEL_OUTPUTS = {"gpt2_study": {"n_ctx": 512, "vocab": 26679,
                                       "n_layer": 12, "n_embd": 768}}
# Mixed precision's measured speed-up of a transformer's training on one
# V100, for the account of the Apex rows (not an input of the preset,
# whose mixed-precision compute is the tensor cores' peak ratio): BERT,
# FP32 against mixed precision with Tensor Cores, before any other
# optimization, 2.3x (NVIDIA Developer Blog, "NVIDIA Achieves 4X Speedup
# on BERT Neural Network", 2018; one V100 32GB, NVIDIA's 18.11 TensorFlow
# container).
MEASURED_AMP_SPEEDUP = 2.3


def label_number(label, key):
    """The number a row's label gives `key` ("b=2", "compute_ms=72.4"), or
    None."""
    m = re.search(r"[\[ ,]" + re.escape(key) + r"=([0-9.]+)", label)
    return float(m.group(1)) if m else None


def batch_of(label, config):
    """The row's per-worker batch: its label's b=, else the run's."""
    b = label_number(label, "b")
    return b if b is not None else config.get("batch_size")


def compute_ms_of(label, config):
    """The row's emulated compute a step: its label's compute_ms=, else the
    run's; None for real compute."""
    c = label_number(label, "compute_ms")
    return c if c is not None else config.get("emulated_compute_ms")


def per_sequence_ms(label, config):
    b, c = batch_of(label, config), compute_ms_of(label, config)
    return c / b if b and c else None


def rows_at(report, n):
    for table in report["utilization"]:
        if table["workers"] == n:
            return table["table"]["rows"]
    return None


def key_of(strategy, label):
    """The row's key: its strategy, "sps_dp" for sps with its server beside
    rank 0 (the row's name or modelled-as label says so)."""
    return "sps_dp" if (strategy == "sps" and
                        "server beside rank 0" in label) else strategy


def dataparallel_outputs(j, workers, batch):
    """(seconds a step, bytes a replica, bandwidth, the shape) of
    DataParallel's gather of the other replicas' outputs into GPU0 over its
    link at the full-size bandwidth (the measured shaped link times the
    emulation scale), at `batch` sequences a replica; None for a run of a
    profile not in DATAPARALLEL_OUTPUTS or without a batch."""
    config = j.get("config", {})
    shape = DATAPARALLEL_OUTPUTS.get(config.get("profile"))
    if shape is None or not batch:
        return None
    bandwidth = (j["cost_model"]["link"]["bandwidth_Bps"] *
                 config.get("emulation_scale", 1))
    per_gpu = (batch * shape["n_ctx"] *
               (shape["vocab"] + 2 * shape["n_layer"] * shape["n_embd"]) * 4)
    return (workers - 1) * per_gpu / bandwidth, per_gpu, bandwidth, shape


def apex_account(j, fp32, apex):
    """Lines reading the Apex speed-ups with the cost model, each pair as
    the study ran it (its own batch a GPU): the bound the compute's own
    speed-up a sequence sets, and what the model gives at a measured
    mixed-precision speed-up (MEASURED_AMP_SPEEDUP) with each mixed row's
    predicted exposed communication kept (at a longer compute no more of it
    is exposed, so the speed-up it gives is a lower bound). [] without the
    cost model's n = 4 rows for both rows of a pair."""
    config = j.get("config", {})
    runs = [r for r in j.get("cost_model", {}).get("runs", [])
            if r.get("workers") == 4 and r.get("predicted_step_s")]

    def run_of(row):
        ms = compute_ms_of(row["parallel_type"], config)
        for r in runs:
            # The run's compute is its reference's measured one, within a
            # few percent of the emulated figure the row names.
            if (r["strategy"] == row["strategy"] and ms is not None and
                    abs(1e3 * r["compute_s"] - ms) < 0.05 * ms):
                return r
        return None

    pairs = []
    for strategy, mixed_name in (("ring", "ring_fp16"), ("fusion", "fusion")):
        a, b = fp32.get(strategy), apex.get(mixed_name)
        if a is None or b is None:
            continue
        full, mixed = run_of(a), run_of(b)
        b_full = batch_of(a["parallel_type"], config)
        b_mixed = batch_of(b["parallel_type"], config)
        if full is None or mixed is None or not b_full or not b_mixed:
            continue
        pairs.append((strategy, mixed_name, full, mixed, b_full, b_mixed))
    if not pairs:
        return []
    readings = []
    bound = None
    for strategy, mixed_name, full, mixed, b_full, b_mixed in pairs:
        per_seq = full["compute_s"] / b_full  # fp32 compute a sequence
        if bound is None:
            bound = (per_seq, mixed["compute_s"] / b_mixed)
        exposed = mixed["predicted_step_s"] - mixed["compute_s"]
        mixed_step = per_seq * b_mixed / MEASURED_AMP_SPEEDUP + exposed
        speedup = (b_mixed / mixed_step) / (b_full / full["predicted_step_s"])
        study = STUDY_APEX[strategy]
        reading = (f"{mixed_name} at {b_mixed:g} a GPU (mixed precision) "
                   f"against {strategy} at {b_full:g} (fp32) {speedup:.1f}x "
                   f"the throughput (the study: about {study:.0f}x; "
                   f"{1e3 * exposed:.0f} ms exposed a step kept)")
        if speedup < study / 1.5:
            # The fp32 step that would give the study's ratio.
            needed = study * mixed_step * b_full / b_mixed
            beyond = needed - full["compute_s"]
            reading += (f"; the study's {study:.0f}x would need the fp32 "
                        f"step to hold {beyond:.2f} s beyond its compute, "
                        f"against the model's "
                        f"{1e3 * (full['predicted_step_s'] - full['compute_s']):.0f}"
                        f" ms on these links, for which it has no term")
        readings.append(reading)
    per_seq, mixed_seq = bound
    return [
        "",
        f"The cost model's reading: a mixed-precision row's speed-up a "
        f"sequence is bounded by its compute's, here "
        f"{per_seq / mixed_seq:.1f}x ({1e3 * per_seq:.1f} ms a sequence "
        f"against {1e3 * mixed_seq:.1f} ms: the tensor cores' peak ratio at "
        f"the same sustained share, the preset's input). Measured on one "
        f"V100, mixed precision trained a transformer "
        f"{MEASURED_AMP_SPEEDUP}x faster than fp32 (BERT, NVIDIA Developer "
        f"Blog, \"NVIDIA Achieves 4X Speedup on BERT Neural Network\", "
        f"2018). At that speed-up "
        f"({1e3 * per_seq / MEASURED_AMP_SPEEDUP:.1f} ms a sequence) the "
        f"cost model gives " + "; ".join(readings) + "."]


def is_mixed(label, config, fp32_per_sequence):
    """Whether a row is a mixed-precision one: the GPU preset's
    "[precision=bf16]" rows; the emulated preset's rows whose compute a
    sequence is under the fp32 rows' (the slowest a sequence) by more than
    1.5x."""
    if "precision=bf16" in label:
        return True
    per_seq = per_sequence_ms(label, config)
    return (per_seq is not None and fp32_per_sequence is not None and
            per_seq < fp32_per_sequence / 1.5)


def not_run_cells(n):
    """The first seven cells of a row compare left out (`not_run` entry n):
    its name, the reason, the utilization and Total cells empty."""
    return [n["parallel_type"], f"not run: {n['reason']}", "", "", "", "",
            ""]


def percent(u):
    return f"{100 * u:.0f}%"


def host_account(terms, workers, compute, step):
    """DataParallel's host work a step from dataparallel_host_bench's
    `terms`: the Python side of replicate() for the workers - 1 replicas and
    the workers' forward dispatch under one interpreter lock, with where it
    was measured and what it leaves out."""
    replicate = (workers - 1) * terms["replicate_ms"] / 1e3
    dispatch = workers * terms["dispatch_ms"] / 1e3
    with_host = step + replicate + dispatch
    return (f" DataParallel's host work, measured with PyTorch on "
            f"{terms['measured_on']} (experiments/bench/"
            f"dataparallel_host_bench.py, {terms['modules']} submodules, "
            f"{terms['ops']} ops a forward): replicate()'s Python side "
            f"{terms['replicate_ms']:.1f} ms a replica, {1e3 * replicate:.1f} "
            f"ms for {workers - 1}; the {workers} replicas' forward dispatch "
            f"{terms['dispatch_ms']:.1f} ms each, {1e3 * dispatch:.1f} ms one "
            f"after another under one interpreter lock: with both, "
            f"{with_host:.3f} s and {100 * compute / with_host:.0f}% at most "
            f"(not measured: {terms['not_measured']}).")


def main(argv):
    host_terms = None
    args = [a for a in argv[1:] if not a.startswith("--host_terms=")]
    for a in argv[1:]:
        if a.startswith("--host_terms="):
            with open(a.split("=", 1)[1]) as f:
                host_terms = json.load(f)
    if len(args) != 1:
        sys.exit(__doc__)
    with open(os.path.join(args[0], "compare.json")) as f:
        j = json.load(f)
    rows = list(rows_at(j["report"], 4) or [])
    # The single-worker references with run flags (the mixed-precision
    # baseline) are in the report's rows, not in the n = 4 table.
    for r in j["report"].get("rows", []):
        if r["strategy"] == "baseline" and r not in rows:
            rows.append(r)
    not_run = [n for n in j.get("not_run", []) if n["workers"] == 4]
    if not rows and not not_run:
        print("(no n = 4 table in compare.json)")
        return 1
    # The fp32 rows are the first of each strategy; the mixed-precision
    # rows are those is_mixed names.
    # sps with its server beside rank 0 is keyed "sps_dp".
    config = j.get("config", {})
    known = [x for x in (per_sequence_ms(r["parallel_type"], config)
                         for r in rows) if x is not None]
    slowest = max(known) if known else None
    fp32 = {}
    apex = {}
    for r in rows:
        target = apex if is_mixed(r["parallel_type"], config, slowest) \
            else fp32
        target.setdefault(key_of(r["strategy"], r["parallel_type"]), r)
    skipped = {}
    skipped_apex = []
    for n in not_run:
        if is_mixed(n["parallel_type"], config, slowest):
            skipped_apex.append(n)
        else:
            skipped.setdefault(key_of(n["strategy"], n["parallel_type"]), n)
    # The study's SPS: DataParallel's layout where the run has it.
    study_sps = "sps_dp" if ("sps_dp" in fp32 or "sps_dp" in skipped) \
        else "sps"

    out = []
    out.append("| Parallel type | PrmSrv | GPU0 | GPU1 | GPU2 | GPU3 | Total "
               "| The study: GPU0–3 | The study: Total | Within target |")
    out.append("| :-- | --: | --: | --: | --: | --: | --: | :-- | --: | :-- |")
    misses = []
    for strategy in ["baseline", "sps_dp", "sps", "ring", "fusion", "dps"]:
        study_key = "sps" if strategy == study_sps else (
            None if strategy in ("sps", "sps_dp") else strategy)
        study = STUDY.get(study_key)
        r = fp32.get(strategy)
        if r is None:
            n = skipped.get(strategy)
            if n is None:
                continue
            cells = not_run_cells(n)
            if study is not None:
                cells[0] += f", as the study's {study[0]}"
                cells += [", ".join(f"{x}%" for x in study[1]),
                          f"{study[2]:.2f}", "not run"]
            else:
                cells += ["–", "–", "(no study row)"]
            out.append("| " + " | ".join(cells) + " |")
            continue
        u = r["utilization"] + [None] * (4 - len(r["utilization"]))
        cells = [r["parallel_type"], str(r["prm_srv"])]
        cells += [percent(x) if x is not None else "0" for x in u[:4]]
        cells.append(f"{r['total']:.2f}")
        if study is not None:
            label, study_u, study_total = study
            cells[0] = f"{r['parallel_type']}, as the study's {label}"
            cells.append(", ".join(f"{x}%" for x in study_u))
            cells.append(f"{study_total:.2f}")
            if strategy == "baseline":
                ok = None  # the targets are SPS's and DPS's alone
            else:
                ok = (all(abs(100 * a - b) <= POINTS
                          for a, b in zip(r["utilization"], study_u)) and
                      abs(r["total"] - study_total) <= TOTAL)
            cells.append("not a target" if ok is None else
                         "yes" if ok else "**no**")
            if ok is False:
                misses.append((strategy, r, study_u, study_total))
        else:
            cells += ["–", "–", "(no study row)"]
        out.append("| " + " | ".join(cells) + " |")
    for r in apex.values():
        u = r["utilization"] + [None] * (4 - len(r["utilization"]))
        cells = [r["parallel_type"], str(r["prm_srv"])]
        cells += [percent(x) if x is not None else "0" for x in u[:4]]
        cells += [f"{r['total']:.2f}", "–", "–", "(mixed precision)"]
        out.append("| " + " | ".join(cells) + " |")
    for n in skipped_apex:
        cells = not_run_cells(n) + ["–", "–", "(mixed precision)"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")

    # The Apex effect: each exact strategy's fp32 step against its
    # mixed-precision row's (the same strategy, or ring_fp16 for ring:
    # Apex's DDP all-reduces fp16 gradients).
    lines = []
    a, b = fp32.get("baseline"), apex.get("baseline")
    if a is not None and b is not None:
        lines.append(
            f"- {b['parallel_type']} against {a['parallel_type']}: "
            f"{b['throughput'] / a['throughput']:.1f}x the throughput on "
            f"one worker: the compute's own speed-up, which bounds the "
            f"others'.")
    for strategy, mixed_name in (("ring", "ring_fp16"), ("fusion", "fusion")):
        # Apex's DDP all-reduced fp16 gradients (ring_fp16, emulated); the
        # GPU preset's bf16 ring keeps float32 on the wire (autocast's).
        a = fp32.get(strategy)
        b = apex.get(mixed_name) or apex.get(strategy)
        if a is None or b is None:
            continue
        speedup = b["throughput"] / a["throughput"]
        lines.append(
            f"- {b['parallel_type']} against {a['parallel_type']}: "
            f"{speedup:.1f}x the throughput (the study: Apex made "
            f"{'DDP' if strategy == 'ring' else 'Horovod'} about "
            f"{STUDY_APEX[strategy]:.0f}x faster"
            f"{HOROVOD_AS_RUN if strategy == 'fusion' else ''}).")
    if lines:
        out.append("Mixed precision (the rows at the mixed-precision compute):")
        out.append("")
        out.extend(lines)
        if config.get("model", "synthetic") == "synthetic":
            out.extend(apex_account(j, fp32, apex))
        out.append("")

    # Each miss, as the cost model sees the emulated step.
    cost = {}
    for r in j["cost_model"].get("runs", []):
        if r["workers"] == 4:
            cost.setdefault(key_of(r["strategy"], r.get("modelled_as", "")), r)
    dp_row = fp32.get(study_sps)
    outputs = dataparallel_outputs(
        j, 4, batch_of(dp_row["parallel_type"], config) if dp_row else None)
    for strategy, r, study_u, study_total in misses:
        c = cost.get(strategy)
        if c is None or not c.get("predicted_step_s"):
            continue
        compute = c["compute_s"]
        beyond = c["measured_step_s"] - c["own_compute_s"]
        study_mean = sum(study_u) / len(study_u) / 100
        needed = compute / study_mean - compute
        line = (
            f"- {r['parallel_type']}: the cost model predicted "
            f"{1e3 * c['predicted_step_s']:.0f} ms a step "
            f"({c['error']:+.0%} against the {1e3 * c['measured_step_s']:.0f}"
            f" ms measured), {1e3 * (c['predicted_step_s'] - compute):.0f} ms "
            f"of it beyond the {1e3 * compute:.0f} ms of compute; the run "
            f"spent {1e3 * beyond:.0f} ms a step beyond its compute. The "
            f"study's {100 * study_mean:.0f}% mean utilization would need "
            f"{needed:.2f} s a step beyond this compute, "
            f"{needed / max(beyond, 1e-9):.0f}x what these links took.")
        if strategy == study_sps and outputs is not None:
            seconds, per_gpu, bandwidth, shape = outputs
            step = c["measured_step_s"] + seconds
            b = batch_of(r["parallel_type"], config)
            line += (
                f" DataParallel also gathers every replica's outputs into "
                f"GPU0, which the emulation does not move: the logits and "
                f"presents, {b:g} x {shape['n_ctx']} x ({shape['vocab']:,} "
                f"+ 2 x {shape['n_layer']} x {shape['n_embd']}) float32 "
                f"values ({per_gpu / 1e6:.1f} MB) a replica, the other "
                f"three's over GPU0's {8 * bandwidth / 1e9:.0f} Gbit/s link: "
                f"{1e3 * seconds:.0f} ms a step (no gradient of them comes "
                f"back: each replica's loss is its own). With them the step "
                f"would be {step:.3f} s and the utilization "
                f"{100 * compute / step:.0f}%, against the study's "
                f"{100 * study_mean:.0f}%: the bytes DataParallel moves "
                f"account for {beyond + seconds:.2f} s of the {needed:.2f} s. "
                f"The rest lies in its work beside the bytes (replicating "
                f"the module's submodules in Python every step, four "
                f"replicas under one interpreter lock, empty_cache, the "
                f"optimizer on GPU0 alone), which no source measures and "
                f"for which the cost model has no term.")
            if host_terms is not None:
                line += host_account(host_terms, 4, compute, step)
        else:
            line += (" So the gap lies outside what the emulation and the "
                     "model hold, for which the cost model has no term.")
        out.append(line)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
