"""The bad-input campaign: every primitive, every dtype it registers, called with bad input.

Calls are built from the operator database (``tests/op_db.py``): a *baseline* is one small, valid
sample of one kernel's dtypes, and a *kind* of bad input changes it (wrong ranks, shapes that do
not broadcast, zero-size, 0-d, non-contiguous, negative-stride and unaligned arrays, NaN/Inf, huge
dims, wrong constant types, NumPy scalars for Python numbers, wrong constructor arguments,
Tensors where Parameters are written, non-tensors in tensor slots, wrong call arity).

Each call must either succeed or raise a *clean* error. Success: every output is a Tensor, inputs
that are only read are unchanged, and where the database has a NumPy reference the result matches
it (for inputs holding NaN/Inf: wherever the reference is finite; see ``_compare``). Inputs that
mean the same as the baseline (a strided view, a NumPy scalar for a Python number, ...) must
succeed. A clean error is a TypeError, ValueError, OverflowError or RuntimeError (opforge's
errors derive from these) whose message names the operator; never AttributeError, IndexError (but
opforge's IndexOutOfRangeError, a ValueError too), KeyError, MemoryError, ZeroDivisionError or
AssertionError. The calls of each operator run under a
faulthandler timer (``hang_guard``), so a hang, even in C++ holding the GIL, ends the process with
every thread's traceback instead of stalling the run.

Known problems whose fix belongs to the call path (``Primitive._call`` and its plans, signatures,
Tensor, launchers) are listed in ``CALL_PATH_ISSUES``: a bad outcome of a case tagged with one of
them, of the form the issue describes, counts as *known*, not bad; ``test_bad_input_campaign.py``
keeps one strict xfail test per issue.

``python -m tests.fuzz_campaign --examples N`` runs the campaign and prints the counts; ``--device GPU`` runs
it on the GPU's kernels (on the tests' host emulation where there is no GPU).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import faulthandler
import functools
import inspect
import math
import os
import random
import sys
import time
import traceback
import warnings
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # run as ``python -m tests.fuzz_campaign``: the op database sits beside this file
    sys.path.insert(0, _HERE)

from op_db import OP_DB, upcast  # noqa: E402

from opforge import Parameter, Tensor, context  # noqa: E402
from opforge import dtype as mstype  # noqa: E402
from opforge.dispatch import signature as sig  # noqa: E402
from opforge.dispatch.binding import written_positions  # noqa: E402
from opforge.errors import IndexOutOfRangeError, KernelError  # noqa: E402
from opforge.kernels import all_kernels  # noqa: E402
from opforge.primitives import primitive_classes  # noqa: E402

SMALL = 64  # elements at most in a baseline's arrays: the campaign stays fast
BASELINES_PER_KERNEL = 3  # samples kept per (kernel, variant)
# One operator's calls taking longer is a hang: faulthandler dumps the stacks and exits. (Arming the
# timer costs about a millisecond, as much as a call: it is armed per operator, not per call.) A sanitized run
# compiles each emulated module instrumented first, minutes each: OPF_CAMPAIGN_HANG_S gives it longer.
HANG_TIMEOUT_S = float(os.environ.get("OPF_CAMPAIGN_HANG_S", 300.0))

CLEAN_TYPES = (TypeError, ValueError, OverflowError, RuntimeError, KernelError)
BAD_TYPES = (AttributeError, IndexError, KeyError, MemoryError, ZeroDivisionError, AssertionError, RecursionError)


# ---------------------------------------------------------------------------------------------
# Operators, kernels and baselines


def library_ops() -> list:
    """The operators opforge itself defines (tests and users may add others at run time; ``ops.Custom`` is
    not one: each instance is an operator of its own)."""
    return sorted(name for name, cls in primitive_classes().items() if cls.__module__.startswith("opforge.primitives."))


# Send and Receive run only as a pair (a message to this rank itself, tests/op_db_comm.py): the campaign's
# single calls do not apply; their bad inputs are their records' error inputs and tests/test_communication.py.
PAIRED_OPS = ("Send", "Receive")


def campaign_ops() -> list:
    """The operators the campaign calls: the library's, but the ones that run only as a pair."""
    return [op for op in library_ops() if op not in PAIRED_OPS]


def _is_library_kernel(entry) -> bool:
    if entry.kind == "cpp":
        return entry.source == "builtin"
    if entry.kind == "cuda":  # opforge's own sources by name; a user's by path
        return "/" not in entry.source
    return entry.source.startswith("python:opforge.")


def backend() -> str:
    """The backend the campaign calls: the context's ``device_target``, where its Tensors are made."""
    return context.get_context("device_target")


@contextlib.contextmanager
def on_device(device):
    """Run the campaign's calls on ``device`` (None: where they are)."""
    before = backend()
    context.set_context(device_target=device or before)
    try:
        yield
    finally:
        context.set_context(device_target=before)


def kernels_of(op: str) -> tuple:
    return _kernels_of(op, backend())


@functools.cache
def _kernels_of(op: str, backend: str) -> tuple:
    entries = [e for e in all_kernels() if e.backend == backend and e.op_name == op and _is_library_kernel(e)]
    return tuple(sorted(entries, key=lambda e: str(e.attr)))


@dataclass
class Baseline:
    op: str
    entry: object  # KernelEntry
    variant: str
    args: tuple
    kwargs: dict
    desc: str

    @property
    def record(self):
        return OP_DB[self.op]

    @property
    def cls(self):
        return primitive_classes()[self.op]

    def variant_obj(self):
        """The record's callable for this variant (a primitive, or a wrapper picking one output)."""
        return self.record.variants[self.variant]()

    def prim(self):
        return _unwrap(self.variant_obj())


def _unwrap(obj):
    """The primitive inside a database wrapper (``_Output``, ``_InPlace``), or the object itself."""
    return obj.__dict__.get("prim", obj)


def _small(sample) -> bool:
    arrays = [a for a in sample.args if isinstance(a, np.ndarray)] + [
        v for v in sample.kwargs.values() if isinstance(v, np.ndarray)
    ]
    arrays += [a for v in sample.args if _is_array_sequence(v) for a in v]
    if any(_is_array_sequence(v) and len(v) > 4 for v in sample.args):
        return False
    shapes = [v for v in sample.args if isinstance(v, (tuple, list))]
    return all(a.size <= SMALL for a in arrays) and all(math.prod(s) <= SMALL * 16 for s in shapes if _ints(s))


