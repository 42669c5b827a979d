#!/usr/bin/env python3
"""PyTorch DDP peer: the "PyTorch DDP" row of `compare`.

Trains exactly what a ringside worker job trains -- the initial parameters,
every step's global batch and the eval set that `worker --export_batches=DIR`
wrote (worker/batch_export.h) -- under torch.distributed
DistributedDataParallel with PyTorch's defaults (25 MB buckets, a 1 MB first
bucket): gloo on CPU workers, NCCL on CUDA workers. It is launched the way
ringside's workers are (--rank, --world_size, --master_addr, --master_port;
rank 0 with --master_port=0 binds a free port for the TCPStore and prints
{"event": "rendezvous", "master_port": P}) and prints the same JSON lines:
one {"event": "step", ...} per step and one {"event": "final", ...} record
with utilization, throughput, eval loss, compute and wall time.

Measures, as the worker's (worker/run_metrics.h): compute time of a step =
forward + backward until the last parameter's gradient is accumulated (the
point where DDP may still be reducing buckets) + the optimizer step;
utilization = compute / wall time of the measured steps; throughput =
global samples / s. bytes_sent and bytes_received are what a ring
all-reduce of the model moves per rank, 2 (N - 1) / N of the model's bytes
per step (DDP does not report its traffic), and the record says so.

With --torch_model=SPEC (`module:factory` or `file.py:factory`, called
with no arguments) and --input=SHAPE instead of --data_dir it trains the
user's own PyTorch model, the one tools/export_profile.py exported a
profile of, beside ringside's emulated rows for that profile: each rank
feeds torch.randn(batch, *SHAPE) (seeded by rank; a pool of up to
RANDOM_BATCHES batches, cycled, so memory does not grow with --steps) and
trains on the mean square of its outputs (bounded on random data) with
SGD (--lr, --momentum); --batch_size, --steps and --warmup_steps are then
required. Its compute is real and its data random: the row compares
communication overhead per step with the emulated rows, not throughput or
loss, and its final record says so ("data": "random").

Models from an export: mlp (fc{l}.weight stored in x out, fc{l}.bias,
ReLU between layers, softmax cross-entropy), matching models/mlp.h; charlm, the
character transformer of models/transformer/charlm.h, as the PyTorch twin
experiments/bench/charlm_torch_ref.py writes it (same tensors in the same
layout, so the exported parameters load one to one; its attention is
PyTorch's scaled_dot_product_attention, so losses agree to float rounding,
not bit for bit). Flags that the
exported data already reflects (widths, optimizer, seeds, data sizes) are
accepted; flags of ringside strategies that have no DDP counterpart are
listed in the final record's "ignored_flags".

Exit status: 0 done; 2 bad flags or data; 3 "torch not installed"; 1 a
training or communication failure (every collective has the
--failure_timeout_s deadline).
"""

import argparse
import contextlib
import datetime
import json
import os
import subprocess
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel
except ImportError:
    print("torch not installed", file=sys.stderr)
    sys.exit(3)

# The character transformer's PyTorch twin and (--torch_model) the profile
# exporter's model loader, beside this file in the source tree and in
# compare's runfiles.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "bench"))
sys.path.insert(0, os.path.join(_HERE, os.pardir, "tools"))
import charlm_torch_ref  # noqa: E402

# --torch_model: distinct random batches per rank, cycled over the steps.
RANDOM_BATCHES = 4

# Worker flags whose effect is already in the exported data.
BAKED_IN = {"mlp_widths", "optimizer", "lr", "momentum", "weight_decay",
            "beta1", "beta2", "adam_eps", "seed", "data_seed",
            "train_examples", "eval_examples", "text", "n_layer", "n_head",
            "n_embd", "block_size", "accumulate_steps", "lr_scaling",
            "lr_reference_batch", "lr_warmup_steps"}


def emit(record):
    print(json.dumps(record), flush=True)


