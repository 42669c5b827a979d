#!/usr/bin/env python3
"""The registry's reference table of docs/STRATEGIES.md, from the worker's
own listing (`worker --list_strategies`: one JSON object a strategy, what
its registration says; worker/sync_strategy.h's StrategyInfo).

  tools/strategies_md.py WORKER              # prints the table
  tools/strategies_md.py WORKER --check FILE # exit 1 unless FILE holds it
  tools/strategies_md.py WORKER --write FILE # rewrites it in place

The table sits in FILE between "<!-- registry:strategies -->" and
"<!-- /registry:strategies -->"; --check names what differs.
"""
import json
import subprocess
import sys

BEGIN, END = "<!-- registry:strategies -->", "<!-- /registry:strategies -->"


def table(worker):
    out = subprocess.run([worker, "--list_strategies"], capture_output=True,
                         text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    rows.sort(key=lambda r: (r["study_order"], r["name"]))
    lines = ["| name | row | what it is | servers | strategy flags | "
             "checkpoints | CUDA workers | cost formula | in the default "
             "sweep |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        flags = ", ".join(f"`--{o}`" for o in r["options"]
                          if o not in ("checkpoint_every", "resume")) or "–"
        servers = {"none": "none", "one": "one",
                   "sharded": "K (summation only)"
                   if r.get("summation_servers") else "K"}[r["servers"]]
        lines.append(
            f"| `{r['name']}` | {r['display_name']} | {r['description']} | "
            f"{servers} | {flags} | {'yes' if r['checkpoints'] else 'no'} | "
            f"{r['cuda'] if r['cuda_runs'] else 'no: ' + r['cuda']} | "
            f"`{r['modelled_as'] or '–'}` | "
            f"{'yes' if r['default_sweep'] else 'no'} |")
    return "\n".join(lines)


def replaced(text, content):
    if BEGIN not in text or END not in text:
        raise SystemExit(f"strategies_md: no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + content + "\n" + END + tail


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and
                                   argv[2] not in ("--check", "--write")):
        raise SystemExit(__doc__)
    content = table(argv[1])
    if len(argv) == 2:
        print(content)
        return 0
    with open(argv[3], encoding="utf-8") as f:
        text = f.read()
    want = replaced(text, content)
    if argv[2] == "--write":
        with open(argv[3], "w", encoding="utf-8") as f:
            f.write(want)
        return 0
    if want != text:
        print(f"strategies_md: {argv[3]}'s registry table is not the "
              "registry's; regenerate it: tools/strategies_md.py "
              f"bazel-bin/worker/worker --write {argv[3]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
