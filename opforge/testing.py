"""Checking an operator end to end (PyTorch's ``torch.library.opcheck``): ``opcheck(op, samples, reference)``.

For every kernel registered for ``op.name`` on every backend that can run here (the CPU, and the GPU
when one is available), ``opcheck`` builds the samples' inputs in that kernel's dtypes and checks:

* **selection**: ``select_kernel`` picks exactly that kernel for those dtypes;
* **forward**: the call through the public API gives Tensors on the backend, of the kernel's output
  dtypes and of the shapes and dtypes ``infer_shape``/``infer_dtype`` said; the values agree with
  ``reference`` (computed in float64, rounded to the output dtype; tolerances per dtype); inputs the
  signature does not declare written (``RW_WRITE``) keep their bytes;
* **gradient**: when a bprop is registered, the gradients ``GradOperation`` returns agree with central
  finite differences (float64 where a float64 kernel exists, else float32 with a coarser step); with
  ``check_double_grad=True`` also grad of grad;
* **errors**: each ``ErrorInput`` raises its exception type, with the operator's name and its
  message fragment in the message.

It returns an ``OpCheckReport`` (one ``CheckResult`` per check) and, by default, raises
``OpCheckError`` listing every failure. The helpers below are the ones the repository's own sweeps
(``tests/test_op_sweep.py``, ``tests/test_grad_sweep.py``) run on every built-in operator.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.bprop import GradOperation, bprop_getters
from opforge.device import BACKENDS, get_device
from opforge.dispatch import binding, plan
from opforge.errors import KernelNotFoundError
from opforge.kernels import kernels_for, select_kernel
from opforge.primitives import Primitive
from opforge.tensor import Parameter, Tensor

__all__ = [
    "opcheck",
    "OpCheckError",
    "OpCheckReport",
    "CheckResult",
    "Sample",
    "ErrorInput",
    "DEFAULT_TOLS",
    "DEFAULT_MAG_TOLS",
    "GRAD_SETTINGS",
    "make_array",
    "upcast",
    "shapes_desc",
    "kernel_id",
    "inferred_outputs",
    "assert_close",
    "check_forward",
    "check_error_input",
    "check_gradient",
    "check_second_order_gradient",
    "finite_differences",
    "numeric_grad",
]

# rtol, atol per float dtype (PyTorch's defaults, for results correctly rounded to the dtype).
DEFAULT_TOLS = {
    "Float16": (1e-3, 1e-5),
    "BFloat16": (1.6e-2, 1e-5),
    "Float32": (1.3e-6, 1e-5),
    "Float64": (1e-7, 1e-7),
    # complex: per part, relative to the magnitude |expected| (a part can cancel to near 0)
    "Complex64": (2e-6, 1e-5),
    "Complex128": (1e-7, 1e-7),
}
# Error budget relative to the sum of |terms| (reductions, MatMul): the kernels accumulate half
# types in float32 and float32 in float32 or better.
DEFAULT_MAG_TOLS = {"Float16": 1e-5, "BFloat16": 1e-5, "Float32": 1e-6, "Float64": 1e-13}
# Finite differences per dtype the gradient is checked in: (eps, rtol, atol). float64 resolves a
# step of 1e-6; float32 rounds the loss at ~1e-7 relative, so it needs a coarser step and tolerance.
GRAD_SETTINGS = {"Float64": (1e-6, 1e-5, 1e-6), "Float32": (1e-3, 1e-2, 1e-3)}


# ---------------------------------------------------------------------------------------------
# Samples and error inputs


@dataclass
class Sample:
    """One call: ``args`` in order (an ``np.ndarray`` or a ``Tensor`` is a tensor input, cast to each
    kernel's dtypes; anything else is passed as it is: an axis, a shape, a dtype, a Python number) and
    ``kwargs`` by keyword."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    desc: str = ""


@dataclass
class ErrorInput:
    """``call()`` must raise ``exc`` with the op name (and ``match``, a substring) in the message."""

    desc: str
    call: Callable[[], object]
    exc: type
    match: str = ""


# ---------------------------------------------------------------------------------------------
# Array helpers


def make_array(shape, dtype, rng, low=-3.0, high=3.0, nonzero=False) -> np.ndarray:
    """Random values of ``dtype`` (an opforge dtype) with the given shape: uniform in [low, high) for
    floats, integers in [max(low, -9), min(high, 9)], random bools; ``nonzero`` keeps away from 0."""
    shape = tuple(shape)
    kind = dtype.kind
    if kind == "b":
        vals = rng.random(shape) < 0.5
        if nonzero:
            vals = np.ones(shape, bool)
    elif kind in "iu":
        info = np.iinfo(dtype.np_dtype)
        lo = max(int(math.floor(low)), -9, int(info.min))
        hi = min(int(math.ceil(high)), 9, int(info.max))
        vals = rng.integers(lo, hi + 1, size=shape)
        if nonzero:
            vals = np.where(vals == 0, 1, vals)
    elif kind == "f":
        if nonzero:  # |x| in [0.5, max(|low|, |high|)), with a random sign when low < 0
            vals = rng.uniform(0.5, max(abs(low), abs(high)), size=shape)
            if low < 0:
                vals = vals * rng.choice([-1.0, 1.0], size=shape)
        else:
            vals = rng.uniform(low, high, size=shape)
    else:  # complex
        vals = rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape)
    return np.asarray(vals).astype(dtype.np_dtype)