def fail(message, code=2):
    print(f"ddp_peer: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--strategy", default="ddp")
    p.add_argument("--rank", type=int, default=int(os.environ.get("RANK", -1)))
    p.add_argument("--world_size", type=int,
                   default=int(os.environ.get("WORLD_SIZE", -1)))
    p.add_argument("--master_addr",
                   default=os.environ.get("MASTER_ADDR", "127.0.0.1"))
    p.add_argument("--master_port", type=int,
                   default=int(os.environ.get("MASTER_PORT", -1)))
    p.add_argument("--data_dir", default="",
                   help="folder written by worker --export_batches")
    p.add_argument("--torch_model", default="",
                   help="module:factory or file.py:factory: train this "
                        "model on random inputs instead of an export")
    p.add_argument("--input", default="",
                   help="--torch_model: one example's input shape, e.g. "
                        "3,224,224")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--model", default=None)
    p.add_argument("--batch_size", type=int, default=None)
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--warmup_steps", type=int, default=None)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                   help="bf16: the forward under torch.autocast(bfloat16), "
                        "as the worker's --precision=bf16 (CUDA only)")
    p.add_argument("--eval_every", type=int, default=0,
                   help="evaluate every N steps and after the last (as the "
                        "worker's --eval_every); 0: only at the end")
    p.add_argument("--transport_host", default=None,
                   help="this process's address (network shaping): gloo "
                        "binds the interface that has it")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (ringside workers: 1)")
    p.add_argument("--failure_timeout_s", type=float, default=30.0,
                   help="deadline of the rendezvous and every collective")
    known, rest = p.parse_known_args(argv)
    ignored = []
    for arg in rest:
        if not arg.startswith("--"):
            fail(f"unexpected argument '{arg}'")
        name = arg[2:].split("=", 1)[0]
        if name.startswith("no"):
            name = name[2:]
        if name not in BAKED_IN:
            ignored.append(arg)
    if known.precision == "bf16" and known.device != "cuda":
        fail("--precision=bf16 needs --device=cuda, as the worker's")
    if known.strategy != "ddp":
        fail(f"--strategy={known.strategy}: this peer runs only 'ddp'")
    if known.rank < 0 or known.world_size < 1 or known.rank >= known.world_size:
        fail(f"--rank={known.rank} --world_size={known.world_size}: "
             "want 0 <= rank < world_size")
    if known.master_port < 0:
        fail("--master_port (or MASTER_PORT) is required; rank 0 may pass 0")
    if known.master_port == 0 and known.rank != 0:
        fail("--master_port=0 (pick a free port) only on rank 0")
    if bool(known.data_dir) == bool(known.torch_model):
        fail("give exactly one of --data_dir (a worker export) and "
             "--torch_model (a PyTorch model on random inputs)")
    if known.torch_model:
        for flag in ("batch_size", "steps", "warmup_steps"):
            if getattr(known, flag) is None:
                fail(f"--torch_model needs --{flag}")
        try:
            known.input_shape = [int(d) for d in known.input.split(",") if d]
        except ValueError:
            known.input_shape = []
        if not known.input_shape or min(known.input_shape) <= 0:
            fail(f"--input={known.input!r}: want one example's shape, "
                 "positive sizes separated by commas (e.g. 3,224,224)")
    return known, ignored


def load(meta_dir, name, dtype, meta):
    entry = meta["files"][name]
    path = os.path.join(meta_dir, entry["file"])
    count = 1
    for d in entry["shape"]:
        count *= d
    t = torch.from_file(path, shared=False, size=count, dtype=dtype)
    return t.reshape(entry["shape"])


class Mlp(torch.nn.Module):
    """models/mlp.h: y = relu(x W + b) per hidden layer, W stored in x out."""

    def __init__(self, layout, params):
        super().__init__()
        self.weights = torch.nn.ParameterList()
        self.biases = torch.nn.ParameterList()
        by_name = {t["name"]: t for t in layout}
        layer = 0
        while f"fc{layer}.weight" in by_name:
            w, b = by_name[f"fc{layer}.weight"], by_name[f"fc{layer}.bias"]
            self.weights.append(torch.nn.Parameter(
                params[w["offset"]:w["offset"] + w["size"]]
                .reshape(w["shape"]).clone()))
            self.biases.append(torch.nn.Parameter(
                params[b["offset"]:b["offset"] + b["size"]].clone()))
            layer += 1
        if layer == 0:
            fail("layout has no fc0.weight: not an MLP")

    def forward(self, x, y):
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = torch.addmm(b, x, w)
            if i < last:
                x = torch.relu(x)
        return F.cross_entropy(x, y)


def mean_square(out):
    """The mean square of every float tensor in a model's output (tensors,
    tuples, lists, dicts, Hugging Face outputs): a loss that stays bounded
    on random inputs, where export_profile.py's sum of the outputs (which
    needs only the gradients' shapes) would be driven to minus infinity."""
    if torch.is_tensor(out):
        return out.float().pow(2).mean() if out.is_floating_point() else None
    if isinstance(out, dict):
        out = list(out.values())
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    if isinstance(out, (list, tuple)):
        parts = [p for p in (mean_square(o) for o in out) if p is not None]
        return sum(parts) if parts else None
    return None


