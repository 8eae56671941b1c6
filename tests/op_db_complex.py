"""Sweep records of the complex-only operators (Conj). The complex64 / complex128 kernels of the
arithmetic and unary math operators (Add ... Cos, Equal, NotEqual, Cast, Abs) share those operators'
records in op_db.py / op_db_elemwise.py / op_db_math_array.py, whose sample makers add complex edge
values for complex dtypes."""

from __future__ import annotations

import numpy as np
from op_db import Arg, ErrorInput, OpRecord, _t, unary_samples

from opforge import dtype as mstype
from opforge import ops


def _conj_errors():
    f = ops.Conj
    return [
        ErrorInput("bool-input", lambda: f()(_t((2,), mstype.bool_)), TypeError, "input"),
        ErrorInput("uint8-input", lambda: f()(_t((2,), mstype.uint8)), TypeError, "input"),
        ErrorInput("python-number", lambda: f()(2.0), TypeError),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2,)), _t((2,))), TypeError),
    ]


RECORDS: list = [
    OpRecord(
        "Conj",
        {"": ops.Conj},
        unary_samples,
        lambda prim, x: np.conj(x),
        args=(Arg(),),
        kind="unary",
        exact=True,
        error_inputs=_conj_errors,
    ),
]
