"""Optimizers (MindSpore's ``nn.optim``): each update is an in-place (RW_WRITE) primitive.

``optimizer(gradients)`` applies one step to ``optimizer.parameters``, given one gradient per
parameter (what ``GradOperation(get_by_list=True)`` or ``grad(..., weights=...)`` returns).

- ``SGD``: ApplyGradientDescent, or ApplyMomentum when ``momentum > 0``.
- ``Momentum``: ApplyMomentum.
- ``Adam``: the Adam primitive; ``beta1_power`` / ``beta2_power`` are Parameters updated with
  Mul and Assign.
- ``RMSProp``: ApplyRMSProp, or ApplyCenteredRMSProp when ``centered``.
- ``Adagrad``: ApplyAdagrad.
- ``AdamWeightDecay``: the AdamWeightDecay primitive (decoupled weight decay, no bias correction).

Optimizer state (``accum``, ``moments``, ``moment1``, ``moment2``, ``learning_rate``, beta powers) are
Parameters with ``requires_grad=False`` registered on the optimizer, so they are saved with a
checkpoint of a ``TrainOneStepCell``. Each step, as in MindSpore: ``weight_decay * loss_scale * param`` is
added to the (still scaled) gradients of the parameters the decay applies to (without groups, those whose
names hold neither 'beta' nor 'gamma'), the sums are divided by ``loss_scale`` (when it is not 1), and the
update runs
with the step's learning rate: a float, a 0-d Tensor, a list / tuple / 1-D Tensor of one value per
step (a dynamic learning rate: step ``i`` uses ``learning_rate[i]``, the last value once they run out;
``global_step`` counts the steps), or a ``LearningRateSchedule`` Cell (``nn.CosineDecayLR``...), evaluated
at ``global_step`` each step.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Iterable

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.common.parameter import ParameterTuple
from opforge.dispatch import sharding
from opforge.nn.cell import Cell
from opforge.nn.learning_rate_schedule import LearningRateSchedule
from opforge.parallel_context import optimizer_parallel
from opforge.tensor import Parameter, Tensor, is_placeholder

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "RMSProp", "Adagrad", "AdamWeightDecay", "Lamb"]


def _check_float(where: str, name: str, value, low: float = 0.0, high: float | None = None, low_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{where}', the '{name}' must be a float, but got {type(value).__name__}.")
    value = float(value)
    bad_low = value <= low if low_open else value < low
    if bad_low or (high is not None and value >= high):
        interval = ("(" if low_open else "[") + f"{low}, " + (f"{high})" if high is not None else "inf)")
        raise ValueError(f"For '{where}', the '{name}' must be in {interval}, but got {value}.")
    return value


def _check_moments(where: str, beta1, beta2, eps) -> tuple:
    """Adam's (beta1, beta2, eps), checked: betas in (0, 1), eps above 0."""
    return (
        _check_float(where, "beta1", beta1, 0.0, 1.0, low_open=True),
        _check_float(where, "beta2", beta2, 0.0, 1.0, low_open=True),
        _check_float(where, "eps", eps, 0.0, low_open=True),
    )


def _learning_rates(where: str, learning_rate) -> tuple:
    """The learning rate as a tuple of floats: one, or one per step."""
    if isinstance(learning_rate, Tensor):
        if learning_rate.ndim > 1:
            raise ValueError(
                f"For '{where}', the 'learning_rate' Tensor must be 0-d or 1-d, but got {list(learning_rate.shape)}."
            )
        learning_rate = learning_rate.asnumpy().reshape(-1).tolist()
    if isinstance(learning_rate, np.ndarray):
        learning_rate = learning_rate.reshape(-1).tolist()
    # MindSpore's Iterable: a list, a tuple or a generator (the zoo's DeepLabV3 passes cosine_lr's), one per step
    iterable = isinstance(learning_rate, Iterable) and not isinstance(learning_rate, (str, bytes))
    values = list(learning_rate) if iterable else [learning_rate]
    if not values:
        raise ValueError(f"For '{where}', the 'learning_rate' must hold at least one value, but got none.")
    return tuple(_check_float(where, "learning_rate", v) for v in values)


