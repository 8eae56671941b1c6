"""MindSpore's ``mindspore.mint.optim``: ``SGD``, ``Adam`` and ``AdamW`` with PyTorch's arguments and update
rules, as opforge optimizers (``opforge.nn.optim.Optimizer``: parameter groups, learning-rate schedules (a
``LearningRateSchedule`` Cell, a list or a Tensor of rates), ``optimizer(grads)``, states as Parameters a
checkpoint saves, traced steps in GRAPH_MODE). Unlike MindSpore's
``nn`` optimizers, the weight decay applies to every parameter (no filter by name), and Adam's moments are
bias-corrected. The updates are written with elementwise operators, on any float dtype and device."""

from __future__ import annotations

import numbers

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.optim import Optimizer, _check_float  # (one check of the optimizers' floats)
from opforge.tensor import Tensor

__all__ = ["SGD", "Adam", "AdamW"]


def _check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{where}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value


def _exact(param):
    """The dtype of the scalar arithmetic of ``param``'s update: float64 for float64, else float32."""
    return mstype.float64 if param._meta[0] == mstype.float64 else mstype.float32


class _TorchOptimizer(Optimizer):
    """The part PyTorch's rules share: the gradient negated with ``maximize``, the step count as a float, the
    weight decay of every parameter (its group's) added to its gradient (L2) unless decoupled."""

    _decoupled = False

    def __init__(self, params, lr, weight_decay: float, maximize: bool):
        where = type(self).__name__
        if isinstance(lr, numbers.Real):  # (a schedule, a list or a Tensor of rates: the base class checks it)
            lr = _check_float(where, "lr", lr, 0.0)
        super().__init__(lr, params, _check_float(where, "weight_decay", weight_decay, 0.0))
        self.maximize = _check_bool(where, "maximize", maximize)
        self._sub, self._div, self._sqrt = ops.Sub(), ops.Div(), ops.Sqrt()
        self._pow, self._maximum, self._neg = ops.Pow(), ops.Maximum(), ops.Neg()

    def decay_weight(self, gradients: tuple) -> tuple:
        return gradients  # every parameter's, in ``_gradient``

    def _gradient(self, index: int, param, grad):
        if self.maximize:
            grad = self._neg(grad)
        decay = self.weight_decays[index]
        if decay and not self._decoupled:
            grad = self._add(grad, self._mul(param, decay))
        return grad

    def _step(self, param):
        """This step's number (1 for the first), a float scalar: float64 for a float64 parameter, else float32
        (float16 and bfloat16 cannot count steps past 2048 nor hold 0.999's distance to 1)."""
        return self._cast(self.global_step, _exact(param))


class SGD(_TorchOptimizer):
    r"""``SGD(params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False)``:

    .. math::
        g \leftarrow g + \lambda w, \quad b \leftarrow g \text{ (first step) or } \mu b + (1 - \tau) g, \quad
        w \leftarrow w - lr \cdot (g + \mu b \text{ if nesterov else } b)

    without momentum :math:`w \leftarrow w - lr\,g`. State: ``momentum_buffer.*``."""

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False):
        super().__init__(params, lr, weight_decay, maximize)
        self.momentum = _check_float("SGD", "momentum", momentum, 0.0)
        self.dampening = _check_float("SGD", "dampening", dampening, 0.0)
        self.nesterov = _check_bool("SGD", "nesterov", nesterov)
        if nesterov and (self.momentum <= 0 or self.dampening != 0):
            raise ValueError("For 'SGD', nesterov=True needs a momentum above 0 and zero dampening.")
        self.momentum_buffer = self._clone_state("momentum_buffer") if self.momentum else ()

    def apply(self, index, param, grad):
        grad = self._gradient(index, param, grad)
        if self.momentum:
            buf = self.momentum_buffer[index]
            # the first step's buffer is the gradient itself: (1 - dampening) only from the second step on
            first = self._minimum(self._sub(self._step(param), 1.0), 1.0)
            kept = self._cast(self._sub(1.0, self._mul(first, self.dampening)), param._meta[0])
            self._assign(buf, self._add(self._mul(buf, self.momentum), self._mul(grad, kept)))
            grad = self._add(grad, self._mul(buf, self.momentum)) if self.nesterov else buf
        self._assign(param, self._sub(param, self._mul(grad, self._like(self._lr(index), param))))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", momentum={self.momentum:g}, nesterov={self.nesterov}"


class Adam(_TorchOptimizer):
    r"""``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
    maximize=False)``, PyTorch's:

    .. math::
        g \leftarrow g + \lambda w, \quad m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \quad
        w \leftarrow w - lr \frac{m / (1 - \beta_1^t)}{\sqrt{\hat v / (1 - \beta_2^t)} + \epsilon}

    with :math:`\hat v = v`, or its running maximum with ``amsgrad``. State: ``exp_avg.*``, ``exp_avg_sq.*``
    (and ``max_exp_avg_sq.*``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False):  # fmt: skip
        super().__init__(params, lr, weight_decay, maximize)
        where = type(self).__name__
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"For '{where}', the 'betas' must be a pair of floats, but got {betas!r}.")
        self.beta1, self.beta2 = (_check_float(where, f"betas[{i}]", b, 0.0, 1.0) for i, b in enumerate(betas))
        self.eps = _check_float(where, "eps", eps, 0.0)
        self.amsgrad = _check_bool(where, "amsgrad", amsgrad)
        self.exp_avg = self._clone_state("exp_avg")
        self.exp_avg_sq = self._clone_state("exp_avg_sq")
        self.max_exp_avg_sq = self._clone_state("max_exp_avg_sq") if amsgrad else ()

    def apply(self, index, param, grad):
        grad = self._gradient(index, param, grad)
        lr = self._like(self._lr(index), param)
        if self._decoupled and self.weight_decays[index]:
            self._assign(param, self._mul(param, self._sub(1.0, self._mul(lr, self.weight_decays[index]))))
        m, v = self.exp_avg[index], self.exp_avg_sq[index]
        self._assign(m, self._add(self._mul(m, self.beta1), self._mul(grad, 1.0 - self.beta1)))
        self._assign(v, self._add(self._mul(v, self.beta2), self._mul(self._mul(grad, grad), 1.0 - self.beta2)))
        if self.amsgrad:
            self._assign(self.max_exp_avg_sq[index], self._maximum(self.max_exp_avg_sq[index], v))
            v = self.max_exp_avg_sq[index]
        step, exact = self._step(param), _exact(param)
        beta1, beta2 = (Tensor(b, exact) for b in (self.beta1, self.beta2))
        correction1 = self._sub(1.0, self._pow(beta1, step))  # in float32 or float64, then cast: see _step
        root2 = self._cast(self._sqrt(self._sub(1.0, self._pow(beta2, step))), param._meta[0])
        step_size = self._cast(self._div(self._cast(self._lr(index), exact), correction1), param._meta[0])
        denom = self._add(self._div(self._sqrt(v), root2), self.eps)
        self._assign(param, self._sub(param, self._mul(self._div(m, denom), step_size)))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", betas=({self.beta1:g}, {self.beta2:g}), eps={self.eps:g}"


class AdamW(Adam):
    r"""``AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
    maximize=False)``: Adam with the weight decay decoupled from the gradient, PyTorch's:
    :math:`w \leftarrow w (1 - lr \lambda)` before Adam's update (which then has no L2 term)."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False):  # fmt: skip
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
