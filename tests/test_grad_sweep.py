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
from grad_db import GRAD_DB, GRAD_ELSEWHERE, NON_DIFFERENTIABLE

from opforge import GradOperation, Tensor, ops
from opforge.bprop import bprop_getters, get_bprop
from opforge.bprop.tape import Tape
from opforge.primitives import primitive_classes
from opforge.testing import check_gradient, check_second_order_gradient


def _is_library_bprop(name: str) -> bool:
    """bprops opforge itself registers (getters defined in its modules); those that other tests or
    users register at run time are theirs to test."""
    return getattr(bprop_getters.get(name), "__module__", "").startswith("opforge.")


BPROP_NAMES = [n for n in bprop_getters.names() if _is_library_bprop(n)]


def _tensors(args) -> tuple:
    return tuple(Tensor(a) if isinstance(a, np.ndarray) else a for a in args)


def _outputs(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _params(second_order: bool = False) -> list:
    out = []
    for name in BPROP_NAMES:
        record = GRAD_DB.get(name)
        if record is None:
            if name in GRAD_ELSEWHERE:
                continue
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
# Helpers (the finite-difference checks are opforge.testing's, what opcheck runs on a user's operator)


def _where(name, variant, sample) -> str:
    return f"{name}[{variant}] {sample.desc}" if variant else f"{name} {sample.desc}"


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
        rtol, atol = sample.tols or (record.rtol, record.atol)
        check_gradient(prim, sample.args, rng, diff=sample.diff, eps=sample.eps, rtol=rtol, atol=atol, where=where)


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


@pytest.mark.parametrize("name,variant", _params(second_order=True))
def test_second_order_gradient(name, variant, rng):
    record = _record(name)
    prim = record.variants[variant]()
    samples = record.sample_list(prim, rng)
    assert samples, f"{name}[{variant}]: no samples"
    for sample in samples:
        where = _where(name, variant, sample) + " (grad of grad)"
        rtol, atol = sample.tols or (record.rtol, record.atol)
        check_second_order_gradient(
            prim, sample.args, rng, diff=sample.diff, eps=sample.eps, rtol=rtol, atol=atol, where=where
        )
