"""Run under ``mpiexec -n N``: every sharding rule in the registry, checked against the operator run whole.

Generated from ``sharding_rules.names()`` and the operator sweep's records (tests/op_db.py): for each operator
with a rule and a record, each variant's first samples for its float32 kernel, and for each sample a set of
strategies (each tensor input split along one of its dims that the ranks divide, or whole; every combination, up
to a bound). Each strategy is run as ``prim.shard(strategy)`` inside a SEMI_AUTO_PARALLEL network on whole inputs
(``full_batch``), its outputs gathered whole and compared with the operator called in one process; where the
operator has a bprop, the gradients of ``sum(output_0 * cotangent)`` with respect to its inputs too (the backward
pass running sharded, its operators by their rules); and the operator again without a strategy, its first input
arriving split as the strategy says (the rule's propagation). A rule may refuse a strategy (a ValueError naming
the operator, on every rank alike); on 2 ranks each operator must take at least one. A taken strategy must have
split an input (the interpreter's Slice count), and no operator may have run replicated. Prints "SWEEP-OK
<operators> <strategies run> <refused> <propagated> <gradients>" or "SWEEP-FAIL ..." lines and exits 1.

    mpiexec -n 2 python tests/mpi_scripts/rule_sweep.py [--op Name ...] [--verbose]
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import sys
import traceback
from typing import Callable, NamedTuple, Optional

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/: the sweep's records

from op_db import OP_DB  # noqa: E402

import opforge  # noqa: E402
from opforge import nn, ops  # noqa: E402
from opforge.bprop import bprop_getters  # noqa: E402
from opforge.communication import get_group_size, get_rank, init  # noqa: E402
from opforge.dispatch.sharding import (  # noqa: E402
    gather_whole,
    optimizer_updates,
    redistribution_counts,
    replicated_calls,
    sharding_rules,
)
from opforge.dtype import float_type  # noqa: E402
from opforge.kernels import kernels_for  # noqa: E402
from opforge.primitives import Primitive  # noqa: E402
from opforge.primitives.sharding_ops import relayout  # noqa: E402
from opforge.tensor import Parameter, Tensor  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--op", nargs="*", help="only these operators")
parser.add_argument("--samples", type=int, default=2, help="samples per variant of an operator")
parser.add_argument("--strategies", type=int, default=24, help="strategies per sample at most")
parser.add_argument("--verbose", action="store_true", help="print each refusal")
args = parser.parse_args()

init()
rank, size = get_rank(), get_group_size()
# The in-place updates (Assign, the optimizers') follow their Parameter's layout, not a strategy (the training
# scripts check them); Dropout draws each rank's mask for its block, not the whole tensor's (the same
# distribution, other values)
SKIP = {"Assign", "AssignSub", "Dropout", *optimizer_updates}


def float32_kernel(name):
    """The kernel with the most float32 inputs (the others' dtypes: indices, masks, integer operators)."""
    entries = [e for e in kernels_for(name, "CPU") if e.attr.inputs]
    return max(entries, key=lambda e: sum(d == opforge.float32 for d in e.attr.inputs), default=None)


def tensors(sample, dtypes, params=()):
    """The sample's arguments, fresh (an in-place operator writes its Parameters: at ``params`` positions)."""
    out, k = [], 0
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray):
            value = a.astype(dtypes[min(k, len(dtypes) - 1)].np_dtype)
            out.append(Parameter(value, name=f"p{i}") if i in params else Tensor(value))
            k += 1
        elif isinstance(a, (tuple, list)) and a and all(isinstance(t, np.ndarray) for t in a):  # Concat's
            out.append(type(a)(Tensor(t.astype(dtypes[min(k, len(dtypes) - 1)].np_dtype)) for t in a))
            k += 1
        else:
            out.append(a)
    return out


def flat_tensors(call_args) -> list:
    """The tensor inputs in the order a strategy names them (a tuple's one by one)."""
    out = []
    for a in call_args:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (tuple, list)) and a and all(isinstance(t, Tensor) for t in a):
            out += list(a)
    return out


def whole(value):
    if value is None:  # (an input without a gradient)
        return None
    if isinstance(value, (tuple, list)):
        return [whole(v) for v in value]
    return np.asarray(gather_whole(value).asnumpy())


class Form(tuple):
    """A strategy in one of MindSpore's own forms (not one tuple per input's dims): it may split an output
    only, and it says nothing of the first input's split alone."""


# Strategies in MindSpore's own forms where they are not one tuple per input's dims: OneHot's is its output's
# (the depth axis too)
MINDSPORE_FORMS = {
    "OneHot": lambda shapes: [
        ((size,) + (1,) * len(shapes[0]), (), ()),
        ((1,) * len(shapes[0]) + (size,), (), ()),
    ],
}


