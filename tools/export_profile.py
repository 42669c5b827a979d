#!/usr/bin/env python3
"""Exports a PyTorch model's gradient profile for ringside (models/profile_file.h).

    tools/export_profile.py --model=torchvision.models:resnet50 \
        --input=3,224,224 --batch=32 [--device=cpu|cuda] --out=resnet50.json
    tools/export_profile.py --model=path/to/file.py:factory ...

--model names a factory, `module:callable` or `file.py:callable`, called
with no arguments to build the model. By default the model is fed
torch.randn(batch, *input) and trained on the sum of its output (any
output structure: tensors are summed, tuples, lists and dicts walked). A
model that needs its own inputs and loss (a Hugging Face causal LM, say)
gives --step=file.py:callable: step(model, batch, device) runs one forward
and backward itself and returns the forward's seconds (its backward is timed
as the rest of the call).

What it records, as DDP sees a training step:
  - the tensors whose gradients a data-parallel step reduces: parameters
    that require grad and received a gradient (frozen ones and ones the
    step does not use are left out, as DDP leaves them out of its
    reduction); a parameter shared by several modules once;
  - their order: the order their gradients became ready in backward
    (post-accumulate-grad hooks, torch >= 2.1; tensor hooks before), and
    each one's ready time from backward's start (on CUDA recorded with
    events, since kernels run after the hooks fire);
  - forward and backward seconds per step at --batch on --device, the median
    of --steps timed steps after --warmup ones, and the peak memory of the
    step beyond the parameters on CUDA (torch.cuda.max_memory_allocated).

It needs torch (and whatever the model needs), not ringside.
"""

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import sys
import time

FORMAT = "ringside-profile/1"


def load_callable(spec):
    """`module:name` or `path/file.py:name` -> the callable."""
    if ":" not in spec:
        raise SystemExit(f"--model/--step {spec!r}: expected module:callable "
                         "or file.py:callable")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py") or os.sep in where:
        path = os.path.abspath(where)
        if not os.path.exists(path):
            raise SystemExit(f"{spec!r}: no file {path}")
        module_spec = importlib.util.spec_from_file_location(
            os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, name):
        raise SystemExit(f"{spec!r}: {where} has no {name}")
    return getattr(module, name)


