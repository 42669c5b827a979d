#!/usr/bin/env python3
"""One CUDA worker's training step against PyTorch on the same GPU, three
references in one run: eager fp32, eager with bf16 autocast, and
torch.compile (fp32), over a sweep of MLP sizes and of the character
transformer's widths.

  gpu_compute_bench.py --worker=PATH [--rounds=3] [--out=FILE.md]
                       [--cases=WIDTHS@BATCH;...] [--compile_cases=I,J]
                       [--charlm=256,512,768] [--charlm_layers=6]
                       [--charlm_block=128] [--charlm_batch=32]
                       [--charlm_compile=512]
                       [--accumulation=true] [--device=cuda]

Every case runs the same training step on both sides, SGD with momentum
0.9 and lr 0.05, fp32 master weights, TF32 off on both sides:
  - MLP cases: the MLP of the given widths (Linear + ReLU between layers),
    softmax cross-entropy;
  - charlm cases: the character transformer (models/transformer/charlm.h;
    PyTorch's side is its twin, charlm_torch_ref.py beside this file) at
    each n_embd, 4 heads, on random tokens of a 65-character vocabulary
    (the worker trains on its built-in seeded text, whose vocabulary is
    its own: the output head is a small part of the step).
The worker runs `--strategy=baseline --device=cuda` (its data set in host
memory, each batch gathered and copied to the GPU by the worker's input
pipeline); PyTorch reads each batch from page-locked host memory with
non_blocking copies (a DataLoader with pin_memory), and reads the loss back
every step, as the worker does for its step records. Throughput is samples
(examples or sequences) per second over the steps after a warm-up;
ringside's is the final record's. On CUDA, every case also runs the
worker with --precision=bf16 (bfloat16 matrix-product operands, float32
accumulation and master weights), and the bf16 ratio is that run's
against PyTorch's bf16 autocast.

Rounds are interleaved (round r runs every case and reference in turn), and
each figure is the median over the rounds with its [min, max]; each ratio is
ringside's throughput over the reference's in the same round: fp32 against
eager fp32 and torch.compile, bf16 against eager bf16 autocast.
torch.compile runs only at the cases named (it compiles for tens of
seconds a shape). With
--accumulation, ring on one worker at accumulate_steps 4 against 1
(samples/s), at the second case's shape (784-2048-2048-10, batch 1024, by
default).

--device=cpu runs the same flow on the CPU (the worker with one Eigen
thread, torch with one thread), to check the script where no GPU is.

Prints a Markdown table (also written to --out) and exits 0; 1 when a run
failed (its error in the table), 2 on bad flags or without CUDA.
"""

import argparse
import json
import os
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
# The character transformer's fixed shape (charlm_bench's): heads, and
# PyTorch's vocabulary (the worker's built-in text has its own, about as
# large; the output head is a small part of the step).
CHARLM_HEADS = 4
CHARLM_VOCAB = 65
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def parse_cases(text):
    cases = []
    for item in filter(None, text.split(";")):
        widths, batch = item.split("@")
        cases.append(([int(w) for w in widths.split(",")], int(batch)))
    return cases


def step_flops(widths, batch):
    return 6.0 * batch * sum(a * b for a, b in zip(widths, widths[1:]))


