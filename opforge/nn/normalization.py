"""Normalisation layers (MindSpore's ``nn.BatchNorm1d``, ``nn.BatchNorm2d``, ``nn.LayerNorm``), built on
the BatchNorm and LayerNorm primitives."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge import ops
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.tensor import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm"]


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