def _parameter_groups(where: str, parameters, weight_decay: float) -> tuple:
    """MindSpore's ``params``: Parameters, or parameter groups, dicts with the key 'params' (the group's
    Parameters) and optionally 'weight_decay' and 'lr' (the group's own, in place of the optimizer's) and
    'grad_centralization' (accepted; False is the only behaviour); a dict {'order_params': [...]} sets the
    order of the parameters. Returns (the Parameters, the weight decay of each, the group of each, {group:
    its 'lr'} for the groups with one)."""
    if isinstance(parameters, Parameter):
        parameters = [parameters]
    parameters = list(parameters)
    if not parameters:
        raise ValueError(f"For '{where}', the 'params' must not be empty.")
    if not any(isinstance(item, dict) for item in parameters):
        groups = [{"params": parameters}]
        order = None
    elif not all(isinstance(item, dict) for item in parameters):
        raise TypeError(f"For '{where}', the 'params' must be all Parameters or all dicts (parameter groups).")
    else:
        groups = [g for g in parameters if "order_params" not in g]
        orders = [g["order_params"] for g in parameters if "order_params" in g]
        order = list(orders[-1]) if orders else None
    params, decays, group_of, group_lrs = [], [], [], {}
    for index, group in enumerate(groups):
        unknown = set(group) - {"params", "weight_decay", "lr", "grad_centralization"}
        if "params" not in group or unknown:
            raise ValueError(
                f"For '{where}', a parameter group must have the key 'params' and may have 'weight_decay', 'lr' "
                f"and 'grad_centralization', but got the keys {sorted(group)}."
            )
        members = group["params"]
        members = [members] if isinstance(members, Parameter) else list(members)
        decay = _check_float(where, "weight_decay", group.get("weight_decay", weight_decay))
        if "lr" in group:
            group_lrs[index] = group["lr"]
        for p in members:
            if not isinstance(p, Parameter):
                raise TypeError(f"For '{where}', every item of 'params' must be a Parameter, but got {type(p)}.")
            params.append(p)
            decays.append(decay)
            group_of.append(index)
    if len({id(p) for p in params}) != len(params):
        raise ValueError(f"For '{where}', the 'params' hold the same Parameter more than once.")
    if order is not None:
        position = {id(p): i for i, p in enumerate(params)}
        if sorted(id(p) for p in order) != sorted(position) or len(order) != len(params):
            raise ValueError(
                f"For '{where}', the 'order_params' must hold exactly the Parameters of the groups, each once."
            )
        picks = [position[id(p)] for p in order]
        params, decays, group_of = ([seq[i] for i in picks] for seq in (params, decays, group_of))
    return params, decays, group_of, group_lrs


