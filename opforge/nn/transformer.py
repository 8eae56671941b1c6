"""MultiheadAttention and the Transformer cells (MindSpore 2.x's signatures), built from primitives: MatMul
through Dense, BatchMatMul, Softmax, the fused ScaledDotProductAttention, LayerNorm, Dropout, activations.

MultiheadAttention computes attention by one of two paths, with equal results:
- ``need_weights=True`` (MindSpore's default) returns the attention weights, so it forms them: the scores by
  BatchMatMul, Softmax, Dropout, then BatchMatMul with the values ((N, H, L, S) per call);
- ``need_weights=False`` (what the Transformer layers use) runs the fused ScaledDotProductAttention, which
  streams over the keys and never stores the (L, S) weights.
"""

from __future__ import annotations

import copy

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.nn import init as _init
from opforge.nn.cell import Cell, CellList
from opforge.nn.layers import Dense, Dropout, dropout_step, dropout_with, get_activation
from opforge.nn.normalization import LayerNorm
from opforge.ops import functional as F
from opforge.tensor import Parameter, Tensor

__all__ = [
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerDecoder",
    "Transformer",
]


def _check_positive_int(cell: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"For '{cell}', the '{name}' must be a positive int, but got {value!r}.")
    return int(value)


def _check_dropout(cell: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ValueError(f"For '{cell}', the 'dropout' must be a float in [0, 1), but got {value!r}.")
    return float(value)


def _additive(mask, dtype, masked_is_true: bool = True):
    """A bool mask (True: hidden, MindSpore's MultiheadAttention convention) as 0 / -inf of ``dtype``; a
    float mask is already additive."""
    if mask.dtype != mstype.bool_:
        return F.cast(mask, dtype) if mask.dtype != dtype else mask
    shape = tuple(mask.shape)
    hidden, shown = F.fill(dtype, shape, float("-inf")), F.fill(dtype, shape, 0.0)
    return F.select(mask, hidden, shown) if masked_is_true else F.select(mask, shown, hidden)


class MultiheadAttention(Cell):
    r"""Multi-head attention: :math:`\mathrm{Concat}(head_1, \dots, head_h) W^O` with
    :math:`head_i = \mathrm{softmax}(Q W^Q_i (K W^K_i)^T / \sqrt{d} + mask) V W^V_i`, d = embed_dim / num_heads.

    ``construct(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True)``: query (L, N, E) (or (N, L, E) with ``batch_first``; (L, E) unbatched), key
    (S, N, kdim), value (S, N, vdim); ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N * num_heads,
    L, S), bool (True: not attended) or float (added to the scores). Returns ``(attn_output, attn_weights)``:
    attn_output like query with E features; attn_weights (N, L, S) averaged over the heads, (N, H, L, S)
    with ``average_attn_weights=False``, or None with ``need_weights=False`` (then the fused
    ScaledDotProductAttention runs, which never stores the weights). Dropout on the weights in training
    mode: seeded like nn.Dropout (this cell's seed, a new mask per call).
    """

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        has_bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        dtype=mstype.float32,
    ):
        super().__init__()
        name = "MultiheadAttention"
        self.embed_dim = _check_positive_int(name, "embed_dim", embed_dim)
        self.num_heads = _check_positive_int(name, "num_heads", num_heads)
        if self.embed_dim % self.num_heads:
            raise ValueError(
                f"For '{name}', the 'embed_dim' must be divisible by 'num_heads', but got {embed_dim} and {num_heads}."
            )
        self.kdim = self.embed_dim if kdim is None else _check_positive_int(name, "kdim", kdim)
        self.vdim = self.embed_dim if vdim is None else _check_positive_int(name, "vdim", vdim)
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.dropout = _check_dropout(name, dropout)
        self.head_dim = self.embed_dim // self.num_heads
        self.batch_first, self.has_bias = bool(batch_first), bool(has_bias)
        self.add_zero_attn = bool(add_zero_attn)
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_init.initializer("xavier_uniform", (3 * e, e), dtype), "in_proj_weight")
        else:
            self.q_proj_weight = Parameter(_init.initializer("xavier_uniform", (e, e), dtype), "q_proj_weight")
            self.k_proj_weight = Parameter(_init.initializer("xavier_uniform", (e, self.kdim), dtype), "k_proj_weight")
            self.v_proj_weight = Parameter(_init.initializer("xavier_uniform", (e, self.vdim), dtype), "v_proj_weight")
        if self.has_bias:
            self.in_proj_bias = Parameter(_init.initializer("zeros", (3 * e,), dtype), "in_proj_bias")
        self.out_proj = Dense(e, e, weight_init="xavier_uniform", has_bias=self.has_bias, dtype=dtype)
        self.add_bias_kv = bool(add_bias_kv)
        if self.add_bias_kv:
            self.bias_k = Parameter(_init.initializer("xavier_normal", (1, 1, e), dtype), "bias_k")
            self.bias_v = Parameter(_init.initializer("xavier_normal", (1, 1, e), dtype), "bias_v")
        self.seed = _init.derived_seed()
        self.step = 0
        self.matmul = ops.MatMul(transpose_b=True)
        self.bmm_nt = ops.BatchMatMul(transpose_b=True)
        self.bmm = ops.BatchMatMul()
        self.softmax = ops.Softmax(-1)

    def extend_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout:g}"

    # -- projections -------------------------------------------------------------------------------------
    def _proj_weights(self):
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            return w[0:e], w[e : 2 * e], w[2 * e : 3 * e]
        return self.q_proj_weight, self.k_proj_weight, self.v_proj_weight

    def _project(self, x, weight, bias_index):
        """x (N, L, in) @ weight^T (+ the in_proj_bias slice): (N, L, E)."""
        n, length, features = x.shape
        y = self.matmul(F.reshape(x, (n * length, features)), weight)
        if self.has_bias:
            e = self.embed_dim
            y = y + self.in_proj_bias[bias_index * e : (bias_index + 1) * e]
        return F.reshape(y, (n, length, self.embed_dim))

    def _heads(self, x):
        """(N, L, E) -> (N, H, L, head_dim)."""
        n, length, _ = x.shape
        return F.transpose(F.reshape(x, (n, length, self.num_heads, self.head_dim)), (0, 2, 1, 3))

    # -- masks -------------------------------------------------------------------------------------------
    def _mask(self, attn_mask, key_padding_mask, n, length, dtype):
        """The additive mask, broadcastable to (N, H, L, S), or None."""
        mask = None
        if attn_mask is not None:
            attn_mask = _additive(attn_mask, dtype)
            if attn_mask.ndim == 2:
                mask = F.reshape(attn_mask, (1, 1, *attn_mask.shape))
            elif attn_mask.ndim == 3 and attn_mask.shape[0] == n * self.num_heads:
                mask = F.reshape(attn_mask, (n, self.num_heads, *attn_mask.shape[1:]))
            else:
                raise ValueError(
                    f"For 'MultiheadAttention', the 'attn_mask' must be (L, S) or (N * num_heads, L, S) = "
                    f"({n * self.num_heads}, L, S), but got shape {list(attn_mask.shape)}."
                )
        if key_padding_mask is not None:
            kpm = _additive(key_padding_mask, dtype)
            if kpm.ndim != 2 or kpm.shape[0] != n:
                raise ValueError(
                    f"For 'MultiheadAttention', the 'key_padding_mask' must be (N, S) with N={n}, "
                    f"but got shape {list(kpm.shape)}."
                )
            kpm = F.reshape(kpm, (n, 1, 1, kpm.shape[1]))
            mask = kpm if mask is None else mask + kpm
        return mask

    @staticmethod
    def _pad_mask(mask):
        """One more key (bias_kv or zero_attn) that every query sees: a 0 column on the mask."""
        if mask is None:
            return None
        zero = F.fill(mask.dtype, (*mask.shape[:-1], 1), 0.0)
        return F.concat((mask, zero), -1)

    def _extra_keys(self, k, v, mask, n):
        if self.add_bias_kv:
            k = F.concat((k, F.broadcast_to(self.bias_k, (n, 1, self.embed_dim))), 1)
            v = F.concat((v, F.broadcast_to(self.bias_v, (n, 1, self.embed_dim))), 1)
            mask = self._pad_mask(mask)
        if self.add_zero_attn:
            k = F.concat((k, F.fill(k.dtype, (n, 1, self.embed_dim), 0.0)), 1)
            v = F.concat((v, F.fill(v.dtype, (n, 1, self.embed_dim), 0.0)), 1)
            mask = self._pad_mask(mask)
        return k, v, mask

    # -- attention ---------------------------------------------------------------------------------------
    def _keep_prob_and_step(self, device: str):
        if not self.training or self.dropout == 0.0:
            return 1.0, 0
        return 1.0 - self.dropout, dropout_step(self, device)

    def _weights_path(self, q, k, v, mask, keep_prob, step):
        scores = self.bmm_nt(q, k) * (1.0 / float(np.sqrt(self.head_dim)))
        if mask is not None:
            scores = scores + mask
        weights = self.softmax(scores)
        if keep_prob < 1.0:
            weights = dropout_with(weights, keep_prob, self.seed, step)
        return self.bmm(weights, v), weights

    def _fused_path(self, q, k, v, mask, keep_prob, step):
        if mask is None:
            mask = F.fill(q.dtype, (1, 1, 1, 1), 0.0)
        elif mask.ndim < 4:
            mask = F.reshape(mask, (1,) * (4 - mask.ndim) + tuple(mask.shape))
        scale = 1.0 / float(np.sqrt(self.head_dim))
        prim = ops.ScaledDotProductAttention(scale, keep_prob, False, self.seed, step)
        return prim(q, k, v, mask)[0]

    def construct(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
    ):
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = (F.expand_dims(t, 1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = F.expand_dims(key_padding_mask, 0)
        if not self.batch_first:  # (L, N, E) -> (N, L, E)
            query, key, value = (F.transpose(t, (1, 0, 2)) for t in (query, key, value))
        if query.shape[-1] != self.embed_dim:
            raise ValueError(
                f"For 'MultiheadAttention', the query's last dim must be embed_dim={self.embed_dim}, "
                f"but got shape {list(query.shape)}."
            )
        n, length = query.shape[0], query.shape[1]
        wq, wk, wv = self._proj_weights()
        q, k, v = self._project(query, wq, 0), self._project(key, wk, 1), self._project(value, wv, 2)
        mask = self._mask(attn_mask, key_padding_mask, n, length, q.dtype)
        k, v, mask = self._extra_keys(k, v, mask, n)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        keep_prob, step = self._keep_prob_and_step(q.device)
        # (the fused kernel takes its seeds as attrs: a trace's step, a Tensor, goes the weights' way)
        if need_weights or isinstance(step, Tensor):
            out, weights = self._weights_path(q, k, v, mask, keep_prob, step)
            if average_attn_weights:
                weights = ops.ReduceMean()(weights, 1)
        else:
            out, weights = self._fused_path(q, k, v, mask, keep_prob, step), None
        out = F.reshape(F.transpose(out, (0, 2, 1, 3)), (n, length, self.embed_dim))
        out = self.out_proj(out)
        if not self.batch_first:
            out = F.transpose(out, (1, 0, 2))
        if unbatched:
            out = F.reshape(out, (length, self.embed_dim))
            if weights is not None:
                weights = F.reshape(weights, tuple(weights.shape[1:]))
        return out, weights


def _activation(name: str, activation):
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise ValueError(
                f"For '{name}', the 'activation' must be 'relu', 'gelu' or a Cell, but got {activation!r}."
            )
        return get_activation(activation)
    if isinstance(activation, Cell) or callable(activation):
        return activation
    raise TypeError(f"For '{name}', the 'activation' must be a str or a Cell, but got {type(activation).__name__}.")


class _FeedForward(Cell):
    """linear2(dropout(activation(linear1(x))))."""

    def __init__(self, d_model, dim_feedforward, dropout, activation, dtype):
        super().__init__()
        self.linear1 = Dense(d_model, dim_feedforward, weight_init="he_uniform", dtype=dtype)
        self.dropout = Dropout(p=dropout) if dropout > 0 else Dropout(keep_prob=1.0)
        self.linear2 = Dense(dim_feedforward, d_model, weight_init="he_uniform", dtype=dtype)
        self.activation = activation

    def construct(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


def _norms(n: int, d_model, eps, dtype) -> tuple:
    """The ``n`` LayerNorms of a Transformer layer, over its last dim."""
    return tuple(LayerNorm((d_model,), epsilon=eps, dtype=dtype) for _ in range(n))


def _dropout(p: float) -> Dropout:
    return Dropout(p=p) if p > 0 else Dropout(keep_prob=1.0)


class TransformerEncoderLayer(Cell):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm (after each
    block, or before it with ``norm_first``). ``construct(src, src_mask=None, src_key_padding_mask=None)``;
    src (S, N, E), or (N, S, E) with ``batch_first``. The attention runs the fused ScaledDotProductAttention
    (need_weights=False)."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        dtype=mstype.float32,
    ):
        super().__init__()
        name = "TransformerEncoderLayer"
        dim_feedforward = _check_positive_int(name, "dim_feedforward", dim_feedforward)
        dropout = _check_dropout(name, dropout)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, batch_first=batch_first, dtype=dtype)
        self.ff = _FeedForward(d_model, dim_feedforward, dropout, _activation(name, activation), dtype)
        self.norm1, self.norm2 = _norms(2, d_model, layer_norm_eps, dtype)
        self.dropout1, self.dropout2 = _dropout(dropout), _dropout(dropout)
        self.norm_first = bool(norm_first)

    def _sa(self, x, mask, kpm):
        return self.dropout1(self.self_attn(x, x, x, kpm, False, mask)[0])

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self.dropout2(self.ff(self.norm2(x)))
        x = self.norm1(x + self._sa(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self.dropout2(self.ff(x)))


class TransformerDecoderLayer(Cell):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward block, each with a residual
    connection and LayerNorm. ``construct(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None)``."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        dtype=mstype.float32,
    ):
        super().__init__()
        name = "TransformerDecoderLayer"
        dim_feedforward = _check_positive_int(name, "dim_feedforward", dim_feedforward)
        dropout = _check_dropout(name, dropout)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout, batch_first=batch_first, dtype=dtype)
        self.ff = _FeedForward(d_model, dim_feedforward, dropout, _activation(name, activation), dtype)
        self.norm1, self.norm2, self.norm3 = _norms(3, d_model, layer_norm_eps, dtype)
        self.dropout1, self.dropout2, self.dropout3 = _dropout(dropout), _dropout(dropout), _dropout(dropout)
        self.norm_first = bool(norm_first)

    def _sa(self, x, mask, kpm):
        return self.dropout1(self.self_attn(x, x, x, kpm, False, mask)[0])

    def _mha(self, x, mem, mask, kpm):
        return self.dropout2(self.multihead_attn(x, mem, mem, kpm, False, mask)[0])

    def construct(
        self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None
    ):
        x = tgt
        if self.norm_first:
            x = x + self._sa(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self.dropout3(self.ff(self.norm3(x)))
        x = self.norm1(x + self._sa(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self.dropout3(self.ff(x)))


def _clones(layer: Cell, num_layers: int) -> CellList:
    """``num_layers`` deep copies of ``layer`` (the same initial weights, as MindSpore's), each with fresh
    dropout seeds so the layers draw different masks."""
    num_layers = _check_positive_int("TransformerEncoder", "num_layers", num_layers)
    layers = [copy.deepcopy(layer) for _ in range(num_layers)]
    for clone in layers:
        for _, cell in clone.cells_and_names():
            if isinstance(cell, (Dropout, MultiheadAttention)):
                cell.seed = _init.derived_seed()
    return CellList(layers)


class TransformerEncoder(Cell):
    """``num_layers`` copies of ``encoder_layer`` in sequence, then ``norm`` if given.
    ``construct(src, mask=None, src_key_padding_mask=None)``."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = len(self.layers)
        self.norm = norm

    def construct(self, src, mask=None, src_key_padding_mask=None):
        x = src
        for layer in self.layers:
            x = layer(x, mask, src_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Cell):
    """``num_layers`` copies of ``decoder_layer`` in sequence, then ``norm`` if given.
    ``construct(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)``."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = len(self.layers)
        self.norm = norm

    def construct(
        self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None
    ):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class Transformer(Cell):
    """An encoder (``num_encoder_layers`` TransformerEncoderLayers and a LayerNorm) and a decoder
    (``num_decoder_layers`` TransformerDecoderLayers and a LayerNorm). ``construct(src, tgt, src_mask=None,
    tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)`` gives the decoder's output, tgt's shape."""

    def __init__(
        self,
        d_model=512,
        nhead=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        custom_encoder=None,
        custom_decoder=None,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        dtype=mstype.float32,
    ):
        super().__init__()
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            norm = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*args), num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            norm = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*args), num_decoder_layers, norm)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def construct(
        self,
        src,
        tgt,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
    ):
        memory = self.encoder(src, src_mask, src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask)
