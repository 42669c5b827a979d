#!/usr/bin/env python3
"""The cost model against published multi-GPU measurements.

Each experiments/validation/*.result file is one published result (its
source, hardware, model, links and the printed numbers; the format is in
experiments/validation/README.md). For every result this takes the
measurement at its fewest GPUs as the one-GPU step t_c (the model's only
input from the run), predicts each larger GPU count with
`predict --cluster` on a cluster file written from the result's hardware,
and prints per row the measured and predicted per-GPU step time and the
error, then per link class and overall the median and max |error|, and for
every pair of strategies measured on the same hardware whether the faster
one is predicted faster.

  validate_published.py --predict=bazel-bin/experiments/predict
      [--dir=experiments/validation] [--json_out=FILE] [--markdown_out=FILE]

Exit 0 when every result was predicted (whatever the errors), 2 on a bad
result file (naming the file, line and key), 1 when predict failed.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

# Keys a result file may hold; `row` may repeat.
META_KEYS = {
    "title", "url", "where", "hardware", "framework", "strategy", "model",
    "profile", "params", "precision", "batch_per_gpu", "gpus_per_node",
    "intra_node_link", "inter_node_link", "unit", "row", "notes", "pair",
    "tensors", "model_bytes",
}
# Keys passed through to the cluster file as they are (cluster_file.h).
CLUSTER_KEYS = {
    "intra_node_gbit", "intra_node_latency_us", "inter_node_gbit",
    "inter_node_latency_us", "intra_node_collectives",
    "inter_node_collectives", "intra_node_table", "inter_node_table",
    "optimizer", "servers", "servers_per_node", "server_hosts",
    "compute_slowdown", "sync_fixed_ms",
}
# Keys passed to predict as its flags (the worker's settings of the run).
FLAG_KEYS = {
    "ring_bucket_kb", "ring_first_bucket_kb", "fusion_threshold_bytes",
    "cycle_time_ms", "chunk_kb",
}
UNITS = ("samples/s total", "samples/s per gpu", "ms per step")
REQUIRED = ("title", "url", "where", "hardware", "strategy", "model",
            "batch_per_gpu", "gpus_per_node", "unit", "intra_node_gbit",
            "intra_node_latency_us", "inter_node_gbit",
            "inter_node_latency_us")


class BadResult(Exception):
    pass


def parse_result(path):
    """The result file as a dict (rows: [(gpus, value, from_figure)])."""
    r = {"path": path, "rows": []}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            where = f"{path}:{number}"
            if "=" not in line:
                raise BadResult(f"{where}: '{line}' is not KEY = VALUE")
            key, value = (x.strip() for x in line.split("=", 1))
            if (key not in META_KEYS and key not in CLUSTER_KEYS and
                    key not in FLAG_KEYS):
                raise BadResult(f"{where}: key '{key}': unknown")
            if key == "row":
                parts = value.split()
                if len(parts) not in (2, 3) or (
                        len(parts) == 3 and parts[2] != "figure"):
                    raise BadResult(
                        f"{where}: key 'row': '{value}' is not "
                        "'GPUS NUMBER [figure]'")
                try:
                    gpus, number_value = int(parts[0]), float(parts[1])
                except ValueError:
                    raise BadResult(f"{where}: key 'row': '{value}' is not "
                                    "'GPUS NUMBER [figure]'")
                if gpus < 1 or not number_value > 0:
                    raise BadResult(f"{where}: key 'row': '{value}' needs "
                                    "GPUS >= 1 and NUMBER > 0")
                r["rows"].append((gpus, number_value, len(parts) == 3))
                continue
            if key in r:
                raise BadResult(f"{where}: key '{key}': given twice")
            r[key] = value
    for key in REQUIRED:
        if key not in r:
            raise BadResult(f"{path}: key '{key}' is missing")
    if r["unit"].lower() not in UNITS:
        raise BadResult(f"{path}: key 'unit': '{r['unit']}' is not one of "
                        f"{', '.join(UNITS)}")
    if len(r["rows"]) < 2:
        raise BadResult(f"{path}: needs at least two rows (the fewest GPUs "
                        "are the input, the others are predicted)")
    r["rows"].sort()
    for key in ("batch_per_gpu", "gpus_per_node"):
        try:
            r[key] = int(r[key])
        except ValueError:
            raise BadResult(f"{path}: key '{key}': '{r[key]}' is not an "
                            "integer")
    if r.get("profile", "none") == "none" and not (
            "model_bytes" in r and "tensors" in r):
        raise BadResult(f"{path}: give profile, or model_bytes and tensors")
    return r


def step_ms(r, gpus, value):
    """A row's per-GPU step time in ms."""
    unit = r["unit"].lower()
    batch = r["batch_per_gpu"]
    if unit == "ms per step":
        return value
    per_gpu = value / gpus if unit == "samples/s total" else value
    return 1e3 * batch / per_gpu