def _ints(values) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def baselines(op: str) -> tuple:
    """Small valid samples of every kernel of ``op`` on the campaign's backend (each variant of its record)."""
    return _baselines(op, backend())


@functools.cache
def _baselines(op: str, backend: str) -> tuple:
    record = OP_DB.get(op)
    if record is None:
        return ()
    out = []
    for entry in _kernels_of(op, backend):
        ins = tuple(entry.attr.input_dtypes_for(record.nin))
        for variant, factory in record.variants.items():
            rng = np.random.default_rng(zlib.crc32(f"{op}/{entry.attr}/{variant}".encode()))
            samples = [s for s in record.sample_inputs(record, factory(), ins, entry.attr.outputs, rng) if _small(s)]
            spread = sorted({round(k * (len(samples) - 1) / 2) for k in range(BASELINES_PER_KERNEL)})
            for s in [samples[k] for k in spread] if samples else []:
                out.append(Baseline(op, entry, variant, tuple(s.args), dict(s.kwargs), s.desc))
    return tuple(out)


def _signature_of(cls) -> tuple:
    return tuple(cls.__mindspore_signature__)


def _write_slots(cls) -> frozenset:
    return frozenset(i for i, s in enumerate(_signature_of(cls)) if s.rw == sig.sig_rw.RW_WRITE)


def _group_slots(cls) -> frozenset:
    return frozenset(i for i, s in enumerate(_signature_of(cls)) if s.dtype != sig.sig_dtype.T_EMPTY_DEFAULT_VALUE)


def _tensor_slots(bl: Baseline) -> list:
    return [i for i, a in enumerate(bl.args) if isinstance(a, np.ndarray)]


def _const_slots(bl: Baseline) -> list:
    return [i for i, a in enumerate(bl.args) if not isinstance(a, np.ndarray)]


def _input_names(bl: Baseline) -> list:
    signature = _signature_of(bl.cls)
    if signature:
        return [s.name for s in signature]
    return list(bl.prim().input_names or ())


# ---------------------------------------------------------------------------------------------
# How an argument reaches the call


@dataclass
class Raw:
    """Passed as it is (a NumPy array in a tensor slot, say), not wrapped in a Tensor."""

    value: object


@dataclass
class AsTensor:
    """Always a Tensor, also in a slot the baseline fills with a Parameter."""

    value: np.ndarray


@dataclass
class AsParameter:
    """Always a Parameter, also in a slot that is only read."""

    value: np.ndarray


def _materialise(arg, i: int, writes: frozenset):
    if isinstance(arg, Raw):
        return arg.value
    if isinstance(arg, AsTensor):
        return Tensor(arg.value)
    if isinstance(arg, AsParameter):
        return Parameter(arg.value, name=f"p{i}")
    if isinstance(arg, np.ndarray):
        return Parameter(arg, name=f"p{i}") if i in writes else Tensor(arg)
    if _is_array_sequence(arg):  # a variadic input (Concat's, AddN's): a tuple or list of Tensors
        return type(arg)(Tensor(a) for a in arg)
    return arg


def _is_array_sequence(arg) -> bool:
    return isinstance(arg, (tuple, list)) and len(arg) > 0 and all(isinstance(a, np.ndarray) for a in arg)


def _ref_value(arg):
    """What the NumPy reference sees for an argument."""
    if isinstance(arg, (Raw, AsTensor, AsParameter)):
        arg = arg.value
    if isinstance(arg, np.ndarray):
        return np.array(arg)  # a contiguous, aligned copy of the values
    if _is_array_sequence(arg):
        return type(arg)(np.array(a) for a in arg)
    return arg


# ---------------------------------------------------------------------------------------------
# Cases and outcomes


@dataclass
class Case:
    op: str
    kind: str
    desc: str
    run: Callable[[], object]  # makes the call(s); returns the problem (a str) or None
    must_succeed: bool = False  # the input means the same as a valid one
    issue: Optional[str] = None  # a known call-path issue this case may hit


@dataclass
class Outcome:
    status: str  # "ok" | "clean" | "bad" | "known"
    detail: str = ""
    issue: Optional[str] = None
    trace: str = ""


class WrongResult(Exception):
    """A call succeeded with a wrong result (or returned something that is not a Tensor)."""


def _is_clean(op: str, exc: BaseException) -> bool:
    # IndexOutOfRangeError: an IndexError by design (indexing's convention), and a ValueError.
    unclean = isinstance(exc, BAD_TYPES) and not isinstance(exc, IndexOutOfRangeError)
    return isinstance(exc, CLEAN_TYPES) and not unclean and f"'{op}'" in str(exc)


def _describe(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__module__}.{type(exc).__qualname__}: {text[:300]}"


@contextlib.contextmanager
def hang_guard(seconds: float = HANG_TIMEOUT_S):
    """Within the block, a hang (even in C++ code holding the GIL) dumps every thread's stack and ends
    the process after ``seconds``, instead of stalling the run."""
    # The process's own stderr: pytest may have replaced sys.stderr with an object without a file.
    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def run_case(case: Case, tolerate_known: bool = True) -> Outcome:
    """Run one case (under a ``hang_guard``) and classify what happened."""
    try:
        with np.errstate(all="ignore"):
            case.run()
    except WrongResult as exc:
        outcome = Outcome("bad", f"wrong result: {exc}")
        failure = exc
    except Exception as exc:  # noqa: BLE001 - classifying every exception is the point
        if not case.must_succeed and _is_clean(case.op, exc):
            return Outcome("clean", _describe(exc))
        why = "rejected an input that means the same as a valid one" if case.must_succeed else "unclean error"
        outcome = Outcome("bad", f"{why}: {_describe(exc)}")
        failure = exc
    else:
        return Outcome("ok")
    issue = CALL_PATH_ISSUES.get(case.issue)
    if tolerate_known and issue is not None and issue.matches(case, failure):
        return Outcome("known", outcome.detail, case.issue)
    outcome.trace = "".join(traceback.format_exception(type(failure), failure, failure.__traceback__))
    return outcome


# ---------------------------------------------------------------------------------------------
# Checking a result


