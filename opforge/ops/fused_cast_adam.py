"""MindSpore's ``ops.FusedCastAdamWeightDecay`` (an inner operator of ``mindspore.ops.operations``, CPU there):
AdamWeightDecay on float16 gradients, with float32 moments and a float16 or float32 weight, the gradient first
divided by a global norm (gradient clipping folded in). The model zoo's PanGu-alpha uses it for its float16
parameters. A float32 weight is updated by the AdamWeightDecay primitive; a float16 one by the same update
written out in float32 elementwise operators on a float32 copy, rounded back into the weight (the primitive
updates Parameters of one dtype in place)."""

from __future__ import annotations

import numbers

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import functional_extra as _FX
from opforge.primitives.array_ops import Assign
from opforge.primitives.nn_ops import AdamWeightDecay
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["FusedCastAdamWeightDecay"]

_MIN_GLOBAL_NORM = 1e-10  # a smaller global norm is taken as 1, as MindSpore's kernel does
_SCALARS = ("lr", "beta1", "beta2", "epsilon", "decay")


class FusedCastAdamWeightDecay:
    r"""``FusedCastAdamWeightDecay(use_locking=False)(var, m, v, lr, beta1, beta2, epsilon, decay, gradient,
    global_norm)``, in place:

    .. math::
        g = \mathrm{float32}(gradient) / n, \quad n = global\_norm \text{ if } global\_norm \ge 10^{-10}
        \text{ else } 1 \\
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        w \leftarrow w - lr \left(\frac{m}{\sqrt{v} + \epsilon} + decay \cdot w\right)

    computed in float32 (``w`` a float32 copy of a float16 ``var``, rounded back into it; no bias correction,
    as AdamWeightDecay; a float32 ``var`` is updated by the AdamWeightDecay primitive). ``var``: a float16 or
    float32 Parameter; ``m``, ``v``: float32 Parameters of its shape; ``gradient``: float16, of its shape;
    ``lr``, ``beta1``, ``beta2``, ``epsilon``, ``decay``: Python floats or float32 Tensors of shape [] or [1];
    ``global_norm``: a number or a float Tensor of one element. Returns ``(var, m, v)``, the Parameters
    themselves. TypeError for another dtype, ValueError for a shape that differs from ``var``'s (MindSpore's
    checks)."""

    def __init__(self, use_locking=False):
        self.name = "FusedCastAdamWeightDecay"
        self.use_locking = validator.check_value_type("use_locking", use_locking, [bool], self.name)
        self._adam = AdamWeightDecay(use_locking)
        self._assign = Assign()

    def __repr__(self) -> str:
        return f"Prim[{self.name}]<use_locking={self.use_locking}>"

    def _check(self, var, m, v, gradient, scalars) -> None:
        for arg, t in (("var", var), ("m", m), ("v", v), ("gradient", gradient)):
            _FX._tensor(self.name, arg, t)
        for arg, t in (("m", m), ("v", v), ("gradient", gradient)):
            if tuple(t.shape) != tuple(var.shape):
                raise ValueError(
                    f"For '{self.name}', the '{arg}' must have the shape of 'var' {list(var.shape)}, but got "
                    f"{list(t.shape)}."
                )
        validator.check_tensor_dtype_valid("var", var.dtype, (mstype.float16, mstype.float32), self.name)
        validator.check_tensors_dtypes_same_and_valid({"m": m.dtype, "v": v.dtype}, (mstype.float32,), self.name)
        validator.check_tensor_dtype_valid("gradient", gradient.dtype, (mstype.float16,), self.name)
        for arg, value in zip(_SCALARS, scalars):
            if isinstance(value, Tensor):
                validator.check_tensor_dtype_valid(arg, value.dtype, (mstype.float32,), self.name)
            elif isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"For '{self.name}', the '{arg}' must be a float or a Tensor, but got {value!r}.")

    def __call__(self, var, m, v, lr, beta1, beta2, epsilon, decay, gradient, global_norm):
        scalars = (lr, beta1, beta2, epsilon, decay)
        self._check(var, m, v, gradient, scalars)
        if isinstance(global_norm, Tensor):
            if global_norm.dtype.kind != "f" or global_norm.size != 1:
                raise TypeError(
                    f"For '{self.name}', the 'global_norm' must be a number or a float Tensor of one element, but "
                    f"got a {global_norm.dtype} Tensor of shape {list(global_norm.shape)}."
                )
            norm = F.reshape(F.cast(global_norm, mstype.float32), ())
            norm = F.select(F.less(norm, _MIN_GLOBAL_NORM), F.ones_like(norm), norm)
        elif isinstance(global_norm, numbers.Real) and not isinstance(global_norm, bool):
            norm = float(global_norm) if global_norm >= _MIN_GLOBAL_NORM else 1.0
        else:
            raise TypeError(
                f"For '{self.name}', the 'global_norm' must be a number or a Tensor, but got {global_norm!r}."
            )
        grad = F.cast(gradient, mstype.float32) / norm
        if var.dtype == mstype.float32:
            self._adam(var, m, v, *scalars, grad)
            return var, m, v
        # a float16 weight: AdamWeightDecay's update written out on its float32 copy (the primitive updates
        # Parameters of one dtype in place), the moments updated in place, the weight rounded back
        lr, beta1, beta2, epsilon, decay = (
            F.cast(s, mstype.float32) if isinstance(s, Tensor) else float(s) for s in scalars
        )
        m_new = m + (grad - m) * (1.0 - beta1)
        v_new = v + (grad * grad - v) * (1.0 - beta2)
        self._assign(m, m_new)
        self._assign(v, v_new)
        weight = F.cast(var, mstype.float32)
        weight = weight - lr * (m_new / (F.sqrt(v_new) + epsilon) + decay * weight)
        self._assign(var, F.cast(weight, mstype.float16))
        return var, m, v
