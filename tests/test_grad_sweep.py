"""The gradient sweep, generated from the bprop registry.

For every operator name in ``bprop_getters.names()`` the record in ``tests/grad_db.py`` gives float64
samples; the gradients the autodiff engine returns (GradOperation, the sensitivity being a fixed
random projection ``r`` of each output, so the loss is ``sum(out * r)``) are compared with central
finite differences of that loss. Operators with zero gradients by definition must return exact
zeros of each input's shape and dtype. ``second_order`` records also check grad of grad against
finite differences of the first-order gradient.

An operator with a bprop and no record fails (bprops opforge registers; those tests and users register
are theirs to test); so does a built-in operator with neither a bprop nor a place in
``NON_DIFFERENTIABLE``, and a record whose operator exists but has no bprop.
"""

from __future__ import annotations

import numpy as np
import pytest
from grad_db import GRAD_DB, NON_DIFFERENTIABLE

from opforge import GradOperation, Tensor, ops
from opforge.bprop import bprop_getters, get_bprop
from opforge.bprop.tape import Tape
from opforge.primitives import primitive_classes


def _is_library_bprop(name: str) -> bool:
    """bprops opforge itself registers (getters defined in its modules); those that other tests or
    users register at run time are theirs to test."""
    return getattr(bprop_getters.get(name), "__module__", "").startswith("opforge.")


BPROP_NAMES = [n for n in bprop_getters.names() if _is_library_bprop(n)]

_reduce_sum = ops.ReduceSum()
_mul = ops.Mul()
_add = ops.Add()


def _params(second_order: bool = False) -> list:
    out = []
    for name in BPROP_NAMES:
        record = GRAD_DB.get(name)
        if record is None:
            if not second_order:
                out.append(pytest.param(name, None, id=f"{name}-NO-RECORD"))
            continue
        if second_order and not record.second_order:
            continue
        for variant in record.variants:
            out.append(pytest.param(name, variant, id=f"{name}-{variant}" if variant else name))
    return out


def _record(name):
    record = GRAD_DB.get(name)
    if record is None:
        pytest.fail(f"no gradient record for {name}: add one to tests/grad_db.py", pytrace=False)
    return record


# ---------------------------------------------------------------------------------------------
# Helpers


def _tensors(args) -> tuple:
    return tuple(Tensor(a) if isinstance(a, np.ndarray) else a for a in args)


