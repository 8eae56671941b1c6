"""MindSpore's parallel ``CrossEntropyLoss`` (``mindspore.parallel._transformer.loss``), the masked mean
cross entropy that the model zoo's GPT and PanGu-alpha train with. Built from Softmax's parts, OneHot, Log and
reductions, so autodiff and jit follow (MindSpore's hand-written bprop of the same formula is its gradient)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.nn.cell import Cell
from opforge.ops import functional as F
from opforge.ops import operations as P
from opforge.parallel._transformer.layers import _check_input_dtype
from opforge.parallel._transformer.op_parallel_config import OpParallelConfig, default_dpmp_config
from opforge.tensor import Tensor

__all__ = ["CrossEntropyLoss"]


class CrossEntropyLoss(Cell):
    r"""The cross entropy averaged over the unmasked rows:

    .. math::
        \ell_n = -\log(\mathrm{softmax}(x_n)_{y_n} + 10^{-24}), \qquad
        loss = \frac{\sum_n \ell_n m_n}{\sum_n m_n + 10^{-5}}

    logits x: float16 or float32 (N, C) (computed in float32); labels y: int32 (N,); input_mask m: float32
    (N,) (any shape with N elements). Returns a float32 Tensor of shape (1,).
    """

    def __init__(self, parallel_config=default_dpmp_config):
        super().__init__()
        if not isinstance(parallel_config, OpParallelConfig):
            raise TypeError(
                "For 'CrossEntropyLoss', the class variable 'parallel_config' must be OpParallelConfig"
                f", but got the type: {type(parallel_config)}."
            )
        self.on_value = Tensor(1.0, mstype.float32)
        self.off_value = Tensor(0.0, mstype.float32)
        self.onehot = P.OneHot()
        self.eps_const = Tensor(1e-24, mstype.float32)

    def construct(self, logits, label, input_mask):
        self._check_input(logits, label, input_mask)
        logits = F.cast(logits, mstype.float32)
        # softmax as MindSpore's _Softmax computes it: subtract the row maximum, exp, divide by the sum
        logit_exp = F.exp(logits - P.ReduceMax(keep_dims=True)(logits, -1))
        softmax = logit_exp / P.ReduceSum(keep_dims=True)(logit_exp, -1)
        one_hot = self.onehot(label, logits.shape[-1], self.on_value, self.off_value)
        loss_reduce = P.ReduceSum()(-(F.log(softmax + self.eps_const) * one_hot), -1)
        input_mask = F.reshape(input_mask, (-1,))
        numerator = P.ReduceSum()(loss_reduce * input_mask, ())
        denominator = P.ReduceSum()(input_mask, ()) + F.cast(F.tuple_to_array((1e-5,)), mstype.float32)
        return numerator / denominator

    def _check_input(self, logits, label, input_mask):
        for name, value in (("logits", logits), ("label", label), ("input_mask", input_mask)):
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"For 'CrossEntropyLoss', the '{name}' must be a Tensor, but got {type(value).__name__}."
                )
        _check_input_dtype(logits.dtype, "logits", [mstype.float32, mstype.float16], "CrossEntropyLoss")
        _check_input_dtype(label.dtype, "label", [mstype.int32], "CrossEntropyLoss")
        _check_input_dtype(input_mask.dtype, "input_mask", [mstype.float32], "CrossEntropyLoss")
