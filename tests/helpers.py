"""Small helpers shared by tests."""

from __future__ import annotations

import numpy as np

from opforge import Tensor
from opforge.primitives import Primitive, PrimitiveWithInfer, prim_attr_register


def user_op(name: str):
    """A fresh elementwise primitive class called ``name`` (output meta = input meta)."""

    class UserOp(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

    UserOp.__name__ = UserOp.__qualname__ = name
    return UserOp


def assert_same_outputs(got, want, where: str) -> None:
    """Two calls' outputs equal bit for bit: the same structure, dtypes, shapes and values."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), where
        for g, w in zip(got, want):
            assert_same_outputs(g, w, where)
        return
    if not isinstance(want, Tensor):
        assert got == want, where
        return
    assert got.dtype == want.dtype and got.shape == want.shape, where
    np.testing.assert_array_equal(got.asnumpy(), want.asnumpy(), err_msg=where)


def called_primitive(variant):
    """The primitive a sweep variant calls: the variant itself, or the primitive of a wrapper that keeps one
    of its outputs (``picks_output``: op_db's ``_Output`` and ``_Call``); None for a wrapper that does more
    (copies its inputs into Parameters)."""
    if getattr(type(variant), "picks_output", False):
        return variant.__dict__["prim"]
    return variant if isinstance(variant, Primitive) else None