class Optimizer(Cell):
    """Base class of optimizers: holds the parameters, the learning rate and the weight decay.

    ``params`` is an iterable of Parameters (``net.trainable_params()``). ``learning_rate`` is a
    float or a 0-d Tensor, kept as the Parameter ``optimizer.learning_rate`` (change it with
    ``optimizer.learning_rate.set_data(0.01)``), or one value per step (list, tuple or 1-D Tensor).
    ``loss_scale`` (> 0) divides every gradient, undoing a loss scaled up against float16 underflow.
    """

    def __init__(self, learning_rate, parameters, weight_decay: float = 0.0, loss_scale: float = 1.0):
        super().__init__(auto_prefix=False)
        where = type(self).__name__
        self.weight_decay = _check_float(where, "weight_decay", weight_decay)
        params_arg = parameters
        parameters, decays, group_of, group_lrs = _parameter_groups(where, parameters, self.weight_decay)
        for p in parameters:
            if p.dtype.kind != "f":
                raise TypeError(f"For '{where}', the parameter '{p.name}' must be floating point, but got {p.dtype}.")
        self.parameters = ParameterTuple(parameters)  # MindSpore's type: its clone() makes optimizer states
        self.weight_decays = tuple(decays)  # one per parameter: its group's, else weight_decay
        self.loss_scale = _check_float(where, "loss_scale", loss_scale, 0.0, low_open=True)
        # MindSpore's flags for optimizers written by users (the model zoo's fused Momentum reads them):
        # whether any weight decay applies, whether gradients need unscaling, and the factor that does it.
        self.exec_weight_decay = any(d > 0.0 for d in self.weight_decays)
        self.need_scale = self.loss_scale != 1.0
        self.reciprocal_scale = Tensor(np.float32(1.0 / self.loss_scale))
        self.lr_schedule_cell, schedule = self._lr_values(where, learning_rate)
        self.dynamic_lr = len(schedule) > 1 or self.lr_schedule_cell is not None
        self.learning_rate = Parameter(np.float32(schedule[0]), name="learning_rate", requires_grad=False)
        self._lr_schedule = Tensor(np.array(schedule, np.float32)) if len(schedule) > 1 else None
        # Groups with their own 'lr': a Parameter 'learning_rate_group_<i>' each, set every step as the
        # default one is; ``_lr_index[i]`` names the rate parameter i uses (None: the default one).
        self.is_group_lr = bool(group_lrs)
        self._group_lrs = []
        for group, lr in group_lrs.items():
            cell, values = self._lr_values(where, lr)
            rate = Parameter(np.float32(values[0]), name=f"learning_rate_group_{group}", requires_grad=False)
            self.insert_param_to_cell(rate.name, rate)
            table = Tensor(np.array(values, np.float32)) if len(values) > 1 else None
            self._group_lrs.append((rate, cell, table))
        slot = {group: i for i, group in enumerate(group_lrs)}
        self._lr_index = tuple(slot.get(g) for g in group_of)
        self.global_step = Parameter(np.int32(0), name="global_step", requires_grad=False)
        self._mindspore_attributes(params_arg)
        self._add, self._mul, self._cast = ops.Add(), ops.Mul(), ops.Cast()
        self._assign, self._reshape = ops.Assign(), ops.Reshape()
        self._gather, self._minimum = ops.Gather(), ops.Minimum()
        self._constants: dict = {}  # (value, dtype) -> a constant scalar Tensor, built once

    def _mindspore_attributes(self, params_arg) -> None:
        """The attributes MindSpore's Optimizer gives the optimizers users write (the model zoo's
        ``AdamWeightDecayForBert`` maps them over the parameters with ``HyperMap``): ``is_group``, per parameter
        ``decay_flags`` (a group's weight decay > 0; without groups, names without 'beta' or 'gamma') and
        ``optim_filter`` (all True: no parallel optimizer), and with groups ``weight_decay`` as one float32
        Tensor per parameter (without groups it stays the float)."""
        items = [params_arg] if isinstance(params_arg, Parameter) else list(params_arg)
        self.is_group = bool(items) and isinstance(items[0], dict)
        self.param_length = len(self.parameters)
        if self.is_group:
            self.decay_flags = tuple(d > 0.0 for d in self.weight_decays)
            self.weight_decay = tuple(Tensor(np.float32(d)) for d in self.weight_decays)
        else:
            self.decay_flags = tuple("beta" not in p.name and "gamma" not in p.name for p in self.parameters)
        self.dynamic_decay_flags = (False,) * self.param_length if self.is_group else False
        self.optim_filter = (True,) * self.param_length
        self.use_parallel = False
        self.hyper_map, self.map_ = ops.HyperMap(), ops.Map()

    @staticmethod
    def _lr_values(where: str, learning_rate) -> tuple:
        """(a LearningRateSchedule Cell or None, the learning rate as a tuple of floats: one, or one per step)."""
        if isinstance(learning_rate, Cell) and not isinstance(learning_rate, LearningRateSchedule):
            raise TypeError(
                f"For '{where}', a Cell given as 'learning_rate' must be a LearningRateSchedule, but got "
                f"{type(learning_rate).__name__}."
            )
        # A schedule Cell is evaluated at global_step each step; otherwise one value or a list of them.
        if isinstance(learning_rate, LearningRateSchedule):
            return learning_rate, (0.0,)
        return None, _learning_rates(where, learning_rate)

    def _lr(self, index: int) -> Parameter:
        """The learning-rate Parameter of parameter ``index``: its group's, else ``learning_rate``."""
        slot = self._lr_index[index]
        return self._params["learning_rate"] if slot is None else self._group_lrs[slot][0]

    def _clone_state(self, prefix: str, init: float = 0.0) -> tuple:
        """One state Parameter per parameter, filled with ``init``, named ``prefix.<param name>``; a
        placeholder for a parameter without data (another pipeline stage's: this rank does not train it)."""
        state = []
        for p in self.parameters:
            device = p._meta[2]
            if is_placeholder(p):
                value = Tensor(shape=p.shape, dtype=p.dtype)
            else:
                value = Tensor._from_array(device.full(p.shape, init, p.dtype.np_dtype), p.dtype, device)
            s = Parameter(value)
            s.param_info = p.param_info.clone()  # a state is laid out as its weight (parallel runs)
            s.name, s.requires_grad = f"{prefix}.{p.name}", False
            self.insert_param_to_cell(s.name, s, check_name_contain_dot=False)
            state.append(s)
        return tuple(state)

    def _scalar_state(self, name: str, value: float) -> Parameter:
        p = Parameter(np.float32(value), name=name, requires_grad=False)
        self.insert_param_to_cell(name, p, check_name_contain_dot=False)
        return p

    @staticmethod
    def _constant(value: float) -> Tensor:
        return Tensor(np.float32(value))

    def get_lr(self):
        """The learning rate: a Parameter, or with groups' own rates one per parameter (a tuple). Called in the
        ``construct`` of an optimizer a user writes (MindSpore's way, which never calls ``_prepare``), it first
        sets this step's rate and counts the step, as MindSpore's ``get_lr`` does; elsewhere it only reads."""
        if self.__dict__.get("_step_pending"):
            self._next_step()
        if self.is_group_lr:
            return tuple(self._lr(i) for i in range(len(self.parameters)))
        return self._params["learning_rate"]

    def _call_construct(self, args, kwargs):
        if args and sharding.active() and not optimizer_parallel():
            # a sharded network's partial gradients completed in buckets, not by one AllReduce each
            sharding.complete_together(args[0], self.parameters)
        # a step that has not yet set its learning rate: get_lr() sets it (once) if construct asks for it
        object.__setattr__(self, "_step_pending", True)
        try:
            return super()._call_construct(args, kwargs)
        finally:
            object.__setattr__(self, "_step_pending", False)

    def _like(self, scalar, param: Parameter):
        """A float32 scalar state as ``param``'s dtype (a Cast primitive when they differ)."""
        dtype = param._meta[0]
        return scalar if dtype is scalar._meta[0] else self._cast(scalar, dtype)

    def _constant_like(self, constant: Tensor, param: Parameter) -> Tensor:
        """A constant scalar (momentum, betas, eps) as ``param``'s dtype, cast once and kept."""
        dtype = param._meta[0]
        if dtype is constant._meta[0]:
            return constant
        key = (id(constant), dtype)
        cached = self._constants.get(key)
        if cached is None or cached[0] is not constant:
            cached = self._constants[key] = (constant, self._cast(constant, dtype))
        return cached[1]

    def scale_grad(self, gradients: tuple) -> tuple:
        """Each gradient divided by ``loss_scale`` (unchanged when it is 1)."""
        if self.loss_scale == 1.0:
            return gradients
        inverse = 1.0 / self.loss_scale
        return tuple(self._mul(g, inverse) for g in gradients)

    def _next_step(self) -> None:
        """Set this step's learning rate (dynamic ones) and count the step in ``global_step``, with
        operators: a loaded checkpoint's step count is honoured, nothing is read back from the
        device, and a traced step (graph mode) replays both."""
        object.__setattr__(self, "_step_pending", False)
        self._set_rate(self.learning_rate, self.lr_schedule_cell, self._lr_schedule)
        for rate, cell, table in self._group_lrs:
            self._set_rate(rate, cell, table)
        self._assign(self.global_step, self._add(self.global_step, 1))

    def _set_rate(self, rate: Parameter, cell, table) -> None:
        """This step's value of a dynamic learning rate (a schedule Cell, or a table of one per step)."""
        if cell is not None:
            self._assign(rate, self._reshape(self._cast(cell(self.global_step), mstype.float32), ()))
        elif table is not None:
            last = table.shape[0] - 1
            self._assign(rate, self._gather(table, self._minimum(self.global_step, last), 0))

    def decay_weight(self, gradients: tuple) -> tuple:
        """``grad + weight_decay * loss_scale * param`` for each parameter ``decay_flags`` marks (without groups,
        MindSpore's default filter: names without 'beta' or 'gamma'), with the weight decay of its group: the
        gradients are still scaled here (``scale_grad`` divides them after), so MindSpore scales the decay
        with them, and the net step adds ``weight_decay * param``."""
        return tuple(
            g if decay == 0.0 or not flag or is_placeholder(p) else self._add(g, self._mul(p, decay * self.loss_scale))
            for p, g, decay, flag in zip(self.parameters, gradients, self.weight_decays, self.decay_flags)
        )

    def _check_gradients(self, gradients) -> tuple:
        gradients = tuple(gradients)
        if len(gradients) != len(self.parameters):
            raise ValueError(
                f"For '{type(self).__name__}', there must be one gradient per parameter ({len(self.parameters)}), "
                f"but got {len(gradients)}."
            )
        for p, g in zip(self.parameters, gradients):
            if not isinstance(g, Tensor) or g.shape != p.shape:
                shape = list(g.shape) if isinstance(g, Tensor) else type(g).__name__
                raise ValueError(
                    f"For '{type(self).__name__}', the gradient of '{p.name}' must have shape {list(p.shape)}, "
                    f"but got {shape}."
                )
        return gradients

    def _prepare(self, gradients) -> tuple:
        """The gradients this step applies (checked, decayed, then unscaled: MindSpore's order), the learning
        rate set."""
        gradients = self.scale_grad(self.decay_weight(self._check_gradients(gradients)))
        self._next_step()
        return gradients

    def construct(self, gradients):
        self._apply_all(self._prepare(gradients))
        return self.parameters

    def _apply_all(self, gradients) -> None:
        """``apply`` each parameter's gradient, skipping parameters without data (another pipeline
        stage's: ``opforge/nn/pipeline.py``)."""
        apply = self.apply
        for i, (p, g) in enumerate(zip(self.parameters, gradients)):
            if not is_placeholder(p):
                apply(i, p, g)

    def apply(self, index: int, param: Parameter, grad) -> None:
        raise NotImplementedError

    def extend_repr(self) -> str:
        decay = self.weight_decays[0] if self.is_group else self.weight_decay
        return f"learning_rate={float(self.learning_rate.asnumpy()):g}, weight_decay={decay:g}"


