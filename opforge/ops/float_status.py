"""MindSpore's ``FloatStatus`` (``ops.FloatStatus``, ``P.FloatStatus``), the GPU overflow flag that the model
zoo's loss-scale cells map over the gradients (``hyper_map(_grad_overflow, grads)``): built from ``IsFinite``,
``ReduceAll`` and ``Cast``, so it runs on both backends, traces under jit and batches under vmap."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import functional_extra as _FX

__all__ = ["FloatStatus"]

_FLOATS = (mstype.float16, mstype.float32, mstype.float64)


class FloatStatus:
    r"""``FloatStatus()(x)``: 1.0 if ``x`` holds a NaN, +inf or -inf, else 0.0:

    .. math::
        out = [\,1 - \prod_i \mathrm{isfinite}(x_i)\,]

    ``x``: a Tensor of float16, float32 or float64, any shape. Returns a float32 Tensor of shape (1,).
    A flag, not a differentiable function of ``x`` (its gradient is zero)."""

    def __call__(self, x):
        x = _FX._tensor("FloatStatus", "x", x)
        if x.dtype not in _FLOATS:
            raise TypeError(
                f"For 'FloatStatus', the dtype of 'x' must be float16, float32 or float64, but got {x.dtype}."
            )
        finite = F.reduce_all_op()(F.isfinite(x), ())
        return F.reshape(F.cast(F.logical_not(finite), mstype.float32), (1,))
