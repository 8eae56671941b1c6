"""Connectionist temporal classification: ``CTCLoss``, MindSpore's primitive (TensorFlow's semantics), whose
kernels (csrc/kernels/cpu/ctc_loss.cc, cuda/ctc_loss.cu) share the math of one sequence
(csrc/include/opforge/functors/ctc.h). ``ops.ctc_loss`` and ``nn.CTCLoss`` (opforge/ops/functional_ctc.py)
are built on it."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import _Operator, same_dim
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["CTCLoss"]


class CTCLoss(_Operator):
    r"""The CTC loss of B sequences and its gradient: ``CTCLoss(preprocess_collapse_repeated=False,
    ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False)(x, labels_indices, labels_values,
    sequence_length)`` -> ``(loss, gradient)``.

    :math:`loss_b = -\log \sum_{\pi \in \mathcal{B}^{-1}(l_b)} \prod_t \mathrm{softmax}(x_{t, b})_{\pi_t}` over
    the first ``sequence_length[b]`` frames, :math:`\mathcal{B}` removing repeats, then blanks (the blank is
    the last class, C - 1); ``gradient`` is :math:`\partial loss_b / \partial x_{t, b}` (zero past a
    sequence's frames).

    Inputs: ``x`` [max_time, B, C] logits; ``labels_indices`` [N, 2] int64, (batch, position) of each label;
    ``labels_values`` [N] int32 in [0, C - 1) (or padding); ``sequence_length`` [B] int32 in [0, max_time]. Labels that
    need more frames than a sequence has raise an error, or, with ``ignore_longer_outputs_than_inputs``, give
    loss 0 and a zero gradient; ``preprocess_collapse_repeated`` merges repeated labels first;
    ``ctc_merge_repeated=False`` reads repeated labels as separate ones (no blank needed between them).
    Values at or above the blank end a row's labels, as in MindSpore's kernels (the model zoo's CRNN pads every
    row with the blank); a label after them is an error. dtypes (CPU, GPU): float16, float32, float64 (all
    computed in double)."""

    __mindspore_signature__ = (
        sig.make_sig("x"),
        sig.make_sig("labels_indices"),
        sig.make_sig("labels_values"),
        sig.make_sig("sequence_length"),
    )

    @prim_attr_register
    def __init__(
        self, preprocess_collapse_repeated=False, ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False
    ):
        validator.check_value_type("preprocess_collapse_repeated", preprocess_collapse_repeated, [bool], self.name)
        validator.check_value_type("ctc_merge_repeated", ctc_merge_repeated, [bool], self.name)
        validator.check_value_type(
            "ignore_longer_outputs_than_inputs", ignore_longer_outputs_than_inputs, [bool], self.name
        )
        self.init_prim_io_names(
            inputs=["x", "labels_indices", "labels_values", "sequence_length"], outputs=["loss", "gradient"]
        )

    def infer_shape(self, x, labels_indices, labels_values, sequence_length):
        if len(x) != 3:
            raise ValueError(
                f"For '{self.name}', the 'x' must be 3-D [max_time, batch, num_classes], but got shape {list(x)}."
            )
        if x[2] == 0:
            raise ValueError(f"For '{self.name}', the 'x' needs at least 1 class (the blank), but got shape {list(x)}.")
        if len(labels_indices) != 2 or not same_dim(labels_indices[1], 2):
            raise ValueError(
                f"For '{self.name}', the 'labels_indices' must be 2-D [N, 2], but got shape {list(labels_indices)}."
            )
        if len(labels_values) != 1 or not same_dim(labels_values[0], labels_indices[0]):
            raise ValueError(
                f"For '{self.name}', the 'labels_values' must be 1-D [N] with N = {labels_indices[0]} (the rows of "
                f"'labels_indices'), but got shape {list(labels_values)}."
            )
        if len(sequence_length) != 1 or not same_dim(sequence_length[0], x[1]):
            raise ValueError(
                f"For '{self.name}', the 'sequence_length' must be 1-D [batch] with batch = {x[1]}, but got shape "
                f"{list(sequence_length)}."
            )
        return [x[1]], list(x)

    def infer_dtype(self, x, labels_indices, labels_values, sequence_length):
        validator.check_tensor_dtype_valid("labels_indices", labels_indices, (mstype.int64,), self.name)
        validator.check_tensor_dtype_valid("labels_values", labels_values, (mstype.int32,), self.name)
        validator.check_tensor_dtype_valid("sequence_length", sequence_length, (mstype.int32,), self.name)
        t = validator.check_tensor_dtype_valid("x", x, (mstype.float16, mstype.float32, mstype.float64), self.name)
        return t, t