def cluster_text(r, gpus, compute_ms):
    lines = [f"# written by validate_published.py from {r['path']}",
             f"nodes = {math.ceil(gpus / r['gpus_per_node'])}",
             f"gpus_per_node = {r['gpus_per_node']}",
             f"compute_ms = {compute_ms!r}",
             f"batch_size = {r['batch_per_gpu']}"]
    if r.get("profile", "none") != "none":
        lines.append(f"profile = {r['profile']}")
    else:
        lines += [f"model_bytes = {r['model_bytes']}",
                  f"tensors = {r['tensors']}"]
    for key in sorted(CLUSTER_KEYS):
        if key in r:
            name = key.replace("_table", "_link")  # the built-in tables
            value = r[key]
            if key.endswith("_collectives"):
                value = ", ".join(
                    os.path.join(os.path.dirname(os.path.abspath(r["path"])),
                                 v.strip()) for v in value.split(","))
            lines.append(f"{name} = {value}")
    return "\n".join(lines) + "\n"


def predict(predict_bin, r, gpus, compute_ms, scratch):
    cluster = os.path.join(scratch, "c.cluster")
    out = os.path.join(scratch, "p.json")
    with open(cluster, "w", encoding="utf-8") as f:
        f.write(cluster_text(r, gpus, compute_ms))
    cmd = [predict_bin, f"--cluster={cluster}", f"--max_workers={gpus}",
           f"--strategies={r['strategy']}", f"--json_out={out}"]
    cmd += [f"--{k}={r[k]}" for k in sorted(FLAG_KEYS) if k in r]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): "
                           f"{proc.stderr.strip()}")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    for p in doc["predictions"]:
        if p["workers"] == gpus and p["strategy"] == r["strategy"]:
            return p, doc["cluster"]
    raise RuntimeError(f"predict gave no {r['strategy']} row at n = {gpus}")


def short_link(description):
    """predict's description of a link without its source."""
    return description.split("; source:")[0].rstrip(")") + (
        ")" if "; source:" in description else "")


