"""Sweep records (see op_db.py) for the activations of MindSpore's nn list added in nn_ops: SeLU, CeLU,
Softsign, HShrink, SoftShrink, Mish. Kernels: csrc/kernels/cpu/nn_activation.cc, cuda/nn_activation.cu;
functors/nn_activation.h. References in float64 NumPy."""

from __future__ import annotations

import numpy as np
from op_db import Arg, ErrorInput, OpRecord, _elementwise_float_errors, unary_samples

from opforge import ops

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu(prim, x):
    return _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0.0)))


def _celu(prim, x):
    a = prim.alpha
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0.0) / a))


def _hshrink(prim, x):
    return np.where(np.abs(x) > prim.lambd, x, np.where(np.isnan(x), x, 0.0))


def _softshrink(prim, x):
    lam = prim.lambd
    return np.where(x > lam, x - lam, np.where(x < -lam, x + lam, np.where(np.isnan(x), x, 0.0)))


def _mish(prim, x):
    return x * np.tanh(np.logaddexp(0.0, x))


def _with_attr_errors(name, attr, bad_value_error):
    base = _elementwise_float_errors(getattr(ops, name), 1)

    def errors():
        cls = getattr(ops, name)
        return base() + [
            ErrorInput(f"{attr}-int", lambda: cls(**{attr: 1}), TypeError, attr),
            ErrorInput(f"{attr}-str", lambda: cls(**{attr: "1.0"}), TypeError, attr),
            ErrorInput(f"{attr}-bad", lambda: cls(**{attr: bad_value_error}), ValueError, attr),
        ]

    return errors


def _record(name, variants, ref, low, high, error_inputs=None):
    return OpRecord(
        name,
        variants,
        unary_samples,
        ref,
        args=(Arg(low, high),),
        kind="unary",
        error_inputs=error_inputs or _elementwise_float_errors(getattr(ops, name), 1),
    )


RECORDS: list = [
    _record("SeLU", {"": ops.SeLU}, _selu, -5.0, 5.0),
    _record(
        "CeLU",
        {"alpha=1.0": ops.CeLU, "alpha=0.5": lambda: ops.CeLU(alpha=0.5), "alpha=-2.0": lambda: ops.CeLU(alpha=-2.0)},
        _celu,
        -5.0,
        5.0,
        _with_attr_errors("CeLU", "alpha", 0.0),
    ),
    _record("Softsign", {"": ops.Softsign}, lambda prim, x: x / (1.0 + np.abs(x)), -10.0, 10.0),
    _record(
        "HShrink",
        {"lambd=0.5": ops.HShrink, "lambd=1.5": lambda: ops.HShrink(lambd=1.5)},
        _hshrink,
        -3.0,
        3.0,
        _with_attr_errors("HShrink", "lambd", -1.0),
    ),
    _record(
        "SoftShrink",
        {"lambd=0.5": ops.SoftShrink, "lambd=1.5": lambda: ops.SoftShrink(lambd=1.5)},
        _softshrink,
        -3.0,
        3.0,
        _with_attr_errors("SoftShrink", "lambd", -1.0),
    ),
    _record("Mish", {"": ops.Mish}, _mish, -20.0, 20.0),
]