def _outputs(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def _selected_output(variant_obj, result, call_args):
    """The output the record's reference describes (wrappers pick one output or Parameter)."""
    d = variant_obj.__dict__
    if "index" in d:
        return _outputs(result)[d["index"]]
    if "param" in d:
        return call_args[d["param"]]
    return result


def _check_structure(prim, result, call_args, read_before: dict) -> None:
    for out in _outputs(result):
        if not isinstance(out, Tensor):
            raise WrongResult(f"an output is {type(out).__name__}, not a Tensor")
    for o, src in zip(range(len(_outputs(result))), written_positions(prim._signature())):
        if _outputs(result)[o] is not call_args[src]:  # output i is the i-th written argument
            raise WrongResult(f"in-place output {o} is not the Parameter it writes")
    for i, data in read_before.items():
        if call_args[i].asnumpy().tobytes() != data:
            raise WrongResult(f"input {i}, which is only read, was modified")


def _compare(
    bl: Baseline, variant_obj, ref_args, kwargs, actual: Tensor, finite_only: bool, signed_zeros: bool, index=None
):
    """Compare with the record's NumPy reference, when it has one for these arguments (output ``index``
    of a reference that gives several)."""
    record = bl.record
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # references meet empty means and NaN on purpose
            expected = record.ref(variant_obj, *[upcast(a) for a in ref_args], **kwargs)
            expected = np.asarray(expected if index is None else tuple(expected)[index])
            magnitude = None
            if record.magnitude is not None:
                magnitude = np.asarray(record.magnitude(variant_obj, *[upcast(a) for a in ref_args], **kwargs))
    except Exception:  # noqa: BLE001 - the reference does not cover these arguments: nothing to compare
        return
    dtype = actual.dtype
    if dtype.kind == "c" or expected.dtype == object:
        return
    with np.errstate(all="ignore"):
        expected = expected.astype(dtype.np_dtype)
    got = actual.asnumpy()
    if got.shape != expected.shape:
        raise WrongResult(f"shape {list(got.shape)}, the reference gives {list(expected.shape)}")
    if dtype.kind in "biu" or (record.exact and not finite_only):
        if not np.array_equal(got, expected, equal_nan=dtype.kind == "f"):
            raise WrongResult(f"expected {expected.ravel()[:8]!r}, got {got.ravel()[:8]!r}")
        if dtype.kind == "f" and signed_zeros:
            _check_signed_zeros(got, expected)
        return
    a64, e64 = got.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(e64)
    if finite_only:
        if np.isfinite(a64[~finite]).any():
            raise WrongResult(f"finite where the reference is not: expected {e64.ravel()[:8]}, got {a64.ravel()[:8]}")
    else:
        if not np.array_equal(np.isnan(a64), np.isnan(e64)):
            raise WrongResult(f"NaNs differ: expected {e64.ravel()[:8]}, got {a64.ravel()[:8]}")
        inf = ~finite & ~np.isnan(e64)
        if not np.array_equal(a64[inf], e64[inf]):
            raise WrongResult(f"infinities differ: expected {e64.ravel()[:8]}, got {a64.ravel()[:8]}")
    rtol, atol = record.tol(dtype)
    bound = atol + rtol * np.abs(e64)
    if magnitude is not None:
        bound = bound + record.mag_tol(dtype) * np.abs(magnitude.astype(np.float64))
    err = np.abs(a64 - e64)
    bad = finite & ~(err <= bound)
    if bad.any():
        raise WrongResult(f"{int(bad.sum())} values out of tolerance: expected {e64[bad][:5]}, got {a64[bad][:5]}")
    if signed_zeros:
        _check_signed_zeros(got, expected)


def _check_signed_zeros(got, expected) -> None:
    zero = expected.astype(np.float64) == 0
    if not np.array_equal(np.signbit(got.astype(np.float64))[zero], np.signbit(expected.astype(np.float64))[zero]):
        raise WrongResult(f"signs of zeros differ: expected {expected.ravel()[:8]!r}, got {got.ravel()[:8]!r}")


def _call(bl: Baseline, args, kwargs=None, prim=None, reference=True, finite_only=False, signed_zeros=False):
    """A ``run`` function: call ``prim`` (default: the baseline's) with ``args`` and ``kwargs`` (markers
    such as ``Raw`` or arrays, materialised at the call), then check the result."""
    kwargs = dict(bl.kwargs if kwargs is None else kwargs)
    args = tuple(args)

    def run():
        variant_obj = bl.variant_obj() if prim is None else prim
        p = _unwrap(variant_obj)
        writes = _write_slots(type(p))
        names = _input_names(bl)
        call_args = [_materialise(a, i, writes) for i, a in enumerate(args)]
        call_kwargs = {k: _materialise(v, names.index(k) if k in names else -1, writes) for k, v in kwargs.items()}
        # Every argument by position, keywords included, for the checks and the reference.
        by_position = call_args + [call_kwargs[n] for n in names[len(args) :] if n in call_kwargs]
        markers = list(args) + [kwargs[n] for n in names[len(args) :] if n in kwargs]
        read_before = {
            i: t.asnumpy().tobytes() for i, t in enumerate(by_position) if isinstance(t, Tensor) and i not in writes
        }
        result = p(*call_args, **call_kwargs)
        _check_structure(p, result, by_position, read_before)
        if reference:
            out = _selected_output(variant_obj, result, by_position)
            extra = {k: v for k, v in kwargs.items() if k not in names}
            ref_args = [_ref_value(a) for a in markers]
            if isinstance(out, tuple):  # several outputs (Split, TopK): each against its reference
                for k, o in enumerate(out):
                    _compare(bl, variant_obj, ref_args, extra, o, finite_only, signed_zeros, index=k)
            else:
                _compare(bl, variant_obj, ref_args, extra, out, finite_only, signed_zeros)

    return run


# ---------------------------------------------------------------------------------------------
# Array layouts


def non_contiguous(a: np.ndarray) -> np.ndarray:
    """The same values in a strided view."""
    holder = np.zeros(a.shape + (2,), a.dtype)
    holder[..., 0] = a
    return holder[..., 0]


def unaligned(a: np.ndarray) -> np.ndarray:
    """The same values in a C-contiguous view at byte offset 1 of a uint8 buffer (misaligned for
    every dtype wider than a byte)."""
    buffer = np.zeros(a.nbytes + 1, np.uint8)
    view = buffer[1:].view(a.dtype).reshape(a.shape)
    view[...] = a
    return view


def negative_stride(a: np.ndarray, axis: int) -> np.ndarray:
    """The values reversed along ``axis``, as a negative-stride view."""
    if a.ndim == 0:
        return a
    return np.flip(a, axis=axis % a.ndim)


SPECIALS = (math.nan, math.inf, -math.inf, -0.0)


def with_specials(a: np.ndarray, pick) -> np.ndarray:
    """A copy of a float array with NaN / Inf / -0.0 at some positions."""
    out = np.array(a)
    if out.size == 0 or mstype.nptype_to_dtype(out.dtype).kind != "f":
        return out
    flat = out.reshape(-1)
    for _ in range(pick.integer(1, min(4, flat.size))):
        flat[pick.integer(0, flat.size - 1)] = pick.choice(SPECIALS)
    return out


# ---------------------------------------------------------------------------------------------
# Values


def _wrong_objects() -> list:
    return [
        "abc",
        None,
        [1.0, 2.0],
        [[1, 2], [3, 4]],
        (0.5,),
        {},
        {"a": 1},
        object(),
        b"x",
        1 + 2j,
        slice(1),
        Ellipsis,
        mstype.float32,
        np.float32,
        float,
        print,
        np.array([1, 2], np.int32),
        np.array("s"),
        np.array([object()], dtype=object),
    ]


WRONG_CONSTANTS = [1.5, -0.0, True, False, 0, -1, 7, 2**70, -(2**70), (), (1.5,), (True,), [0, 1], math.nan, math.inf]

# Every dim product is at least 2**57 elements, beyond any address space (even 5-level paging's 2**56
# bytes): an allocation of it fails even where memory is overcommitted, so it can never start to run.
HUGE_INTS = [2**57, 2**62, 2**63 - 1, 2**63, 2**64, -(2**63), -(2**57)]
HUGE_SHAPES = [(2**57,), (2**40, 2**40), (2**23, 2**23, 2**23), (2**62, 4), (2**63 - 1,), (2**64,), (3, 2**62)]

NP_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp)
NP_FLOATS = (np.float16, np.float32, np.float64)