def run_ringside(worker, device, model_flags, batch, steps, warmup,
                 strategy="baseline", accumulate=1, precision="fp32"):
    cmd = [worker, f"--device={device}", f"--strategy={strategy}", "--rank=0",
           "--world_size=1", *model_flags, f"--batch_size={batch}",
           f"--steps={steps + warmup}", f"--warmup_steps={warmup}",
           f"--accumulate_steps={accumulate}", f"--lr={LR}",
           f"--momentum={MOMENTUM}", f"--precision={precision}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    final = None
    for line in done.stdout.splitlines():
        if line.startswith("{") and '"event":"final"' in line:
            final = json.loads(line)
    if done.returncode != 0 or final is None:
        raise RuntimeError(f"worker exit {done.returncode}: "
                           f"{done.stderr.strip().splitlines()[-1:]}")
    return final["throughput"], final


class Ref:
    """PyTorch's training step for one case, built once and timed per
    round: batches sliced from page-locked host memory and copied
    non_blocking, SGD with momentum, the loss read every step."""

    def __init__(self, torch, device, batch, mode, inputs, params):
        self.torch = torch
        self.device = device
        self.batch = batch
        self.mode = mode
        if device == "cuda":
            inputs = tuple(t.pin_memory() for t in inputs)
        self.inputs = inputs
        self.examples = inputs[0].shape[0]
        self.opt = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM)
        self.cursor = 0

    def loss(self, *batch):
        raise NotImplementedError

    def step(self):
        torch = self.torch
        begin = self.cursor
        if begin + self.batch > self.examples:
            begin = 0
        self.cursor = begin + self.batch
        batch = tuple(t[begin:begin + self.batch].to(self.device,
                                                     non_blocking=True)
                      for t in self.inputs)
        self.opt.zero_grad(set_to_none=True)
        if self.mode == "bf16":
            with torch.autocast(self.device, dtype=torch.bfloat16):
                loss = self.loss(*batch)
        else:
            loss = self.loss(*batch)
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


class MlpRef(Ref):
    """Linear + ReLU layers, softmax cross-entropy."""

    def __init__(self, torch, device, widths, batch, mode):
        layers = []
        for i, (a, b) in enumerate(zip(widths, widths[1:])):
            layers.append(torch.nn.Linear(a, b))
            if i + 2 < len(widths):
                layers.append(torch.nn.ReLU())
        self.model = torch.nn.Sequential(*layers).to(device)
        self.forward = (torch.compile(self.model) if mode == "compile"
                        else self.model)
        examples = max(4 * batch, 2048)
        gen = torch.Generator().manual_seed(1)
        inputs = (torch.randn(examples, widths[0], generator=gen),
                  torch.randint(0, widths[-1], (examples,), generator=gen))
        self.loss_fn = torch.nn.CrossEntropyLoss()
        super().__init__(torch, device, batch, mode, inputs,
                         self.model.parameters())

    def loss(self, x, y):
        return self.loss_fn(self.forward(x), y)


class CharLmRef(Ref):
    """The character transformer's PyTorch twin (charlm_torch_ref.py, the
    same architecture as models/transformer/charlm.h) on random tokens."""

    def __init__(self, torch, device, n_embd, layers, block, batch, mode):
        import charlm_torch_ref  # beside this file
        self.args = argparse.Namespace(n_layer=layers, n_head=CHARLM_HEADS,
                                       n_embd=n_embd, block_size=block,
                                       vocab=CHARLM_VOCAB, seed=1)
        self.params = charlm_torch_ref.make_params(self.args, device)

        def forward(params, tokens):
            return charlm_torch_ref.forward(params, self.args, tokens)

        self.forward = torch.compile(forward) if mode == "compile" else forward
        gen = torch.Generator().manual_seed(1)
        tokens = torch.randint(0, CHARLM_VOCAB,
                               (max(4 * batch, 256), block + 1), generator=gen)
        super().__init__(torch, device, batch, mode, (tokens,),
                         list(self.params.values()))

    def loss(self, tokens):
        return self.forward(self.params, tokens)


