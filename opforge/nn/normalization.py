"""Normalisation layers (MindSpore's ``nn.BatchNorm1d``, ``nn.BatchNorm2d``, ``nn.LayerNorm``, ``nn.GroupNorm``,
``nn.InstanceNorm2d``): the first three on the BatchNorm and LayerNorm primitives, GroupNorm and InstanceNorm2d
composed of ReduceMean, Square, Sqrt and the arithmetic primitives, as MindSpore's GroupNorm is."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge import ops
from opforge.bprop import stop_gradient
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.tensor import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "InstanceNorm2d"]


def _check_float(cls: str, name: str, value, low: float, high: float, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{cls}', the '{name}' must be a float, but got {type(value).__name__}.")
    value = float(value)
    ok = (low < value if low_open else low <= value) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise ValueError(f"For '{cls}', the '{name}' must be in {bracket}{low}, {high}], but got {value}.")
    return value


class _BatchNorm(Cell):
    """Batch normalisation over axis 1 with learnable ``gamma``/``beta`` and moving statistics.

    ``momentum`` is MindSpore's nn convention: :math:`moving = momentum \\cdot moving + (1 - momentum)
    \\cdot batch`, so the primitive runs with ``momentum = 1 - momentum``. Batch statistics are used (and
    the moving ones updated) in training mode (``set_train()``), the moving statistics in evaluation
    mode; ``use_batch_statistics`` True or False forces one or the other.
    """

    _ranks: tuple = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.9,
        affine: bool = True,
        gamma_init="ones",
        beta_init="zeros",
        moving_mean_init="zeros",
        moving_var_init="ones",
        use_batch_statistics=None,
        data_format: str = "NCHW",
        dtype=mstype.float32,
    ):
        super().__init__()
        cls = type(self).__name__
        if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1:
            raise ValueError(f"For '{cls}', the 'num_features' must be a positive int, but got {num_features!r}.")
        if not isinstance(affine, bool):
            raise TypeError(f"For '{cls}', the 'affine' must be bool, but got {type(affine).__name__}.")
        if use_batch_statistics is not None and not isinstance(use_batch_statistics, bool):
            raise TypeError(
                f"For '{cls}', the 'use_batch_statistics' must be bool or None, but got {use_batch_statistics!r}."
            )
        if data_format != "NCHW":
            raise ValueError(f"For '{cls}', the 'data_format' must be 'NCHW', but got {data_format!r}.")
        self.num_features = num_features
        self.eps = _check_float(cls, "eps", eps, 0.0, 1.0, low_open=True)
        self.momentum = _check_float(cls, "momentum", momentum, 0.0, 1.0)
        self.affine = affine
        self.use_batch_statistics = use_batch_statistics
        c = (num_features,)
        self.gamma = Parameter(_init.initializer(gamma_init, c, dtype), "gamma", requires_grad=affine)
        self.beta = Parameter(_init.initializer(beta_init, c, dtype), "beta", requires_grad=affine)
        self.moving_mean = Parameter(_init.initializer(moving_mean_init, c, dtype), "moving_mean", requires_grad=False)
        self.moving_variance = Parameter(
            _init.initializer(moving_var_init, c, dtype), "moving_variance", requires_grad=False
        )
        self.bn_train = ops.BatchNorm(is_training=True, epsilon=self.eps, momentum=1.0 - self.momentum)
        self.bn_infer = ops.BatchNorm(is_training=False, epsilon=self.eps)

    def extend_repr(self) -> str:
        return (
            f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"gamma={self.gamma.name}, beta={self.beta.name}, moving_mean={self.moving_mean.name}, "
            f"moving_variance={self.moving_variance.name}"
        )

    def construct(self, x):
        if x.ndim not in self._ranks:
            raise ValueError(
                f"For '{type(self).__name__}', the input must have rank {' or '.join(map(str, self._ranks))}, "
                f"but got shape {list(x.shape)}."
            )
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        bn = self.bn_train if use_batch else self.bn_infer
        return bn(x, self.gamma, self.beta, self.moving_mean, self.moving_variance)[0]


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of [N, C] (or [N, C, L]) inputs over the batch (and L) per feature C."""

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of [N, C, H, W] inputs over N, H, W per channel C."""

    _ranks = (4,)


class LayerNorm(Cell):
    """Layer normalisation over the trailing dims from ``begin_norm_axis`` with ``gamma``/``beta`` of
    shape ``normalized_shape`` (the dims from ``begin_params_axis``): the LayerNorm primitive's y."""

    def __init__(
        self,
        normalized_shape,
        begin_norm_axis: int = -1,
        begin_params_axis: int = -1,
        gamma_init="ones",
        beta_init="zeros",
        epsilon: float = 1e-7,
        dtype=mstype.float32,
    ):
        super().__init__()
        if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in normalized_shape
        ):
            raise TypeError(
                f"For 'LayerNorm', the 'normalized_shape' must be a tuple or list of ints, "
                f"but got {normalized_shape!r}."
            )
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis = begin_norm_axis
        self.begin_params_axis = begin_params_axis
        self.epsilon = epsilon
        self.gamma = Parameter(_init.initializer(gamma_init, self.normalized_shape, dtype), "gamma")
        self.beta = Parameter(_init.initializer(beta_init, self.normalized_shape, dtype), "beta")
        self.layer_norm = ops.LayerNorm(begin_norm_axis, begin_params_axis, epsilon)

    def extend_repr(self) -> str:
        return (
            f"normalized_shape={list(self.normalized_shape)}, begin_norm_axis={self.begin_norm_axis}, "
            f"begin_params_axis={self.begin_params_axis}, gamma={self.gamma.name}, beta={self.beta.name}"
        )

    def construct(self, x):
        return self.layer_norm(x, self.gamma, self.beta)[0]


def _check_int(cls: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cls}', the '{name}' must be an int, but got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"For '{cls}', the '{name}' must be at least 1, but got {value}.")
    return value


def _check_type(cls: str, name: str, value, types: tuple, what: str):
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise TypeError(f"For '{cls}', the '{name}' must be {what}, but got {type(value).__name__}.")
    return value


def _normalize(x, axes: tuple, eps: float):
    """(x - E[x]) / sqrt(Var[x] + eps) over ``axes`` (the biased variance), with the mean and variance."""
    mean = ops.ReduceMean(keep_dims=True)(x, axes)
    centred = x - mean
    var = ops.ReduceMean(keep_dims=True)(ops.Square()(centred), axes)
    return centred / ops.Sqrt()(var + eps), mean, var


class GroupNorm(Cell):
    r"""Group normalisation (MindSpore's ``nn.GroupNorm``) of ``x`` [N, C, *]: the C channels are split into
    ``num_groups`` groups of C / num_groups consecutive channels, and each sample's group is normalised over
    its channels and spatial positions, then scaled and shifted per channel:

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    (the biased variance). ``gamma`` and ``beta`` have shape [num_channels] (initialised by ``gamma_init``
    "ones" and ``beta_init`` "zeros"); they are Parameters only when ``affine``, else constant Tensors.
    ``eps`` must be a float (1e-5). Composed of ReduceMean, Square, Sqrt, Reshape and arithmetic primitives,
    so it runs on every backend and dtype those run (float16, bfloat16, float32, float64 on the CPU and the
    GPU) and its gradient comes from their bprops.
    """

    def __init__(
        self,
        num_groups,
        num_channels,
        eps=1e-05,
        affine=True,
        gamma_init="ones",
        beta_init="zeros",
        dtype=mstype.float32,
    ):
        super().__init__()
        self.num_groups = _check_int("GroupNorm", "num_groups", num_groups)
        self.num_channels = _check_int("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(
                f"For 'GroupNorm', the 'num_channels' must be divisible by 'num_groups', "
                f"but got 'num_channels': {num_channels}, 'num_groups': {num_groups}."
            )
        self.eps = _check_type("GroupNorm", "eps", eps, (float,), "a float")
        self.affine = _check_type("GroupNorm", "affine", affine, (bool,), "bool")
        gamma = _init.initializer(gamma_init, (num_channels,), dtype)
        beta = _init.initializer(beta_init, (num_channels,), dtype)
        if affine:
            self.gamma = Parameter(gamma, "gamma")
            self.beta = Parameter(beta, "beta")
        else:
            self.gamma, self.beta = gamma, beta

    def construct(self, x):
        shape = tuple(x.shape)
        if len(shape) < 2 or shape[1] != self.num_channels:
            raise ValueError(
                f"For 'GroupNorm', the input must have shape (N, {self.num_channels}, *), but got {list(shape)}."
            )
        grouped = ops.Reshape()(x, (shape[0], self.num_groups, -1))
        y = ops.Reshape()(_normalize(grouped, (2,), self.eps)[0], shape)
        param_shape = (-1,) + (1,) * (len(shape) - 2)
        return y * ops.Reshape()(self.gamma, param_shape) + ops.Reshape()(self.beta, param_shape)

    def extend_repr(self) -> str:
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}, eps={self.eps}, affine={self.affine}"


class InstanceNorm2d(Cell):
    r"""Instance normalisation (MindSpore's ``nn.InstanceNorm2d``) of ``x`` [N, C, H, W]: each sample's
    channel is normalised over its H x W positions, in training and evaluation alike, then scaled and
    shifted per channel:

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    (the biased variance). Parameters as MindSpore names them: ``gamma`` and ``beta`` [num_features]
    (trainable when ``affine``), and the statistics ``moving_mean`` (named "mean", zeros) and
    ``moving_variance`` ("variance", ones), never read by the output. In training mode (``set_train()``)
    they follow the running-average rule of MindSpore's GPU kernel (cuDNN's):
    :math:`moving = (1 - momentum) \cdot moving + momentum \cdot observed`, the observed statistics
    being the instance means and unbiased variances averaged over the batch. ``eps`` and ``momentum``
    must be floats (1e-5, 0.1, momentum in [0, 1]). Composed of ReduceMean, Square, Sqrt and
    arithmetic primitives: float16, bfloat16, float32, float64 on the CPU and the GPU.
    """

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        gamma_init="ones",
        beta_init="zeros",
        dtype=mstype.float32,
    ):
        super().__init__()
        cls = type(self).__name__  # (InstanceNorm1d and InstanceNorm3d: opforge/nn/layers_legacy.py)
        self.num_features = _check_int(cls, "num_features", num_features)
        self.eps = _check_type(cls, "eps", eps, (float,), "a float")
        self.momentum = _check_type(cls, "momentum", momentum, (float,), "a float")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"For '{cls}', the 'momentum' must be in [0, 1], but got {momentum}.")
        self.affine = _check_type(cls, "affine", affine, (bool,), "bool")
        c = (num_features,)
        self.moving_mean = Parameter(_init.initializer("zeros", c, dtype), "mean", requires_grad=False)
        self.moving_variance = Parameter(_init.initializer("ones", c, dtype), "variance", requires_grad=False)
        self.gamma = Parameter(_init.initializer(gamma_init, c, dtype), "gamma", requires_grad=affine)
        self.beta = Parameter(_init.initializer(beta_init, c, dtype), "beta", requires_grad=affine)

    def construct(self, x):
        shape = tuple(x.shape)
        if len(shape) != 4 or shape[1] != self.num_features:
            raise ValueError(
                f"For 'InstanceNorm2d', the input must have shape (N, {self.num_features}, H, W), "
                f"but got {list(shape)}."
            )
        y, mean, var = _normalize(x, (2, 3), self.eps)
        if self.training:
            self._update_statistics(mean, var, shape[2] * shape[3])
        return y * ops.Reshape()(self.gamma, (-1, 1, 1)) + ops.Reshape()(self.beta, (-1, 1, 1))

    def _update_statistics(self, mean, var, count: int) -> None:
        dtype = self.moving_mean.dtype
        mean = ops.Cast()(ops.ReduceMean()(stop_gradient(mean), (0, 2, 3)), dtype)
        unbiased = ops.ReduceMean()(stop_gradient(var), (0, 2, 3)) * (count / max(count - 1, 1))
        m = self.momentum
        ops.Assign()(self.moving_mean, self.moving_mean * (1.0 - m) + mean * m)
        ops.Assign()(self.moving_variance, self.moving_variance * (1.0 - m) + ops.Cast()(unbiased, dtype) * m)

    def extend_repr(self) -> str:
        return (
            f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma.name}, "
            f"beta={self.beta.name}, moving_mean={self.moving_mean.name}, moving_variance={self.moving_variance.name}"
        )


class BatchNorm3d(_BatchNorm):
    """MindSpore's ``nn.BatchNorm3d(num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init='ones',
    beta_init='zeros', moving_mean_init='zeros', moving_var_init='ones', use_batch_statistics=None,
    dtype=mstype.float32)``: batch normalisation of [N, C, D, H, W] over N, D, H, W per channel C,
    :math:`y = \\gamma (x - \\mu) / \\sqrt{\\sigma^2 + eps} + \\beta`. As MindSpore builds it: the input reshaped to
    [N, C, D * H, W] through BatchNorm2d's BatchNorm primitive, and back. float16, float32."""

    _ranks = (5,)

    def __init__(
        self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
        moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, dtype=mstype.float32,
    ):  # fmt: skip
        super().__init__(
            num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init, moving_var_init,
            use_batch_statistics, "NCHW", dtype,
        )  # fmt: skip

    def construct(self, x):
        if x.ndim != 5:
            raise ValueError(f"For 'BatchNorm3d', the input must have rank 5, but got shape {list(x.shape)}.")
        n, c, d, h, w = x.shape
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        bn = self.bn_train if use_batch else self.bn_infer
        y = bn(ops.reshape(x, (n, c, d * h, w)), self.gamma, self.beta, self.moving_mean, self.moving_variance)[0]
        return ops.reshape(y, (n, c, d, h, w))


__all__ += ["BatchNorm3d"]