def _batch_split(prim, shapes) -> list:
    """A recurrent layer's data split along the batch ([seq, batch, ...] dim 1, [batch, ...] dim 0), its weights
    whole: the strategy such a layer takes, which single-dim combinations seldom hit."""
    names = [s.name for s in prim._signature()]
    out = []
    for name, shape in zip(names, shapes):
        if name in ("w_ih", "w_hh", "bias", "b_ih", "b_hh"):
            out.append((1,) * len(shape))
        else:
            out.append((1, size, 1) if len(shape) == 3 else (size,) + (1,) * (len(shape) - 1))
    return [tuple(out)]


def _slice_split(prim, shapes) -> list:
    """A scatter's input and updates split alike along a dim of the slices it writes (those after the K
    addressed dims), the indices whole."""
    x, indices, updates = shapes
    k = 1 if prim.row_indices else (indices[-1] if indices else 0)
    rows = len(updates) - (len(x) - k)
    out = []
    for j in range(k, len(x)):
        if x[j] and x[j] % size == 0:
            split_x = tuple(size if i == j else 1 for i in range(len(x)))
            split_u = tuple(size if i == rows + j - k else 1 for i in range(len(updates)))
            out.append((split_x, (1,) * len(indices), split_u))
    return out


def _spatial_split(prim, shapes) -> list:
    """A convolution's or a pooling's H, W or both split (its data inputs alike, a filter whole): the halo
    exchanges."""
    splits = [(1, 1, size, 1), (1, 1, 1, size)] + ([(1, 1, 2, size // 2)] if size % 2 == 0 and size > 2 else [])
    data = 1 if type(prim).__name__.startswith("Conv2DBackpropInput") else len(shapes)
    data = 1 if type(prim).__name__ == "Conv2D" else data
    return [tuple(s if i < data else (1, 1, 1, 1) for i in range(len(shapes))) for s in splits]


# Strategies to try first where the generated ones seldom fit the operator
_WINDOWED = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "AvgPool", "MaxPoolGrad")
_WINDOWED += ("AvgPoolGrad", "MaxPoolGradGrad")
FIRST = {name: _spatial_split for name in _WINDOWED}
FIRST.update({name: _batch_split for name in ("LSTMLayer", "GRULayer", "RNNLayer")})
FIRST.update({f"{name}Grad": _batch_split for name in ("LSTMLayer", "GRULayer", "RNNLayer")})
FIRST.update({name: _slice_split for name in sharding_rules.names() if "Scatter" in name and name in OP_DB})


def differentiable(name, sample, first_out, call_args) -> bool:
    """Whether the sweep compares gradients: a bprop, a float first output, float inputs, no keywords."""
    if name not in bprop_getters or sample.kwargs or first_out.dtype.kind != "f" or not first_out.size:
        return False
    return any(a.dtype in float_type for a in call_args if isinstance(a, Tensor))


def strategies(call_args, rng):
    """Each tensor input split along one dim the ranks divide (or whole), every combination, shuffled and bounded;
    first, for each dim of the first input, that dim split in every input having it at the same size (the
    strategies operators reading their inputs alike take)."""
    shapes = [a.shape for a in flat_tensors(call_args)]
    choices = []
    for shape in shapes:
        options = [tuple(1 for _ in shape)]  # (a dim of size 0 is not split: there is nothing to cut)
        options += [
            tuple(size if j == d else 1 for j in range(len(shape))) for d, n in enumerate(shape) if n and n % size == 0
        ]
        choices.append(options)
    combos = [c for c in itertools.product(*choices) if any(any(s > 1 for s in st) for st in c)]
    rng.shuffle(combos)
    aligned = []
    for d, n in enumerate(shapes[0] if shapes else ()):
        if n and n % size == 0:
            aligned.append(
                tuple(tuple(size if j == d and len(s) > d and s[d] == n else 1 for j in range(len(s))) for s in shapes)
            )
    return list(dict.fromkeys(aligned + combos))[: args.strategies]


class One(nn.Cell):
    def __init__(self, prim):
        super().__init__()
        self.prim = prim

    def construct(self, *xs, **kwargs):
        return self.prim(*xs, **kwargs)


class Loss(nn.Cell):
    """``sum(output_0 * cotangent)``: its gradients are the operator's vector-Jacobian product."""

    def __init__(self, op, cotangent):
        super().__init__()
        self.op, self.cotangent = op, cotangent

    def construct(self, *xs):
        out = self.op(*xs)
        out = out[0] if isinstance(out, (tuple, list)) else out
        return (out * self.cotangent).sum()


class Gradients(nn.Cell):
    """The gradients of ``Loss`` with respect to every input, taken inside the outermost cell (the backward
    pass runs sharded, as in a training step)."""

    def __init__(self, op, cotangent):
        super().__init__()
        self.loss = Loss(op, cotangent)
        self.grad = ops.GradOperation(get_all=True)

    def construct(self, *xs):
        return self.grad(self.loss)(*xs)


def gradients(op, call_args, cotangent):
    """The gradients of the float tensor inputs (None where the operator has no bprop or its first output is
    not a float)."""
    grads = Gradients(op, Tensor(cotangent))(*call_args)
    floats = [i for i, a in enumerate(a for a in call_args if isinstance(a, Tensor)) if a.dtype in float_type]
    return [whole(grads[i]) for i in floats]


class Propagated(nn.Cell):
    """The operator without a strategy, its first input already split as its strategy entry says (laid out by a
    Cast carrying it, as an earlier operator's output would be), the others whole, as a network's weights and
    states reach it: the rule's propagation."""

    def __init__(self, prim, split):
        super().__init__()
        self.prim, self.split = prim, split

    def construct(self, *xs, **kwargs):
        k = next(i for i, a in enumerate(xs) if isinstance(a, (Tensor, tuple, list)))
        first = xs[k]
        if isinstance(first, Tensor):
            first = relayout(first, self.split, "rule_sweep")
        else:  # a tuple of tensors (Concat's): its first one
            first = type(first)([relayout(first[0], self.split, "rule_sweep"), *first[1:]])
        return self.prim(*xs[:k], first, *xs[k + 1 :], **kwargs)


def close(got, want, name):
    if got is None or want is None:
        return None if got is None and want is None else f"{got!r} against {want!r}"
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if got.dtype.kind in "fc":  # (sums in other orders: relative to the output's largest value)
        scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)))
        ok = np.allclose(got, want, rtol=2e-5, atol=2e-5 * scale, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    return None if ok else f"max difference {np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))}"


class Case(NamedTuple):
    """One sample of one operator variant: its reference outputs and gradients, and the strategies to try."""

    name: str
    factory: Callable
    sample: object
    in_dtypes: tuple
    params: tuple
    want: list
    strategies: list
    grads: Optional[tuple]  # (cotangent, the gradients of one process), or None

    def args(self):
        return tensors(self.sample, self.in_dtypes, self.params)


def cases_of(name) -> list:
    """The cases of operator ``name``: each variant's first ``--samples`` samples that the ranks can split."""
    record, entry = OP_DB[name], float32_kernel(name)
    if entry is None:
        return []
    in_dtypes, out, seen = tuple(entry.attr.input_dtypes_for(record.nin)), [], set()
    for factory in record.variants.values():
        if isinstance(getattr(factory(), "index", 0), str):  # a record's wrapper reading a Parameter it wrote
            continue
        factory = unwrapped(factory)
        prim = factory()
        key = (type(prim).__name__, repr(sorted(getattr(prim, "attrs", {}).items())))
        if key in seen:  # (variants picking another output of the same call: every output is compared)
            continue
        seen.add(key)
        rng = np.random.default_rng(0)
        for sample in record.sample_inputs(record, factory(), in_dtypes, entry.attr.outputs, rng):
            if sum(c.factory is factory for c in out) == SAMPLES.get(name, args.samples):
                break
            case = _case(name, record, factory, sample, in_dtypes, rng)
            if case is not None:
                out.append(case)
    return out


# Operators whose first samples are too small to split every way: more of them (a convolution's 12 x 12 plane,
# a pooling's 28 x 28)
SAMPLES = {name: 4 if name.startswith("Conv") else 3 for name in _WINDOWED}


def unwrapped(factory):
    """A record's variant calling a primitive and keeping one output (op_db's ``_Call``): the primitive itself,
    whose outputs are all compared."""
    inner = factory().__dict__.get("prim")
    return (lambda: factory().__dict__["prim"]) if isinstance(inner, Primitive) else factory


def _case(name, record, factory, sample, in_dtypes, rng) -> Optional[Case]:
    call_args = tensors(sample, in_dtypes)
    first = flat_tensors(call_args)[0].shape if flat_tensors(call_args) else ()
    if not any(n and n % size == 0 for n in first):  # the data input cannot be split: another sample
        return None
    combos = strategies(call_args, rng)
    shapes = [a.shape for a in flat_tensors(call_args)]
    if name in FIRST:  # (a sample the operator's own strategies do not fit: another one)
        first = FIRST[name](factory(), shapes)
        if not first:
            return None
        combos = first + combos
    if name in MINDSPORE_FORMS and combos:
        combos = [Form(f) for f in MINDSPORE_FORMS[name](shapes)] + combos
    if not combos or any(0 in t.shape for t in flat_tensors(call_args)):  # nothing to split: no case
        return None
    call_args = tensors(sample, in_dtypes, record.params)
    try:
        want = factory()(*call_args, **sample.kwargs)
    except Exception:  # noqa: BLE001 - a sample meant to raise: not a sharding case
        return None
    want = [np.asarray(w.asnumpy()) for w in want] if isinstance(want, (tuple, list)) else [want.asnumpy()]
    grads = None
    if differentiable(name, sample, want[0], tensors(sample, in_dtypes, record.params)):
        cotangent = rng.standard_normal(want[0].shape).astype(want[0].dtype)
        try:
            grads = (cotangent, gradients(factory(), tensors(sample, in_dtypes, record.params), cotangent))
        except Exception:  # noqa: BLE001 - a bprop that takes no such call: no gradient case
            grads = None
    return Case(name, factory, sample, in_dtypes, record.params, want, combos, grads)


class Report:
    def __init__(self):
        self.failures, self.accepted = [], {}
        self.run = self.refused = self.propagated = self.differentiated = 0

    def compare(self, case, what: str, got: list, want: list) -> None:
        for k, (g, w) in enumerate(zip(got, want)):
            problem = close(g, w, case.name)
            if problem:
                self.failures.append(f"{case.name} {what} {case.sample.desc} {k}: {problem}")


def outputs(out) -> list:
    return whole(out) if isinstance(out, (tuple, list)) else [whole(out)]


def check(case: Case, strategy, report: Report) -> None:
    """The sharded call, its gradients and its propagation, against one process's."""
    prim = case.factory()
    try:
        prim.shard(strategy)
        out = One(prim)(*case.args(), **case.sample.kwargs)
    except ValueError as e:  # a strategy the rule cannot follow: refused, naming the operator
        if case.name not in str(e):
            report.failures.append(f"{case.name} {strategy}: a ValueError not naming the operator: {e}")
        if args.verbose and rank == 0:
            print("refused", case.name, strategy, case.sample.desc, e, flush=True)
        report.refused += 1
        return
    except Exception as e:  # noqa: BLE001 - reported
        if args.verbose and rank == 0:
            traceback.print_exc()
        report.failures.append(f"{case.name} {strategy} {case.sample.desc}: {type(e).__name__}: {e}")
        return
    report.run += 1
    if args.verbose and rank == 0:
        print("ran", case.name, strategy, case.sample.desc, flush=True)
    report.accepted[case.name] = report.accepted.get(case.name, 0) + 1
    if not redistribution_counts(reset=True).get("Slice") and not isinstance(strategy, Form):  # inputs cut
        report.failures.append(f"{case.name} {strategy} {case.sample.desc}: no input was split")
    report.compare(case, f"{strategy} output", outputs(out), case.want)
    if case.grads is not None:
        check_gradients(case, strategy, report)
    written = isinstance(flat_tensors(case.args())[0], Parameter)  # (written in place: no Cast can lay it out)
    if not all(c == 1 for c in strategy[0]) and not isinstance(strategy, Form) and not written:
        check_propagation(case, tuple(strategy[0]), report)


def check_gradients(case: Case, strategy, report: Report) -> None:
    """The backward pass of the sharded call (the bprop's operators by their rules)."""
    cotangent, want = case.grads
    op = case.factory()
    try:
        op.shard(strategy)
        got = gradients(op, case.args(), cotangent)
    except Exception as e:  # noqa: BLE001 - reported
        report.failures.append(f"{case.name} gradients {strategy} {case.sample.desc}: {type(e).__name__}: {e}")
        return
    report.differentiated += 1
    report.compare(case, f"gradients {strategy} input", got, want)


def check_propagation(case: Case, split: tuple, report: Report) -> None:
    """The first input's split reaching the operator, which has no strategy: the rule must take any layout."""
    try:
        out = Propagated(case.factory(), split)(*case.args(), **case.sample.kwargs)
    except Exception as e:  # noqa: BLE001 - reported
        report.failures.append(f"{case.name} propagating {split} {case.sample.desc}: {type(e).__name__}: {e}")
        return
    report.propagated += 1
    report.compare(case, f"propagating {split} output", outputs(out), case.want)


def main() -> int:
    names = [n for n in sharding_rules.names() if n not in SKIP and n in OP_DB and (not args.op or n in args.op)]
    cases = [case for name in names for case in cases_of(name)]
    opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    redistribution_counts(reset=True)
    report = Report()
    for case in cases:
        for strategy in case.strategies:
            check(case, strategy, report)
    failures = report.failures + [f"{n}: ran replicated" for n in replicated_calls()]
    if size == 2:  # (on more ranks a record's shapes may leave no valid strategy: LayerNorm's rows of 3)
        failures += [f"{n}: no strategy taken" for n in sorted({c.name for c in cases} - set(report.accepted))]
    if rank == 0:
        for f in failures:
            print("SWEEP-FAIL", f, flush=True)
        if not failures:
            counts = (len(report.accepted), report.run, report.refused, report.propagated, report.differentiated)
            print("SWEEP-OK", *counts, flush=True)
    return 1 if failures else 0


sys.exit(main())
