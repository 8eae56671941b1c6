"""Sweep records (see op_db.py) of the fused attention: ScaledDotProductAttention and its grad, against a
NumPy float64 re-implementation that materialises the (Lq, Lk) scores (the kernels never do).

Shapes cover Lq != Lk, head dims that are not a multiple of the vector width, lengths that are not a
multiple of the kernels' blocks (32 query rows, 64 keys), broadcast masks, -inf in the mask and causal
masking. Each output is swept as a variant of its own (as op_db_norm.py does)."""

from __future__ import annotations

import numpy as np
from op_db import Arg, ErrorInput, OpRecord, Sample, _t
from op_db_norm import _Call

from opforge import Tensor, ops
from opforge import dtype as mstype

_TOLS = {"Float16": (2e-2, 2e-2), "Float32": (2e-5, 2e-5), "Float64": (1e-10, 1e-10)}
# The grad takes float32 out and softmax_lse as inputs and sums Lk (or Lq) terms of ds in float32.
_GRAD_TOLS = {**_TOLS, "Float32": (1e-4, 1e-4)}

# (B, H, Lq, Lk, D, Dv, mask shape)
_SHAPES = [
    (1, 1, 1, 1, 1, 1, (1, 1, 1, 1)),
    (2, 3, 5, 7, 3, 4, (1, 1, 1, 1)),
    (1, 2, 33, 65, 17, 9, (1, 2, 1, 65)),
    (2, 1, 70, 40, 8, 8, (2, 1, 70, 40)),
    (1, 1, 0, 5, 4, 4, (1, 1, 1, 1)),
    (1, 2, 3, 0, 4, 4, (1, 1, 1, 1)),
]


def _scores64(prim, q, k, mask):
    q, k, mask = (np.asarray(a, np.float64) for a in (q, k, mask))
    s = np.einsum("bhid,bhjd->bhij", q, k) * prim.scale + mask
    if prim.is_causal:
        lq, lk = s.shape[-2:]
        s = np.where(np.arange(lk)[None, :] > np.arange(lq)[:, None], -np.inf, s)
    return s


def _weighted_sum(p, v):
    """p @ v, but a score of probability 0 adds nothing (not 0 * inf = NaN for an infinite v behind it)."""
    terms = np.where(p[..., None] == 0, 0.0, p[..., None] * v[..., None, :, :])
    return terms.sum(axis=-2)


def _forward64(prim, q, k, v, mask):
    s = _scores64(prim, q, k, mask)
    with np.errstate(all="ignore"):
        m = np.max(s, axis=-1, keepdims=True) if s.shape[-1] else np.full(s.shape[:-1] + (1,), -np.inf)
        e = np.exp(s - m)
        lse = (m + np.log(np.sum(e, axis=-1, keepdims=True)))[..., 0]
        p = np.where(s == -np.inf, 0.0, np.exp(s - lse[..., None]))  # a hidden score: 0 (AttentionProb)
        out = _weighted_sum(p, np.asarray(v, np.float64))
        out[np.isinf(lse) | np.isnan(lse)] = np.nan
    return out, lse, p


def _ref(prim, q, k, v, mask):
    out, lse, _ = _forward64(prim, q, k, v, mask)
    return (out, lse)[prim.index]


def _grad_ref(prim, q, k, v, mask, out, dout, lse):
    """The backward's contract: p = exp(s - lse) and D = sum(dout * out) from the given lse and out (as
    FlashAttention's backward takes them), a score with p == 0 adding nothing (so infinities in dout or v
    behind a hidden score do not turn into NaN)."""
    q, k, v, out, dout, lse = (np.asarray(a, np.float64) for a in (q, k, v, out, dout, lse))
    s = _scores64(prim, q, k, mask)
    with np.errstate(all="ignore"):
        p = np.where(s == -np.inf, 0.0, np.exp(s - lse[..., None]))  # a hidden score: 0 (AttentionProb)
        delta = np.sum(dout * out, axis=-1)
        dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
        for b, h, i, j in zip(*np.nonzero(p)):
            pij = p[b, h, i, j]
            dv[b, h, j] += pij * dout[b, h, i]
            ds = prim.scale * pij * (np.dot(dout[b, h, i], v[b, h, j]) - delta[b, h, i])
            dq[b, h, i] += ds * k[b, h, j]
            dk[b, h, j] += ds * q[b, h, i]
    return (dq, dk, dv)[prim.index]


