"""bprop of ScaledDotProductAttention: its grad operator recomputes the scores block by block from the saved
output and logsumexp (FlashAttention's backward). The additive mask is not differentiated (zero gradient)."""

from __future__ import annotations

from opforge.bprop._utils import zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.primitives import attention_ops as A


@bprop_getters.register(A.ScaledDotProductAttention)
def get_bprop_scaled_dot_product_attention(self):
    grad = A.ScaledDotProductAttentionGrad(self.scale, self.keep_prob, self.is_causal, self.Seed0, self.Seed1)

    def bprop(q, k, v, mask, out, dout):
        # softmax_lse is a statistic of the forward pass: its incoming gradient is dropped.
        dq, dk, dv = grad(q, k, v, mask, out[0], dout[0], out[1])
        return dq, dk, dv, zeros_like(mask)

    return bprop
