#!/usr/bin/env python3
"""slow_link_summary: the time-to-target table of a link sweep (compare
--preset=slow_link): one line per strategy, per link its time to the exact
runs' target loss, that against ring's on the same link (> 1: sooner), its
final validation loss, its final-loss gap to the exact strategies (per
seed, with compare --seeds: the median and range over the seeds) and its
throughput.

  python3 tools/slow_link_summary.py OUT_DIR   # compare's --out_dir

Reads OUT_DIR/link_*/compare.json; prints a Markdown table and a line per
link naming the target loss.
"""

import glob
import json
import os
import re
import sys


def link_gbit(path):
    m = re.search(r"link_([0-9.]+)gbit", path)
    return float(m.group(1)) if m else float("inf")


def gap_cell(gap):
    """The median gap and its range over the seeds; "-" without one."""
    if not gap:
        return "-"
    return f"{gap['median']:+.3f} ({gap['low']:+.3f} to {gap['high']:+.3f})"


def main(out_dir):
    links = sorted(glob.glob(os.path.join(out_dir, "link_*", "compare.json")),
                   key=link_gbit)
    if not links:
        sys.exit(f"slow_link_summary: no link_*/compare.json under {out_dir}")
    reports = [(link_gbit(p), json.load(open(p))) for p in links]
    names = []
    for _, rep in reports:
        for row in rep["report"]["rows"]:
            if row["workers"] > 1 and row["parallel_type"] not in names:
                names.append(row["parallel_type"])
    header = ["Parallel type"]
    for gbit, _ in reports:
        header += [f"{gbit:g} Gbit/s: time to target (s)", "vs Ring",
                   "val loss", "gap to exact", "samples/s"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join([" :-- "] + [" --: "] * (len(header) - 1)) + "|"]
    for name in names:
        cells = [name]
        for _, rep in reports:
            rows = {r["parallel_type"]: r for r in rep["report"]["rows"]
                    if r["workers"] > 1}
            row, ring = rows.get(name), rows.get("Ring")
            if row is None:
                cells += ["not run"] * 5
                continue
            t = row.get("time_to_target_s")
            t_ring = ring.get("time_to_target_s") if ring else None
            cells.append(f"{t:.2f}" if t is not None else "never")
            cells.append(f"{t_ring / t:.2f}×" if t and t_ring else "-")
            loss = row.get("eval_loss")
            cells.append(f"{loss:.4f}" if loss is not None else "-")
            cells.append(gap_cell(row.get("loss_gap")))
            cells.append(f"{row['throughput']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for gbit, rep in reports:
        target = rep.get("target_loss") or {}
        loss = target.get("loss")
        lines.append(f"At {gbit:g} Gbit/s the target loss is "
                     f"{loss:.4f} ({target.get('source', '')})."
                     if loss is not None else
                     f"At {gbit:g} Gbit/s no target loss was set.")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
