#!/usr/bin/env python3
"""The host-side work of one torch.nn.DataParallel step that no source
measures, timed with PyTorch on this machine's CPU for the study's GPT-2
(../shared/study/SETUP.md: 12 layers of 768, n_ctx 512, vocabulary 26679;
the module tree of transformers' GPT2LMHeadModel, written out here):

  replicate_ms    the Python side of replicate(), for each of the three
                  replicas a step: every submodule copied
                  (_replicate_for_data_parallel) and its parameters and
                  buffers set on the copy, as
                  torch/nn/parallel/replicate.py does after its broadcast
                  (the broadcast itself is bytes on the link, priced apart);
  dispatch_ms     one replica's forward dispatched op by op: the same module
                  tree and ops at one token and a width of 96 (12 heads of
                  8), so that the arithmetic is negligible and what remains
                  is the interpreter's and the dispatcher's work per op
                  (compute_ms beside it: the real width's forward at one
                  token, the arithmetic included). DataParallel runs its
                  four replicas in four threads under one interpreter lock,
                  so their dispatch adds up on the host;
  modules, ops    the submodule count and the forward's op count.

  dataparallel_host_bench.py [--rounds=5] [--out=FILE.json]

Measured on a CPU: where the mechanism needs a GPU (CUDA's kernel-launch
cost, the broadcast's and empty_cache's host time) it is not in these
numbers, and the output says so. Prints a JSON object (and writes it with
--out) that tools/study_table.py reads with --host_terms=FILE.
PyTorch comes from PyPI (pip install torch); ringside's build never needs it.
"""
import argparse
import json
import platform
import statistics
import sys
import time

CONFIG = {"n_layer": 12, "n_embd": 768, "n_head": 12, "n_ctx": 512,
          "n_positions": 1024, "vocab": 26679}
# The same tree and ops with negligible arithmetic.
TINY = dict(CONFIG, n_embd=96, vocab=96)