class SGD(Optimizer):
    r"""Stochastic gradient descent, with optional momentum (PyTorch / MindSpore conventions):

    .. math::
        a \leftarrow \mu a + (1 - \text{dampening}) g, \quad
        w \leftarrow w - lr \cdot (g + \mu a \text{ if nesterov else } a)

    with the accumulation ``a`` starting at zero; without momentum :math:`w \leftarrow w - lr\,g`.
    Nesterov needs ``momentum > 0`` and ``dampening == 0``.
    """

    def __init__(
        self,
        params,
        learning_rate=0.1,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        loss_scale: float = 1.0,
    ):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_float("SGD", "momentum", momentum)
        self.dampening = _check_float("SGD", "dampening", dampening)
        if not isinstance(nesterov, bool):
            raise TypeError(f"For 'SGD', the 'nesterov' must be bool, but got {type(nesterov).__name__}.")
        if nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError("For 'SGD', nesterov=True needs momentum > 0 and dampening == 0.")
        self.nesterov = nesterov
        if self.momentum > 0.0:
            self.accum = self._clone_state("accum")
            self.momentum_value = self._constant(self.momentum)
            # ApplyMomentum's gradient_scale scales the gradient into the accumulation: the dampening.
            self._apply_momentum = ops.ApplyMomentum(use_nesterov=nesterov, gradient_scale=1.0 - self.dampening)
        else:
            self.accum = ()
            self._apply_gd = ops.ApplyGradientDescent()

    def apply(self, index, param, grad):
        lr = self._like(self._lr(index), param)
        if self.momentum > 0.0:
            momentum = self._constant_like(self.momentum_value, param)
            self._apply_momentum(param, self.accum[index], lr, grad, momentum)
        else:
            self._apply_gd(param, lr, grad)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", momentum={self.momentum:g}, nesterov={self.nesterov}"


