"""The fused attention and the attention cells: ops.scaled_dot_product_attention, nn.MultiheadAttention and the
Transformer layers against NumPy re-implementations, the memory the fused kernels take on a long sequence,
and a small ViT-style encoder that trains. (The primitive's dtype/shape sweeps are in op_db_attention.py, its
gradients in grad_db.py.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np(t):
    return t.asnumpy().astype(np.float64)


def _mha_ref(cell, query, key, value, key_padding_mask=None, attn_mask=None, average=True):
    """MultiheadAttention in NumPy from the cell's parameters (batch_first layout, float64)."""
    e, h = cell.embed_dim, cell.num_heads
    hd = e // h
    if cell._qkv_same_embed_dim:
        w = _np(cell.in_proj_weight)
        wq, wk, wv = w[:e], w[e : 2 * e], w[2 * e :]
    else:
        wq, wk, wv = _np(cell.q_proj_weight), _np(cell.k_proj_weight), _np(cell.v_proj_weight)
    b = _np(cell.in_proj_bias) if cell.has_bias else np.zeros(3 * e)
    q, k, v = query @ wq.T + b[:e], key @ wk.T + b[e : 2 * e], value @ wv.T + b[2 * e :]
    n, length, s = q.shape[0], q.shape[1], k.shape[1]
    mask = np.zeros((n, h, length, s))
    if attn_mask is not None:
        am = np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool else attn_mask
        mask = mask + am.reshape((1, 1, length, s) if am.ndim == 2 else (n, h, length, s))
    if key_padding_mask is not None:
        mask = mask + np.where(key_padding_mask, -np.inf, 0.0)[:, None, None, :]
    extra = []
    if cell.add_bias_kv:
        extra.append((np.broadcast_to(_np(cell.bias_k), (n, 1, e)), np.broadcast_to(_np(cell.bias_v), (n, 1, e))))
    if cell.add_zero_attn:
        extra.append((np.zeros((n, 1, e)), np.zeros((n, 1, e))))
    for bk, bv in extra:
        k, v = np.concatenate([k, bk], 1), np.concatenate([v, bv], 1)
        mask = np.concatenate([mask, np.zeros((n, h, length, 1))], -1)

    def heads(x):
        return x.reshape(n, x.shape[1], h, hd).transpose(0, 2, 1, 3)

    p = _softmax(heads(q) @ heads(k).transpose(0, 1, 3, 2) / np.sqrt(hd) + mask)
    out = (p @ heads(v)).transpose(0, 2, 1, 3).reshape(n, length, e)
    out = out @ _np(cell.out_proj.weight).T + (_np(cell.out_proj.bias) if cell.has_bias else 0.0)
    return out, (p.mean(1) if average else p)


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# ops.scaled_dot_product_attention


def test_functional_matches_numpy_with_bool_mask_and_causal():
    rng = np.random.default_rng(0)
    q, k, v = _rand(rng, 2, 3, 9, 5), _rand(rng, 2, 3, 9, 5), _rand(rng, 2, 3, 9, 7)
    keep = rng.random((9, 9)) < 0.7
    keep[:, 0] = True
    out = ops.scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), attn_mask=Tensor(keep), is_causal=True)
    s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(5) + np.where(keep, 0.0, -np.inf)
    s = np.where(np.triu(np.ones((9, 9), bool), 1), -np.inf, s)
    np.testing.assert_allclose(out.asnumpy(), _softmax(s) @ v, rtol=1e-5, atol=1e-5)


def test_functional_dropout_draws_a_new_mask_per_call_and_scales_kept_weights():
    rng = np.random.default_rng(1)
    q, k, v = (Tensor(_rand(rng, 1, 2, 16, 4)) for _ in range(3))
    a = ops.scaled_dot_product_attention(q, k, v, dropout_p=0.5).asnumpy()
    b = ops.scaled_dot_product_attention(q, k, v, dropout_p=0.5).asnumpy()
    full = ops.scaled_dot_product_attention(q, k, v).asnumpy()
    assert not np.allclose(a, b) and not np.allclose(a, full)
    # Over many calls the mean of dropout's output approaches the output without dropout (1/keep scaling).
    mean = np.mean([ops.scaled_dot_product_attention(q, k, v, dropout_p=0.5).asnumpy() for _ in range(300)], 0)
    assert np.abs(mean - full).mean() < 0.1 * np.abs(full).mean() + 0.02


