"""More of MindSpore's optimizers (``nn.AdaMax``, ``nn.Adadelta``, ``nn.Rprop``, ``nn.ASGD``,
``nn.ProximalAdagrad``, ``nn.FTRL`` and the ``nn.LARS`` wrapper), each update composed of primitives (Mul, Add,
Sqrt, Pow, Maximum, Sign, Select...) and written back with Assign, as ``nn.Lamb``'s is, so a traced step
(``jit``, GRAPH_MODE) replays it. They take what ``nn.Optimizer`` takes (see ``opforge/nn/optim.py``): the
learning rate as a float, a Tensor, one value per step or a ``LearningRateSchedule``; ``weight_decay`` (added to
the gradient as ``weight_decay * param`` before the update); ``loss_scale`` (dividing the gradient). State
Parameters start as MindSpore's do and are registered on the optimizer (saved with a checkpoint). Every update
runs in the parameter's dtype (float16, float32, float64)."""

from __future__ import annotations

import numbers

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.cell import Cell
from opforge.nn.optim import Optimizer, _check_bool, _check_float, _check_moments
from opforge.tensor import is_placeholder

__all__ = ["AdaMax", "Adadelta", "Rprop", "ASGD", "ProximalAdagrad", "FTRL", "LARS"]


def _rate(optimizer: Optimizer, index: int):
    """The learning-rate Parameter of parameter ``index`` (its group's where the optimizer has groups)."""
    return optimizer._lr(index)


def _decays(optimizer: Optimizer) -> tuple:
    """Each parameter's weight decay (its group's, else the optimizer's)."""
    return tuple(optimizer.weight_decays)


class AdaMax(Optimizer):
    r"""MindSpore's ``nn.AdaMax(params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08, weight_decay=0.0,
    loss_scale=1.0)``, Adam with the infinity norm. With :math:`t` the step (from 1):

    .. math::
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \max(\beta_2 v, |g|), \quad
        w \leftarrow w - \frac{lr}{1 - \beta_1^t} \frac{m}{v + \epsilon}

    State: ``moment1.*`` and ``moment2.*`` (0), ``beta1_power`` (:math:`\beta_1^t`)."""

    def __init__(
        self, params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08, weight_decay=0.0, loss_scale=1.0
    ):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = _check_moments("AdaMax", beta1, beta2, eps)
        self.moment1 = self._clone_state("moment1")
        self.moment2 = self._clone_state("moment2")
        self.beta1_power = self._scalar_state("beta1_power", 1.0)

    def construct(self, gradients):
        gradients = self._prepare(gradients)
        self._assign(self.beta1_power, self.beta1_power * self.beta1)
        self._apply_all(gradients)
        return self.parameters

    def apply(self, index, param, grad):
        m, v = self.moment1[index], self.moment2[index]
        self._assign(m, m * self.beta1 + grad * (1.0 - self.beta1))
        self._assign(v, ops.maximum(v * self.beta2, ops.abs(grad)))
        lr = self._like(_rate(self, index), param)
        power = self._like(self._params["beta1_power"], param)
        self._assign(param, param - lr / (1.0 - power) * (m / (v + self.eps)))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", beta1={self.beta1:g}, beta2={self.beta2:g}, eps={self.eps:g}"


class Adadelta(Optimizer):
    r"""MindSpore's ``nn.Adadelta(params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0,
    weight_decay=0.0)``:

    .. math::
        a \leftarrow \rho a + (1 - \rho) g^2, \quad
        u = \sqrt{a_u + \epsilon} \frac{g}{\sqrt{a + \epsilon}}, \quad
        a_u \leftarrow \rho a_u + (1 - \rho) u^2, \quad w \leftarrow w - lr \cdot u

    State: ``accum.*`` (:math:`a`) and ``accum_update.*`` (:math:`a_u`), both 0 at the start. ``rho`` in
    [0, 1], ``epsilon`` >= 0."""

    def __init__(self, params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.rho = _check_float("Adadelta", "rho", rho)
        if self.rho > 1.0:
            raise ValueError(f"For 'Adadelta', the 'rho' must be in [0.0, 1.0], but got {self.rho}.")
        self.epsilon = _check_float("Adadelta", "epsilon", epsilon)
        self.accum = self._clone_state("accum")
        self.accum_update = self._clone_state("accum_update")

    def apply(self, index, param, grad):
        accum, accum_update, rho = self.accum[index], self.accum_update[index], self.rho
        self._assign(accum, accum * rho + grad * grad * (1.0 - rho))
        update = ops.sqrt(accum_update + self.epsilon) * grad / ops.sqrt(accum + self.epsilon)
        self._assign(accum_update, accum_update * rho + update * update * (1.0 - rho))
        self._assign(param, param - update * self._like(_rate(self, index), param))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", rho={self.rho:g}, epsilon={self.epsilon:g}"


def _pair(where: str, name: str, value) -> tuple:
    if not isinstance(value, tuple):
        raise TypeError(f"For '{where}', the '{name}' must be a tuple, but got {type(value).__name__}.")
    if len(value) != 2:
        raise ValueError(f"For '{where}', the '{name}' must be a tuple of 2 floats, but got {len(value)} values.")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"For '{where}', the '{name}' must hold floats, but got {type(v).__name__}.")
    return float(value[0]), float(value[1])