class Momentum(Optimizer):
    r"""Momentum (MindSpore's ``nn.Momentum``, the ApplyMomentum primitive):

    .. math::
        a \leftarrow \mu a + g, \quad w \leftarrow w - lr \cdot (g + \mu a \text{ if use\_nesterov else } a)
    """

    def __init__(
        self,
        params,
        learning_rate,
        momentum: float,
        weight_decay: float = 0.0,
        loss_scale: float = 1.0,
        use_nesterov: bool = False,
    ):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_float("Momentum", "momentum", momentum)
        if not isinstance(use_nesterov, bool):
            raise TypeError(f"For 'Momentum', the 'use_nesterov' must be bool, but got {type(use_nesterov).__name__}.")
        self.use_nesterov = use_nesterov
        self.moments = self._clone_state("moments")
        self.momentum_value = self._constant(self.momentum)
        self._apply_momentum = ops.ApplyMomentum(use_nesterov=use_nesterov)

    def apply(self, index, param, grad):
        lr = self._like(self._lr(index), param)
        momentum = self._constant_like(self.momentum_value, param)
        self._apply_momentum(param, self.moments[index], lr, grad, momentum)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", momentum={self.momentum:g}, use_nesterov={self.use_nesterov}"


class Adam(Optimizer):
    r"""Adam (MindSpore's ``nn.Adam``, the Adam primitive). With :math:`t` the step:

    .. math::
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \quad
        w \leftarrow w - lr \frac{\sqrt{1 - \beta_2^t}}{1 - \beta_1^t} \frac{m}{\sqrt{v} + \epsilon}

    (with ``use_nesterov``, :math:`m` in the update is :math:`\beta_1 m + (1 - \beta_1) g`). With
    ``use_amsgrad`` (AMSGrad), :math:`\hat v \leftarrow \max(\hat v, v)` and the update divides by
    :math:`\sqrt{\hat v} + \epsilon` (no Nesterov then). The keyword arguments ``use_lazy`` (a sparse gradient's
    rows only: opforge's gradients are dense, so the update is Adam's, as MindSpore's dense path) and
    ``use_offload`` (the update on the host: opforge's CPU update is that) are accepted and checked.
    """

    def __init__(
        self,
        params,
        learning_rate=1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        use_locking: bool = False,
        use_nesterov: bool = False,
        weight_decay: float = 0.0,
        loss_scale: float = 1.0,
        use_amsgrad: bool = False,
        **kwargs,
    ):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        unknown = set(kwargs) - {"use_lazy", "use_offload"}
        if unknown:
            raise TypeError(
                f"For 'Adam', the keyword arguments {sorted(unknown)} are not Adam's (use_lazy, use_offload)."
            )
        self.use_lazy = _check_bool("Adam", "use_lazy", kwargs.get("use_lazy", False))
        self.use_offload = _check_bool("Adam", "use_offload", kwargs.get("use_offload", False))
        self.use_amsgrad = _check_bool("Adam", "use_amsgrad", use_amsgrad)
        if use_amsgrad and use_nesterov:
            raise ValueError("For 'Adam', 'use_amsgrad' and 'use_nesterov' cannot both be True.")
        if not isinstance(use_locking, bool):
            raise TypeError(f"For 'Adam', the 'use_locking' must be bool, but got {type(use_locking).__name__}.")
        self.beta1, self.beta2, self.eps = _check_moments("Adam", beta1, beta2, eps)
        if not isinstance(use_nesterov, bool):
            raise TypeError(f"For 'Adam', the 'use_nesterov' must be bool, but got {type(use_nesterov).__name__}.")
        self.use_nesterov = use_nesterov
        self.moment1 = self._clone_state("moment1")
        self.moment2 = self._clone_state("moment2")
        self.beta1_power = self._scalar_state("beta1_power", 1.0)
        self.beta2_power = self._scalar_state("beta2_power", 1.0)
        self.beta1_value = self._constant(self.beta1)
        self.beta2_value = self._constant(self.beta2)
        self.eps_value = self._constant(self.eps)
        self._adam = ops.Adam(use_nesterov=use_nesterov)
        if use_amsgrad:
            self.vhat = self._clone_state("vhat")
            self._maximum, self._sqrt = ops.Maximum(), ops.Sqrt()

    def construct(self, gradients):
        gradients = self._prepare(gradients)
        self._assign(self.beta1_power, self._mul(self.beta1_power, self.beta1_value))
        self._assign(self.beta2_power, self._mul(self.beta2_power, self.beta2_value))
        self._apply_all(gradients)
        return self.parameters

    def apply(self, index, param, grad):
        if self.use_amsgrad:
            self._amsgrad(index, param, grad)
            return
        like, constant, params = self._like, self._constant_like, self._params
        self._adam(
            param,
            self.moment1[index],
            self.moment2[index],
            like(params["beta1_power"], param),
            like(params["beta2_power"], param),
            like(self._lr(index), param),
            constant(self.beta1_value, param),
            constant(self.beta2_value, param),
            constant(self.eps_value, param),
            grad,
        )

    def _amsgrad(self, index, param, grad):
        """m, v as Adam's; vhat = max(vhat, v); w -= lr sqrt(1 - beta2^t) / (1 - beta1^t) m / (sqrt(vhat) + eps)."""
        like, constant, params = self._like, self._constant_like, self._params
        beta1, beta2 = constant(self.beta1_value, param), constant(self.beta2_value, param)
        m, v, vhat = self.moment1[index], self.moment2[index], self.vhat[index]
        self._assign(m, m * beta1 + grad * (1.0 - beta1))
        self._assign(v, v * beta2 + grad * grad * (1.0 - beta2))
        self._assign(vhat, self._maximum(vhat, v))
        b1, b2 = like(params["beta1_power"], param), like(params["beta2_power"], param)
        step = like(self._lr(index), param) * self._sqrt(1.0 - b2) / (1.0 - b1)
        self._assign(param, param - step * m / (self._sqrt(vhat) + constant(self.eps_value, param)))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", beta1={self.beta1:g}, beta2={self.beta2:g}, eps={self.eps:g}"


