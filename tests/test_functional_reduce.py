"""MindSpore's functional reductions: ``F.reduce_sum`` and its siblings are the primitives themselves, called
``(x, axis=())`` (the zoo's research programs call ``F.reduce_sum(x, 1)``); ``reduce_*_op(keep_dims)`` gives the
cached primitive for a ``keep_dims``."""

import numpy as np
import pytest

import opforge
from opforge import ops
from opforge.ops import functional as F

CASES = [("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max), ("reduce_min", np.min),
         ("reduce_prod", np.prod)]  # fmt: skip


@pytest.mark.parametrize("name, ref", CASES)
def test_called_as_mindspore_calls_them(name, ref):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    fn = getattr(F, name)
    assert getattr(ops, name) is fn
    np.testing.assert_allclose(fn(opforge.Tensor(x)).asnumpy(), ref(x), rtol=1e-5)
    np.testing.assert_allclose(fn(opforge.Tensor(x), 1).asnumpy(), ref(x, axis=1), rtol=1e-5)
    np.testing.assert_allclose(fn(opforge.Tensor(x), (0, 2)).asnumpy(), ref(x, axis=(0, 2)), rtol=1e-5)
    kept = getattr(F, f"{name}_op")(True)(opforge.Tensor(x), 1)
    np.testing.assert_allclose(kept.asnumpy(), ref(x, axis=1, keepdims=True), rtol=1e-5)
