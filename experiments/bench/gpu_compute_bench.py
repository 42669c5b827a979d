#!/usr/bin/env python3
"""One CUDA worker's training step against PyTorch on the same GPU, three
references in one run: eager fp32, eager with bf16 autocast, and
torch.compile (fp32), over a sweep of MLP sizes.

  gpu_compute_bench.py --worker=PATH [--rounds=3] [--out=FILE.md]
                       [--cases=WIDTHS@BATCH;...] [--compile_cases=I,J]
                       [--accumulation=true] [--device=cuda]

Every case runs the same training step on both sides: the MLP of the given
widths (Linear + ReLU between layers), softmax cross-entropy, SGD with
momentum 0.9 and lr 0.05, fp32 master weights, TF32 off on both sides. The
worker runs `--strategy=baseline --device=cuda` (its data set in host
memory, each batch gathered and copied to the GPU by the worker's input
pipeline); PyTorch reads each batch from page-locked host memory with
non_blocking copies (a DataLoader with pin_memory), and reads the loss back
every step, as the worker does for its step records. Throughput is samples
per second over the steps after a warm-up; ringside's is the final record's.

Rounds are interleaved (round r runs every case and reference in turn), and
each figure is the median over the rounds with its [min, max]; each ratio is
ringside's throughput over the reference's in the same round. ringside has
no bf16 path: its fp32 step stands against PyTorch's bf16 autocast step, the
precision users train in on such a GPU. With --accumulation, ring on one
worker at accumulate_steps 4 against 1 (samples/s), at the second case's
shape (784-2048-2048-10, batch 1024, by default).

--device=cpu runs the same flow on the CPU (the worker with one Eigen
thread, torch with one thread), to check the script where no GPU is.

Prints a Markdown table (also written to --out) and exits 0; 1 when a run
failed (its error in the table), 2 on bad flags or without CUDA.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

DEFAULT_CASES = ("784,2048,2048,10@256;784,2048,2048,10@1024;"
                 "784,2048,2048,10@4096;1024,4096,4096,4096,1024@256;"
                 "4096,8192,8192,4096@512")
# Case indices (0-based) where torch.compile runs: it compiles for tens of
# seconds a shape.
DEFAULT_COMPILE = "1,3"
LR = 0.05
MOMENTUM = 0.9
# Each measured window aims at this many seconds of fp32 compute.
WINDOW_S = 0.6


def parse_cases(text):
    cases = []
    for item in filter(None, text.split(";")):
        widths, batch = item.split("@")
        cases.append(([int(w) for w in widths.split(",")], int(batch)))
    return cases


def step_flops(widths, batch):
    return 6.0 * batch * sum(a * b for a, b in zip(widths, widths[1:]))


def steps_for(widths, batch):
    # About WINDOW_S at 40 TFLOP/s (an H100's fp32 rate, roughly), kept
    # within [30, 400] steps.
    est = step_flops(widths, batch) / 40e12
    return int(min(400, max(30, WINDOW_S / est)))


def run_ringside(worker, device, widths, batch, steps, warmup,
                 strategy="baseline", accumulate=1):
    examples = max(4 * batch * accumulate, 2048)
    cmd = [worker, f"--device={device}", f"--strategy={strategy}", "--rank=0",
           "--world_size=1", "--model=mlp",
           "--mlp_widths=" + ",".join(map(str, widths)),
           f"--batch_size={batch}", f"--steps={steps + warmup}",
           f"--warmup_steps={warmup}", f"--train_examples={examples}",
           "--eval_examples=256", f"--accumulate_steps={accumulate}",
           f"--lr={LR}", f"--momentum={MOMENTUM}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    final = None
    for line in done.stdout.splitlines():
        if line.startswith("{") and '"event":"final"' in line:
            final = json.loads(line)
    if done.returncode != 0 or final is None:
        raise RuntimeError(f"worker exit {done.returncode}: "
                           f"{done.stderr.strip().splitlines()[-1:]}")
    return final["throughput"], final


class TorchRef:
    """PyTorch's training step for one case; built once, timed per round."""

    def __init__(self, torch, device, widths, batch, mode):
        self.torch = torch
        self.device = device
        self.batch = batch
        self.mode = mode
        layers = []
        for i, (a, b) in enumerate(zip(widths, widths[1:])):
            layers.append(torch.nn.Linear(a, b))
            if i + 2 < len(widths):
                layers.append(torch.nn.ReLU())
        self.model = torch.nn.Sequential(*layers).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=LR,
                                   momentum=MOMENTUM)
        self.forward = (torch.compile(self.model) if mode == "compile"
                        else self.model)
        examples = max(4 * batch, 2048)
        gen = torch.Generator().manual_seed(1)
        self.x = torch.randn(examples, widths[0], generator=gen)
        self.y = torch.randint(0, widths[-1], (examples,), generator=gen)
        if device == "cuda":
            self.x, self.y = self.x.pin_memory(), self.y.pin_memory()
        self.examples = examples
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.cursor = 0

    def step(self):
        torch = self.torch
        begin = self.cursor
        if begin + self.batch > self.examples:
            begin = 0
        self.cursor = begin + self.batch
        x = self.x[begin:begin + self.batch].to(self.device, non_blocking=True)
        y = self.y[begin:begin + self.batch].to(self.device, non_blocking=True)
        self.opt.zero_grad(set_to_none=True)
        if self.mode == "bf16":
            with torch.autocast(self.device, dtype=torch.bfloat16):
                loss = self.loss_fn(self.forward(x), y)
        else:
            loss = self.loss_fn(self.forward(x), y)
        loss.backward()
        self.opt.step()
        return loss.item()  # every step, as the worker's step records

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def throughput(self, steps, warmup):
        for _ in range(warmup):
            self.step()
        self.sync()
        start = time.perf_counter()
        for _ in range(steps):
            self.step()
        self.sync()
        return steps * self.batch / (time.perf_counter() - start)