class UserModel(torch.nn.Module):
    """--torch_model: the user's model, trained on its outputs' mean square."""

    def __init__(self, spec):
        super().__init__()
        try:
            import export_profile  # noqa: PLC0415 -- only this mode needs it
        except ImportError as e:
            fail(f"--torch_model needs tools/export_profile.py beside "
                 f"experiments/: {e}")
        try:
            self.inner = export_profile.load_callable(spec)()
        except SystemExit as e:
            fail(f"--torch_model={spec}: {e}")
        except Exception as e:  # noqa: BLE001 -- the user's factory failed
            fail(f"--torch_model={spec}: the factory raised "
                 f"{type(e).__name__}: {e}")
        if not isinstance(self.inner, torch.nn.Module):
            fail(f"--torch_model={spec}: the factory returned a "
                 f"{type(self.inner).__name__}, not a torch.nn.Module")
        if not any(p.requires_grad for p in self.inner.parameters()):
            fail(f"--torch_model={spec}: the model has no trainable "
                 "parameters")

    def forward(self, x):
        try:
            out = self.inner(x)
        except RuntimeError as e:
            fail(f"--input: the model does not take a batch of shape "
                 f"{tuple(x.shape)}: {e}")
        loss = mean_square(out)
        if loss is None:
            fail("the model's output holds no tensor to train on")
        return loss


class CharLm(torch.nn.Module):
    """models/transformer/charlm.h through charlm_torch_ref's forward; its
    tensors in the export's layout order, checked against the twin's."""

    def __init__(self, meta, params):
        super().__init__()
        config = meta.get("model_config", {})
        layout = meta["layout"]
        wte = next((t for t in layout if t["name"] == "wte.weight"), None)
        if wte is None:
            fail("layout has no wte.weight: not a character transformer")
        self.args = argparse.Namespace(
            n_layer=config.get("n_layer"), n_head=config.get("n_head"),
            n_embd=config.get("n_embd"), block_size=config.get("block_size"),
            vocab=wte["shape"][0])
        want = charlm_torch_ref.layout(self.args)
        got = [(t["name"], tuple(t["shape"])) for t in layout]
        if got != [(n, tuple(s)) for n, s in want]:
            fail("the export's charlm layout differs from "
                 "charlm_torch_ref.py's (model_config "
                 f"{json.dumps(config)}): first tensors {got[:3]}")
        self.names = [t["name"] for t in layout]
        self.tensors = torch.nn.ParameterList(
            torch.nn.Parameter(params[t["offset"]:t["offset"] + t["size"]]
                               .reshape(t["shape"]).clone())
            for t in layout)

    def forward(self, tokens):
        return charlm_torch_ref.forward(dict(zip(self.names, self.tensors)),
                                        self.args, tokens)


def make_optimizer(config, params):
    kind = config["type"]
    if kind == "sgd":
        return torch.optim.SGD(params, lr=config["lr"],
                               momentum=config["momentum"],
                               weight_decay=config["weight_decay"])
    if kind == "adam":
        return torch.optim.Adam(params, lr=config["lr"],
                                betas=(config["beta1"], config["beta2"]),
                                eps=config["eps"],
                                weight_decay=config["weight_decay"])
    fail(f"optimizer '{kind}' has no PyTorch counterpart here")


def interface_of(address):
    """Name of the network interface holding IPv4 `address` (iproute2)."""
    out = subprocess.run(["ip", "-o", "-4", "addr", "show"], check=True,
                         capture_output=True, text=True, timeout=10).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[3].split("/")[0] == address:
            return fields[1]
    fail(f"--transport_host={address}: no interface has this address")


def rendezvous(args, timeout):
    store = dist.TCPStore(args.master_addr, args.master_port,
                          world_size=args.world_size,
                          is_master=args.rank == 0, timeout=timeout,
                          wait_for_workers=False)
    if args.rank == 0:
        emit({"event": "rendezvous", "master_port": store.port})
    return store