def output_sum(torch, out):
    """The sum of every tensor in a model's output, for a default loss."""
    if torch.is_tensor(out):
        return out.float().sum()
    if isinstance(out, dict):
        out = list(out.values())
    if hasattr(out, "to_tuple"):  # Hugging Face ModelOutput
        out = out.to_tuple()
    if isinstance(out, (list, tuple)):
        parts = [output_sum(torch, o) for o in out]
        parts = [p for p in parts if p is not None]
        return sum(parts) if parts else None
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", default="",
                        help="one example's shape, e.g. 3,224,224 (the "
                        "default step feeds torch.randn(batch, *input))")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--step", default="",
                        help="file.py:callable running one training step")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--name", default="",
                        help="the profile's name (default: the factory's)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.batch < 1 or args.steps < 1 or args.warmup < 0:
        raise SystemExit("--batch and --steps must be >= 1, --warmup >= 0")
    if not args.step and not args.input:
        raise SystemExit("give --input (one example's shape) or --step")

    import torch  # here, so that --help works without torch

    device = torch.device(args.device)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device=cuda: torch sees no GPU")
    torch.manual_seed(0)
    model = load_callable(args.model)().to(device)
    model.train()
    step_fn = load_callable(args.step) if args.step else None
    shape = [int(d) for d in args.input.split(",")] if args.input else []

    # Parameters once each (named_parameters deduplicates shared ones).
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not params:
        raise SystemExit("the model has no parameter that requires grad")

    ready = {}  # id(param) -> (order, host time or CUDA event)
    use_cuda_events = args.device == "cuda"

    def mark(p):
        if id(p) in ready:
            return
        stamp = (torch.cuda.Event(enable_timing=True) if use_cuda_events
                 else time.perf_counter())
        if use_cuda_events:
            stamp.record()
        ready[id(p)] = (len(ready), stamp)

    handles = []
    for _, p in params:
        if hasattr(p, "register_post_accumulate_grad_hook"):
            handles.append(p.register_post_accumulate_grad_hook(mark))
        else:  # torch < 2.1: when the gradient is computed
            handles.append(p.register_hook(lambda g, p=p: mark(p)))

    def sync():
        if use_cuda_events:
            torch.cuda.synchronize()

    forward_s, backward_s = [], []
    ready_of_step = []  # per timed step: id(param) -> (order, seconds)
    for i in range(args.warmup + args.steps):
        model.zero_grad(set_to_none=True)
        ready.clear()
        sync()
        start = time.perf_counter()
        backward_start = None
        if use_cuda_events:
            begin_event = torch.cuda.Event(enable_timing=True)
            backward_event = torch.cuda.Event(enable_timing=True)
            begin_event.record()
        if step_fn is not None:
            fwd = float(step_fn(model, args.batch, device))
            sync()
            total = time.perf_counter() - start
            forward, backward = fwd, total - fwd
        else:
            x = torch.randn(args.batch, *shape, device=device)
            loss = output_sum(torch, model(x))
            if loss is None:
                raise SystemExit("the model's output holds no tensor to sum; "
                                 "give --step")
            sync()
            backward_start = time.perf_counter()
            if use_cuda_events:
                backward_event.record()
            loss.backward()
            sync()
            end = time.perf_counter()
            forward, backward = backward_start - start, end - backward_start
        if i >= args.warmup:
            forward_s.append(forward)
            backward_s.append(backward)
            if use_cuda_events:
                origin = backward_event if backward_start is not None \
                    else begin_event
                ready_of_step.append({k: (o, origin.elapsed_time(e) / 1e3)
                                      for k, (o, e) in ready.items()})
            else:
                origin = backward_start if backward_start is not None \
                    else start
                ready_of_step.append({k: (o, t - origin)
                                      for k, (o, t) in ready.items()})
    for h in handles:
        h.remove()
    # The ready times of the step whose backward took the median time.
    median_step = sorted(range(len(backward_s)),
                         key=lambda i: backward_s[i])[len(backward_s) // 2]
    last_ready = ready_of_step[median_step]

    # Gradient-ready order; unused parameters (no gradient) left out.
    used = [(n, p) for n, p in params if p.grad is not None and
            id(p) in last_ready]
    used.sort(key=lambda np_: last_ready[id(np_[1])][0])
    skipped = [n for n, p in params if not (p.grad is not None and
                                            id(p) in last_ready)]
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    if not used:
        raise SystemExit("no parameter received a gradient")

    profile = {
        "format": FORMAT,
        "name": args.name or args.model.rsplit(":", 1)[1],
        "description": f"exported by tools/export_profile.py from "
                       f"{args.model} (torch {torch.__version__})",
        "order": "gradient_ready",
        "published_parameters": sum(p.numel() for _, p in used),
        "compute": {
            "batch_size": args.batch,
            "device": args.device,
            "forward_ms": statistics.median(forward_s) * 1e3,
            "backward_ms": backward_s[median_step] * 1e3,
            "ready_ms": [max(0.0, last_ready[id(p)][1]) * 1e3
                         for _, p in used],
        },
    }
    if use_cuda_events:
        param_bytes = sum(p.numel() * p.element_size()
                          for p in model.parameters())
        profile["compute"]["peak_activation_bytes"] = max(
            0, torch.cuda.max_memory_allocated() - 2 * param_bytes)
    lines = [json.dumps({k: v for k, v in profile.items()}, indent=2)[:-2]]
    tensors = [json.dumps({"name": n, "shape": list(p.shape),
                           "dtype": "float32"}) for n, p in used]
    text = lines[0] + ",\n  \"tensors\": [\n    " + ",\n    ".join(tensors) \
        + "\n  ]\n}\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(f"export_profile: {len(used)} tensors, "
          f"{profile['published_parameters']} parameters -> {args.out}"
          + (f"; left out: frozen {frozen}" if frozen else "")
          + (f"; unused {skipped}" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
