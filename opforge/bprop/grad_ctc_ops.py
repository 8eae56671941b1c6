"""bprop of CTCLoss (primitives/ctc_ops.py): the kernel's own gradient output, scaled by each sequence's dloss."""

from __future__ import annotations

from opforge.bprop._utils import zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import ctc_ops


@bprop_getters.register(ctc_ops.CTCLoss)
def get_bprop_ctc_loss(self):
    # As MindSpore's: the gradient output is a value of the call, not differentiated again (no second order).
    def bprop(x, labels_indices, labels_values, sequence_length, out, dout):
        dx = F.mul(out[1], F.expand_dims(dout[0], -1))
        return dx, zeros_like(labels_indices), zeros_like(labels_values), zeros_like(sequence_length)

    return bprop
