#!/usr/bin/env python3
"""PyTorch eager reference for //experiments/bench:charlm_bench.

The same character transformer as models/transformer/charlm.h (token and
position embeddings, pre-LayerNorm blocks of causal multi-head
self-attention and a tanh-GELU MLP, final LayerNorm, output head tied to the
token embedding; weights stored in x out as GPT-2's Conv1D, so y = x W + b),
written with plain tensors so that its parameters map one to one onto
ringside's flat float32 layout (charlm_layout.h order).

Times a training step (forward + backward, no optimizer) on --device and
prints one JSON line:
  {"torch": "2.x", "device": "cuda: NVIDIA H100 ...", "step_ms": median,
   "step_ms_all": [...], "loss": ..., "tf32": false}
With --params/--tokens (raw float32 parameters in ringside's layout, raw
int32 tokens of batch_size x (block_size + 1)) it uses those instead of
random ones, and with --grads_out writes the first step's gradients in the
same layout, so the caller can compare losses and gradients.

Exit status 3 with "torch not installed" on stderr when torch is missing;
the benchmark then says so and carries on without the reference.
"""

import argparse
import json
import statistics
import struct
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch not installed", file=sys.stderr)
    sys.exit(3)


BLOCK_TENSORS = [
    # (name, shape as a function of c)
    ("ln_1.weight", lambda c: (c,)),
    ("ln_1.bias", lambda c: (c,)),
    ("attn.c_attn.weight", lambda c: (c, 3 * c)),
    ("attn.c_attn.bias", lambda c: (3 * c,)),
    ("attn.c_proj.weight", lambda c: (c, c)),
    ("attn.c_proj.bias", lambda c: (c,)),
    ("ln_2.weight", lambda c: (c,)),
    ("ln_2.bias", lambda c: (c,)),
    ("mlp.c_fc.weight", lambda c: (c, 4 * c)),
    ("mlp.c_fc.bias", lambda c: (4 * c,)),
    ("mlp.c_proj.weight", lambda c: (4 * c, c)),
    ("mlp.c_proj.bias", lambda c: (c,)),
]


def layout(args):
    """(name, shape) of every tensor in ringside's order."""
    c = args.n_embd
    shapes = [("wte.weight", (args.vocab, c)),
              ("wpe.weight", (args.block_size, c))]
    for layer in range(args.n_layer):
        for name, shape in BLOCK_TENSORS:
            shapes.append((f"h.{layer}.{name}", shape(c)))
    shapes += [("ln_f.weight", (c,)), ("ln_f.bias", (c,))]
    return shapes


def make_params(args, device, flat=None):
    params = {}
    offset = 0
    gen = torch.Generator().manual_seed(args.seed)
    for name, shape in layout(args):
        count = 1
        for d in shape:
            count *= d
        if flat is not None:
            t = flat[offset:offset + count].view(shape).clone()
        elif name.startswith("ln_") or ".ln_" in name:
            t = (torch.ones(shape) if name.endswith("weight")
                 else torch.zeros(shape))
        elif name.endswith("bias"):
            t = torch.zeros(shape)
        else:
            t = torch.randn(shape, generator=gen) * 0.02
        offset += count
        params[name] = t.to(device).requires_grad_(True)
    if flat is not None and offset != flat.numel():
        raise SystemExit(f"--params holds {flat.numel()} floats, the model "
                         f"has {offset}")
    return params


def forward(p, args, tokens):
    b, t1 = tokens.shape
    t = t1 - 1
    c, h = args.n_embd, args.n_head
    idx, targets = tokens[:, :-1], tokens[:, 1:]
    x = p["wte.weight"][idx] + p["wpe.weight"][:t]
    for layer in range(args.n_layer):
        q = lambda name: p[f"h.{layer}.{name}"]
        a = F.layer_norm(x, (c,), q("ln_1.weight"), q("ln_1.bias"), 1e-5)
        qkv = a @ q("attn.c_attn.weight") + q("attn.c_attn.bias")
        qh, kh, vh = (z.view(b, t, h, c // h).transpose(1, 2)
                      for z in qkv.split(c, dim=2))
        y = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
        y = y.transpose(1, 2).reshape(b, t, c)
        x = x + y @ q("attn.c_proj.weight") + q("attn.c_proj.bias")
        m = F.layer_norm(x, (c,), q("ln_2.weight"), q("ln_2.bias"), 1e-5)
        m = F.gelu(m @ q("mlp.c_fc.weight") + q("mlp.c_fc.bias"),
                   approximate="tanh")
        x = x + m @ q("mlp.c_proj.weight") + q("mlp.c_proj.bias")
    x = F.layer_norm(x, (c,), p["ln_f.weight"], p["ln_f.bias"], 1e-5)
    logits = x @ p["wte.weight"].t()
    return F.cross_entropy(logits.reshape(-1, args.vocab), targets.reshape(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--n_layer", type=int, default=4)
    ap.add_argument("--n_head", type=int, default=4)
    ap.add_argument("--n_embd", type=int, default=128)
    ap.add_argument("--block_size", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=65)
    ap.add_argument("--batch_size", type=int, default=16)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0,
                    help="CPU threads (0: torch's default)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--params", default="", help="raw float32, our layout")
    ap.add_argument("--tokens", default="", help="raw int32, b x (T + 1)")
    ap.add_argument("--grads_out", default="",
                    help="write the first step's gradients here (float32)")
    args = ap.parse_args()

    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch sees no CUDA device", file=sys.stderr)
        sys.exit(4)
    device = torch.device(args.device)
    # Full float32 products, as ringside's cuBLAS calls.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    flat = None
    if args.params:
        flat = torch.from_file(args.params, dtype=torch.float32,
                               size=sum(_numel(s) for _, s in layout(args)))
    params = make_params(args, device, flat)
    if args.tokens:
        count = args.batch_size * (args.block_size + 1)
        tokens = torch.from_file(args.tokens, dtype=torch.int32, size=count)
        tokens = tokens.view(args.batch_size, args.block_size + 1).long()
    else:
        gen = torch.Generator().manual_seed(args.seed + 1)
        tokens = torch.randint(0, args.vocab,
                               (args.batch_size, args.block_size + 1),
                               generator=gen)
    tokens = tokens.to(device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    times, first_loss = [], None
    for step in range(args.warmup + args.steps):
        for t in params.values():
            t.grad = None
        sync()
        start = time.perf_counter()
        loss = forward(params, args, tokens)
        loss.backward()
        sync()
        elapsed = time.perf_counter() - start
        if step == 0:
            first_loss = loss.item()
            if args.grads_out:
                grads = torch.cat([params[n].grad.reshape(-1).float().cpu()
                                   for n, _ in layout(args)])
                with open(args.grads_out, "wb") as out:
                    out.write(struct.pack(f"<{grads.numel()}f",
                                          *grads.tolist()))
        if step >= args.warmup:
            times.append(elapsed * 1e3)

    name = (f"cuda: {torch.cuda.get_device_name(device)}"
            if device.type == "cuda" else
            f"cpu: {torch.get_num_threads()} threads")
    print(json.dumps({"torch": torch.__version__, "device": name,
                      "step_ms": statistics.median(times),
                      "step_ms_all": times, "loss": first_loss,
                      "tf32": False}))


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    main()
