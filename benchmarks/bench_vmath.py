"""Every float32 transcendental operator on 1M elements, 1 thread, against NumPy and PyTorch.

    python benchmarks/bench_vmath.py                    # every case, 7 rounds
    python benchmarks/bench_vmath.py --op Sin --op Cos  # some cases
    python benchmarks/bench_vmath.py --rounds 11 --markdown out.md

The libraries are timed interleaved: each round times every case with opforge, NumPy and PyTorch one
after the other, so that load from other processes on a shared machine falls on all three alike; the
table gives the median time per call over the rounds and the ratios of the medians (opforge's time
divided by the other's; the goal is at most 1.5). NumPy has no Erf, Erfc or Sigmoid: SciPy's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy, OpenBLAS or PyTorch start their thread pools

N = 1_000_000
GOAL = 1.5


def _np_cases(np, special, a, unit, pos, ge1, expo):
    """``name: (input(s), NumPy function or None)``; inputs cover each function's domain."""

    def gelu(v):
        return 0.5 * v * (1 + np.tanh(np.float32(0.7978845608028654) * (v + np.float32(0.044715) * v * v * v)))

    def selu(v):
        return np.float32(1.0507009873554805) * np.where(v > 0, v, np.float32(1.6732632423543772) * np.expm1(v))

    def mish(v):
        return v * np.tanh(np.logaddexp(np.float32(0), v))

    return {
        "Exp": ((a,), np.exp),
        "Expm1": ((a,), np.expm1),
        "Log": ((pos,), np.log),
        "Log1p": ((pos,), np.log1p),
        "Sqrt": ((pos,), np.sqrt),
        "Rsqrt": ((pos,), lambda v: np.float32(1) / np.sqrt(v)),
        "Tanh": ((a,), np.tanh),
        "Sigmoid": ((a,), special.expit),
        "Erf": ((a,), special.erf),
        "Erfc": ((a,), special.erfc),
        "GeLU": ((a,), gelu),
        "Softplus": ((a,), lambda v: np.logaddexp(np.float32(0), v)),
        "Elu": ((a,), lambda v: np.where(v > 0, v, np.expm1(v))),
        "SeLU": ((a,), selu),
        "Mish": ((a,), mish),
        "Softsign": ((a,), lambda v: v / (1 + np.abs(v))),
        "Sin": ((a,), np.sin),
        "Cos": ((a,), np.cos),
        "Tan": ((a,), np.tan),
        "Sinh": ((a,), np.sinh),
        "Cosh": ((a,), np.cosh),
        "Asin": ((unit,), np.arcsin),
        "ACos": ((unit,), np.arccos),
        "Atan": ((a,), np.arctan),
        "Asinh": ((a,), np.arcsinh),
        "Acosh": ((ge1,), np.arccosh),
        "Atanh": ((unit,), np.arctanh),
        "Pow": ((pos, expo), np.power),
        "Atan2": ((a, expo), np.arctan2),
    }


def _torch_fn(torch, name):
    f = torch.nn.functional
    special = {
        "Rsqrt": torch.rsqrt,
        "GeLU": lambda t: f.gelu(t, approximate="tanh"),
        "Softplus": f.softplus,
        "Elu": f.elu,
        "SeLU": f.selu,
        "Mish": f.mish,
        "Softsign": f.softsign,
        "ACos": torch.acos,
    }
    return special.get(name) or getattr(torch, name.lower())


def build(names):
    import numpy as np
    import torch
    from scipy import special

    import opforge
    from opforge import ops

    rng = np.random.default_rng(0)
    a = (rng.standard_normal(N) * 3).astype(np.float32)
    unit = rng.uniform(-1, 1, N).astype(np.float32)
    pos = np.abs(a) + np.float32(1e-3)
    ge1 = pos + np.float32(1)
    expo = rng.standard_normal(N).astype(np.float32)
    cases = []
    for name, (inputs, np_fn) in _np_cases(np, special, a, unit, pos, ge1, expo).items():
        if names and name not in names:
            continue
        prim = getattr(ops, name)()
        xs = [opforge.Tensor(v) for v in inputs]
        ts = [torch.from_numpy(v) for v in inputs]
        tfn = _torch_fn(torch, name)
        libs = {
            "opforge": lambda p=prim, xs=xs: p(*xs),
            "numpy": lambda g=np_fn, vs=inputs: g(*vs),
            "torch": lambda g=tfn, ts=ts: g(*ts),
        }
        cases.append((name, libs))
    return cases


def _batch_time(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def run(cases, rounds, min_time=0.02):
    """``{(case, library): median seconds per call}``, timed interleaved over ``rounds``."""
    numbers = {}
    for name, libs in cases:
        for lib, fn in libs.items():
            fn()  # warm up
            t = _batch_time(fn, 1)
            numbers[name, lib] = max(1, int(min_time / max(t, 1e-9)))
    samples = {key: [] for key in numbers}
    for _ in range(rounds):
        for name, libs in cases:
            for lib, fn in libs.items():
                samples[name, lib].append(_batch_time(fn, numbers[name, lib]))
    return {key: statistics.median(v) for key, v in samples.items()}


def render(cases, medians):
    lines = [
        "| op | opforge (us) | numpy (us) | torch (us) | opforge/numpy | opforge/torch | goal |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, _ in cases:
        t = {lib: medians[name, lib] for lib in ("opforge", "numpy", "torch")}
        rn, rt = t["opforge"] / t["numpy"], t["opforge"] / t["torch"]
        ok = "ok" if max(rn, rt) <= GOAL else "MISSED"
        us = [f"{t[lib] * 1e6:,.0f}" for lib in ("opforge", "numpy", "torch")]
        lines.append(f"| {name} | {' | '.join(us)} | {rn:.2f}x | {rt:.2f}x | {ok} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", action="append", help="one case (repeatable); default: every case")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    import torch

    import opforge

    torch.set_num_threads(1)
    opforge.set_context(num_threads=1)
    cases = build(set(args.op or ()))
    table = render(cases, run(cases, args.rounds))
    header = f"1 thread, {N:,} float32, median of {args.rounds} interleaved rounds; torch {torch.__version__}"
    print(header)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(header + "\n\n" + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