def _masks(mask_shape, lq, lk, dtype, rng):
    mask = rng.uniform(-1.0, 1.0, mask_shape).astype(dtype.np_dtype)
    if mask.size > 1 and mask_shape[-1] > 1:
        mask[..., 1] = -np.inf  # a hidden key (never the only one of a row: key 0 stays)
    return mask


def _samples(record, prim, ins, outs, rng):
    for b, h, lq, lk, d, dv, mask_shape in _SHAPES:
        q = record.make_arg(0, (b, h, lq, d), ins[0], rng)
        k = record.make_arg(1, (b, h, lk, d), ins[0], rng)
        v = record.make_arg(2, (b, h, lk, dv), ins[0], rng)
        yield Sample((q, k, v, _masks(mask_shape, lq, lk, ins[0], rng)), desc=f"q{list(q.shape)} Lk={lk} Dv={dv}")


def _grad_samples(record, prim, ins, outs, rng):
    fwd = ops.ScaledDotProductAttention(prim.scale, 1.0, prim.is_causal)
    for sample in _samples(record, prim, ins, outs, rng):
        q, k, v, mask = sample.args
        if q.shape[2] == 0:
            continue
        out, lse = fwd(*(Tensor(a) for a in (q, k, v, mask)))
        dout = record.make_arg(5, out.shape, ins[0], rng)
        yield Sample((q, k, v, mask, out.asnumpy(), dout, lse.asnumpy()), desc=sample.desc)


def _variants(factory_args, names):
    out = {}
    for label, (scale, causal) in factory_args.items():
        for i, name in enumerate(names):
            out[f"{label}/{name}"] = lambda scale=scale, causal=causal, i=i: _Call(
                ops.ScaledDotProductAttention(scale, 1.0, causal), i
            )
    return out


def _grad_variants(factory_args, names):
    out = {}
    for label, (scale, causal) in factory_args.items():
        for i, name in enumerate(names):
            out[f"{label}/{name}"] = lambda scale=scale, causal=causal, i=i: _Call(
                ops.ScaledDotProductAttentionGrad(scale, 1.0, causal), i
            )
    return out


_CONFIGS = {"scale=0.5": (0.5, False), "causal,scale=0.3": (0.3, True)}


def _errors():
    prim = ops.ScaledDotProductAttention
    q, mask = _t((1, 2, 3, 4)), _t((1, 1, 1, 1))
    return [
        ErrorInput("query-3d", lambda: prim(0.5)(_t((2, 3, 4)), q, q, mask), ValueError, "query"),
        ErrorInput("key-dim", lambda: prim(0.5)(q, _t((1, 2, 3, 5)), q, mask), ValueError, "key"),
        ErrorInput("value-length", lambda: prim(0.5)(q, q, _t((1, 2, 4, 4)), mask), ValueError, "value"),
        ErrorInput("mask-shape", lambda: prim(0.5)(q, q, q, _t((1, 1, 2, 3))), ValueError, "attn_mask"),
        ErrorInput("mask-dtype", lambda: prim(0.5)(q, q, q, _t((1, 1, 1, 1), mstype.float64)), TypeError, "attn_mask"),
        ErrorInput("int-query", lambda: prim(0.5)(*(_t((1, 1, 2, 2), mstype.int32),) * 4), TypeError, "query"),
        ErrorInput("keep-prob-0", lambda: prim(0.5, 0.0), ValueError, "keep_prob"),
        ErrorInput("scale-int", lambda: prim(1), TypeError, "scale"),
        ErrorInput("causal-int", lambda: prim(0.5, 1.0, 1), TypeError, "is_causal"),
    ]


RECORDS = [
    OpRecord(
        "ScaledDotProductAttention",
        _variants(_CONFIGS, ("output", "softmax_lse")),
        _samples,
        _ref,
        args=(Arg(),) * 4,
        tols=_TOLS,
        error_inputs=_errors,
    ),
    OpRecord(
        "ScaledDotProductAttentionGrad",
        _grad_variants(_CONFIGS, ("dq", "dk", "dv")),
        _grad_samples,
        _grad_ref,
        args=(Arg(),) * 7,
        tols=_GRAD_TOLS,
    ),
]