def test_functional_rejects_bad_dropout():
    x = Tensor(np.zeros((1, 1, 2, 2), np.float32))
    with pytest.raises(ValueError, match="dropout_p"):
        ops.scaled_dot_product_attention(x, x, x, dropout_p=1.0)


# ---------------------------------------------------------------------------------------------
# nn.MultiheadAttention


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"batch_first": True},
        {"has_bias": False},
        {"kdim": 6, "vdim": 3},
        {"add_bias_kv": True},
        {"add_zero_attn": True, "add_bias_kv": True},
    ],
    ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default",
)
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_numpy(kwargs, need_weights):
    rng = np.random.default_rng(2)
    cell = nn.MultiheadAttention(8, 2, **kwargs)
    if cell.has_bias:  # nonzero biases, so a wrong slice of in_proj_bias shows
        cell.in_proj_bias.set_data(Tensor(_rand(rng, 24)))
    n, length, s = 3, 5, 7
    query = _rand(rng, n, length, 8)
    key, value = _rand(rng, n, s, cell.kdim), _rand(rng, n, s, cell.vdim)
    kpm = np.zeros((n, s), bool)
    kpm[1, 2:4] = True
    attn_mask = rng.standard_normal((length, s)).astype(np.float32)
    ref_out, ref_w = _mha_ref(cell, query, key, value, kpm, attn_mask)
    args = (query, key, value) if cell.batch_first else (x.transpose(1, 0, 2) for x in (query, key, value))
    out, w = cell(*(Tensor(a) for a in args), Tensor(kpm), need_weights, Tensor(attn_mask))
    out = out.asnumpy() if cell.batch_first else out.asnumpy().transpose(1, 0, 2)
    np.testing.assert_allclose(out, ref_out, rtol=1e-4, atol=1e-5)
    if need_weights:
        np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-4, atol=1e-6)
    else:
        assert w is None


def test_multihead_attention_per_head_bool_mask_and_unaveraged_weights():
    rng = np.random.default_rng(3)
    cell = nn.MultiheadAttention(6, 3, batch_first=True)
    x = _rand(rng, 2, 4, 6)
    mask = rng.random((2 * 3, 4, 4)) < 0.3
    mask[..., 0] = False
    ref_out, ref_w = _mha_ref(cell, x, x, x, attn_mask=mask, average=False)
    out, w = cell(Tensor(x), Tensor(x), Tensor(x), attn_mask=Tensor(mask), average_attn_weights=False)
    np.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-4, atol=1e-6)


def test_multihead_attention_gradients_agree_between_the_weights_and_fused_paths():
    rng = np.random.default_rng(4)
    cell = nn.MultiheadAttention(8, 2, batch_first=True)
    x = Tensor(_rand(rng, 2, 5, 8))
    params = cell.trainable_params()
    grads = {}
    for need in (True, False):

        def loss(x, need=need):
            return (cell(x, x, x, need_weights=need)[0] ** 2).sum()

        grads[need] = ops.GradOperation(get_by_list=True)(loss, params)(x)
    for a, b in zip(grads[True], grads[False]):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-4, atol=1e-5)


def test_multihead_attention_rejects_bad_arguments():
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="dropout"):
        nn.MultiheadAttention(8, 2, dropout=1.5)
    cell = nn.MultiheadAttention(8, 2)
    x = Tensor(np.zeros((3, 2, 8), np.float32))
    with pytest.raises(ValueError, match="attn_mask"):
        cell(x, x, x, attn_mask=Tensor(np.zeros((5, 3, 3), np.float32)))


# ---------------------------------------------------------------------------------------------
# Transformer layers


def _layer_norm(x, cell):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + cell.epsilon) * _np(cell.gamma) + _np(cell.beta)


def _dense(x, cell):
    return x @ _np(cell.weight).T + _np(cell.bias)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_numpy(norm_first):
    rng = np.random.default_rng(5)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first)
    x = _rand(rng, 2, 6, 8)
    causal = np.triu(np.ones((6, 6), bool), 1)

    def sa(y):
        return _mha_ref(layer.self_attn, y, y, y, attn_mask=causal)[0]

    def ff(y):
        return _dense(np.maximum(_dense(y, layer.ff.linear1), 0.0), layer.ff.linear2)

    if norm_first:
        y = x + sa(_layer_norm(x, layer.norm1))
        ref = y + ff(_layer_norm(y, layer.norm2))
    else:
        y = _layer_norm(x + sa(x), layer.norm1)
        ref = _layer_norm(y + ff(y), layer.norm2)
    out = layer(Tensor(x), Tensor(causal))
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-4)