def _filled(like, value):
    return ops.fill(like.dtype, like.shape, value)


class Rprop(Optimizer):
    r"""MindSpore's ``nn.Rprop(params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.),
    weight_decay=0.)``, resilient backpropagation: a step size :math:`\Delta` per element (``learning_rate`` at
    the first step) that grows by :math:`\eta_+` while the gradient keeps its sign and shrinks by :math:`\eta_-`
    when it flips, clipped to ``step_sizes`` :math:`[\Delta_{min}, \Delta_{max}]`:

    .. math::
        \Delta \leftarrow \mathrm{clip}(\Delta \cdot \{\eta_+ \text{ if } g\,g_{prev} > 0,\
        \eta_- \text{ if } g\,g_{prev} < 0,\ 1 \text{ else}\}), \quad
        w \leftarrow w - \Delta\,\mathrm{sign}(g')

    where :math:`g' = 0` where the sign flipped (no step there) and :math:`g` elsewhere; :math:`g_{prev}` becomes
    :math:`g'`. ``etas`` = (:math:`\eta_-` in (0, 1), :math:`\eta_+` > 1). State: ``prev.*``, ``step_size.*``."""

    def __init__(self, params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0), weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.etaminus, self.etaplus = _pair("Rprop", "etas", etas)
        self.step_size_min, self.step_size_max = _pair("Rprop", "step_sizes", step_sizes)
        if not 0.0 < self.etaminus < 1.0:
            raise ValueError(f"For 'Rprop', the 'etas'[0] (etaminus) must be in (0, 1), but got {self.etaminus}.")
        if self.etaplus <= 1.0:
            raise ValueError(f"For 'Rprop', the 'etas'[1] (etaplus) must be > 1, but got {self.etaplus}.")
        if self.step_size_min > self.step_size_max:
            raise ValueError(f"For 'Rprop', the 'step_sizes' must be (min, max) with min <= max, but got {step_sizes}.")
        self.prev = self._clone_state("prev")
        self.step_size = self._clone_state("step_size")

    def apply(self, index, param, grad):
        prev, step_size = self.prev[index], self.step_size[index]
        lr = self._like(_rate(self, index), param)
        first = self._cast(ops.equal(self.global_step, 1), param.dtype)  # the first step starts at lr
        step = step_size * (1.0 - first) + lr * first
        sign = ops.sign(grad * prev)
        zero = ops.zeros_like(grad)
        flipped = ops.less(sign, zero)
        factor = ops.select(ops.greater(sign, zero), _filled(grad, self.etaplus), _filled(grad, 1.0))
        factor = ops.select(flipped, _filled(grad, self.etaminus), factor)
        step = ops.clip_by_value(step * factor, self.step_size_min, self.step_size_max)
        kept = ops.select(flipped, zero, grad)
        self._assign(param, param - ops.sign(kept) * step)
        self._assign(prev, kept)
        self._assign(step_size, step)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", etas=({self.etaminus:g}, {self.etaplus:g})"


