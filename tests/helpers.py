"""Small helpers shared by tests."""

from __future__ import annotations

import itertools

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


def ctc_nll_by_paths(probs: np.ndarray, labels: list, blank: int) -> float:
    """-log of the summed probability (probs [T, C]) of every path that collapses (repeats merged, then blanks
    removed) to the labels: the CTC loss by enumeration, independent of any recursion (C^T paths: small T)."""
    total = 0.0
    for path in itertools.product(range(probs.shape[1]), repeat=probs.shape[0]):
        merged = [c for k, c in enumerate(path) if k == 0 or c != path[k - 1]]
        if [c for c in merged if c != blank] == list(labels):
            total += np.prod(probs[np.arange(len(path)), path])
    return -np.log(total)


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
