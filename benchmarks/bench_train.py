"""Time one MLP training step with opforge.nn against hand-written NumPy and PyTorch, and print ratios.

    python benchmarks/bench_train.py                  # 1 thread
    python benchmarks/bench_train.py --threads 2 --markdown out.md

The step: batch 64, 784 -> 256 -> ReLU -> 10, sparse softmax cross-entropy (mean), SGD with
learning rate 0.01: forward, backward and the in-place update. The three implementations start
from the same weights and are checked to agree before they are timed. A second case times the
whole autodiff machinery on a tiny input: ``grad`` of ``relu(x).sum()`` for one element (opforge
vs PyTorch autograd), i.e. the fixed cost per differentiated call.

Times are medians per call (``measure`` from bench_ops.py); ratios are opforge's time divided by
the other library's (below 1.0: opforge is faster).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_ops  # noqa: E402  (measure, render, thread setup)

BATCH, IN, HIDDEN, OUT, LR = 64, 784, 256, 10, 0.01


def _weights(np):
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((HIDDEN, IN)) * np.sqrt(2 / IN)).astype(np.float32)
    w2 = (rng.standard_normal((OUT, HIDDEN)) * np.sqrt(2 / HIDDEN)).astype(np.float32)
    b1 = np.zeros(HIDDEN, np.float32)
    b2 = np.zeros(OUT, np.float32)
    x = rng.standard_normal((BATCH, IN), dtype=np.float32)
    y = rng.integers(0, OUT, BATCH).astype(np.int32)
    return [w1, b1, w2, b2], x, y


def opforge_step(np, opforge, weights, x, y):
    from opforge import nn

    net = nn.SequentialCell(
        nn.Dense(IN, HIDDEN, weight_init=opforge.Tensor(weights[0]), bias_init=opforge.Tensor(weights[1])),
        nn.ReLU(),
        nn.Dense(HIDDEN, OUT, weight_init=opforge.Tensor(weights[2]), bias_init=opforge.Tensor(weights[3])),
    )
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), learning_rate=LR))
    tx, ty = opforge.Tensor(x), opforge.Tensor(y)
    params = net.trainable_params()
    return (lambda: step(tx, ty)), (lambda: [p.asnumpy() for p in params])


def numpy_step(np, weights, x, y):
    w1, b1, w2, b2 = (w.copy() for w in weights)
    rows = np.arange(BATCH)

    def step():
        nonlocal w1, b1, w2, b2  # updated in place
        h = x @ w1.T + b1
        a = np.maximum(h, 0)
        logits = a @ w2.T + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) - shifted[rows, y])
        d_logits = e / s
        d_logits[rows, y] -= 1
        d_logits /= BATCH
        d_w2 = d_logits.T @ a
        d_b2 = d_logits.sum(axis=0)
        d_h = (d_logits @ w2) * (h > 0)
        d_w1 = d_h.T @ x
        d_b1 = d_h.sum(axis=0)
        w1 -= LR * d_w1
        b1 -= LR * d_b1
        w2 -= LR * d_w2
        b2 -= LR * d_b2
        return loss

    return step, (lambda: [w1, b1, w2, b2])


def torch_step(torch, weights, x, y):
    net = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, OUT))
    with torch.no_grad():
        for p, w in zip(net.parameters(), weights):
            p.copy_(torch.from_numpy(w))
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(net(tx), ty)
        loss.backward()
        opt.step()
        return loss

    return step, (lambda: [p.detach().numpy().copy() for p in net.parameters()])


def check_agreement(np, steps: dict) -> float:
    """Run each implementation's step three times from the same weights; the largest weight gap."""
    results = {}
    for lib, (step, weights) in steps.items():
        for _ in range(3):
            step()
        results[lib] = weights()
    ref = results["numpy"]
    gap = 0.0
    for ws in results.values():
        for a, b in zip(ws, ref):
            gap = max(gap, float(np.max(np.abs(np.asarray(a) - b))))
    if gap > 1e-4:
        raise AssertionError(f"the training steps disagree: max weight difference {gap:.3g}")
    return gap


def build_cases(np, opforge, torch):
    """(name, size label, {library: callable}) for each case, after checking the steps agree."""
    weights, x, y = _weights(np)
    fresh = lambda: {  # noqa: E731
        "opforge": opforge_step(np, opforge, weights, x, y),
        "numpy": numpy_step(np, weights, x, y),
        **({"torch": torch_step(torch, weights, x, y)} if torch is not None else {}),
    }
    gap = check_agreement(np, fresh())
    print(f"  check: 3 steps from the same weights agree to {gap:.2g} (max |weight difference|)", flush=True)
    cases = [("MLP train step", f"{BATCH}x{IN}->{HIDDEN}->{OUT}", {k: v[0] for k, v in fresh().items()})]

    relu = opforge.ops.ReLU()
    grad_fn = opforge.grad(lambda t: relu(t).sum())
    one = opforge.Tensor(np.array([0.5], np.float32))
    libs = {"opforge": lambda: grad_fn(one)}
    if torch is not None:
        tone = torch.tensor([0.5], requires_grad=True)
        libs["torch"] = lambda: torch.autograd.grad(torch.relu(tone).sum(), tone)
    cases.append(("grad relu(x).sum()", "1", libs))
    return cases


def run(threads: int) -> tuple:
    import numpy as np

    import opforge

    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    opforge.set_context(num_threads=threads)
    rows = []
    for name, size, libs in build_cases(np, opforge, torch):
        times = {lib: bench_ops.measure(fn) for lib, fn in libs.items()}
        rows.append((name, size, times))
        shown = "  ".join(f"{k} {bench_ops._fmt_us(v)} us" for k, v in times.items())
        print(f"  {name:<20} {size:>16}: {shown}", flush=True)
    versions = {"numpy": np.__version__, "opforge": opforge.__version__}
    if torch is not None:
        versions["torch"] = torch.__version__
    return rows, versions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    bench_ops._set_threads(args.threads)
    rows, versions = run(args.threads)
    table = bench_ops.render(rows, versions, args.threads).replace("| op | size |", "| case | size |", 1)
    print()
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