def summary(values):
    if not values:
        return "–"
    med = statistics.median(values)
    return f"{med:.2f} [{min(values):.2f}, {max(values):.2f}]"


def rate(values):
    return f"{statistics.median(values) / 1e3:,.0f}k" if values else "–"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--compile_cases", default=DEFAULT_COMPILE)
    parser.add_argument("--accumulation", default="true")
    parser.add_argument("--out", default="")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"gpu_compute_bench: torch does not import: {e}", file=sys.stderr)
        return 2
    if args.device == "cpu":
        torch.set_num_threads(1)
    elif not torch.cuda.is_available():
        print("gpu_compute_bench: torch sees no CUDA device", file=sys.stderr)
        return 2
    # fp32 means fp32: no TF32 on either side (the worker's SGEMMs are
    # full float32).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cases = parse_cases(args.cases)
    compile_at = {int(i) for i in filter(None, args.compile_cases.split(","))}
    modes = ["fp32", "bf16"]
    refs = {}
    rates = {}  # (case, side) -> [samples/s per round]
    errors = {}
    for r in range(args.rounds):
        for c, (widths, batch) in enumerate(cases):
            steps = steps_for(widths, batch)
            warmup = max(5, steps // 5)
            sides = ["ringside"] + modes + (["compile"] if c in compile_at
                                            else [])
            for side in sides:
                key = (c, side)
                if key in errors:
                    continue
                try:
                    if side == "ringside":
                        value, _ = run_ringside(args.worker, args.device,
                                                widths, batch, steps, warmup)
                    else:
                        if key not in refs:
                            refs[key] = TorchRef(torch, args.device, widths,
                                                 batch, side)
                        value = refs[key].throughput(steps, warmup)
                except Exception as e:  # noqa: BLE001 -- reported in the table
                    errors[key] = f"{type(e).__name__}: {e}"[:200]
                    continue
                rates.setdefault(key, []).append(value)
                print(f"round {r} case {c} {side}: {value:,.0f} samples/s",
                      flush=True)
            # Free the case's compiled graphs and buffers between cases.
            if args.device == "cuda":
                torch.cuda.empty_cache()
    ratios = {}
    for (c, side), values in rates.items():
        if side == "ringside":
            continue
        mine = rates.get((c, "ringside"), [])
        ratios[(c, side)] = [m / v for m, v in zip(mine, values)]

    where = (torch.cuda.get_device_name(0) if args.device == "cuda" else
             "CPU, one thread each side")
    lines = [
        f"Device: {where}; torch {torch.__version__}; "
        f"{args.rounds} interleaved rounds; each cell the median over the "
        "rounds [min, max].",
        "",
        "| MLP | batch | steps | ringside fp32 samples/s | / eager fp32 | "
        "/ eager bf16 autocast | / torch.compile fp32 | eager fp32 | "
        "eager bf16 | compile |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c, (widths, batch) in enumerate(cases):
        cells = [rate(rates.get((c, "ringside"), []))]
        for side in modes + ["compile"]:
            cells.append(summary(ratios.get((c, side), [])))
        for side in modes + ["compile"]:
            cells.append(rate(rates.get((c, side), [])))
        lines.append(f"| {'-'.join(map(str, widths))} | {batch} | "
                     f"{steps_for(widths, batch)} | " + " | ".join(cells) + " |")
    for (c, side), error in sorted(errors.items()):
        lines.append(f"\nFAILED: case {c} ({side}): {error}")

    if args.accumulation.lower() in ("1", "true", "yes"):
        widths, batch = cases[min(1, len(cases) - 1)]
        steps = steps_for(widths, batch)
        gains = []
        for _ in range(args.rounds):
            try:
                one, _ = run_ringside(args.worker, args.device, widths, batch,
                                      steps,
                                      max(5, steps // 5), strategy="ring")
                four, _ = run_ringside(args.worker, args.device, widths, batch,
                                       max(10, steps // 4),
                                       max(3, steps // 20), strategy="ring",
                                       accumulate=4)
                gains.append(four / one)
            except Exception as e:  # noqa: BLE001
                errors[("accumulation", "ring")] = str(e)[:200]
                lines.append(f"\nFAILED: accumulation: {e}")
                break
        lines += [
            "",
            f"Gradient accumulation, ring on one worker, "
            f"{'-'.join(map(str, widths))} at batch {batch}: samples/s at "
            f"accumulate_steps 4 over accumulate_steps 1 = {summary(gains)}.",
        ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