def _numpy_scalar(value, pick):
    """``value`` (a Python bool, int or float, or a tuple of them) with NumPy scalars for its numbers."""
    if isinstance(value, (tuple, list)):
        return type(value)(_numpy_scalar(v, pick) for v in value)
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        fits = [t for t in NP_INTS if np.iinfo(t).min <= value <= np.iinfo(t).max]
        return pick.choice(fits)(value) if fits else value
    if isinstance(value, float):
        exact = [t for t in NP_FLOATS if float(t(value)) == value or math.isnan(value)]
        return pick.choice(exact)(value) if exact else value
    return value


def _has_number(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_has_number(v) for v in value)
    return isinstance(value, (bool, int, float))


# ---------------------------------------------------------------------------------------------
# Pickers: the same case builders run under hypothesis (draw) or from a seeded random.Random


class HypothesisPicker:
    def __init__(self, draw):
        self.draw = draw

    def choice(self, seq):
        seq = list(seq)
        return self.draw(st.sampled_from(seq)) if len(seq) > 1 else seq[0]

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))


class RandomPicker:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def choice(self, seq):
        seq = list(seq)
        return seq[self.rng.randrange(len(seq))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


# ---------------------------------------------------------------------------------------------
# Case builders: (pick, baseline) -> Case


def _replace(args, i, value) -> tuple:
    args = list(args)
    args[i] = value
    return tuple(args)


def build_valid(pick, bl):
    return Case(bl.op, "valid", bl.desc, _call(bl, bl.args), must_succeed=True)


def build_non_contiguous(pick, bl):
    slots = _tensor_slots(bl)
    i = pick.choice(slots)
    args = _replace(bl.args, i, non_contiguous(bl.args[i]))
    return Case(bl.op, "non_contiguous", f"{bl.desc}; arg {i} strided", _call(bl, args), must_succeed=True)


# Operators whose input must stay a symmetric matrix: a reversal of one matrix axis reverses both (P A P, with
# P the reversal, is as symmetric and as positive definite as A).
_SYMMETRIC_MATRIX_INPUT = ("Cholesky",)


# Inputs whose last axis holds named fields (a RoI's image index and corners): reversed along it, they are other
# data, not the same data seen backwards. {op: input slots}
# Inputs whose last axis holds the fields of one item (a box's coordinates, an index row's coordinates):
# reversed along it, they mean something else, maybe out of range.
_SCATTER_REDUCTIONS = ("Update", "Add", "Sub", "Mul", "Div", "Max", "Min")
_INDEX_ROWS = ["GatherNd"] + [f"{k}{r}" for k in ("ScatterNd", "TensorScatter") for r in _SCATTER_REDUCTIONS]
_FIELDS_ON_LAST_AXIS = {"ROIAlign": (1,), "ROIAlignGrad": (1,), **{op: (1,) for op in _INDEX_ROWS}}
# Inputs whose order is part of their meaning (CTC's label sequences: their positions, their repeats): in
# another order they are another input, which may be refused.
_ORDERED = {"CTCLoss": (1, 2)}


def build_negative_stride(pick, bl):
    i = pick.choice(_tensor_slots(bl))
    a = bl.args[i]
    fields = i in _FIELDS_ON_LAST_AXIS.get(bl.op, ())
    axis = pick.integer(0, max(a.ndim - (2 if fields else 1), 0))
    view = negative_stride(a, axis)
    if bl.op in _SYMMETRIC_MATRIX_INPUT and axis >= a.ndim - 2:
        view = negative_stride(view, 2 * a.ndim - 3 - axis)  # the other matrix axis
    args = _replace(bl.args, i, view)
    desc = f"{bl.desc}; arg {i} reversed along axis {axis}"
    same = i not in _ORDERED.get(bl.op, ())
    return Case(bl.op, "negative_stride", desc, _call(bl, args, finite_only=True), must_succeed=same)


def build_unaligned(pick, bl):
    i = pick.choice(_tensor_slots(bl))
    a = bl.args[i]
    view = unaligned(a)
    wrap = AsParameter(view) if i in _write_slots(bl.cls) else view
    desc = f"{bl.desc}; arg {i} at byte offset 1"
    return Case(bl.op, "unaligned", desc, _call(bl, _replace(bl.args, i, wrap)), must_succeed=True)


def build_parameter_in_read_slot(pick, bl):
    reads = [i for i in _tensor_slots(bl) if i not in _write_slots(bl.cls)]
    i = pick.choice(reads)
    args = _replace(bl.args, i, AsParameter(bl.args[i]))
    return Case(bl.op, "parameter_in_read_slot", f"{bl.desc}; arg {i} a Parameter", _call(bl, args), True)


def build_tensor_in_write_slot(pick, bl):
    i = pick.choice(sorted(_write_slots(bl.cls)))
    args = _replace(bl.args, i, AsTensor(bl.args[i]))

    def run():
        try:
            _call(bl, args, reference=False)()
        except Exception as exc:
            raise exc
        raise WrongResult(f"a Tensor in the written slot {i} was accepted")

    return Case(bl.op, "tensor_in_write_slot", f"{bl.desc}; arg {i} a Tensor, not a Parameter", run)


def build_numpy_array_input(pick, bl):
    i = pick.choice(_tensor_slots(bl))
    layout = pick.choice(["contiguous", "strided", "reversed", "unaligned"])
    a = bl.args[i]
    view = {
        "contiguous": lambda: a,
        "strided": lambda: non_contiguous(a),
        "reversed": lambda: negative_stride(a, 0),
        "unaligned": lambda: unaligned(a),
    }[layout]()
    desc = f"{bl.desc}; arg {i} a {layout} numpy.ndarray"
    return Case(bl.op, "numpy_array_input", desc, _call(bl, _replace(bl.args, i, Raw(view))))


def build_nan_inf(pick, bl):
    args = list(bl.args)
    floats = [i for i in _tensor_slots(bl) if bl.args[i].dtype.kind == "f" or bl.args[i].dtype.name == "bfloat16"]
    for i in floats:
        if pick.integer(0, 1) or i == floats[-1]:
            args[i] = with_specials(args[i], pick)
    return Case(bl.op, "nan_inf", f"{bl.desc}; NaN/Inf/-0.0 in floats", _call(bl, args, finite_only=True))


def _change_shape(pick, a: np.ndarray, shape) -> np.ndarray:
    shape = tuple(shape)
    n = math.prod(shape)
    if a.size:
        flat = np.resize(a.reshape(-1), n)
    else:
        flat = np.zeros(n, a.dtype)
    return flat.reshape(shape).astype(a.dtype)


# Decompositions whose factors are unique only for a generic matrix: the values repeated into a new shape
# make a rank-deficient one (or repeated singular values), whose factors round-off decides.
_FACTORS_OF_GENERIC_MATRICES = ("Qr", "Svd", "Eigh")


def _shape_case(pick, bl, kind, new_shape_of):
    slots = _tensor_slots(bl)
    chosen = [i for i in slots if pick.integer(0, 1)] or [pick.choice(slots)]
    args = list(bl.args)
    changes = []
    for i in chosen:
        shape = new_shape_of(args[i].shape)
        args[i] = _change_shape(pick, args[i], shape)
        changes.append(f"arg {i} {list(shape)}")
    reference = bl.op not in _FACTORS_OF_GENERIC_MATRICES
    return Case(bl.op, kind, f"{bl.desc}; {', '.join(changes)}", _call(bl, args, reference=reference))


def build_zero_size(pick, bl):
    def new(shape):
        if not shape:
            return (0,)
        axis = pick.integer(0, len(shape) - 1)
        return tuple(0 if k == axis else d for k, d in enumerate(shape))

    return _shape_case(pick, bl, "zero_size", new)


def build_zero_d(pick, bl):
    return _shape_case(pick, bl, "zero_d", lambda shape: ())


def build_wrong_rank(pick, bl):
    def new(shape):
        if shape and pick.integer(0, 1):
            return shape[pick.integer(1, len(shape)) :]  # fewer dims
        return tuple(pick.integer(1, 3) for _ in range(pick.integer(1, 3))) + tuple(shape)  # more dims

    return _shape_case(pick, bl, "wrong_rank", new)


def build_broadcast_incompatible(pick, bl):
    def new(shape):
        return tuple(pick.integer(0, 5) for _ in range(pick.integer(0, 4)))

    return _shape_case(pick, bl, "broadcast_incompatible", new)


def build_dtype(pick, bl):
    i = pick.choice(_tensor_slots(bl))
    dtype = pick.choice(mstype.all_types)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex to real drops the imaginary part, on purpose
        a = bl.args[i].astype(dtype.np_dtype)
    # Promotion changes what is computed (uint16 becomes inf in float16): no reference, only structure.
    return Case(bl.op, "dtype", f"{bl.desc}; arg {i} as {dtype}", _call(bl, _replace(bl.args, i, a), reference=False))


def build_non_tensor(pick, bl):
    i = pick.choice(_tensor_slots(bl))
    value = pick.choice(_wrong_objects() + [3, 2.5, True, -1, 0.0])
    desc = f"{bl.desc}; arg {i} = {value!r}"[:200]
    return Case(bl.op, "non_tensor", desc, _call(bl, _replace(bl.args, i, Raw(value))))


def build_wrong_constant(pick, bl):
    i = pick.choice(_const_slots(bl))
    value = pick.choice(_wrong_objects() + WRONG_CONSTANTS + [Tensor(np.array(1, np.int32))])
    desc = f"{bl.desc}; constant {i} = {value!r}"[:200]
    return Case(bl.op, "wrong_constant", desc, _call(bl, _replace(bl.args, i, Raw(value))))


def build_numpy_scalar_constant(pick, bl):
    slots = [i for i in _const_slots(bl) if _has_number(bl.args[i])]
    i = pick.choice(slots)
    value = _numpy_scalar(bl.args[i], pick)
    desc = f"{bl.desc}; constant {i} = {value!r} (NumPy scalars)"
    in_group = i in _group_slots(bl.cls)
    issue = None if in_group else "numpy-scalar-constant"
    return Case(bl.op, "numpy_scalar_constant", desc, _call(bl, _replace(bl.args, i, value)), True, issue)


def _huge_value(pick, value):
    if isinstance(value, (tuple, list)) and value and _ints(value) and pick.integer(0, 1):
        k = pick.integer(0, len(value) - 1)
        return type(value)(pick.choice(HUGE_INTS) if j == k else v for j, v in enumerate(value))
    if isinstance(value, (tuple, list)):
        return pick.choice(HUGE_SHAPES)
    return pick.choice(HUGE_INTS)


def _huge_slot(value) -> bool:
    if isinstance(value, (tuple, list)):
        return _ints(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _huge_attrs(bl) -> list:
    """The baseline primitive's int or int-tuple attrs (BroadcastTo's shape, an axis)."""
    base = bl.prim()
    return [name for name in base.init_attrs if _huge_slot(base.attrs.get(name))]


def build_huge(pick, bl):
    slots = [i for i in _const_slots(bl) if _huge_slot(bl.args[i])]
    attrs = _huge_attrs(bl)
    where = pick.choice([("constant", i) for i in slots] + [("attr", name) for name in attrs])
    if where[0] == "constant":
        i = where[1]
        value = _huge_value(pick, bl.args[i])
        run = _call(bl, _replace(bl.args, i, value), reference=False)
        return Case(bl.op, "huge", f"{bl.desc}; constant {i} = {value!r}", run, issue="huge")
    name = where[1]
    base = bl.prim()
    kwargs = {k: base.attrs[k] for k in base.init_attrs}
    kwargs[name] = _huge_value(pick, kwargs[name])

    def run():
        _call(bl, bl.args, prim=bl.cls(**kwargs), reference=False)()

    return Case(bl.op, "huge", f"{bl.op}({name}={kwargs[name]!r}) on {bl.desc}", run, issue="huge")


def _aliases(value):
    """Constants equal to ``value`` under ``==`` but meaning something else (-0.0 for 0.0, True for 1)."""
    if isinstance(value, float) and value == 0.0:
        return [-0.0 if math.copysign(1.0, value) > 0 else 0.0]
    if isinstance(value, (tuple, list)):
        out = []
        for k, v in enumerate(value):
            if isinstance(v, int) and not isinstance(v, bool) and v in (0, 1):
                for alias in (bool(v), float(v)):
                    out.append(type(value)(alias if j == k else w for j, w in enumerate(value)))
        return out
    return []


def build_constant_alias(pick, bl):
    slots = [i for i in _const_slots(bl) if _aliases(bl.args[i])]
    i = pick.choice(slots)
    alias = pick.choice(_aliases(bl.args[i]))
    primed = _call(bl, bl.args)
    aliased_args = _replace(bl.args, i, alias)
    rejects = isinstance(alias, (tuple, list))  # a bool or float where an int belongs

    def run():
        primed()  # the same primitive first sees the canonical constant...
        if not rejects:
            _call(bl, aliased_args, signed_zeros=True)()  # ...then -0.0 must still give -0.0
            return
        try:
            _call(bl, aliased_args, reference=False)()
        except TypeError as exc:
            if f"'{bl.op}'" in str(exc):
                return
            raise
        raise WrongResult(f"the constant {alias!r} (a bool or float where an int belongs) was accepted")

    desc = f"{bl.desc}; constant {i} = {bl.args[i]!r} then {alias!r}"
    return Case(bl.op, "constant_alias", desc, run, issue="constant-alias")


# -- constructor and arity -------------------------------------------------------------------


def _ctor_params(cls) -> list:
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _ctor_value(pick, default):
    pool = _wrong_objects() + WRONG_CONSTANTS + HUGE_INTS + [HUGE_SHAPES[1]]
    if default is not inspect.Parameter.empty and _has_number(default):
        pool += [_numpy_scalar(default, pick)]
    return pick.choice(pool)


def build_constructor(pick, bl):
    """Misuse the constructor; if it accepts the arguments, the primitive must still work."""
    cls = bl.cls
    params = _ctor_params(cls)
    form = pick.choice(
        ["too_many", "unknown_keyword", "wrong_value", "duplicate"]
        + (["missing"] if any(p.default is inspect.Parameter.empty for p in params) else [])
        if params
        else ["too_many", "unknown_keyword"]
    )
    args, kwargs = [], {}
    required = [p for p in params if p.default is inspect.Parameter.empty]
    # Required parameters (BroadcastTo's shape) keep the baseline's value unless mutated.
    base = bl.prim()
    for p in required:
        kwargs[p.name] = base.attrs.get(p.name)
    if form == "too_many":
        args = [pick.choice([0, 1, 1.0, "x", None])] * (len(params) + pick.integer(1, 3))
        kwargs = {}
    elif form == "unknown_keyword":
        kwargs[pick.choice(["bogus", "axis", "alpha", "keep_dims", "name", "dtype"])] = 1
        if all(p.name in kwargs for p in params) and "bogus" not in kwargs:
            kwargs["bogus"] = 1
    elif form == "wrong_value":
        p = pick.choice(params)
        kwargs[p.name] = _ctor_value(pick, p.default)
    elif form == "duplicate":
        p = params[0]
        args = [p.default if p.default is not inspect.Parameter.empty else base.attrs.get(p.name)]
        kwargs[p.name] = args[0]
    else:  # missing: the required arguments left out
        kwargs = {}
    desc = f"{bl.op}(*{args!r}, **{kwargs!r})"[:200]

    def run():
        prim = cls(*args, **kwargs)
        if not isinstance(prim, cls):
            raise WrongResult(f"the constructor gave {type(prim).__name__}")
        _call(bl, bl.args, prim=_rewrap(bl.variant_obj(), prim))()

    return Case(bl.op, "constructor", desc, run)


def build_call_arity(pick, bl):
    names = _input_names(bl)
    form = pick.choice(["extra_tensor", "extra_int", "missing", "unknown_keyword", "duplicate_keyword", "keywords"])
    args, kwargs = list(bl.args), dict(bl.kwargs)
    must = False
    if form == "extra_tensor":
        args.append(np.zeros((2,), np.float32))
    elif form == "extra_int":
        args.append(0)
    elif form == "missing":
        if args:
            args.pop()
        elif kwargs:
            kwargs.pop(sorted(kwargs)[-1])
    elif form == "unknown_keyword":
        kwargs["bogus"] = 1
    elif form == "duplicate_keyword" and names and args:
        kwargs[names[0]] = args[0]
    elif form == "keywords" and len(names) >= len(args) and not kwargs:
        kwargs = {names[i]: a for i, a in enumerate(args)}
        args = []
        must = bool(_signature_of(bl.cls))  # a declared signature binds its names
    desc = f"{bl.desc}; {form}"
    return Case(bl.op, "call_arity", desc, _call(bl, args, kwargs), must_succeed=must)


# -- which kinds apply to a baseline -----------------------------------------------------------


def _has_tensor(bl):
    return bool(_tensor_slots(bl))


BUILDERS = {
    "valid": (build_valid, lambda bl: True),
    "non_contiguous": (build_non_contiguous, _has_tensor),
    "negative_stride": (build_negative_stride, _has_tensor),
    "unaligned": (
        build_unaligned,
        lambda bl: any(bl.args[i].dtype.itemsize > 1 for i in _tensor_slots(bl)),
    ),
    "parameter_in_read_slot": (
        build_parameter_in_read_slot,
        lambda bl: any(i not in _write_slots(bl.cls) for i in _tensor_slots(bl)),
    ),
    "tensor_in_write_slot": (build_tensor_in_write_slot, lambda bl: bool(_write_slots(bl.cls))),
    "numpy_array_input": (build_numpy_array_input, _has_tensor),
    "nan_inf": (
        build_nan_inf,
        lambda bl: any(mstype.nptype_to_dtype(bl.args[i].dtype).kind == "f" for i in _tensor_slots(bl)),
    ),
    "zero_size": (build_zero_size, _has_tensor),
    "zero_d": (build_zero_d, _has_tensor),
    "wrong_rank": (build_wrong_rank, _has_tensor),
    "broadcast_incompatible": (build_broadcast_incompatible, _has_tensor),
    "dtype": (build_dtype, _has_tensor),
    "non_tensor": (build_non_tensor, _has_tensor),
    "wrong_constant": (build_wrong_constant, lambda bl: bool(_const_slots(bl))),
    "numpy_scalar_constant": (
        build_numpy_scalar_constant,
        lambda bl: any(_has_number(bl.args[i]) for i in _const_slots(bl)),
    ),
    "huge": (build_huge, lambda bl: any(_huge_slot(bl.args[i]) for i in _const_slots(bl)) or bool(_huge_attrs(bl))),
    "constant_alias": (build_constant_alias, lambda bl: any(_aliases(bl.args[i]) for i in _const_slots(bl))),
    "constructor": (build_constructor, lambda bl: True),
    "call_arity": (build_call_arity, lambda bl: True),
}
KINDS = tuple(BUILDERS)

# The attr-level -0.0 aliasing (Elu(alpha=0.0) then Elu(alpha=-0.0)) is a case of its own.
ATTR_ALIAS_OPS = {"Elu": "alpha", "EluGrad": "alpha", "ApplyMomentum": "gradient_scale"}


def build_attr_alias(pick, bl):
    name = ATTR_ALIAS_OPS[bl.op]
    cls = bl.cls
    base = bl.prim()
    first_value = pick.choice([0.0, -0.0])
    second = -0.0 if math.copysign(1.0, first_value) > 0 else 0.0
    variant_obj = bl.variant_obj()

    def make(value):
        kwargs = {k: base.attrs[k] for k in base.init_attrs}
        kwargs[name] = value
        return _rewrap(variant_obj, cls(**kwargs))

    def run():
        _call(bl, bl.args, prim=make(first_value), signed_zeros=True)()
        _call(bl, bl.args, prim=make(second), signed_zeros=True)()

    desc = f"{bl.desc}; {name}={first_value!r} then {second!r}"
    return Case(bl.op, "constant_alias", desc, run, issue="constant-alias")


def _rewrap(variant_obj, prim):
    """``prim`` in the wrapper the record's variant uses (if any), so the reference sees it the same way."""
    if variant_obj is _unwrap(variant_obj):
        return prim
    return type(variant_obj)(prim, **{k: v for k, v in variant_obj.__dict__.items() if k != "prim"})


def applicable_kinds(bl) -> list:
    kinds = [k for k, (_, applies) in BUILDERS.items() if applies(bl)]
    if bl.op in ATTR_ALIAS_OPS:
        kinds.append("attr_alias")
    return kinds


def build(pick, bl, kind) -> Case:
    if kind == "attr_alias":
        return build_attr_alias(pick, bl)
    return BUILDERS[kind][0](pick, bl)


# ---------------------------------------------------------------------------------------------
# Known call-path issues (the lead's part of the code): see test_bad_input_campaign.py


@dataclass
class Issue:
    """A known problem whose fix belongs to the call path; ``matches(case, exc)`` tells its failures."""

    reason: str
    reproducer: str
    matches: Callable[[Case, BaseException], bool]


CALL_PATH_ISSUES: dict = {
    "numpy-scalar-constant": Issue(
        "call path: NumPy scalar constants (np.int64 axis/depth/perm entries, np.float32 fill value) stay NumPy "
        "scalars in the plan, and the C++ kernel's attrs drop them (only Python int/float/bool/str pass)",
        "ops.ReduceSum()(Tensor(np.ones((2, 3), np.float32)), np.int64(1))  # KernelError: output shape [2]",
        lambda case, exc: isinstance(exc, (KernelError, WrongResult)),
    ),
    "constant-alias": Issue(
        "call path: plan keys compare constants and attrs with ==, so -0.0 reuses the plan of 0.0 and "
        "(False, 2) or (0.0, 2) the plan of (0, 2), skipping validation",
        "r = ops.ReduceSum(); r(x, (0, 1)); r(x, (False, 1))  # accepted; r(x, (False, 1)) alone is a TypeError",
        lambda case, exc: isinstance(exc, WrongResult),
    ),
    "huge": Issue(
        "call path: an addressable but huge output (2**57 elements) reaches the allocator, whose MemoryError "
        "has no message",
        "ops.Fill()(mstype.float32, (2**57,), 1.0)  # MemoryError()",
        lambda case, exc: isinstance(exc, MemoryError),
    ),
}


# ---------------------------------------------------------------------------------------------
# Generating cases


def cases_strategy(op: str, kinds=None):
    """A hypothesis strategy of cases for ``op``: a baseline of any of its kernels, then a kind
    (one of ``kinds``, default all)."""
    pool = [bl for bl in baselines(op) if _kinds_for(bl, kinds)]

    @st.composite
    def strategy(draw):
        pick = HypothesisPicker(draw)
        bl = pick.choice(pool)
        kind = pick.choice(_kinds_for(bl, kinds))
        return build(pick, bl, kind)

    return strategy()


# Kinds whose outcome can depend on the kernel's dtypes: the campaign runs each on every kernel.
PER_DTYPE_KINDS = (
    "valid",
    "non_contiguous",
    "negative_stride",
    "unaligned",
    "parameter_in_read_slot",
    "tensor_in_write_slot",
    "numpy_array_input",
    "nan_inf",
    "zero_size",
    "zero_d",
    "numpy_scalar_constant",
)


def _kinds_for(bl, kinds) -> list:
    return [k for k in applicable_kinds(bl) if kinds is None or k in kinds]


def every_dtype_cases(op: str, kinds=None) -> list:
    """For every kernel (dtype) of ``op``, one baseline under every applicable per-dtype kind (seeded picks)."""
    first = {}  # the first baseline of each kernel
    for bl in baselines(op):
        first.setdefault(str(bl.entry.attr), bl)
    out = []
    for bl in first.values():
        for kind in applicable_kinds(bl):
            if kind in PER_DTYPE_KINDS and (kinds is None or kind in kinds):
                out.append(build(RandomPicker(f"{op}/{bl.entry.attr}/{kind}"), bl, kind))
    return out


# ---------------------------------------------------------------------------------------------
# The summary


class Tally:
    """Counts of outcomes, per operator and kind; keeps the first few bad ones."""

    def __init__(self):
        self.counts = collections.Counter()
        self.by_op = collections.defaultdict(collections.Counter)
        self.by_kind = collections.defaultdict(collections.Counter)
        self.bad: list = []
        self.known = collections.Counter()

    def add(self, case: Case, outcome: Outcome) -> None:
        self.counts[outcome.status] += 1
        self.by_op[case.op][outcome.status] += 1
        self.by_kind[case.kind][outcome.status] += 1
        if outcome.status == "bad":
            self.bad.append((case, outcome))
        if outcome.status == "known":
            self.known[outcome.issue] += 1

    def merge(self, other: Tally) -> None:
        self.counts.update(other.counts)
        for op, counts in other.by_op.items():
            self.by_op[op].update(counts)
        for kind, counts in other.by_kind.items():
            self.by_kind[kind].update(counts)
        self.bad.extend(other.bad)
        self.known.update(other.known)

    @property
    def calls(self) -> int:
        return sum(self.counts.values())

    def line(self) -> str:
        c = self.counts
        return (
            f"calls {self.calls}, ok {c['ok']}, clean errors {c['clean']}, bad errors {c['bad']}, "
            f"known call-path issues {c['known']}"
        )

    def report(self, show_bad: int = 20, trace: bool = False) -> str:
        lines = ["bad-input campaign: " + self.line()]
        lines.append("by kind:")
        for kind in sorted(self.by_kind):
            k = self.by_kind[kind]
            lines.append(f"  {kind:24} ok {k['ok']:5} clean {k['clean']:5} bad {k['bad']:5} known {k['known']:5}")
        bad_ops = {op: c["bad"] for op, c in self.by_op.items() if c["bad"]}
        if bad_ops:
            lines.append("bad by operator: " + ", ".join(f"{op} {n}" for op, n in sorted(bad_ops.items())))
        if self.known:
            lines.append("known call-path issues: " + ", ".join(f"{k} {n}" for k, n in sorted(self.known.items())))
        for case, outcome in self.bad[:show_bad]:
            lines.append(f"  BAD {case.op} [{case.kind}] {case.desc}\n      -> {outcome.detail}")
            if trace:
                lines.append(outcome.trace)
        return "\n".join(lines)


def run_random(op: str, examples: int, tally: Tally, tolerate_known: bool = True, kinds=None, seed=None) -> None:
    """``examples`` hypothesis-drawn cases of ``op`` (no shrinking: every outcome is counted): the same cases at
    every run, or others drawn from ``seed``."""
    if not any(_kinds_for(bl, kinds) for bl in baselines(op)):
        return

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=seed is None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases_strategy(op, kinds))
    def go(case):
        tally.add(case, run_case(case, tolerate_known))

    (go if seed is None else hypothesis_seed(seed)(go))()


def run_operator(
    op: str, examples: int, tally: Tally, tolerate_known: bool = True, kinds=None, device=None, seed=None
) -> None:
    """The campaign for one operator on ``device`` (default: the context's): the per-dtype cases of every
    kernel, then ``examples`` drawn ones (``run_random``)."""
    with hang_guard(), on_device(device):
        for case in every_dtype_cases(op, kinds):
            tally.add(case, run_case(case, tolerate_known))
        run_random(op, examples, tally, tolerate_known, kinds, seed)


def run_campaign(examples: int, ops=None, tolerate_known: bool = True, kinds=None, device=None, seed=None) -> Tally:
    tally = Tally()
    for op in ops or campaign_ops():
        run_operator(op, examples, tally, tolerate_known, kinds, device, seed)
    return tally


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz_campaign", description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=50, help="hypothesis examples per operator")
    parser.add_argument("--ops", default="", help="comma-separated operators (default: all)")
    parser.add_argument("--kinds", default="", help=f"comma-separated kinds of bad input (default: all of {KINDS})")
    parser.add_argument("--show-bad", type=int, default=20, help="bad outcomes to print")
    parser.add_argument("--trace", action="store_true", help="print the traceback of each bad outcome shown")
    parser.add_argument("--strict", action="store_true", help="count known call-path issues as bad")
    parser.add_argument("--device", default="CPU", help="CPU, or GPU (the tests' host emulation without one)")
    parser.add_argument("--seed", type=int, default=None, help="draw other cases than the fixed ones, from this seed")
    options = parser.parse_args(argv)
    ops = [o for o in options.ops.split(",") if o] or None
    start = time.perf_counter()
    kinds = [k for k in options.kinds.split(",") if k] or None
    if options.device == "GPU":
        import conftest  # noqa: F401 - the GPU device, emulated where there is none

    tally = run_campaign(options.examples, ops, not options.strict, kinds, options.device, options.seed)
    print(tally.report(options.show_bad, options.trace))
    print(f"({time.perf_counter() - start:.1f} s)")
    return 1 if tally.counts["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