def _check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{where}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value


class RMSProp(Optimizer):
    r"""RMSProp (MindSpore's ``nn.RMSProp``, the ApplyRMSProp / ApplyCenteredRMSProp primitives):

    .. math::
        s \leftarrow \rho s + (1 - \rho) g^2, \quad
        m \leftarrow \beta m + lr \frac{g}{\sqrt{s + \epsilon}}, \quad w \leftarrow w - m

    with ``centered``: :math:`\bar g \leftarrow \rho \bar g + (1 - \rho) g` and
    :math:`\sqrt{s - \bar g^2 + \epsilon}` in the denominator. :math:`\rho` is ``decay``, :math:`\beta`
    ``momentum``. State: ``mean_square`` (starting at 1, as MindSpore), ``moment`` (0) and, centered,
    ``mean_grad`` (0).
    """

    def __init__(
        self,
        params,
        learning_rate=0.1,
        decay: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        loss_scale: float = 1.0,
        weight_decay: float = 0.0,
    ):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.decay = _check_float("RMSProp", "decay", decay)
        self.momentum = _check_float("RMSProp", "momentum", momentum)
        self.epsilon = _check_float("RMSProp", "epsilon", epsilon, 0.0, low_open=True)
        _check_bool("RMSProp", "use_locking", use_locking)
        self.centered = _check_bool("RMSProp", "centered", centered)
        self.mg = self._clone_state("mean_grad") if centered else ()
        self.ms = self._clone_state("mean_square", 1.0)
        self.moment = self._clone_state("moment")
        self.decay_value = self._constant(self.decay)
        self.momentum_value = self._constant(self.momentum)
        self.epsilon_value = self._constant(self.epsilon)
        self.opt = ops.ApplyCenteredRMSProp(use_locking) if centered else ops.ApplyRMSProp(use_locking)

    def apply(self, index, param, grad):
        lr = self._like(self._lr(index), param)
        decay, momentum, epsilon = (
            self._constant_like(c, param) for c in (self.decay_value, self.momentum_value, self.epsilon_value)
        )
        if self.centered:
            self.opt(param, self.mg[index], self.ms[index], self.moment[index], grad, lr, decay, momentum, epsilon)
        else:
            self.opt(param, self.ms[index], self.moment[index], lr, grad, decay, momentum, epsilon)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", decay={self.decay:g}, momentum={self.momentum:g}, centered={self.centered}"


