"""MindSpore's parallel ``FeedForward`` (``mindspore.parallel._transformer.transformer.FeedForward``) and the
argument checks the transformer cells share. It lives apart from transformer.py so that moe.py (whose ``MoE``
runs its experts in a FeedForward) and transformer.py (whose layers hold a FeedForward or a ``MoE``) both import
it; transformer.py re-exports it under MindSpore's module path."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.nn.cell import Cell
from opforge.nn.layers import Dropout
from opforge.ops import functional as F
from opforge.parallel._transformer.layers import (
    _check_activation,
    _check_dtype_arg,
    _check_input_dtype,
    _check_rate,
    _Linear,
)
from opforge.parallel._transformer.op_parallel_config import (
    MoEParallelConfig,
    OpParallelConfig,
    _check_config,
    default_dpmp_config,
)
from opforge.primitives.validator import Validator

__all__ = []

_FLOATS = [mstype.float32, mstype.float16]


def _check_type(cls_name, name, value, types):
    if not isinstance(value, tuple(types)):
        raise TypeError(
            f"For '{cls_name}', the '{name}' must be one of {[t.__name__ for t in types]}, "
            f"but got {type(value).__name__}."
        )


def _check_common(cls_name, positive=(), rates=(), bools=(), dtypes=()):
    """MindSpore's ``_args_type_validator_check``: positive ints, dropout rates, bools, float dtypes."""
    for name, value in positive:
        Validator.check_positive_int(value, name, cls_name)
    for name, value in rates:
        _check_rate(cls_name, name, value)
    for name, value in bools:
        Validator.check_bool(value, name, cls_name)
    for name, value in dtypes:
        _check_dtype_arg(cls_name, name, value)


class FeedForward(Cell):
    r"""Two linear layers with dropout on the output:

    .. math::
        \mathrm{Dropout}(\mathrm{act}(x W_1 + b_1) W_2 + b_2)

    W_1: (hidden_size, ffn_hidden_size), W_2: (ffn_hidden_size, hidden_size), computed in float16 (x is cast to
    float16 and the output is float16, as MindSpore's). ``hidden_act``: an activation name ('gelu' default,
    'relu', 'fast_gelu', ...) or an nn.Cell class. x: float16 or float32, (batch, seq, hidden_size) or
    (batch * seq, hidden_size).

    With ``expert_num`` > 1 (the experts of :class:`~opforge.parallel._transformer.moe.MoE`; ``parallel_config``
    a MoEParallelConfig) each expert e has its own W_1[e] (expert_num, hidden_size, ffn_hidden_size), b_1[e],
    W_2[e] and b_2[e]: the rows of x, grouped expert-major as MoE lays them out ((expert_num, outer, tokens)
    with outer = data_parallel // expert_parallel), are reshaped to (outer, expert_num, tokens, hidden_size)
    and multiplied by their expert's weights (BatchMatMul), as MindSpore does.
    """

    def __init__(
        self,
        hidden_size,
        ffn_hidden_size,
        dropout_rate,
        hidden_act="gelu",
        expert_num=1,
        expert_group_size=None,
        param_init_type=mstype.float32,
        parallel_config=default_dpmp_config,
    ):
        super().__init__()
        name = "FeedForward"
        _check_common(
            name,
            positive=[("hidden_size", hidden_size), ("ffn_hidden_size", ffn_hidden_size)],
            rates=[("dropout_rate", dropout_rate)],
            dtypes=[("param_init_type", param_init_type)],
        )
        _check_type(name, "parallel_config", parallel_config, [OpParallelConfig, MoEParallelConfig])
        _check_activation(name, "hidden_act", hidden_act, allow_none=False)
        _check_config(parallel_config)
        if expert_num > 1 and not isinstance(parallel_config, MoEParallelConfig):
            raise TypeError(
                "For 'FeedForward', the 'parallel_config' must be MoEParallelConfig when 'expert_num' > 1, "
                f"but got {type(parallel_config).__name__}."
            )
        mp = parallel_config.model_parallel
        if ffn_hidden_size % mp != 0:
            raise ValueError(
                "For 'FeedForward', the class variable 'ffn_hidden_size' must be a multiple of the num of model "
                f"parallel, but got the ffn_hidden_size is {ffn_hidden_size} and the num of model parallel is {mp}."
            )
        if hidden_size % mp != 0:
            raise ValueError(
                "For 'FeedForward', the class variable 'hidden_size' must be a multiple of the num of model "
                f"parallel, but got the hidden_size is {hidden_size} and the num of model parallel is {mp}."
            )
        ep = parallel_config.expert_parallel if expert_num > 1 else 1
        dp = max(parallel_config.data_parallel // ep, 1)
        self.mapping = _Linear(
            hidden_size, ffn_hidden_size, activation=hidden_act, transpose_b=False, expert_num=expert_num,
            expert_group_size=expert_group_size, outer_batch=dp, param_init_type=param_init_type,
        )  # fmt: skip
        self.projection = _Linear(
            ffn_hidden_size, hidden_size, transpose_b=False, expert_num=expert_num,
            expert_group_size=expert_group_size, outer_batch=dp, param_init_type=param_init_type,
        )  # fmt: skip
        self.dropout = Dropout(p=dropout_rate)
        self.dropout_3d = Dropout(p=dropout_rate)
        self.dropout_4d = Dropout(p=dropout_rate)
        self.dtype = mstype.float16  # MindSpore casts the input to float16

    def construct(self, x):
        _check_input_dtype(x.dtype, "x", _FLOATS, "FeedForward")
        x = F.cast(x, self.dtype)
        output = self.projection(self.mapping(x))
        if output.ndim == 3:
            return self.dropout_3d(output)
        if output.ndim == 2:
            return self.dropout(output)
        return self.dropout_4d(output)