def test_transformer_shapes_and_clone_independence():
    rng = np.random.default_rng(6)
    model = nn.Transformer(8, 2, 2, 2, 16, dropout=0.1)
    src, tgt = Tensor(_rand(rng, 7, 3, 8)), Tensor(_rand(rng, 5, 3, 8))
    tgt_mask = Tensor(np.triu(np.ones((5, 5), bool), 1))
    assert model(src, tgt, tgt_mask=tgt_mask).shape == (5, 3, 8)
    names = [p.name for p in model.trainable_params()]
    assert len(names) == len(set(names))
    layers = model.encoder.layers
    assert layers[0].self_attn.in_proj_weight is not layers[1].self_attn.in_proj_weight
    model.set_train(True)
    a = model(src, tgt).asnumpy()
    b = model(src, tgt).asnumpy()
    assert not np.allclose(a, b)  # dropout draws a new mask per call in training mode


# ---------------------------------------------------------------------------------------------
# Memory: the fused kernels never hold the (Lq, Lk) scores


def test_long_sequence_does_not_allocate_the_scores():
    # 4096 x 4096 float32 scores would be 64 MiB per head; forward and backward together must stay far below.
    script = textwrap.dedent(
        """
        import resource
        import numpy as np
        from opforge import Tensor, memory, ops
        L, D = 4096, 16
        rng = np.random.default_rng(0)
        q, k, v = (Tensor(rng.standard_normal((1, 1, L, D)).astype(np.float32)) for _ in range(3))
        f = lambda q, k, v: ops.scaled_dot_product_attention(q, k, v, is_causal=True).sum()
        small = [Tensor(np.ones((1, 1, 8, D), np.float32))] * 3
        ops.GradOperation(get_all=True)(f)(*small)  # warm up: load kernels, fill caches
        memory.reset_stats()
        before_pool = memory.stats()["peak_bytes_in_use"]
        before_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        grads = ops.GradOperation(get_all=True)(f)(q, k, v)
        assert all(np.isfinite(g.asnumpy()).all() for g in grads)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_rss
        pool = memory.stats()["peak_bytes_in_use"] - before_pool
        print(rss * 1024, pool)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    rss_growth, pool_peak = map(int, run.stdout.split()[-2:])
    scores = 4096 * 4096 * 4
    assert pool_peak < scores // 8, pool_peak
    assert rss_growth < scores // 4, rss_growth


# ---------------------------------------------------------------------------------------------
# A small ViT-style encoder trains


class _TinyViT(nn.Cell):
    def __init__(self, patch: int, patches: int, d_model: int, classes: int):
        super().__init__()
        self.patch, self.patches = patch, patches
        self.embed = nn.Dense(patch * patch, d_model)
        self.pos = opforge.Parameter(
            Tensor(np.random.default_rng(0).normal(0, 0.02, (1, patches, d_model)).astype(np.float32)), "pos"
        )
        layer = nn.TransformerEncoderLayer(d_model, 2, 2 * d_model, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, nn.LayerNorm((d_model,)))
        self.head = nn.Dense(d_model, classes)

    def construct(self, x):
        n = x.shape[0]
        tokens = self.embed(ops.reshape(x, (n, self.patches, self.patch * self.patch))) + self.pos
        return self.head(ops.ReduceMean()(self.encoder(tokens), 1))


def test_small_vit_encoder_trains():
    rng = np.random.default_rng(7)
    n, classes = 32, 3
    labels = rng.integers(0, classes, n)
    # Images of 4 patches of 4x4 whose patch means encode the class.
    images = rng.normal(0, 0.3, (n, 4, 16)).astype(np.float32)
    images[np.arange(n), labels] += 1.0
    net = _TinyViT(4, 4, 16, classes)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.Adam(net.trainable_params(), 1e-2))
    train.set_train(True)
    x, y = Tensor(images), Tensor(labels.astype(np.int32))
    losses = [float(train(x, y).asnumpy()) for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0], losses