def _is_float(a: np.ndarray) -> bool:
    return mstype.nptype_to_dtype(a.dtype).kind == "f"


def upcast(a):
    """What a reference sees: float arrays (bfloat16 included) as float64, complex arrays as complex128,
    others unchanged (a tuple of arrays element by element)."""
    if isinstance(a, np.ndarray) and _is_float(a):
        return a.astype(np.float64)
    if isinstance(a, np.ndarray) and a.dtype.kind == "c":
        return a.astype(np.complex128)
    if _is_array_tuple(a):
        return type(a)(upcast(e) for e in a)
    return a


def shapes_desc(args) -> str:
    return ", ".join(str(list(a.shape)) if isinstance(a, np.ndarray) else repr(a) for a in args)


def kernel_id(entry) -> str:
    """``Elu-CPU-Float32->Float32``: a kernel's op, backend and dtypes."""
    ins = ",".join(str(t) for t in entry.attr.inputs) + (",..." if entry.attr.all_same else "")
    return f"{entry.op_name}-{entry.backend}-{ins}->{','.join(str(t) for t in entry.attr.outputs)}"


def _outputs(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _tensors(args, device: str = "CPU", params: tuple = ()) -> tuple:
    """Arrays become Tensors on ``device`` (Parameters at ``params``); other arguments pass as they are."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            t = Tensor(a, device=device)
            out.append(Parameter(t, name=f"p{i}") if i in params else t)
        elif _is_array_tuple(a):  # a variadic input (Concat's, AddN's): a tuple of Tensors
            out.append(type(a)(Tensor(e, device=device) for e in a))
        else:
            out.append(a)
    return tuple(out)


def _is_array_tuple(a) -> bool:
    return isinstance(a, (tuple, list)) and len(a) > 0 and all(isinstance(e, np.ndarray) for e in a)


# ---------------------------------------------------------------------------------------------
# Forward


def inferred_outputs(prim, args: tuple, kwargs: Optional[dict] = None) -> tuple:
    """(shapes, dtypes), one per output, that ``prim``'s inference gives for a call with these
    arguments: bound and promoted as the call path does (weak Python numbers take their group's dtype)."""
    if kwargs:
        args = binding.bind_arguments(prim.name, prim._call_signature(), args, dict(kwargs))  # it pops them
    args = tuple(plan.python_scalar(a) for a in args)
    signature = prim._signature()
    targets = {}
    if signature:
        args = binding.bind_arguments(prim.name, signature, args, {})
        targets = binding.plan_promotion(prim.name, signature, args)
    metas = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            metas.append({"shape": list(a.shape), "dtype": targets.get(i, a.dtype), "value": None})
        elif i in targets:
            metas.append({"shape": [], "dtype": targets[i], "value": None})
        elif plan.is_tensor_sequence(a):
            metas.append({"shape": tuple(list(t.shape) for t in a), "dtype": tuple(t.dtype for t in a), "value": None})
        else:
            metas.append({"shape": a, "dtype": a, "value": a})
    return plan._normalise_outputs(prim, prim.__infer__(*metas))


def assert_close(actual, expected, out_dtype, *, tols=None, exact=False, bound_extra=None, where="") -> None:
    """``|actual - expected| <= atol + rtol * |expected| (+ bound_extra)`` per element, the tolerances
    of ``out_dtype`` (``tols`` overriding ``DEFAULT_TOLS`` by dtype name); NaN and infinities must
    match exactly; integers, bools and ``exact`` comparisons must be equal. Complex values are compared
    part by part, each within ``atol + rtol * |expected|`` (the complex magnitude)."""
    if exact or out_dtype.kind in "biu":
        ok = np.array_equal(actual, expected, equal_nan=out_dtype.kind in "fc")
        assert ok, f"{where}: expected {expected!r}, got {actual!r}"
        return
    if out_dtype.kind == "c":
        a, e = np.asarray(actual).astype(np.complex128), np.asarray(expected).astype(np.complex128)
        rtol, atol = dict(DEFAULT_TOLS, **(tols or {})).get(out_dtype.name, (0.0, 0.0))
        mag = np.abs(e)
        bound = atol + rtol * np.where(np.isfinite(mag), mag, 0.0)
        if bound_extra is not None:
            bound = bound + bound_extra
        for part, ap, ep in (("real", a.real, e.real), ("imag", a.imag, e.imag)):
            at = f"{where} ({part} part)"
            special = ~np.isfinite(ep)
            assert np.array_equal(np.isnan(ap), np.isnan(ep)), f"{at}: NaNs differ: expected {e!r}, got {a!r}"
            inf = special & ~np.isnan(ep)
            assert np.array_equal(ap[inf], ep[inf]), f"{at}: infinities differ: expected {e!r}, got {a!r}"
            err = np.abs(ap - ep)
            bad = ~special & ~(err <= bound)
            assert not bad.any(), (
                f"{at}: {int(bad.sum())} values out of tolerance; worst |error| {err[~special].max()} "
                f"(expected {e[bad][:5]}, got {a[bad][:5]})"
            )
        return
    a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
    special = ~np.isfinite(e64)
    assert np.array_equal(np.isnan(a64), np.isnan(e64)), f"{where}: NaNs differ: expected {e64!r}, got {a64!r}"
    assert np.array_equal(a64[special & ~np.isnan(e64)], e64[special & ~np.isnan(e64)]), f"{where}: infinities differ"
    rtol, atol = dict(DEFAULT_TOLS, **(tols or {})).get(out_dtype.name, (0.0, 0.0))
    bound = atol + rtol * np.abs(e64)
    if bound_extra is not None:
        bound = bound + bound_extra
    finite = ~special
    err = np.abs(a64 - e64)
    bad = finite & ~(err <= bound)
    assert not bad.any(), (
        f"{where}: {int(bad.sum())} values out of tolerance; worst |error| {err[finite].max()} "
        f"(expected {e64[bad][:5]}, got {a64[bad][:5]})"
    )


def check_forward(
    prim,
    sample: Sample,
    reference: Optional[Callable],
    backend: str,
    out_dtypes: tuple,
    *,
    params: Optional[tuple] = None,
    tols: Optional[dict] = None,
    mag_tols: Optional[dict] = None,
    magnitude: Optional[Callable] = None,
    exact: bool = False,
    check_infer: bool = True,
    transform: Optional[Callable] = None,
    where: str = "",
    variadic_outputs: bool = False,
) -> None:
    """Call ``prim`` on ``sample`` on ``backend`` and check the outputs (raises AssertionError).

    ``out_dtypes``: the kernel's output dtypes. ``params``: argument positions passed as Parameters,
    whose output is the Parameter itself (default: the signature's RW_WRITE positions); every other
    input must keep its bytes. ``reference(*args, **kwargs)`` and ``magnitude`` see float arrays as
    float64; ``None`` skips the values. ``check_infer``: outputs match ``infer_shape``/``infer_dtype``.
    ``transform(a)`` is applied to each array before it becomes a Tensor (a non-contiguous view).
    """
    if params is None:
        params = binding.written_positions(prim._signature())
    data = list(sample.args)
    if transform is not None:
        data = [
            transform(a) if isinstance(a, np.ndarray) else type(a)(map(transform, a)) if _is_array_tuple(a) else a
            for a in data
        ]
    call_args = _tensors(data, backend, tuple(params))
    if not any(isinstance(a, Tensor) for a in call_args):
        prim.set_device(backend)  # no tensor input says where to run (Fill)
    before = [_bytes_of(t) for t in call_args]
    inferred = inferred_outputs(prim, call_args, sample.kwargs) if check_infer else None
    outs = _outputs(prim(*call_args, **sample.kwargs))
    if variadic_outputs and len(out_dtypes) == 1:  # an all_same kernel gives as many outputs as inferred
        out_dtypes = tuple(out_dtypes) * len(outs)
    assert len(outs) == len(out_dtypes), f"{where}: {len(outs)} outputs, the kernel has {len(out_dtypes)}"
    for i, (out, out_dtype) in enumerate(zip(outs, out_dtypes)):
        assert isinstance(out, Tensor), f"{where}: output {i} is {type(out).__name__}, not a Tensor"
        assert out.device == backend, f"{where}: output {i} is on {out.device}, not {backend}"
        assert out.dtype is out_dtype, f"{where}: output {i} has dtype {out.dtype}, the kernel's is {out_dtype}"
        if inferred is not None:
            shape, dtype = inferred[0][i], inferred[1][i]
            assert out.dtype is dtype, f"{where}: output {i} has dtype {out.dtype}, but infer_dtype gave {dtype}"
            assert out.shape == tuple(shape), f"{where}: output {i} has shape {out.shape}, infer_shape gave {shape}"
    for o, i in enumerate(params):
        assert outs[o] is call_args[i], f"{where}: an in-place op must return the Parameter it wrote (input {i})"
    if reference is not None:
        ref_args = [upcast(a) for a in sample.args]
        with np.errstate(all="ignore"):  # references meet NaN, inf and overflow on purpose
            expected = _outputs(reference(*ref_args, **sample.kwargs))
            mags = _outputs(magnitude(*ref_args, **sample.kwargs)) if magnitude is not None else None
        assert len(expected) == len(outs), f"{where}: the reference gave {len(expected)} outputs, the op {len(outs)}"
        for i, (out, e, out_dtype) in enumerate(zip(outs, expected, out_dtypes)):
            with np.errstate(all="ignore"):
                e = np.asarray(e).astype(out_dtype.np_dtype)  # rounded (or wrapped) to what the kernel returns
            at = f"{where} output {i}" if len(outs) > 1 else where
            assert out.shape == e.shape, f"{at}: output shape {out.shape}, the reference's is {e.shape}"
            extra = None
            if mags is not None:
                mag_tol = dict(DEFAULT_MAG_TOLS, **(mag_tols or {})).get(out_dtype.name, 0.0)
                extra = mag_tol * np.asarray(mags[i])
            with np.errstate(all="ignore"):
                assert_close(out.asnumpy(), e, out_dtype, tols=tols, exact=exact, bound_extra=extra, where=at)
    for i, t in enumerate(call_args):
        if before[i] is not None and i not in params:
            assert _bytes_of(t) == before[i], f"{where}: input {i} was modified (it is not RW_WRITE)"


def _bytes_of(t):
    if isinstance(t, Tensor):
        return t.asnumpy().tobytes()
    if isinstance(t, (tuple, list)) and t and all(isinstance(e, Tensor) for e in t):
        return tuple(e.asnumpy().tobytes() for e in t)
    return None


def check_error_input(op_name: str, err: ErrorInput) -> None:
    """``err.call()`` raises ``err.exc`` naming the operator (``'Op'``) with ``err.match`` in the message."""
    try:
        err.call()
    except err.exc as e:
        message = str(e)
    except Exception as e:  # noqa: BLE001 - the wrong exception is the finding
        raise AssertionError(f"expected {err.exc.__name__}, got {type(e).__name__}: {e}") from e
    else:
        raise AssertionError(f"expected {err.exc.__name__}, but nothing was raised")
    assert f"'{op_name}'" in message, f"the message does not name the op '{op_name}': {message!r}"
    assert err.match in message, f"expected {err.match!r} in the message: {message!r}"


# ---------------------------------------------------------------------------------------------
# Gradients against finite differences


def diff_positions(args, diff=None) -> tuple:
    """``diff``, else the positions of every float array."""
    if diff is not None:
        return tuple(diff)
    return tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f")


def projections(prim, args, rng, device: str = "CPU") -> tuple:
    """One random tensor per output (zeros for non-float outputs): the sensitivities, so the loss is
    ``sum(out * r)``."""
    senses = []
    for o in _outputs(prim(*_tensors(args, device))):
        if o.dtype.kind == "f":
            senses.append(Tensor(rng.standard_normal(o.shape).astype(o.dtype.np_dtype), device=device))
        else:
            senses.append(Tensor(np.zeros(o.shape, o.dtype.np_dtype), device=device))
    return tuple(senses)


def projected_loss(prim, args, senses, device: str = "CPU") -> float:
    """sum(out * r) over the float outputs, in float64 NumPy."""
    total = 0.0
    for o, r in zip(_outputs(prim(*_tensors(args, device))), senses):
        if o.dtype.kind == "f":
            total += float(np.sum(o.asnumpy().astype(np.float64) * r.asnumpy().astype(np.float64)))
    return total


def finite_differences(fn, args, positions, eps) -> dict:
    """Central differences of the scalar ``fn(args)`` with respect to the arrays at ``positions``."""
    grads = {}
    for p in positions:
        base = args[p]
        g = np.zeros(base.shape, np.float64)
        for idx in np.ndindex(base.shape or ()):
            plus, minus = base.copy(), base.copy()
            plus[idx] = plus[idx] + eps
            minus[idx] = minus[idx] - eps
            hi = fn(args[:p] + (plus,) + args[p + 1 :])
            lo = fn(args[:p] + (minus,) + args[p + 1 :])
            g[idx] = (hi - lo) / (2 * eps)
        grads[p] = g
    return grads


def numeric_grad(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar ``fn(x)`` with respect to the array ``x``."""
    return finite_differences(lambda args: fn(args[0]), (x,), (0,), eps)[0]


def engine_grads(prim, args, senses, device: str = "CPU") -> tuple:
    sens = senses[0] if len(senses) == 1 else senses
    return GradOperation(get_all=True, sens_param=True)(lambda *a: prim(*a))(*_tensors(args, device), sens)


def check_structure(where, args, grads) -> None:
    """One gradient per input: a Tensor of the input's shape and dtype for arrays, None for constants."""
    assert isinstance(grads, tuple) and len(grads) == len(args), f"{where}: {len(args)} gradients expected"
    for i, (a, g) in enumerate(zip(args, grads)):
        if isinstance(a, np.ndarray):
            assert g is not None, f"{where}: input {i} got no gradient"
            assert g.shape == a.shape, f"{where}: gradient {i} has shape {g.shape}, input {a.shape}"
            assert g.dtype.np_dtype == a.dtype, f"{where}: gradient {i} is {g.dtype}, input {a.dtype}"
        else:
            assert g is None, f"{where}: constant input {i} ({a!r}) got a gradient"


def check_gradient(prim, args, rng, *, diff=None, eps=1e-6, rtol=1e-5, atol=1e-6, device="CPU", where="") -> None:
    """The gradients the engine returns for ``sum(prim(*args) * r)`` agree with central finite differences."""
    senses = projections(prim, args, rng, device)
    grads = engine_grads(prim, args, senses, device)
    check_structure(where, args, grads)
    positions = diff_positions(args, diff)
    expected = finite_differences(lambda a: projected_loss(prim, a, senses, device), args, positions, eps)
    for p in positions:
        np.testing.assert_allclose(
            grads[p].asnumpy().astype(np.float64),
            expected[p],
            rtol=rtol,
            atol=atol,
            err_msg=f"{where}: gradient of input {p} differs from finite differences",
        )
    for i, a in enumerate(args):  # inputs that are not differentiated (integers): zeros
        if isinstance(a, np.ndarray) and i not in positions and a.dtype.kind != "f":
            assert not np.any(grads[i].asnumpy()), f"{where}: integer input {i} got a nonzero gradient"


def _gradient_projection(prim, senses, positions, weights):
    """``sum_p sum(grad_p * w_p)``: a scalar function of the inputs, built from the first-order gradients."""
    reduce_sum, mul, add = ops.ReduceSum(), ops.Mul(), ops.Add()
    sens = senses[0] if len(senses) == 1 else senses

    def first_order(*tensors):
        grads = GradOperation(get_all=True, sens_param=True)(lambda *a: prim(*a))(*tensors, sens)
        total = None
        for p in positions:
            term = reduce_sum(mul(grads[p], weights[p]))
            total = term if total is None else add(total, term)
        return total

    return first_order


def check_second_order_gradient(
    prim, args, rng, *, diff=None, eps=1e-6, rtol=1e-5, atol=1e-6, device="CPU", where=""
) -> None:
    """Grad of grad: the gradient of a random projection of the first-order gradients agrees with
    finite differences of that projection (``atol`` is scaled by 10: two levels of rounding)."""
    positions = diff_positions(args, diff)
    senses = projections(prim, args, rng, device)
    weights = {p: Tensor(rng.standard_normal(args[p].shape).astype(args[p].dtype), device=device) for p in positions}
    first_order = _gradient_projection(prim, senses, positions, weights)
    grads = GradOperation(get_all=True)(first_order)(*_tensors(args, device))
    expected = finite_differences(lambda a: float(first_order(*_tensors(a, device)).asnumpy()), args, positions, eps)
    for p in positions:
        np.testing.assert_allclose(
            grads[p].asnumpy().astype(np.float64),
            expected[p],
            rtol=rtol,
            atol=10 * atol,
            err_msg=f"{where}: second-order gradient of input {p} differs from finite differences",
        )


# ---------------------------------------------------------------------------------------------
# The report


@dataclass
class CheckResult:
    """One check: ``check`` (selection, forward, gradient, double_grad, error, registry), where it ran
    (``kernel``: a kernel id, or the backend), the sample, and the failure's message (empty when passed)."""

    check: str
    kernel: str
    sample: str
    passed: bool
    message: str = ""

    def __str__(self) -> str:
        head = f"[{'ok' if self.passed else 'FAILED'}] {self.check} {self.kernel}"
        head += f" ({self.sample})" if self.sample else ""
        return head + (f": {self.message}" if self.message else "")


@dataclass
class OpCheckReport:
    op_name: str
    results: list = field(default_factory=list)

    @property
    def failures(self) -> list:
        return [r for r in self.results if not r.passed]

    @property
    def passed(self) -> bool:
        return not self.failures

    def __bool__(self) -> bool:
        return self.passed

    def counts(self) -> dict:
        """{check: (passed, total)}."""
        out: dict = {}
        for r in self.results:
            ok, total = out.get(r.check, (0, 0))
            out[r.check] = (ok + r.passed, total + 1)
        return out

    def summary(self) -> str:
        parts = [f"{check} {ok}/{total}" for check, (ok, total) in self.counts().items()]
        state = "passed" if self.passed else f"{len(self.failures)} failed"
        return f"opcheck '{self.op_name}': {state} ({', '.join(parts) or 'no checks'})"

    def __str__(self) -> str:
        return "\n".join([self.summary(), *(str(r) for r in self.failures)])


class OpCheckError(AssertionError):
    """``opcheck`` found failures; ``report`` has every check."""

    def __init__(self, report: OpCheckReport):
        super().__init__(str(report))
        self.report = report


class _Recorder:
    def __init__(self, report: OpCheckReport):
        self.report = report

    def run(self, check: str, kernel: str, sample: str, fn: Callable[[], None]) -> bool:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the others
            message = str(e) if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
            self.report.results.append(CheckResult(check, kernel, sample, False, message.strip()))
            return False
        self.report.results.append(CheckResult(check, kernel, sample, True))
        return True


# ---------------------------------------------------------------------------------------------
# opcheck


def _available_backends() -> list:
    out = []
    for name in BACKENDS:
        try:
            get_device(name)
        except RuntimeError:  # no GPU (or no CuPy) here
            continue
        out.append(name)
    return out


def _sample_arg(a):
    """A Tensor becomes its host array and a NumPy scalar a 0-d array (tensor inputs); a tuple or list of
    Tensors (a variadic input) a tuple of arrays; anything else (an axis, a shape, a dtype, a Python
    number) stays as it is."""
    if isinstance(a, Tensor):
        return a.asnumpy()
    if isinstance(a, np.generic):
        return np.asarray(a)
    if isinstance(a, (tuple, list)) and a and all(isinstance(e, (Tensor, np.ndarray)) for e in a):
        return type(a)(_sample_arg(e) for e in a)
    return a


_SAMPLE_KINDS = "a Sample, a tuple of arguments, or one Tensor, NumPy array or Python number"


def _as_sample(s, index: int, where: str) -> Sample:
    if isinstance(s, Sample):
        return s
    if isinstance(s, (tuple, list)):
        return Sample(tuple(s))
    if isinstance(s, (Tensor, np.ndarray, np.generic)):
        return Sample((s,))  # one tensor input
    if isinstance(s, (bool, int, float, complex)):
        return Sample((np.asarray(s),))  # one 0-d tensor input (in a tuple a number stays a number: an axis)
    raise TypeError(f"For '{where}', sample {index} must be {_SAMPLE_KINDS}, but got {type(s).__name__}: {s!r}.")


def _as_samples(samples, where: str) -> list:
    if isinstance(samples, (Sample, Tensor, np.ndarray)):
        raise TypeError(
            f"For '{where}', the samples must be a list of samples ({_SAMPLE_KINDS} each), "
            f"but got one {type(samples).__name__}; wrap it in a list."
        )
    out = []
    for index, s in enumerate(samples):
        s = _as_sample(s, index, where)
        out.append(Sample(tuple(_sample_arg(a) for a in s.args), dict(s.kwargs), s.desc))
    for s in out:
        if not s.desc:
            s.desc = shapes_desc(s.args) + "".join(f", {k}={v!r}" for k, v in s.kwargs.items())
    return out


def _kernel_inputs(op, args) -> list:
    """Positions of the arguments the kernel receives: the arrays, and the Python numbers that a dtype
    group of the signature turns into tensors (weak scalars)."""
    groups = op._group_positions() if op._signature() else frozenset()
    return [
        i
        for i, a in enumerate(args)
        if isinstance(a, np.ndarray) or (i in groups and isinstance(a, (bool, int, float)))
    ]


def _in_dtypes(op, sample: Sample, dtypes: tuple) -> Sample:
    """The sample with its arrays cast to their kernel inputs' ``dtypes`` (weak scalars stay as they are)."""
    by_position = dict(zip(_kernel_inputs(op, sample.args), dtypes))
    with np.errstate(all="ignore"):
        args = tuple(
            a.astype(by_position[i].np_dtype) if isinstance(a, np.ndarray) else a for i, a in enumerate(sample.args)
        )
    return Sample(args, dict(sample.kwargs), sample.desc)


def _grad_dtype(op, backend: str, sample: Sample):
    """float64 when a kernel takes the sample's floats as float64, else float32, else None."""
    for dtype in (mstype.float64, mstype.float32):
        ins = []
        for i in _kernel_inputs(op, sample.args):
            a = sample.args[i]
            ins.append(mstype.nptype_to_dtype(a.dtype) if isinstance(a, np.ndarray) and not _is_float(a) else dtype)
        try:
            select_kernel(op.name, backend, tuple(ins))
        except KernelNotFoundError:
            continue
        return dtype
    return None


def _as_float(sample: Sample, dtype) -> tuple:
    return tuple(a.astype(dtype.np_dtype) if isinstance(a, np.ndarray) and _is_float(a) else a for a in sample.args)


def _check_kernel(rec, op, entry, samples, reference, tols) -> None:
    kid = kernel_id(entry)
    counts = {len(_kernel_inputs(op, s.args)) for s in samples}
    for n in sorted(counts):
        ins = entry.attr.input_dtypes_for(n)
        if ins is None:
            rec.run("selection", kid, f"{n} tensor inputs", lambda n=n: _fail(f"the kernel does not take {n} inputs"))
            continue

        def selection(ins=ins):
            chosen = select_kernel(op.name, entry.backend, ins, entry.attr.outputs).entry
            assert chosen.attr == entry.attr, f"select_kernel chose {chosen.attr.short()} for {list(map(str, ins))}"

        if not rec.run("selection", kid, "", selection):
            continue
        for s in samples:
            if len(_kernel_inputs(op, s.args)) != n:
                continue
            typed = _in_dtypes(op, s, ins)
            rec.run(
                "forward",
                kid,
                s.desc,
                lambda typed=typed: check_forward(
                    op, typed, reference, entry.backend, entry.attr.outputs, tols=tols, where=kid
                ),
            )


def _fail(message: str) -> None:
    raise AssertionError(message)


def _check_gradients(rec, op, backend, samples, rng, double: bool) -> None:
    for s in samples:
        if not any(isinstance(a, np.ndarray) and _is_float(a) for a in s.args) or s.kwargs:
            continue  # nothing to differentiate (or keywords, which GradOperation does not pass)
        dtype = _grad_dtype(op, backend, s)
        if dtype is None:
            rec.run("gradient", backend, s.desc, lambda: _fail("no kernel takes float64 or float32 inputs"))
            continue
        eps, rtol, atol = GRAD_SETTINGS[dtype.name]
        args = _as_float(s, dtype)
        where = f"{op.name} {backend} {dtype}"
        kw = dict(eps=eps, rtol=rtol, atol=atol, device=backend, where=where)
        rec.run("gradient", f"{backend} {dtype}", s.desc, functools.partial(check_gradient, op, args, rng, **kw))
        if double:
            second = functools.partial(check_second_order_gradient, op, args, rng, **kw)
            rec.run("double_grad", f"{backend} {dtype}", s.desc, second)


def opcheck(
    op,
    samples: Iterable,
    reference: Optional[Callable] = None,
    *,
    error_inputs: Iterable = (),
    backends: Optional[Iterable] = None,
    tols: Optional[dict] = None,
    check_grad: bool = True,
    check_double_grad: bool = False,
    grad_samples: Optional[Iterable] = None,
    seed: int = 0,
    raise_on_failure: bool = True,
) -> OpCheckReport:
    """Check operator ``op`` (a primitive instance) on every kernel registered for ``op.name``.

    ``samples``: ``Sample``s or tuples of arguments (or one Tensor, array or Python number: a one-input
    sample); each array or Tensor is cast, in order, to the input dtypes
    of the kernel under test. ``reference(*args, **kwargs)`` gives the expected outputs from float64
    inputs (``None``: shapes and dtypes only). ``error_inputs``: ``ErrorInput``s. ``backends``: default
    every backend that can run here. ``tols``: ``{dtype name: (rtol, atol)}`` over ``DEFAULT_TOLS``.
    ``grad_samples``: where to check the bprop (default ``samples``; keep them off kinks).
    Returns the ``OpCheckReport``; raises ``OpCheckError`` with every failure unless
    ``raise_on_failure=False``.
    """
    if not isinstance(op, Primitive):
        raise TypeError(f"For 'opcheck', the 'op' must be a Primitive instance, but got {type(op).__name__}.")
    samples = _as_samples(samples, "opcheck")
    grad_samples = samples if grad_samples is None else _as_samples(grad_samples, "opcheck")
    here = _available_backends()
    backends = here if backends is None else [b for b in backends if b in here]
    rng = np.random.default_rng(seed)
    report = OpCheckReport(op.name)
    rec = _Recorder(report)
    entries = [e for b in backends for e in kernels_for(op.name, b)]
    if not entries:
        rec.run("registry", ", ".join(backends), "", lambda: _fail(f"no kernel is registered for '{op.name}'"))
    if not samples:
        rec.run("registry", op.name, "", lambda: _fail("no samples given"))
    for entry in entries:
        _check_kernel(rec, op, entry, samples, reference, tols)
    if (check_grad or check_double_grad) and op.name in bprop_getters:
        for backend in backends:
            if kernels_for(op.name, backend):
                _check_gradients(rec, op, backend, grad_samples, rng, check_double_grad)
    elif check_double_grad:
        rec.run("gradient", op.name, "", lambda: _fail("check_double_grad=True, but no bprop is registered"))
    for err in error_inputs:
        rec.run("error", op.name, err.desc, lambda err=err: check_error_input(op.name, err))
    if raise_on_failure and not report.passed:
        raise OpCheckError(report)
    return report