class Case:
    """One row of the table: the worker's model flags and PyTorch's twin."""

    def __init__(self, label, batch, flops, flags, make_ref, compile_it,
                 bf16=False):
        self.label = label
        # Whether the worker computes this model in bf16 too.
        self.bf16 = bf16
        self.batch = batch
        # About WINDOW_S at 40 TFLOP/s (an H100's fp32 rate, roughly),
        # within [30, 400] steps.
        self.steps = int(min(400, max(30, WINDOW_S / (flops / 40e12))))
        self.warmup = max(5, self.steps // 5)
        self.flags = flags
        self.make_ref = make_ref  # (torch, device, mode) -> Ref
        self.compile = compile_it


def mlp_case(widths, batch, compile_it):
    examples = max(4 * batch, 2048)
    return Case(f"mlp {'-'.join(map(str, widths))}", batch,
                step_flops(widths, batch),
                ["--model=mlp", "--mlp_widths=" + ",".join(map(str, widths)),
                 f"--train_examples={examples}", "--eval_examples=256"],
                lambda torch, device, mode: MlpRef(torch, device, widths,
                                                   batch, mode),
                compile_it, bf16=True)


def charlm_case(n_embd, layers, block, batch, compile_it):
    c, t = n_embd, block
    params = 12 * layers * c * c + CHARLM_VOCAB * c + t * c
    flops = 6 * params * batch * t + 12 * layers * batch * t * t * c
    return Case(f"charlm n_embd {n_embd} ({layers} layers, block {block})",
                batch, flops,
                ["--model=charlm", f"--n_layer={layers}",
                 f"--n_head={CHARLM_HEADS}", f"--n_embd={n_embd}",
                 f"--block_size={block}"],
                lambda torch, device, mode: CharLmRef(torch, device, n_embd,
                                                      layers, block, batch,
                                                      mode),
                compile_it, bf16=True)


def summary(values):
    if not values:
        return "–"
    med = statistics.median(values)
    return f"{med:.2f} [{min(values):.2f}, {max(values):.2f}]"


def rate(values):
    return f"{statistics.median(values) / 1e3:,.0f}k" if values else "–"


def breakdown_lines(cases, records):
    """Where ringside's step goes, from its final records: the step, the
    model's compute (CUDA events), the pass's wait for its batch and a
    batch's read and staging on the prefetcher's thread (CUDA workers only:
    CPU workers read in line), medians over the rounds in ms."""
    def cell(values):
        return summary([v * 1e3 for v in values]) if values else "–"
    lines = [
        "",
        "Where ringside's step goes (its final records; ms, median [min, "
        "max] over the rounds): the step (batch / throughput), the model's "
        "compute (its kernels' CUDA events on a GPU), the wait of a pass "
        "for its batch, and a batch's read and staging on the prefetcher's thread (overlapping "
        "the step; the input keeps up while the wait stays near 0).",
        "",
        "| model | batch | precision | step | compute | input wait | "
        "input read |",
        "|---|---|---|---|---|---|---|",
    ]
    for c, case in enumerate(cases):
        for side, precision in (("ringside", "fp32"),
                                ("ringside_bf16", "bf16")):
            finals = records.get((c, side), [])
            if not finals:
                continue
            steps = [case.batch / f["throughput"] for f in finals
                     if f.get("throughput")]
            compute = [f["compute_s"] / f["measured_steps"] for f in finals
                       if f.get("measured_steps")]
            wait = [f["input_wait_s"] for f in finals if "input_wait_s" in f]
            read = [f["input_read_s"] for f in finals if "input_read_s" in f]
            lines.append(f"| {case.label} | {case.batch} | {precision} | "
                         f"{cell(steps)} | {cell(compute)} | {cell(wait)} | "
                         f"{cell(read)} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--compile_cases", default=DEFAULT_COMPILE)
    parser.add_argument("--accumulation", default="true")
    parser.add_argument("--out", default="")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--charlm", default="256,512,768",
                        help="charlm cases: n_embd values ('' for none)")
    parser.add_argument("--charlm_layers", type=int, default=6)
    parser.add_argument("--charlm_block", type=int, default=128)
    parser.add_argument("--charlm_batch", type=int, default=32)
    parser.add_argument("--charlm_compile", default="512",
                        help="n_embd values where torch.compile runs")
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
    compile_at = {int(i) for i in filter(None, args.compile_cases.split(","))}
    cases = [mlp_case(widths, batch, i in compile_at)
             for i, (widths, batch) in enumerate(parse_cases(args.cases))]
    charlm_compile = {int(c) for c in
                      filter(None, args.charlm_compile.split(","))}
    cases += [charlm_case(int(c), args.charlm_layers, args.charlm_block,
                          args.charlm_batch, int(c) in charlm_compile)
              for c in filter(None, args.charlm.split(","))]
    modes = ["fp32", "bf16"]
    refs = {}
    rates = {}  # (case, side) -> [samples/s per round]
    records = {}  # (case, side) -> [ringside's final record per round]
    errors = {}
    for r in range(args.rounds):
        for c, case in enumerate(cases):
            bf16 = case.bf16 and args.device == "cuda"
            sides = (["ringside"] + (["ringside_bf16"] if bf16 else []) +
                     modes + (["compile"] if case.compile else []))
            for side in sides:
                key = (c, side)
                if key in errors:
                    continue
                try:
                    if side.startswith("ringside"):
                        value, final = run_ringside(
                            args.worker, args.device, case.flags, case.batch,
                            case.steps, case.warmup,
                            precision="bf16" if side == "ringside_bf16"
                            else "fp32")
                        records.setdefault(key, []).append(final)
                    else:
                        if key not in refs:
                            refs[key] = case.make_ref(torch, args.device,
                                                      side)
                        value = refs[key].throughput(case.steps, case.warmup)
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
        if side.startswith("ringside"):
            continue
        # bf16 against ringside's bf16 where it ran, else its fp32.
        mine = rates.get((c, "ringside"), [])
        if side == "bf16" and (c, "ringside_bf16") in rates:
            mine = rates[(c, "ringside_bf16")]
        ratios[(c, side)] = [m / v for m, v in zip(mine, values)]

    where = (torch.cuda.get_device_name(0) if args.device == "cuda" else
             "CPU, one thread each side")
    lines = [
        f"Device: {where}; torch {torch.__version__}; "
        f"{args.rounds} interleaved rounds; each cell the median over the "
        "rounds [min, max]. Samples are examples (MLP) or sequences "
        "(charlm).",
        "",
        "ringside bf16 runs the worker with --precision=bf16; '/ eager "
        "bf16 autocast' is its ratio, or ringside fp32's (marked *) where "
        "no bf16 run was made (on the CPU).",
        "",
        "| model | batch | steps | ringside fp32 samples/s | ringside bf16 "
        "samples/s | / eager fp32 | / eager bf16 autocast | / torch.compile "
        "fp32 | eager fp32 | eager bf16 | compile |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c, case in enumerate(cases):
        cells = [rate(rates.get((c, "ringside"), [])),
                 rate(rates.get((c, "ringside_bf16"), []))]
        for side in modes + ["compile"]:
            cell = summary(ratios.get((c, side), []))
            if (side == "bf16" and (c, "ringside_bf16") not in rates and
                    (c, side) in ratios):
                cell += " *"
            cells.append(cell)
        for side in modes + ["compile"]:
            cells.append(rate(rates.get((c, side), [])))
        lines.append(f"| {case.label} | {case.batch} | {case.steps} | " +
                     " | ".join(cells) + " |")
    for (c, side), error in sorted(errors.items()):
        lines.append(f"\nFAILED: case {c} ({side}): {error}")
    lines += breakdown_lines(cases, records)

    if args.accumulation.lower() in ("1", "true", "yes"):
        case = cases[min(1, len(cases) - 1)]
        gains = []
        for _ in range(args.rounds):
            try:
                one, _ = run_ringside(args.worker, args.device, case.flags,
                                      case.batch, case.steps, case.warmup,
                                      strategy="ring")
                four, _ = run_ringside(args.worker, args.device, case.flags,
                                       case.batch, max(10, case.steps // 4),
                                       max(3, case.steps // 20),
                                       strategy="ring", accumulate=4)
                gains.append(four / one)
            except Exception as e:  # noqa: BLE001
                errors[("accumulation", "ring")] = str(e)[:200]
                lines.append(f"\nFAILED: accumulation: {e}")
                break
        lines += [
            "",
            f"Gradient accumulation, ring on one worker, {case.label} at "
            f"batch {case.batch}: samples/s at accumulate_steps 4 over "
            f"accumulate_steps 1 = {summary(gains)}.",
        ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