class ASGD(Optimizer):
    r"""MindSpore's ``nn.ASGD(params, learning_rate=0.1, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0)``,
    averaged SGD. With :math:`t` the step (from 1), :math:`\eta` starting at ``learning_rate`` and :math:`\mu` at 1:

    .. math::
        w \leftarrow w (1 - \lambda \eta) - \eta g, \quad
        ax \leftarrow ax + \mu (w - ax) \text{ (} w \text{ when } \mu = 1\text{)}, \quad
        \eta \leftarrow \frac{lr}{(1 + \lambda\, lr\, t)^\alpha}, \quad \mu \leftarrow \frac{1}{\max(1, t - t_0)}

    ``lambd``, ``alpha`` and ``t0`` must be floats (TypeError). State: ``eta.*`` and ``mu.*`` (float32 scalars),
    ``ax.*`` (the averaged parameter, 0 at the start)."""

    def __init__(self, params, learning_rate=0.1, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        for name, value in (("lambd", lambd), ("alpha", alpha), ("t0", t0)):
            if not isinstance(value, float):
                raise TypeError(f"For 'ASGD', the '{name}' must be a float, but got {type(value).__name__}.")
        self.lambd, self.alpha, self.t0 = lambd, alpha, t0
        self.eta = tuple(self._scalar_state(f"eta.{p.name}", 0.0) for p in self.parameters)
        self.mu = tuple(self._scalar_state(f"mu.{p.name}", 1.0) for p in self.parameters)
        self.ax = self._clone_state("ax")

    def apply(self, index, param, grad):
        eta_state, mu_state, ax = self.eta[index], self.mu[index], self.ax[index]
        rate = _rate(self, index)
        step = self._cast(self.global_step, mstype.float32)
        first = self._cast(ops.equal(self.global_step, 1), mstype.float32)
        eta_now = eta_state * (1.0 - first) + rate * first
        eta, mu = self._like(eta_now, param), self._like(mu_state, param)
        new = param * (1.0 - eta * self.lambd) - grad * eta
        self._assign(param, new)
        averaged = ax + (new - ax) * mu
        self._assign(ax, ops.select(ops.equal(ops.ones_like(new) * mu, ops.ones_like(new)), new, averaged))
        self._assign(eta_state, rate / ops.pow(1.0 + rate * step * self.lambd, self.alpha))
        self._assign(mu_state, 1.0 / ops.maximum(step - self.t0, 1.0))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", lambd={self.lambd:g}, alpha={self.alpha:g}, t0={self.t0:g}"


class ProximalAdagrad(Optimizer):
    r"""MindSpore's ``nn.ProximalAdagrad(params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0,
    use_locking=False, loss_scale=1.0, weight_decay=0.0)``, Adagrad with an L1 / L2 proximal step:

    .. math::
        h \leftarrow h + g^2, \quad v = w - lr \frac{g}{\sqrt{h}}, \quad
        w \leftarrow \frac{\mathrm{sign}(v)}{1 + lr \cdot l2} \max(|v| - lr \cdot l1, 0)

    State: ``accum.*`` (:math:`h`, starting at ``accum`` >= 0). ``l1``, ``l2`` >= 0."""

    def __init__(
        self, params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0, use_locking=False, loss_scale=1.0,
        weight_decay=0.0,
    ):  # fmt: skip
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.initial_accum = _check_float("ProximalAdagrad", "accum", accum)
        self.l1 = _check_float("ProximalAdagrad", "l1", l1)
        self.l2 = _check_float("ProximalAdagrad", "l2", l2)
        _check_bool("ProximalAdagrad", "use_locking", use_locking)
        self.accum = self._clone_state("accum", self.initial_accum)

    def apply(self, index, param, grad):
        accum = self.accum[index]
        lr = self._like(_rate(self, index), param)
        self._assign(accum, accum + grad * grad)
        v = param - lr * grad / ops.sqrt(accum)
        shrunk = ops.maximum(ops.abs(v) - lr * self.l1, ops.zeros_like(v))
        self._assign(param, ops.sign(v) / (1.0 + lr * self.l2) * shrunk)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", accum={self.initial_accum:g}, l1={self.l1:g}, l2={self.l2:g}"


class FTRL(Optimizer):
    r"""MindSpore's ``nn.FTRL(params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0, l2=0.0,
    use_locking=False, loss_scale=1.0, weight_decay=0.0)``, follow-the-regularized-leader (the ApplyFtrl
    formula), with :math:`p` = ``lr_power`` (<= 0):

    .. math::
        n' = n + g^2, \quad \sigma = \frac{n'^{-p} - n^{-p}}{lr}, \quad z \leftarrow z + g - \sigma w, \quad
        w \leftarrow \begin{cases} \frac{\mathrm{sign}(z)\, l1 - z}{n'^{-p} / lr + 2\, l2} & |z| > l1 \\
        0 & \text{else} \end{cases}, \quad n \leftarrow n'

    State: ``moments.*`` (:math:`n`, starting at ``initial_accum`` >= 0) and ``linear.*`` (:math:`z`, 0).
    ``l1``, ``l2`` >= 0."""

    def __init__(
        self, params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0, l2=0.0, use_locking=False,
        loss_scale=1.0, weight_decay=0.0,
    ):  # fmt: skip
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.initial_accum = _check_float("FTRL", "initial_accum", initial_accum)
        if isinstance(lr_power, bool) or not isinstance(lr_power, numbers.Real):
            raise TypeError(f"For 'FTRL', the 'lr_power' must be a float, but got {type(lr_power).__name__}.")
        if lr_power > 0:
            raise ValueError(f"For 'FTRL', the 'lr_power' must be <= 0, but got {lr_power}.")
        self.lr_power = float(lr_power)
        self.l1 = _check_float("FTRL", "l1", l1)
        self.l2 = _check_float("FTRL", "l2", l2)
        _check_bool("FTRL", "use_locking", use_locking)
        self.moments = self._clone_state("moments", self.initial_accum)
        self.linear = self._clone_state("linear")

    def apply(self, index, param, grad):
        n, z = self.moments[index], self.linear[index]
        lr = self._like(_rate(self, index), param)
        n_new = n + grad * grad
        power_new, power_old = ops.pow(n_new, -self.lr_power), ops.pow(n, -self.lr_power)
        z_new = z + grad - (power_new - power_old) / lr * param
        self._assign(z, z_new)
        quadratic = power_new / lr + 2.0 * self.l2
        solved = (ops.sign(z_new) * self.l1 - z_new) / quadratic
        self._assign(
            param, ops.select(ops.greater(ops.abs(z_new), _filled(z_new, self.l1)), solved, ops.zeros_like(z_new))
        )
        self._assign(n, n_new)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", lr_power={self.lr_power:g}, l1={self.l1:g}, l2={self.l2:g}"


def _default_lars_filter(param) -> bool:
    return "LayerNorm" not in param.name and "bias" not in param.name


class LARS(Optimizer):
    r"""MindSpore's ``nn.LARS(optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False, lars_filter=lambda x:
    'LayerNorm' not in x.name and 'bias' not in x.name)``: layer-wise adaptive rate scaling of the gradients,
    then ``optimizer``'s step. For each parameter :math:`w` that ``lars_filter`` selects, with :math:`\delta` the
    wrapped optimizer's weight decay (over its loss scale), :math:`\theta` = ``coefficient``:

    .. math::
        \lambda = \frac{\theta \lVert w \rVert}{\lVert g \rVert + \delta \lVert w \rVert + \epsilon}, \quad
        \lambda \leftarrow \min(\lambda / lr, 1) \text{ with use\_clip}, \quad g \leftarrow \lambda (g + \delta w)

    (:math:`\lambda = 1` where either norm is 0); the other parameters' gradients pass unchanged, undecayed.
    The wrapped optimizer's weight decay and loss scale are taken over (set to 0 and 1 on it), as MindSpore does.
    With ``use_clip`` the learning rate is the wrapped optimizer's ``learning_rate`` Parameter as it stands
    before the step (a dynamic rate: the previous step's). Its ``parameters`` and state are the optimizer's."""

    def __init__(self, optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False, lars_filter=_default_lars_filter):
        Cell.__init__(self, auto_prefix=False)  # no state of its own: the wrapped optimizer's
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"For 'LARS', the 'optimizer' must be an Optimizer, but got {type(optimizer).__name__}.")
        for name, value in (("epsilon", epsilon), ("coefficient", coefficient)):
            if not isinstance(value, float):
                raise TypeError(f"For 'LARS', the '{name}' must be a float, but got {type(value).__name__}.")
        self.use_clip = _check_bool("LARS", "use_clip", use_clip)
        self.epsilon, self.coefficient = epsilon, coefficient
        self.opt = optimizer
        self.parameters = optimizer.parameters
        self.lars_flag = tuple(bool(lars_filter(p)) for p in self.parameters)
        self.loss_scale = optimizer.loss_scale
        self.lars_decays = tuple(d / optimizer.loss_scale for d in _decays(optimizer))
        optimizer.weight_decay, optimizer.loss_scale = 0.0, 1.0
        optimizer.weight_decays = (0.0,) * len(self.parameters)
        self.weight_decay = 0.0

    def get_lr(self):
        return self.opt.get_lr()

    def extend_repr(self) -> str:
        return f"epsilon={self.epsilon:g}, coefficient={self.coefficient:g}, use_clip={self.use_clip}"

    def construct(self, gradients):
        gradients = self.scale_grad(self.opt._check_gradients(gradients))
        scaled = []
        for index, (param, grad) in enumerate(zip(self.parameters, gradients)):
            if not self.lars_flag[index] or is_placeholder(param):
                scaled.append(grad)
                continue
            decay = self.lars_decays[index]
            w_norm = ops.sqrt(ops.ReduceSum()(param * param, ()))
            g_norm = ops.sqrt(ops.ReduceSum()(grad * grad, ()))
            ratio = w_norm * self.coefficient / (g_norm + w_norm * decay + self.epsilon)
            usable = ops.logical_and(ops.greater(w_norm, 0.0), ops.greater(g_norm, 0.0))
            ratio = ops.select(usable, ratio, ops.ones_like(ratio))
            if self.use_clip:
                lr = self.opt._like(_rate(self.opt, index), param)
                ratio = ops.minimum(ratio / lr, ops.ones_like(ratio))
            scaled.append((grad + param * decay if decay else grad) * ratio)
        return self.opt(tuple(scaled))