class Adagrad(Optimizer):
    r"""Adagrad (MindSpore's ``nn.Adagrad``, the ApplyAdagrad primitive):

    .. math::
        h \leftarrow h + g^2, \quad w \leftarrow w - lr \frac{g}{\sqrt{h}}

    with the accumulation :math:`h` (``accum.*``) starting at ``accum`` (>= 0; 0.1 by default, as MindSpore);
    ``update_slots=False`` leaves it as it is.
    """

    def __init__(
        self,
        params,
        accum: float = 0.1,
        learning_rate=0.001,
        update_slots: bool = True,
        loss_scale: float = 1.0,
        weight_decay: float = 0.0,
    ):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.initial_accum = _check_float("Adagrad", "accum", accum)
        self.update_slots = _check_bool("Adagrad", "update_slots", update_slots)
        self.accum = self._clone_state("accum", self.initial_accum)
        self.opt = ops.ApplyAdagrad(update_slots=update_slots)

    def apply(self, index, param, grad):
        self.opt(param, self.accum[index], self._like(self._lr(index), param), grad)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", accum={self.initial_accum:g}, update_slots={self.update_slots}"


class Lamb(Optimizer):
    r"""LAMB (MindSpore's ``nn.Lamb``): Adam's bias-corrected moments, the update scaled per parameter by the
    trust ratio of the weight's norm to the update's,

    .. math::
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \quad
        u = \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon} + weight\_decay \cdot w, \quad
        w \leftarrow w - lr \cdot \mathrm{clip}\left(\frac{\lVert w \rVert}{\lVert u \rVert}, 0, 10\right) u

    with a trust ratio of 1 when either norm is 0, and t the step (``global_step``, from 1). Built from
    primitives (a trace replays it). State: ``lamb_m.*`` and ``lamb_v.*`` (0).
    """

    def __init__(self, params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _check_moments("Lamb", beta1, beta2, eps)
        self.moments1 = self._clone_state("lamb_m")
        self.moments2 = self._clone_state("lamb_v")
        self._sum, self._sqrt, self._pow = ops.ReduceSum(), ops.Sqrt(), ops.Pow()
        self._select, self._greater, self._clip = ops.Select(), ops.Greater(), ops.clip_by_value

    def decay_weight(self, gradients: tuple) -> tuple:
        return gradients  # the decay joins the update, after the moments

    def _norm(self, x):
        return self._sqrt(self._sum(x * x, ()))

    def apply(self, index, param, grad):
        m, v = self.moments1[index], self.moments2[index]
        self._assign(m, m * self.beta1 + grad * (1.0 - self.beta1))
        self._assign(v, v * self.beta2 + grad * grad * (1.0 - self.beta2))
        step = self._cast(self.global_step, param.dtype)
        m_hat = m / (1.0 - self._pow(Tensor(np.array(self.beta1, param.dtype.np_dtype)), step))
        v_hat = v / (1.0 - self._pow(Tensor(np.array(self.beta2, param.dtype.np_dtype)), step))
        update = m_hat / (self._sqrt(v_hat) + self.eps)
        if self.weight_decays[index]:
            update = update + param * self.weight_decays[index]
        w_norm, u_norm = self._norm(param), self._norm(update)
        one = ops.ones_like(w_norm)
        usable = ops.logical_and(self._greater(w_norm, 0.0), self._greater(u_norm, 0.0))
        trust = self._clip(self._select(usable, w_norm / self._select(usable, u_norm, one), one), 0.0, 10.0)
        lr = self._like(self._lr(index), param)
        self._assign(param, param - update * (lr * trust))

    def extend_repr(self) -> str:
        return super().extend_repr() + f", beta1={self.beta1:g}, beta2={self.beta2:g}, eps={self.eps:g}"


class AdamWeightDecay(Optimizer):
    r"""Adam with decoupled weight decay (MindSpore's ``nn.AdamWeightDecay``, the AdamWeightDecay primitive):

    .. math::
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \quad
        w \leftarrow w - lr \left(\frac{m}{\sqrt{v} + \epsilon} + weight\_decay \cdot w\right)

    No bias correction, and the weight decay is applied in the update, not added to the gradient.
    State: ``adam_m.*`` and ``adam_v.*`` (0).
    """

    def __init__(
        self,
        params,
        learning_rate=1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
    ):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _check_moments("AdamWeightDecay", beta1, beta2, eps)
        self.moments1 = self._clone_state("adam_m")
        self.moments2 = self._clone_state("adam_v")
        self.scalars = tuple(self._constant(v) for v in (self.beta1, self.beta2, self.eps))
        decays = {d: self._constant(d) for d in sorted(set(self.weight_decays))}
        self.decay_values = tuple(decays[d] for d in self.weight_decays)  # one per parameter, by its group
        self.opt = ops.AdamWeightDecay()

    def decay_weight(self, gradients: tuple) -> tuple:
        return gradients  # the primitive decays the weights itself

    def apply(self, index, param, grad):
        beta1, beta2, eps = (self._constant_like(c, param) for c in self.scalars)
        decay = self._constant_like(self.decay_values[index], param)
        lr = self._like(self._lr(index), param)
        self.opt(param, self.moments1[index], self.moments2[index], lr, beta1, beta2, eps, decay, grad)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", beta1={self.beta1:g}, beta2={self.beta2:g}, eps={self.eps:g}"


def opt_init_args_register(fn):
    """MindSpore's ``nn.optim.optimizer.opt_init_args_register``: a decorator of an optimizer's ``__init__``
    that records its arguments before running it: ``self.init_params`` holds ``{"params": params}`` (those of
    a wrapped ``optimizer`` when it takes one) and ``self.init_args`` the other arguments by name, defaults
    included."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def init(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(signature.parameters)))  # self
        if "params" in arguments:
            object.__setattr__(self, "init_params", {"params": arguments.pop("params")})
        if "optimizer" in arguments:
            object.__setattr__(self, "init_params", {"params": arguments.pop("optimizer").init_params["params"]})
        object.__setattr__(self, "init_args", arguments)
        fn(self, *args, **kwargs)

    return init
