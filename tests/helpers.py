"""Small helpers shared by tests."""

from __future__ import annotations

from opforge.primitives import PrimitiveWithInfer, prim_attr_register


def user_op(name: str):
    """A fresh elementwise primitive class called ``name`` (output meta = input meta)."""

    class UserOp(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

    UserOp.__name__ = UserOp.__qualname__ = name
    return UserOp