def link_class(r, gpus):
    if gpus <= r["gpus_per_node"]:
        return "one node (" + r.get("intra_node_link", "?").split()[0] + ")"
    return "multi-node (" + r.get("inter_node_link", "?").split()[0] + ")"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--predict", required=True)
    ap.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--json_out", default="")
    ap.add_argument("--markdown_out", default="")
    args = ap.parse_args()
    files = sorted(f for f in os.listdir(args.dir) if f.endswith(".result"))
    try:
        results = [parse_result(os.path.join(args.dir, f)) for f in files]
    except BadResult as e:
        print(f"validate_published: bad result file: {e}", file=sys.stderr)
        return 2
    if not results:
        print(f"validate_published: no .result files in {args.dir}",
              file=sys.stderr)
        return 2
    rows = []
    links = {}
    inputs_not_one_gpu = []
    with tempfile.TemporaryDirectory() as scratch:
        for r in results:
            base_gpus, base_value, _ = r["rows"][0]
            if base_gpus != 1:
                # The fewest GPUs measured stand for one GPU's step: said
                # under the table.
                inputs_not_one_gpu.append(
                    f"{os.path.basename(r['path'])}: t_c is {base_gpus} "
                    "GPUs' step (the source has no one-GPU row)")
            t_c = step_ms(r, base_gpus, base_value)
            for gpus, value, figure in r["rows"][1:]:
                try:
                    p, cluster = predict(args.predict, r, gpus, t_c, scratch)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"validate_published: {r['path']}: {e}",
                          file=sys.stderr)
                    return 1
                links[r["path"]] = (cluster["intra_node_link"],
                                    cluster["inter_node_link"])
                measured = step_ms(r, gpus, value)
                predicted = p["step_s"] * 1e3
                rows.append({
                    "file": os.path.basename(r["path"]),
                    "model": r["model"], "strategy": r["strategy"],
                    "precision": r.get("precision", ""),
                    "hardware": r["hardware"], "gpus": gpus,
                    "class": link_class(r, gpus), "figure": figure,
                    "input_ms": t_c, "measured_ms": measured,
                    "predicted_ms": predicted,
                    "error": (predicted - measured) / measured,
                    "pair": r.get("pair", ""),
                })
    # Pairs: two strategies measured on the same hardware at the same n.
    pairs = []
    by_file = {}
    for row in rows:
        by_file.setdefault(row["file"], {})[row["gpus"]] = row
    for row in rows:
        other = by_file.get(row["pair"], {}).get(row["gpus"])
        if other is None or row["file"] > other["file"]:
            continue
        def faster(a, b):  # the file of the shorter step; None: a tie
            if a == b:
                return None
            return row["file"] if a < b else other["file"]
        measured = faster(row["measured_ms"], other["measured_ms"])
        predicted = faster(row["predicted_ms"], other["predicted_ms"])
        pairs.append({
            "gpus": row["gpus"], "a": row["file"], "b": other["file"],
            "measured_faster": measured or "tie",
            "predicted_faster": predicted or "tie",
            "agree": measured is not None and measured == predicted,
        })

    def summary(errors):
        a = [abs(e) for e in errors]
        return statistics.median(a), max(a)

    md = ["| result | model | strategy | GPUs | link | measured ms | "
          "predicted ms | error |", "|:--|:--|:--|--:|:--|--:|--:|--:|"]
    for row in rows:
        md.append("| {file} | {model} | {strategy} | {gpus} | {cls} | "
                  "{m:.1f}{fig} | {p:.1f} | {e:+.1%} |".format(
                      file=row["file"], model=row["model"],
                      strategy=row["strategy"], gpus=row["gpus"],
                      cls=row["class"], m=row["measured_ms"],
                      fig=" (figure)" if row["figure"] else "",
                      p=row["predicted_ms"], e=row["error"]))
    if inputs_not_one_gpu:
        md += [""] + [f"- {note}" for note in inputs_not_one_gpu]
    md += ["", "| rows | count | median abs error | max abs error |",
           "|:--|--:|--:|--:|"]
    classes = sorted({row["class"] for row in rows})
    for cls in classes + ["all"]:
        errors = [row["error"] for row in rows
                  if cls == "all" or row["class"] == cls]
        med, mx = summary(errors)
        md.append(f"| {cls} | {len(errors)} | {med:.1%} | {mx:.1%} |")
    if pairs:
        md += ["", "| GPUs | pair | measured faster | predicted faster | "
               "agree |", "|--:|:--|:--|:--|:--|"]
        for p in pairs:
            md.append(f"| {p['gpus']} | {p['a']} vs {p['b']} | "
                      f"{p['measured_faster']} | {p['predicted_faster']} | "
                      f"{'yes' if p['agree'] else 'NO'} |")
    md += ["", "Links as predict priced them (the tables' sources are in "
           "experiments/cost/links/):", ""]
    for path, (intra, inter) in sorted(links.items()):
        md.append(f"- {os.path.basename(path)}: intra-node "
                  f"{short_link(intra)}; inter-node {short_link(inter)}")
    text = "\n".join(md) + "\n"
    sys.stdout.write(text)
    all_med, all_max = summary([row["error"] for row in rows])
    print(f"\nvalidate_published: {len(rows)} rows from {len(results)} "
          f"results: median |error| {all_med:.1%}, max {all_max:.1%}; "
          f"pairs ranked right: {sum(p['agree'] for p in pairs)} of "
          f"{len(pairs)}")
    if args.markdown_out:
        with open(args.markdown_out, "w", encoding="utf-8") as f:
            f.write(text)
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "pairs": pairs,
                       "median_abs_error": all_med,
                       "max_abs_error": all_max}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
