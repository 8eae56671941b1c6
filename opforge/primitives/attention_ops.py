"""The fused attention operators: ScaledDotProductAttention and its grad (FlashAttention-style kernels,
``csrc/kernels/cpu/attention.cc``, math in ``opforge/functors/attention.h``)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.primitives._utils import _Operator
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Rel
from opforge.primitives.validator import Validator as validator

__all__ = ["ScaledDotProductAttention", "ScaledDotProductAttentionGrad"]

_ATTENTION_DTYPES = (mstype.float16, mstype.float32, mstype.float64)


def _lse_dtype(t):
    """The logsumexp's dtype: float32 for float16 inputs (the kernels accumulate in float32)."""
    return mstype.float32 if t == mstype.float16 else t


def _check_attrs(prim) -> None:
    name = prim.name
    validator.check_value_type("scale", prim.scale, [float], name)
    validator.check_value_type("keep_prob", prim.keep_prob, [float], name)
    validator.check_float_range(prim.keep_prob, 0.0, 1.0, Rel.INC_RIGHT, "keep_prob", name)
    validator.check_bool(prim.is_causal, "is_causal", name)
    for arg, seed in (("Seed0", prim.Seed0), ("Seed1", prim.Seed1)):
        validator.check_value_type(arg, seed, [int], name)
        if not -(2**63) <= seed < 2**63:
            raise ValueError(f"For '{name}', the '{arg}' must be an int64, in [-2**63, 2**63), but got {seed}.")


def _check_qkv_mask(name: str, q, k, v, mask) -> None:
    for arg, shape in (("query", q), ("key", k), ("value", v), ("attn_mask", mask)):
        if len(shape) != 4:
            raise ValueError(f"For '{name}', the '{arg}' must be 4-D (batch, heads, seq, dim), but got {list(shape)}.")
    b, h, lq, d = q
    if list(k) != [b, h, k[2], d]:
        raise ValueError(
            f"For '{name}', the 'key' must have shape [{b}, {h}, Lk, {d}] like 'query', but got {list(k)}."
        )
    if list(v[:3]) != list(k[:3]):
        raise ValueError(
            f"For '{name}', the 'value' must have shape [{b}, {h}, {k[2]}, Dv] like 'key', but got {list(v)}."
        )
    for got, full in zip(mask, (b, h, lq, k[2])):
        if got not in (1, full):
            raise ValueError(
                f"For '{name}', the 'attn_mask' must broadcast to [{b}, {h}, {lq}, {k[2]}] (each dim 1 or equal), "
                f"but got {list(mask)}."
            )


class ScaledDotProductAttention(_Operator):
    r"""``ScaledDotProductAttention(scale, keep_prob=1.0, is_causal=False, Seed0=0, Seed1=0)(query, key, value,
    attn_mask)`` returns ``(output, softmax_lse)``:

    .. math::
        s_{ij} = scale \cdot q_i \cdot k_j + mask_{ij},\quad p_{ij} = e^{s_{ij} - lse_i},\quad
        lse_i = \log \sum_j e^{s_{ij}},\quad output_i = \sum_j p_{ij} \, z_{ij} / keep\_prob \; v_j

    with :math:`s_{ij} = -\infty` where ``is_causal`` and :math:`j > i` (top-left aligned), and
    :math:`z_{ij}` Dropout's counter-based keep decision for index :math:`(bh \cdot L_q + i) L_k + j` of the
    seeds (the same generator as ``Dropout``; ``keep_prob=1.0`` keeps every score).

    Inputs: ``query`` (B, H, Lq, D), ``key`` (B, H, Lk, D), ``value`` (B, H, Lk, Dv), ``attn_mask`` an additive
    mask of the same dtype, 4-D and broadcastable to (B, H, Lq, Lk) (shape (1, 1, 1, 1) of 0 for none; ``-inf``
    hides a score). Outputs: ``output`` (B, H, Lq, Dv) and ``softmax_lse`` (B, H, Lq), float32 for float16
    inputs. The kernels stream over key blocks with an online softmax, so no (Lq, Lk) buffer is allocated; a
    row whose scores are all ``-inf`` gives NaN. dtypes (CPU): float16 (computed in float32), float32, float64.
    The mask is not differentiated (its gradient is zero).
    """

    @prim_attr_register
    def __init__(self, scale=1.0, keep_prob=1.0, is_causal=False, Seed0=0, Seed1=0):  # noqa: N803 - MindSpore's
        _check_attrs(self)
        self.init_prim_io_names(inputs=["query", "key", "value", "attn_mask"], outputs=["output", "softmax_lse"])

    def infer_shape(self, q, k, v, mask):
        _check_qkv_mask(self.name, q, k, v, mask)
        return [*q[:3], v[3]], list(q[:3])

    def infer_dtype(self, q, k, v, mask):
        args = {"query": q, "key": k, "value": v, "attn_mask": mask}
        t = validator.check_tensors_dtypes_same_and_valid(args, _ATTENTION_DTYPES, self.name)
        return t, _lse_dtype(t)


class ScaledDotProductAttentionGrad(_Operator):
    r"""``ScaledDotProductAttentionGrad(scale, keep_prob, is_causal, Seed0, Seed1)(query, key, value, attn_mask,
    output, dout, softmax_lse)`` returns ``(dq, dk, dv)`` of ScaledDotProductAttention, recomputing
    :math:`p_{ij} = e^{s_{ij} - lse_i}` block by block (FlashAttention's backward): with
    :math:`D_i = dout_i \cdot output_i`, :math:`dv_j = \sum_i p_{ij} z_{ij}/keep\_prob \, dout_i`,
    :math:`ds_{ij} = p_{ij}(z_{ij}/keep\_prob \; dout_i \cdot v_j - D_i)`,
    :math:`dq_i = scale \sum_j ds_{ij} k_j`, :math:`dk_j = scale \sum_i ds_{ij} q_i`.
    dtypes (CPU): float16 (computed in float32, ``softmax_lse`` float32), float32, float64."""

    @prim_attr_register
    def __init__(self, scale=1.0, keep_prob=1.0, is_causal=False, Seed0=0, Seed1=0):  # noqa: N803
        _check_attrs(self)
        self.init_prim_io_names(
            inputs=["query", "key", "value", "attn_mask", "output", "dout", "softmax_lse"], outputs=["dq", "dk", "dv"]
        )

    def infer_shape(self, q, k, v, mask, out, dout, lse):
        _check_qkv_mask(self.name, q, k, v, mask)
        want = [*q[:3], v[3]]
        for arg, shape in (("output", out), ("dout", dout)):
            if list(shape) != want:
                raise ValueError(f"For '{self.name}', the '{arg}' must have shape {want}, but got {list(shape)}.")
        if list(lse) != list(q[:3]):
            raise ValueError(
                f"For '{self.name}', the 'softmax_lse' must have shape {list(q[:3])}, but got {list(lse)}."
            )
        return list(q), list(k), list(v)

    def infer_dtype(self, q, k, v, mask, out, dout, lse):
        args = {"query": q, "key": k, "value": v, "attn_mask": mask, "output": out, "dout": dout}
        t = validator.check_tensors_dtypes_same_and_valid(args, _ATTENTION_DTYPES, self.name)
        validator.check_tensor_dtype_valid("softmax_lse", lse, (_lse_dtype(t),), self.name)
        return t, t, t