def gpt2(torch, c):
    nn = torch.nn

    class Conv1D(nn.Module):  # transformers' Conv1D: x @ W + b
        def __init__(self, nf, nx):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
            self.bias = nn.Parameter(torch.zeros(nf))

        def forward(self, x):
            return torch.addmm(self.bias, x.view(-1, x.size(-1)),
                               self.weight).view(*x.shape[:-1], -1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            d = c["n_embd"]
            self.c_attn = Conv1D(3 * d, d)
            self.c_proj = Conv1D(d, d)
            self.attn_dropout = nn.Dropout(0.1)
            self.resid_dropout = nn.Dropout(0.1)
            self.register_buffer(
                "bias", torch.tril(torch.ones(c["n_ctx"], c["n_ctx"]))
                .view(1, 1, c["n_ctx"], c["n_ctx"]))

        def forward(self, x):
            b, t, d = x.shape
            h = c["n_head"]
            q, k, v = self.c_attn(x).split(d, dim=2)
            q = q.view(b, t, h, d // h).transpose(1, 2)
            k = k.view(b, t, h, d // h).permute(0, 2, 3, 1)
            v = v.view(b, t, h, d // h).transpose(1, 2)
            w = torch.matmul(q, k) / (d // h) ** 0.5
            w = w * self.bias[:, :, :t, :t] - 1e4 * (1 - self.bias[:, :, :t, :t])
            w = self.attn_dropout(torch.softmax(w, dim=-1))
            a = torch.matmul(w, v).transpose(1, 2).contiguous().view(b, t, d)
            return (self.resid_dropout(self.c_proj(a)),
                    torch.stack((k.transpose(-2, -1), v)))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            d = c["n_embd"]
            self.c_fc = Conv1D(4 * d, d)
            self.c_proj = Conv1D(d, 4 * d)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x):
            return self.dropout(self.c_proj(
                torch.nn.functional.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            d = c["n_embd"]
            self.ln_1 = nn.LayerNorm(d)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(d)
            self.mlp = MLP()

        def forward(self, x):
            a, present = self.attn(self.ln_1(x))
            x = x + a
            return x + self.mlp(self.ln_2(x)), present

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(c["vocab"], c["n_embd"])
            self.wpe = nn.Embedding(c["n_positions"], c["n_embd"])
            self.drop = nn.Dropout(0.1)
            self.h = nn.ModuleList(Block() for _ in range(c["n_layer"]))
            self.ln_f = nn.LayerNorm(c["n_embd"])

        def forward(self, ids, labels):
            pos = torch.arange(ids.size(1)).unsqueeze(0)
            x = self.drop(self.wte(ids) + self.wpe(pos))
            presents = []
            for block in self.h:
                x, p = block(x)
                presents.append(p)
            logits = self.ln_f(x) @ self.wte.weight.t()  # tied head
            loss = torch.nn.functional.cross_entropy(
                logits[:, :-1].reshape(-1, logits.size(-1)),
                labels[:, 1:].reshape(-1))
            return loss, logits, presents

    return Model()


def replicate_python(module):
    """replicate()'s work after the broadcast, for one replica: copy every
    submodule and set its parameters, buffers and children on the copy
    (torch/nn/parallel/replicate.py, the parameters reused instead of the
    broadcast's copies)."""
    modules = list(module.modules())
    index = {m: i for i, m in enumerate(modules)}
    copies = [m._replicate_for_data_parallel() for m in modules]
    for i, m in enumerate(modules):
        r = copies[i]
        for key, child in m._modules.items():
            setattr(r, key, None if child is None else copies[index[child]])
        for key, p in m._parameters.items():
            setattr(r, key, p)
        for key, b in m._buffers.items():
            r._buffers[key] = b
    return copies[0]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", default="")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds must be >= 1, got {args.rounds}")
    try:
        import torch
    except ImportError as e:
        print(f"dataparallel_host_bench: torch does not import ({e}); "
              "pip install torch (PyPI) into a virtual environment",
              file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = gpt2(torch, CONFIG).eval()
    ids = torch.zeros(1, 1, dtype=torch.long)
    modules = sum(1 for _ in model.modules())
    ops = 0

    def count(*_):
        nonlocal ops
        ops += 1

    with torch.no_grad():
        from torch.overrides import TorchFunctionMode

        class Count(TorchFunctionMode):
            def __torch_function__(self, func, types, a=(), kw=None):
                count()
                return func(*a, **(kw or {}))

        with Count():
            model(ids, ids)
    tiny = gpt2(torch, TINY).eval()

    def forward_ms(m):
        with torch.no_grad():
            m(ids, ids)
            start = time.perf_counter()
            for _ in range(5):
                m(ids, ids)
            return 1e3 * (time.perf_counter() - start) / 5

    replicate_ms, dispatch_ms, compute_ms = [], [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for _ in range(3):  # GPUs 1-3's replicas
            replicate_python(model)
        replicate_ms.append(1e3 * (time.perf_counter() - start) / 3)
        dispatch_ms.append(forward_ms(tiny))
        compute_ms.append(forward_ms(model))
    result = {
        "bench": "dataparallel_host_bench",
        "model": dict(CONFIG, parameters=sum(x.numel()
                                             for x in model.parameters())),
        "modules": modules,
        "ops": ops,
        "replicate_ms": statistics.median(replicate_ms),
        "replicate_ms_range": [min(replicate_ms), max(replicate_ms)],
        "dispatch_ms": statistics.median(dispatch_ms),
        "dispatch_ms_range": [min(dispatch_ms), max(dispatch_ms)],
        "compute_ms": statistics.median(compute_ms),
        "measured_on": f"CPU: {platform.processor() or platform.machine()}, "
                       f"torch {torch.__version__}, one thread",
        "not_measured": "CUDA's kernel-launch cost, the broadcast's and "
                        "empty_cache's host time (they need a GPU)",
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
