"""MindSpore's basic transformer layers (``mindspore.parallel._transformer.layers``): ``_LayerNorm`` and
``_Linear``, and the argument and input checks the transformer cells share. Built from LayerNorm, MatMul,
BatchMatMul, Add and Cast, so autodiff, jit and both backends follow. ``shard`` is accepted and does nothing
(opforge runs the layers unsharded: see op_parallel_config.py)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.common.initializer import initializer
from opforge.nn.cell import Cell
from opforge.nn.layers import get_activation
from opforge.ops import functional as F
from opforge.ops import operations as P
from opforge.parallel._utils import _get_parallel_mode, _is_sharding_propagation
from opforge.parallel_context import ParallelMode
from opforge.primitives.validator import Rel, Validator
from opforge.tensor import Parameter, Tensor

__all__ = []

_FLOATS = (mstype.float32, mstype.float16)


def _check_dtype_arg(cls_name, name, value):
    """A compute / parameter dtype argument is float32 or float16 (MindSpore's ``_valid_value_checks``)."""
    if value not in _FLOATS:
        raise TypeError(
            f"For '{cls_name}', the '{name}' must be mindspore.float32 or mindspore.float16, but got {value}."
        )


def _check_rate(cls_name, name, value):
    """A dropout rate is a float in [0, 1)."""
    Validator.check_float(value, 0, Rel.GE, name, cls_name)
    if value >= 1:
        raise ValueError(f"For '{cls_name}', the class variable '{name}' must be in range [0, 1.0), but got {value}.")


def _check_input_dtype(input_dtype, param_name, allow_dtypes, cls_name):
    """An input's dtype is one of ``allow_dtypes`` (TypeError otherwise)."""
    if input_dtype not in allow_dtypes:
        raise TypeError(
            f"For '{cls_name}', the dtype of '{param_name}' must be one of {[str(t) for t in allow_dtypes]}, "
            f"but got {input_dtype}."
        )


def _check_past_none_input_none(use_past, param_name, func_name, default_value, is_tensor, is_default):
    """With ``use_past`` the incremental inputs are Tensors; without it they keep their defaults."""
    if not use_past:
        if is_tensor:
            raise TypeError(
                f"{func_name} {param_name} must be {default_value}, if use_past is False, but found a tensor"
            )
        if not is_default:
            raise TypeError(f"{func_name} {param_name} must be {default_value}, if use_past is False.")
    elif not is_tensor:
        raise TypeError(f"{func_name} {param_name} must be tensor, if use_past is True")
    return True


def _check_activation(cls_name, name, act, allow_none):
    if act is None and allow_none:
        return
    if not (isinstance(act, str) or (isinstance(act, type) and issubclass(act, Cell))):
        raise TypeError(f"For {cls_name} cell, the {name} should str type or nn.Cell type, but got {act}.")


class _LayerNorm(Cell):
    r"""Layer normalization over the last axis:

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    (biased variance). ``is_self_defined=True`` computes it with ReduceMean, Sub, Square, Sqrt and RealDiv
    (MindSpore's alternative path, same formula); otherwise by the LayerNorm primitive. ``gamma`` and ``beta``
    (shape ``normalized_shape``, ``param_init_type`` float32 or float16) are cast to x's dtype, as MindSpore's
    mixed precision (``to_float``) casts a cell's parameters. x: float16 or float32 (batch, ..., hidden).
    """

    def __init__(self, normalized_shape, eps=1e-5, param_init_type=mstype.float32, is_self_defined=False):
        super().__init__()
        if param_init_type not in _FLOATS:
            raise TypeError(
                "The type of parameter 'param_init_type' should in [float32, float16], "
                f"but got the type : {param_init_type}."
            )
        self.is_self_defined = is_self_defined
        if not self.is_self_defined:
            self.layer_norm = P.LayerNorm(begin_norm_axis=-1, begin_params_axis=-1, epsilon=eps)
        self.gamma = Parameter(initializer("ones", normalized_shape, param_init_type), name="gamma")
        self.beta = Parameter(initializer("zeros", normalized_shape, param_init_type), name="beta")
        self.mean = P.ReduceMean(keep_dims=True)
        self.eps = eps

    def construct(self, x):
        gamma, beta = F.cast(self.gamma, x.dtype), F.cast(self.beta, x.dtype)
        if self.is_self_defined:
            diff = x - self.mean(x, -1)
            variance = self.mean(F.square(diff), -1)
            return diff / F.sqrt(variance + self.eps) * gamma + beta
        output, _, _ = self.layer_norm(x, gamma, beta)
        return output

    def shard(self, strategy):
        """Accepted for MindSpore compatibility: opforge runs the layer unsharded."""
        return self


class _Linear(Cell):
    r"""The dense layer of the transformer: :math:`y = \mathrm{activation}(x W + b)` computed in
    ``compute_dtype``, returned in x's dtype.

    ``weight`` is (out_channels, in_channels) with ``transpose_b=True`` (the default), else (in_channels,
    out_channels); with ``expert_num`` > 1 each expert has one (BatchMatMul over x reshaped to (outer_batch,
    expert_num, tokens, in_channels); under AUTO_PARALLEL without sharding propagation, as MindSpore, to
    (-1, expert_num, expert_group_size, in_channels), expert_group_size then required) and the bias is
    (1, expert_num, 1, out_channels). x: float16 or float32 (*, in_channels); output (*, out_channels).
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        weight_init="normal",
        bias_init="zeros",
        has_bias=True,
        activation=None,
        transpose_b=True,
        expert_num=1,
        outer_batch=1,
        expert_group_size=None,
        param_init_type=mstype.float32,
        compute_dtype=mstype.float16,
    ):
        super().__init__()
        name = "Linear"
        Validator.check_positive_int(in_channels, "in_channels", name)
        Validator.check_positive_int(out_channels, "out_channels", name)
        Validator.check_bool(has_bias, "has_bias", name)
        Validator.check_bool(transpose_b, "transpose_b", name)
        Validator.check_positive_int(expert_num, "expert_num", name)
        Validator.check_positive_int(outer_batch, "outer_batch", name)
        _check_dtype_arg(name, "param_init_type", param_init_type)
        _check_dtype_arg(name, "compute_dtype", compute_dtype)
        _check_activation("Linear", "activation", activation, allow_none=True)
        self.in_channels, self.out_channels = in_channels, out_channels
        if isinstance(weight_init, Tensor) and (
            weight_init.ndim != 2 or weight_init.shape[0] != out_channels or weight_init.shape[1] != in_channels
        ):
            raise ValueError("The shape of parameter 'weight_init' is error, please check shape of 'weight_init'.")
        weight_shape = [out_channels, in_channels] if transpose_b else [in_channels, out_channels]
        self.expert_num, self.outer_batch, self.expert_group_size = expert_num, outer_batch, expert_group_size
        self.expert_flag = expert_num > 1
        if self.expert_flag:
            self.weight = Parameter(
                initializer(weight_init, [expert_num] + weight_shape, param_init_type), name="weight"
            )
            self.matmul = P.BatchMatMul(transpose_b=transpose_b)
        else:
            self.weight = Parameter(initializer(weight_init, weight_shape, param_init_type), name="weight")
            self.matmul = P.MatMul(transpose_b=transpose_b)
        # MindSpore's AUTO_PARALLEL (not sharding propagation) groups the experts' tokens by expert_group_size
        self.use_expert_group_size = (
            _get_parallel_mode() == ParallelMode.AUTO_PARALLEL and not _is_sharding_propagation() and self.expert_flag
        )
        if self.use_expert_group_size and expert_group_size is None:
            raise ValueError("'expert_group_size' should be configured as an integer in MoEConfig.")
        self.bias = None
        self.has_bias = has_bias
        if has_bias:
            if isinstance(bias_init, Tensor) and (bias_init.ndim != 1 or bias_init.shape[0] != out_channels):
                raise ValueError("The shape of parameter 'bias_init' is error, please check shape of 'bias_init'.")
            shape = [1, expert_num, 1, out_channels] if self.expert_flag else [out_channels]
            self.bias = Parameter(initializer(bias_init, shape, param_init_type), name="bias")
        self.act_name = activation
        if isinstance(activation, type):
            self.activation = activation()
        else:
            self.activation = get_activation(activation) if isinstance(activation, str) else activation
        self.activation_flag = self.activation is not None
        self.dtype = compute_dtype

    def construct(self, x):
        out_shape = tuple(x.shape[:-1]) + (self.out_channels,)
        x = F.reshape(x, (-1, self.in_channels))
        if self.use_expert_group_size:
            x = F.reshape(x, (-1, self.expert_num, self.expert_group_size, self.in_channels))
        elif self.expert_flag:
            x = F.reshape(x, (self.outer_batch, self.expert_num, -1, self.in_channels))
        ori_dtype = x.dtype
        x = self.matmul(F.cast(x, self.dtype), F.cast(self.weight, self.dtype))
        if self.has_bias:
            x = x + F.cast(self.bias, self.dtype)
        if self.activation_flag:
            x = self.activation(x)
        return F.reshape(F.cast(x, ori_dtype), out_shape)

    def shard(self, strategy_matmul, strategy_bias=None, strategy_activation=None):
        """Accepted for MindSpore compatibility: opforge runs the layer unsharded."""
        return self