def read_meta(args):
    """The export's meta.json, checked against the flags."""
    try:
        with open(os.path.join(args.data_dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"--data_dir={args.data_dir}: cannot read meta.json ({e})")
    if meta.get("format") != "ringside-batches-1":
        fail(f"--data_dir={args.data_dir}: not a ringside batch export")
    if meta["model"] not in ("mlp", "charlm"):
        fail(f"model '{meta['model']}': the DDP peer trains mlp and charlm "
             "from an export (--torch_model for other PyTorch models)")
    for flag, key in (("model", "model"), ("batch_size", "batch_size"),
                      ("steps", "steps"), ("warmup_steps", "warmup_steps")):
        given = getattr(args, flag)
        if given is not None and given != meta[key]:
            fail(f"--{flag}={given} but the export at {args.data_dir} has "
                 f"{meta[key]}; export again with the same flags")
    if meta["world_size"] != args.world_size:
        fail(f"--world_size={args.world_size} but the export has "
             f"world_size {meta['world_size']}")
    return meta


def load_export(args, meta, b, k, device):
    """The export's parameters, model and this rank's inputs."""
    params = load(args.data_dir, "params", torch.float32, meta)
    rows = torch.cat([torch.arange((j * args.world_size + args.rank) * b,
                                   (j * args.world_size + args.rank + 1) * b)
                      for j in range(k)])
    # Each set as the model's inputs: (features, labels) or (tokens,).
    if meta["model"] == "mlp":
        train = (load(args.data_dir, "train_features", torch.float32, meta),
                 load(args.data_dir, "train_labels", torch.int32, meta).long())
        evaluation = (
            load(args.data_dir, "eval_features", torch.float32, meta),
            load(args.data_dir, "eval_labels", torch.int32, meta).long())
        model = Mlp(meta["layout"], params).to(device)
    else:
        train = (load(args.data_dir, "train_tokens", torch.int32,
                      meta).long(),)
        evaluation = (load(args.data_dir, "eval_tokens", torch.int32,
                           meta).long(),)
        model = CharLm(meta, params).to(device)
    train = tuple(t[:, rows].contiguous().to(device) for t in train)
    evaluation = tuple(t.to(device) for t in evaluation)
    return params, model, train, evaluation


def random_inputs(args, device):
    """--torch_model: this rank's pool of training batches (step s takes
    batch s mod the pool's size) and its evaluation batch, seeded by rank."""
    gen = torch.Generator().manual_seed(1000003 * (args.rank + 1))
    pool, b = min(args.steps, RANDOM_BATCHES), args.batch_size
    train = (torch.randn(pool, b, *args.input_shape, generator=gen),)
    evaluation = (torch.randn(b, *args.input_shape, generator=gen),)
    return (tuple(t.to(device) for t in train),
            tuple(t.to(device) for t in evaluation))


def main(argv):
    args, ignored = parse_args(argv)
    if args.torch_model:
        meta = {"model": "torch_model", "batch_size": args.batch_size,
                "steps": args.steps, "warmup_steps": args.warmup_steps,
                "world_size": args.world_size, "accumulate_steps": 1,
                "format": "ringside-batches-1",
                "optimizer": {"type": "sgd", "lr": args.lr,
                              "momentum": args.momentum,
                              "weight_decay": 0.0}}
    else:
        meta = read_meta(args)
    model_name = meta["model"]

    torch.set_num_threads(args.threads)
    device = torch.device("cuda", args.rank % max(torch.cuda.device_count(), 1)) \
        if args.device == "cuda" else torch.device("cpu")
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device=cuda: torch sees no GPU", 1)
    backend = "nccl" if args.device == "cuda" else "gloo"
    if args.transport_host and args.transport_host != "127.0.0.1":
        os.environ["GLOO_SOCKET_IFNAME"] = interface_of(args.transport_host)
    timeout = datetime.timedelta(seconds=args.failure_timeout_s or 600)
    store = rendezvous(args, timeout)
    dist.init_process_group(backend, store=store, rank=args.rank,
                            world_size=args.world_size, timeout=timeout)

    b, steps, warmup = meta["batch_size"], meta["steps"], meta["warmup_steps"]
    # Gradient accumulation: k passes a step, the first k - 1 under
    # no_sync (DDP's way), pass j on rows [(j W + r) b, +b) of the step.
    k = meta.get("accumulate_steps", 1)
    if model_name == "torch_model":
        torch.manual_seed(1)  # the same initial parameters on every rank
        model = UserModel(args.torch_model).to(device)
        train, evaluation = random_inputs(args, device)
        params = torch.cat([p.detach().reshape(-1).cpu()
                            for p in model.parameters() if p.requires_grad])
    else:
        params, model, train, evaluation = load_export(args, meta, b, k,
                                                       device)

    ddp = DistributedDataParallel(model)
    optimizer = make_optimizer(meta["optimizer"], ddp.parameters())
    # Linear warm-up as ringside's optimizers apply it: update u (from 1)
    # at lr * u / W while u < W.
    lr_warmup = meta["optimizer"].get("lr_warmup_steps", 0)
    scheduler = (torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda e: min(1.0, (e + 1) / lr_warmup))
        if lr_warmup > 0 else None)
    ready = [0.0]

    def on_grad(_):
        ready[0] = time.perf_counter()

    for p in model.parameters():
        if p.requires_grad:  # frozen ones get no gradient, DDP skips them
            p.register_post_accumulate_grad_hook(on_grad)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    model_bytes = params.numel() * 4
    ring_bytes = int(2 * (args.world_size - 1) * model_bytes / args.world_size)
    compute_s = wall_s = 0.0
    measured = 0
    first_start = last_end = 0.0
    train_start = None
    evaluating_s = paused_s = 0.0
    def autocast():
        # bf16: the worker's mixed precision, PyTorch's way (fp32 master
        # weights, the optimizer in fp32).
        if args.precision == "bf16":
            return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    for step in range(steps):
        sync()
        start = time.perf_counter()
        if train_start is None:
            train_start = start
        optimizer.zero_grad(set_to_none=False)
        losses = []
        for j in range(k):
            # An export holds every step; a random pool is cycled.
            inputs = tuple(t[step % len(t), j * b:(j + 1) * b] for t in train)
            with ddp.no_sync() if j < k - 1 else contextlib.nullcontext():
                with autocast():
                    loss = ddp(*inputs)
                (loss / k if k > 1 else loss).backward()
            losses.append(loss.item())
        loss_mean = sum(losses) / k
        sync()
        backward_end = time.perf_counter()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        sync()
        end = time.perf_counter()
        compute = (ready[0] - start) + (end - backward_end)
        emit({"event": "step", "step": step, "loss": loss_mean,
              "compute_s": compute, "sync_s": (end - start) - compute,
              "step_s": end - start, "bytes_sent": ring_bytes,
              "bytes_received": ring_bytes})
        if step >= warmup:
            if measured == 0:
                first_start = start
                paused_s = 0.0
            last_end = end
            measured += 1
            compute_s += compute
        if args.eval_every > 0 and ((step + 1) % args.eval_every == 0 or
                                    step == steps - 1):
            # As the worker's mid-run evaluation: left out of the times.
            eval_start = time.perf_counter()
            with torch.no_grad(), autocast():
                eval_loss = model(*evaluation).item()
            sync()
            eval_end = time.perf_counter()
            emit({"event": "eval", "rank": args.rank, "step": step,
                  "samples": (step + 1) * b * k * args.world_size,
                  "train_wall_s": eval_start - train_start - evaluating_s,
                  "loss": eval_loss})
            evaluating_s += eval_end - eval_start
            if step >= warmup and step < steps - 1:
                paused_s += eval_end - eval_start
    wall_s = last_end - first_start - paused_s if measured else 0.0
    with torch.no_grad(), autocast():
        eval_loss = model(*evaluation).item()
    dist.barrier()
    dist.destroy_process_group()
    device_name = (f"cuda: {torch.cuda.get_device_name(device)}"
                   if device.type == "cuda" else "cpu")
    emit({"event": "final", "rank": args.rank, "world_size": args.world_size,
          "strategy": "ddp", "model": model_name, "batch_size": b,
          "accumulate_steps": k, "lr": meta["optimizer"]["lr"],
          "lr_warmup_steps": lr_warmup,
          "steps": steps, "start_step": 0, "warmup_steps": warmup,
          "measured_steps": measured, "eval_loss": eval_loss,
          "utilization": compute_s / wall_s if wall_s > 0 else 0.0,
          "throughput": (measured * b * k * args.world_size / wall_s
                         if wall_s > 0 else 0.0),
          "compute_s": compute_s, "wall_s": wall_s,
          "bytes_sent": ring_bytes * measured,
          "bytes_received": ring_bytes * measured,
          "traffic": "ring all-reduce volume, 2(N-1)/N x model bytes per "
                     "step (DDP does not report its own)",
          "device": device_name, "precision": args.precision,
          "timing": "perf_counter",
          "emulated": False, "model_bytes": model_bytes,
          "data": "random" if args.torch_model else "export",
          "num_tensors": (len(meta["layout"]) if "layout" in meta else
                          sum(1 for p in model.parameters()
                              if p.requires_grad)),
          "peer": f"PyTorch {torch.__version__} DDP ({backend})",
          "torch_threads": args.threads, "ignored_flags": ignored})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except RuntimeError as e:  # collective timeouts, lost peers
        print(f"ddp_peer: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