def _diff_positions(sample) -> tuple:
    if sample.diff is not None:
        return tuple(sample.diff)
    return tuple(i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f")


def _outputs(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _projections(prim, args, rng) -> tuple:
    """One random tensor per output (zeros for non-float outputs): the sensitivities."""
    outs = _outputs(prim(*_tensors(args)))
    senses = []
    for o in outs:
        if o.dtype.kind == "f":
            senses.append(Tensor(rng.standard_normal(o.shape).astype(o.dtype.np_dtype)))
        else:
            senses.append(Tensor(np.zeros(o.shape, o.dtype.np_dtype)))
    return tuple(senses)


def _loss(prim, args, senses) -> float:
    """sum(out * r) over the float outputs, in float64 NumPy."""
    total = 0.0
    for o, r in zip(_outputs(prim(*_tensors(args))), senses):
        if o.dtype.kind == "f":
            total += float(np.sum(o.asnumpy().astype(np.float64) * r.asnumpy().astype(np.float64)))
    return total


def _finite_differences(fn, args, positions, eps) -> dict:
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


def _engine_grads(prim, args, senses) -> tuple:
    sens = senses[0] if len(senses) == 1 else senses
    return GradOperation(get_all=True, sens_param=True)(lambda *a: prim(*a))(*_tensors(args), sens)


def _where(name, variant, sample) -> str:
    return f"{name}[{variant}] {sample.desc}" if variant else f"{name} {sample.desc}"


def _check_structure(where, args, grads) -> None:
    assert isinstance(grads, tuple) and len(grads) == len(args), f"{where}: {len(args)} gradients expected"
    for i, (a, g) in enumerate(zip(args, grads)):
        if isinstance(a, np.ndarray):
            assert g is not None, f"{where}: input {i} got no gradient"
            assert g.shape == a.shape, f"{where}: gradient {i} has shape {g.shape}, input {a.shape}"
            assert g.dtype.np_dtype == a.dtype, f"{where}: gradient {i} is {g.dtype}, input {a.dtype}"
        else:
            assert g is None, f"{where}: constant input {i} ({a!r}) got a gradient"


# ---------------------------------------------------------------------------------------------
# Coverage


def test_every_builtin_operator_has_a_bprop_or_is_non_differentiable():
    missing = [
        name
        for name, cls in primitive_classes().items()
        if cls.__module__.startswith("opforge.primitives.")
        and name not in bprop_getters
        and name not in NON_DIFFERENTIABLE
    ]
    assert not missing, (
        f"operators without a bprop: {sorted(missing)}; register one in opforge/bprop/grad_*_ops.py "
        "or list them in NON_DIFFERENTIABLE (tests/grad_db.py)"
    )


def test_every_record_of_an_existing_operator_has_a_bprop():
    stale = [name for name in GRAD_DB if hasattr(ops, name) and name not in bprop_getters]
    assert not stale, f"gradient records for operators without a bprop: {stale}"


def test_non_differentiable_operators_have_no_bprop():
    assert not [n for n in NON_DIFFERENTIABLE if n in bprop_getters]


# ---------------------------------------------------------------------------------------------
# First order


@pytest.mark.parametrize("name,variant", _params())
def test_gradient(name, variant, rng):
    record = _record(name)
    prim = record.variants[variant]()
    samples = record.sample_list(prim, rng)
    assert samples, f"{name}[{variant}]: no samples"
    for sample in samples:
        where = _where(name, variant, sample)
        if record.zero:
            _check_zero_gradients(where, prim, sample)
            continue
        args = sample.args
        senses = _projections(prim, args, rng)
        grads = _engine_grads(prim, args, senses)
        _check_structure(where, args, grads)
        rtol, atol = sample.tols or (record.rtol, record.atol)
        positions = _diff_positions(sample)
        expected = _finite_differences(lambda a, r=senses: _loss(prim, a, r), args, positions, sample.eps)
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


def _check_zero_gradients(where, prim, sample) -> None:
    """The bprop itself (called with the arguments the tape records) returns exact zeros."""
    args = _tensors(sample.args)
    if any(isinstance(a, Tensor) for a in args):
        with Tape() as tape:
            for a in args:
                if isinstance(a, Tensor):
                    tape.tracked[id(a)] = a  # track every tensor input, integers included
            out = prim(*args)
        assert len(tape.records) == 1, f"{where}: the call was not recorded"
        recorded = tape.records[0][1]
    else:  # no tensor input (Fill): nothing to record, the bprop still answers None for each input
        out, recorded = prim(*args), args
    dout = tuple(Tensor(np.ones(o.shape, o.dtype.np_dtype)) for o in _outputs(out))
    grads = get_bprop(prim)(*recorded, out, dout if isinstance(out, tuple) else dout[0])
    assert isinstance(grads, tuple) and len(grads) == len(recorded), f"{where}: one gradient per input expected"
    for i, (a, g) in enumerate(zip(recorded, grads)):
        if isinstance(a, Tensor):
            assert isinstance(g, Tensor), f"{where}: input {i} needs a zero Tensor, got {type(g).__name__}"
            assert g.shape == a.shape and g.dtype is a.dtype, f"{where}: zero gradient {i} is {g.dtype}{g.shape}"
            assert not np.any(g.asnumpy()), f"{where}: gradient {i} is not zero"
        else:
            assert g is None, f"{where}: constant input {i} ({a!r}) needs None, got {g!r}"
    # Through the engine: every tensor input gets zeros of its own dtype.
    tensor_args = [a for a in args if isinstance(a, Tensor)]
    if tensor_args:
        grads = GradOperation(get_all=True)(lambda *a: _first_float_or_any(prim(*a)))(*args)
        for a, g in zip(args, grads):
            if isinstance(a, Tensor):
                assert g.shape == a.shape and g.dtype is a.dtype and not np.any(g.asnumpy()), where


def _first_float_or_any(value):
    outs = _outputs(value)
    return next((o for o in outs if o.dtype.kind == "f"), outs[0])


# ---------------------------------------------------------------------------------------------
# Second order


def _gradient_projection(prim, senses, positions, weights):
    """``sum_p sum(grad_p * w_p)``: a scalar function of the inputs, built from the first-order gradients."""
    sens = senses[0] if len(senses) == 1 else senses

    def first_order(*tensors):
        grads = GradOperation(get_all=True, sens_param=True)(lambda *a: prim(*a))(*tensors, sens)
        total = None
        for p in positions:
            term = _reduce_sum(_mul(grads[p], weights[p]))
            total = term if total is None else _add(total, term)
        return total

    return first_order


@pytest.mark.parametrize("name,variant", _params(second_order=True))
def test_second_order_gradient(name, variant, rng):
    record = _record(name)
    prim = record.variants[variant]()
    samples = record.sample_list(prim, rng)
    assert samples, f"{name}[{variant}]: no samples"
    for sample in samples:
        where = _where(name, variant, sample) + " (grad of grad)"
        args = sample.args
        positions = _diff_positions(sample)
        senses = _projections(prim, args, rng)
        weights = {p: Tensor(rng.standard_normal(args[p].shape).astype(args[p].dtype)) for p in positions}

        first_order = _gradient_projection(prim, senses, positions, weights)
        grads = GradOperation(get_all=True)(first_order)(*_tensors(args))
        rtol, atol = sample.tols or (record.rtol, record.atol)
        expected = _finite_differences(
            lambda a, fo=first_order: float(fo(*_tensors(a)).asnumpy()), args, positions, sample.eps
        )
        for p in positions:
            np.testing.assert_allclose(
                grads[p].asnumpy().astype(np.float64),
                expected[p],
                rtol=rtol,
                atol=10 * atol,
                err_msg=f"{where}: second-order gradient of input {p} differs from finite differences",
            )
