"""MindSpore's parallel transformer layers (opforge.parallel._transformer) against independent NumPy
implementations of MindSpore's formulas: AttentionMask, VocabEmbedding, _LayerNorm, _Linear, FeedForward,
MultiHeadAttention, the encoder / decoder layers and stacks, Transformer and CrossEntropyLoss; incremental
prediction (use_past) against the full-sequence run; gradients of a small encoder against central differences;
jit against eager; the configuration objects and bad arguments."""

import math

import numpy as np
import pytest

import opforge
from opforge import Tensor
from opforge.common import dtype as mstype
from opforge.parallel._transformer import (
    AttentionMask,
    CrossEntropyLoss,
    EmbeddingOpParallelConfig,
    FeedForward,
    MoEConfig,
    MultiHeadAttention,
    OpParallelConfig,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    TransformerOpParallelConfig,
    TransformerRecomputeConfig,
    VocabEmbedding,
)
from opforge.parallel._transformer.layers import _LayerNorm, _Linear
from opforge.testing import numeric_grad

F32, F16 = mstype.float32, mstype.float16


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    opforge.set_seed(0)


def _fp32(cell):
    """Compute every sub-cell in float32 (the layers' MindSpore default is float16), so the references can be
    tight and central differences meaningful."""
    for _, c in cell.cells_and_names():
        if getattr(c, "dtype", None) == F16:
            c.dtype = F32
        if getattr(c, "softmax_dtype", None) == F16:
            c.softmax_dtype = F32
    return cell


def _randomize(cell, rng, scale=0.3):
    """Random parameters (MindSpore's defaults: ones / zeros / normal(0.01) would hide mistakes)."""
    for p in cell.get_parameters():
        if p.name.endswith(("key_past", "value_past")):
            continue
        p.set_data(Tensor((rng.standard_normal(p.shape) * scale).astype(np.float32)))
    return cell


def _params(cell):
    return {p.name: p.asnumpy().astype(np.float64) for p in cell.get_parameters()}


# ---------------------------------------------------------------------------------------------
# NumPy references (MindSpore's formulas, written from its source's math, not from opforge's code)


def ln_ref(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def softmax_ref(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_ref(P, prefix, q, k, v, mask, heads):
    """q (B, S, H), k / v (B, T, H), mask (B, S, T) or None; dense1-3 weights (out, in), projection (in, out)."""
    B, S, H = q.shape
    T = k.shape[1]
    d = H // heads

    def lin(x, name, transpose_b=True):
        w, b = P[prefix + name + ".weight"], P[prefix + name + ".bias"]
        return x @ (w.T if transpose_b else w) + b

    Q = lin(q, "dense1").reshape(B, S, heads, d).transpose(0, 2, 1, 3)
    K = lin(k, "dense2").reshape(B, T, heads, d).transpose(0, 2, 1, 3)
    V = lin(v, "dense3").reshape(B, T, heads, d).transpose(0, 2, 1, 3)
    scores = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(d)
    if mask is not None:
        scores = scores - 10000.0 * (1.0 - mask[:, None])
    out = (softmax_ref(scores) @ V).transpose(0, 2, 1, 3).reshape(B, S, H)
    present = (K.transpose(0, 1, 3, 2), V)
    return lin(out, "projection", transpose_b=False), present


def ffn_ref(P, prefix, x):
    h = gelu_ref(x @ P[prefix + "mapping.weight"] + P[prefix + "mapping.bias"])
    return h @ P[prefix + "projection.weight"] + P[prefix + "projection.bias"]


def encoder_layer_ref(P, prefix, x, mask, heads, post=False):
    ln = lambda y, n: ln_ref(y, P[prefix + n + ".gamma"], P[prefix + n + ".beta"])  # noqa: E731
    if post:
        attn, present = mha_ref(P, prefix + "attention.", x, x, x, mask, heads)
        h = x + attn
        o = ln(h, "layernorm2")
        return ln(o + ffn_ref(P, prefix + "output.", o), "layernorm1"), present
    a = ln(x, "layernorm1")
    attn, present = mha_ref(P, prefix + "attention.", a, a, a, mask, heads)
    h = x + attn
    return h + ffn_ref(P, prefix + "output.", ln(h, "layernorm2")), present


def decoder_layer_ref(P, prefix, x, mask, enc, memory_mask, heads):
    ln = lambda y, n: ln_ref(y, P[prefix + n + ".gamma"], P[prefix + n + ".beta"])  # noqa: E731
    a = ln(x, "layernorm1")
    attn, present = mha_ref(P, prefix + "attention.", a, a, a, mask, heads)
    h = x + attn
    m = ln(h, "cross_attention_layernorm")
    cross, cross_present = mha_ref(P, prefix + "cross_attention.", m, enc, enc, memory_mask, heads)
    h = h + cross
    return h + ffn_ref(P, prefix + "output.", ln(h, "layernorm2")), present + cross_present


def _causal(batch, seq, valid):
    m = np.tril(np.ones((seq, seq)))[None].repeat(batch, 0)
    for b, n in enumerate(valid):
        m[b, n:, :] = 0
        m[b, :, n:] = 0
    return m.astype(np.float32)


def _prefixes(cell, key="layernorm1.gamma"):
    """The parameter-name prefixes of the layers in a stack, in order (opforge names parameters by path)."""
    return [p.name[: -len(key)] for p in cell.get_parameters() if p.name.endswith(key) and "cross" not in p.name]


# ---------------------------------------------------------------------------------------------
# Layers


def test_attention_mask():
    mask = np.array([[1, 1, 1, 0], [1, 0.5, 0, 0]], np.float32)
    out = AttentionMask(seq_length=4)(Tensor(mask))
    assert out.dtype == F32 and out.shape == (2, 4, 4)
    ref = (mask != 0)[:, :, None] * (mask != 0)[:, None, :] * np.tril(np.ones((4, 4)))
    np.testing.assert_array_equal(out.asnumpy(), ref)


def test_vocab_embedding():
    emb = VocabEmbedding(vocab_size=7, embedding_size=3)
    ids = np.array([[1, 6, 0], [2, 2, 5]], np.int32)
    out, table = emb(Tensor(ids))
    assert out.shape == (2, 3, 3) and table.shape == (7, 3)
    np.testing.assert_array_equal(out.asnumpy(), table.asnumpy()[ids])


@pytest.mark.parametrize("self_defined", [False, True])
def test_layer_norm(self_defined):
    rng = np.random.default_rng(1)
    ln = _randomize(_LayerNorm((5,), eps=1e-5, is_self_defined=self_defined), rng)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    ref = ln_ref(x, ln.gamma.asnumpy(), ln.beta.asnumpy())
    np.testing.assert_allclose(ln(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-5)
    half = ln(Tensor(x.astype(np.float16)))
    assert half.dtype == F16
    np.testing.assert_allclose(half.asnumpy(), ref, atol=2e-2)


@pytest.mark.parametrize("transpose_b", [True, False])
def test_linear(transpose_b):
    rng = np.random.default_rng(2)
    lin = _randomize(_Linear(4, 3, activation="relu", transpose_b=transpose_b, compute_dtype=F32), rng)
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    w = lin.weight.asnumpy()
    ref = np.maximum(x @ (w.T if transpose_b else w) + lin.bias.asnumpy(), 0)
    np.testing.assert_allclose(lin(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    # the default computes in float16 and returns x's dtype
    lin16 = _Linear(4, 3)
    assert lin16(Tensor(x)).dtype == F32 and lin16.weight.shape == (3, 4)


def test_feed_forward():
    rng = np.random.default_rng(3)
    ff = _fp32(_randomize(FeedForward(hidden_size=4, ffn_hidden_size=8, dropout_rate=0.1), rng))
    ff.set_train(False)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    P = _params(ff)
    np.testing.assert_allclose(ff(Tensor(x)).asnumpy(), ffn_ref(P, "", x), rtol=1e-4, atol=1e-5)
    # MindSpore's default: float16 out
    ff16 = _randomize(FeedForward(hidden_size=4, ffn_hidden_size=8, dropout_rate=0.0), rng)
    out = ff16(Tensor(x))
    assert out.dtype == F16 and out.shape == (2, 3, 4)
    np.testing.assert_allclose(out.asnumpy(), ffn_ref(_params(ff16), "", x), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("with_mask", [True, False])
def test_multi_head_attention(with_mask):
    rng = np.random.default_rng(4)
    B, S, T, H, heads = 2, 3, 4, 6, 2
    mha = MultiHeadAttention(batch_size=None, src_seq_length=S, tgt_seq_length=T, hidden_size=H, num_heads=heads,
                             compute_dtype=F32)  # fmt: skip
    _randomize(mha, rng).set_train(False)
    q = rng.standard_normal((B, S, H)).astype(np.float32)
    kv = rng.standard_normal((B, T, H)).astype(np.float32)
    mask = (rng.random((B, S, T)) > 0.3).astype(np.float32) if with_mask else None
    out, (key, value) = mha(Tensor(q), Tensor(kv), Tensor(kv), None if mask is None else Tensor(mask))
    ref, (rk, rv) = mha_ref(_params(mha), "", q, kv, kv, mask, heads)
    assert out.dtype == F32 and key.shape == (B, heads, H // heads, T) and value.shape == (B, heads, T, H // heads)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(key.asnumpy(), rk, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(value.asnumpy(), rv, rtol=1e-4, atol=1e-5)
    # 2-D inputs (batch * seq, hidden) give the same result, in the input's shape
    out2, _ = mha(Tensor(q.reshape(-1, H)), Tensor(kv.reshape(-1, H)), Tensor(kv.reshape(-1, H)),
                  None if mask is None else Tensor(mask))  # fmt: skip
    np.testing.assert_allclose(out2.asnumpy(), ref.reshape(-1, H), rtol=1e-4, atol=1e-5)


def test_multi_head_attention_float16_default():
    rng = np.random.default_rng(5)
    mha = _randomize(MultiHeadAttention(None, 3, 3, 4, 2, hidden_dropout_rate=0.0, attention_dropout_rate=0.0), rng)
    x = rng.standard_normal((1, 3, 4)).astype(np.float32)
    out, _ = mha(Tensor(x), Tensor(x.astype(np.float16)), Tensor(x.astype(np.float16)), None)
    assert out.dtype == F32  # the query's dtype
    ref, _ = mha_ref(_params(mha), "", x, x, x, None, 2)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("post", [False, True])
def test_encoder_layer(post):
    rng = np.random.default_rng(6)
    B, S, H = 2, 4, 6
    layer = TransformerEncoderLayer(batch_size=B, hidden_size=H, ffn_hidden_size=8, num_heads=3, seq_length=S,
                                    post_layernorm_residual=post)  # fmt: skip
    _fp32(_randomize(layer, rng)).set_train(False)
    x = rng.standard_normal((B, S, H)).astype(np.float32)
    mask = _causal(B, S, [4, 3])
    out, (key, value) = layer(Tensor(x), Tensor(mask))
    ref, (rk, rv) = encoder_layer_ref(_params(layer), "", x, mask, 3, post=post)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(key.asnumpy(), rk, rtol=1e-4, atol=1e-4)
    # 2-D input
    out2, _ = layer(Tensor(x.reshape(-1, H)), Tensor(mask))
    np.testing.assert_allclose(out2.asnumpy(), ref.reshape(-1, H), rtol=1e-4, atol=1e-4)


def test_encoder_stack_float16_default():
    """MindSpore's defaults (float16 attention and FFN, float32 layer norms and softmax)."""
    rng = np.random.default_rng(7)
    enc = TransformerEncoder(batch_size=2, num_layers=2, hidden_size=8, ffn_hidden_size=16, seq_length=4, num_heads=2)
    _randomize(enc, rng, scale=0.2).set_train(False)
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    mask = _causal(2, 4, [4, 2])
    out, past = enc(Tensor(x.astype(np.float16)), Tensor(mask))
    assert out.dtype == F16 and len(past) == 2 and past[1][0].shape == (2, 2, 4, 4)
    P, h = _params(enc), x.astype(np.float64)
    for i in range(2):
        h, _ = encoder_layer_ref(P, _prefixes(enc)[i], h, mask, 2)
    np.testing.assert_allclose(out.asnumpy(), h, rtol=5e-2, atol=5e-2)


def test_decoder_layer_and_stack():
    rng = np.random.default_rng(8)
    B, S, T, H = 2, 5, 3, 4
    dec = TransformerDecoder(num_layers=2, batch_size=B, hidden_size=H, ffn_hidden_size=8, src_seq_length=S,
                             tgt_seq_length=T, num_heads=2)  # fmt: skip
    _fp32(_randomize(dec, rng)).set_train(False)
    x = rng.standard_normal((B, T, H)).astype(np.float32)
    enc = rng.standard_normal((B, S, H)).astype(np.float32)
    mask, memory = _causal(B, T, [3, 2]), (rng.random((B, T, S)) > 0.2).astype(np.float32)
    out, past = dec(Tensor(x), Tensor(mask), Tensor(enc), Tensor(memory))
    assert len(past) == 2 and [t.shape for t in past[0]] == [(B, 2, 2, T), (B, 2, T, 2), (B, 2, 2, S), (B, 2, S, 2)]
    P, h = _params(dec), x.astype(np.float64)
    for i in range(2):
        h, _ = decoder_layer_ref(P, _prefixes(dec)[i], h, mask, enc, memory, 2)
    np.testing.assert_allclose(out.asnumpy(), h, rtol=1e-4, atol=1e-4)
    # without an encoder output the cross attention is skipped
    layer = _fp32(TransformerDecoderLayer(H, 8, 2, B, S, T)).set_train(False)
    out, present = layer(Tensor(x), Tensor(mask))
    assert out.shape == (B, T, H) and len(present) == 2


def test_transformer():
    rng = np.random.default_rng(9)
    B, S, T, H = 2, 4, 3, 4
    model = Transformer(hidden_size=H, batch_size=B, ffn_hidden_size=8, src_seq_length=S, tgt_seq_length=T,
                        encoder_layers=1, decoder_layers=1, num_heads=2)  # fmt: skip
    _fp32(_randomize(model, rng)).set_train(False)
    xe, xd = rng.standard_normal((B, S, H)).astype(np.float32), rng.standard_normal((B, T, H)).astype(np.float32)
    me, md, mm = _causal(B, S, [4, 4]), _causal(B, T, [3, 3]), np.ones((B, T, S), np.float32)
    out, enc_past, dec_past = model(Tensor(xe), Tensor(me), Tensor(xd), Tensor(md), Tensor(mm))
    P = _params(model)
    enc, _ = encoder_layer_ref(P, _enc_prefix(model), xe, me, 2)
    ref, _ = decoder_layer_ref(P, _dec_prefix(model), xd, md, enc, mm, 2)
    assert len(enc_past) == 1 and len(dec_past) == 1 and len(dec_past[0]) == 4
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-4)
    # encoder only: the decoder's present is None
    enc_only = Transformer(H, B, 8, S, T, encoder_layers=1, decoder_layers=0)
    out, enc_past, dec_past = enc_only(Tensor(xe), Tensor(me))
    assert out.shape == (B, S, H) and dec_past is None


def _enc_prefix(model):
    return [p.name for p in model.get_parameters() if "encoder" in p.name and p.name.endswith("layernorm1.gamma")][0][
        : -len("layernorm1.gamma")
    ]


def _dec_prefix(model):
    return [p.name for p in model.get_parameters() if "decoder" in p.name and p.name.endswith("layernorm1.gamma")][0][
        : -len("layernorm1.gamma")
    ]


def test_use_past_matches_full_sequence():
    """Incremental prediction: the first iteration on the padded prompt, then one token per step, give the
    full-sequence outputs at each new position (MindSpore's two-graph scheme; init_reset False clears the saved
    keys and values, True keeps them, as PanGu-alpha's generate_increment passes them)."""
    rng = np.random.default_rng(10)
    B, S, H, prompt = 1, 5, 4, 2
    full = TransformerEncoder(batch_size=B, num_layers=1, hidden_size=H, ffn_hidden_size=8, seq_length=S,
                              num_heads=2)  # fmt: skip
    inc = TransformerEncoder(batch_size=B, num_layers=1, hidden_size=H, ffn_hidden_size=8, seq_length=S,
                             num_heads=2, use_past=True)  # fmt: skip
    _randomize(full, rng)
    for name, p in zip([p.name for p in full.get_parameters()], full.get_parameters()):
        for q in inc.get_parameters():
            if q.name == name:
                q.set_data(Tensor(p.asnumpy()))
    full.set_train(False)
    inc.set_train(False)
    x = (rng.standard_normal((B, S, H)) * 0.5).astype(np.float32)
    ref, _ = full(Tensor(x), Tensor(_causal(B, S, [S])))
    ref = ref.asnumpy()
    padded = x.copy()
    padded[:, prompt:] = 0
    inc.add_flags_recursive(is_first_iteration=True)
    out, _ = inc(Tensor(padded), Tensor(_causal(B, S, [prompt])), Tensor([False], mstype.bool_),
                 Tensor(np.array([prompt], np.int32)))  # fmt: skip
    np.testing.assert_allclose(out.asnumpy()[:, :prompt], ref[:, :prompt], rtol=2e-2, atol=2e-2)
    inc.add_flags_recursive(is_first_iteration=False)
    for pos in range(prompt, S):
        out, _ = inc(Tensor(x[:, pos : pos + 1]), Tensor(np.ones((B, 1, S), np.float32)),
                     Tensor([True], mstype.bool_), Tensor(np.array([pos], np.int32)))  # fmt: skip
        assert out.shape == (B, 1, H)
        np.testing.assert_allclose(out.asnumpy()[:, 0], ref[:, pos], rtol=2e-2, atol=2e-2)


def test_cross_entropy_loss():
    rng = np.random.default_rng(11)
    logits = rng.standard_normal((6, 5)).astype(np.float32)
    labels = rng.integers(0, 5, 6).astype(np.int32)
    mask = np.array([1, 1, 0, 1, 0, 1], np.float32)
    out = CrossEntropyLoss()(Tensor(logits), Tensor(labels), Tensor(mask))
    p = softmax_ref(logits.astype(np.float64))
    nll = -np.log(p[np.arange(6), labels] + 1e-24)
    ref = (nll * mask).sum() / (mask.sum() + 1e-5)
    np.testing.assert_allclose(out.asnumpy(), [ref], rtol=1e-5)
    grad = opforge.grad(lambda z: CrossEntropyLoss()(z, Tensor(labels), Tensor(mask)))(Tensor(logits)).asnumpy()
    onehot = np.eye(5)[labels]
    np.testing.assert_allclose(grad, (p - onehot) * mask[:, None] / (mask.sum() + 1e-5), rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Gradients and jit


def _small_encoder(rng):
    enc = TransformerEncoder(batch_size=1, num_layers=1, hidden_size=4, ffn_hidden_size=6, seq_length=3, num_heads=2,
                             hidden_act="tanh")  # fmt: skip
    return _fp32(_randomize(enc, rng, scale=0.5)).set_train(False)


def test_encoder_gradients_central_differences():
    rng = np.random.default_rng(12)
    enc = _small_encoder(rng)
    mask = Tensor(_causal(1, 3, [3]))
    w = rng.standard_normal((1, 3, 4)).astype(np.float32)

    def loss(x):
        return (enc(x, mask)[0] * Tensor(w)).sum()

    x = rng.standard_normal((1, 3, 4)).astype(np.float32)
    grad = opforge.grad(loss)(Tensor(x)).asnumpy()
    numeric = numeric_grad(lambda v: float(loss(Tensor(v.astype(np.float32))).asnumpy()), x.astype(np.float64), 1e-3)
    np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=2e-3)
    # a weight's gradient too: the FFN's mapping weight
    param = [p for p in enc.trainable_params() if p.name.endswith("output.mapping.weight")][0]
    g = opforge.grad(lambda x: loss(x), grad_position=None, weights=[param])(Tensor(x))[0].asnumpy()
    base = param.asnumpy().copy()

    def at(v):
        param.set_data(Tensor(v.astype(np.float32)))
        return float(loss(Tensor(x)).asnumpy())

    numeric_w = numeric_grad(at, base.astype(np.float64), 1e-3)
    param.set_data(Tensor(base))
    np.testing.assert_allclose(g, numeric_w, rtol=2e-2, atol=2e-3)


def test_jit_matches_eager():
    rng = np.random.default_rng(13)
    enc = _small_encoder(rng)
    mask = Tensor(_causal(1, 3, [2]))
    x = Tensor(rng.standard_normal((1, 3, 4)).astype(np.float32))
    fn = lambda v: enc(v, mask)[0]  # noqa: E731
    np.testing.assert_allclose(opforge.jit(fn)(x).asnumpy(), fn(x).asnumpy(), rtol=1e-5, atol=1e-6)
    loss = lambda v: enc(v, mask)[0].sum()  # noqa: E731
    np.testing.assert_allclose(opforge.jit(opforge.grad(loss))(x).asnumpy(), opforge.grad(loss)(x).asnumpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Configuration objects and bad arguments


def test_configs():
    cfg = TransformerOpParallelConfig(data_parallel=2, model_parallel=4, recompute=TransformerRecomputeConfig(True))
    assert cfg.dp_mp_config.data_parallel == 2 and cfg.dp_mp_config.model_parallel == 4
    assert isinstance(cfg.dp_mp_config, OpParallelConfig) and cfg.embedding_dp_mp_config.vocab_emb_dp
    assert cfg.moe_parallel_config.expert_parallel == 1 and cfg.recompute.recompute
    cfg.model_parallel = 2
    assert cfg.moe_parallel_config.model_parallel == 2 and "data_parallel" in str(cfg.dp_mp_config)
    assert EmbeddingOpParallelConfig(vocab_emb_dp=False).dp_mp_config.model_parallel == 1
    with pytest.raises(ValueError, match="data_parallel"):
        OpParallelConfig(data_parallel=0)
    with pytest.raises(TypeError, match="recompute"):
        TransformerOpParallelConfig(recompute="yes")
    with pytest.raises(TypeError, match="vocab_emb_dp"):
        EmbeddingOpParallelConfig(vocab_emb_dp=1)
    with pytest.raises(ValueError, match="capacity_factor"):
        MoEConfig(capacity_factor=0.5)
    assert TransformerEncoder(2, 1, 4, 8, 3, 2, moe_config=MoEConfig(expert_num=2)).use_moe  # test_parallel_moe.py


def test_bad_arguments():
    with pytest.raises(ValueError, match="seq_length"):
        AttentionMask(seq_length=0)
    with pytest.raises(TypeError, match="parallel_config"):
        AttentionMask(4, parallel_config=TransformerOpParallelConfig())
    with pytest.raises(TypeError, match="input_mask"):
        AttentionMask(4)(Tensor(np.ones((1, 4), np.int32)))
    with pytest.raises(TypeError, match="input_ids"):
        VocabEmbedding(5, 3)(Tensor(np.ones((1, 2), np.int64)))
    with pytest.raises(ValueError, match="hidden_size"):
        MultiHeadAttention(None, 3, 3, hidden_size=5, num_heads=2)
    with pytest.raises(ValueError, match="hidden_dropout_rate"):
        MultiHeadAttention(None, 3, 3, 4, 2, hidden_dropout_rate=1.0)
    with pytest.raises(TypeError, match="compute_dtype"):
        MultiHeadAttention(None, 3, 3, 4, 2, compute_dtype=mstype.int32)
    with pytest.raises(TypeError, match="hidden_act"):
        FeedForward(4, 8, 0.1, hidden_act=None)
    with pytest.raises(ValueError, match="ffn_hidden_size"):
        FeedForward(4, 6, 0.1, parallel_config=OpParallelConfig(model_parallel=4))
    with pytest.raises(TypeError, match="parallel_config"):
        TransformerEncoder(2, 1, 4, 8, 3, 2, parallel_config=OpParallelConfig())
    with pytest.raises(ValueError, match="use_past"):
        TransformerDecoderLayer(4, 8, 2, 2, 3, 3, use_past=True)
    layer = TransformerEncoderLayer(2, 4, 8, 2, 3)
    with pytest.raises(TypeError, match="x"):
        layer(Tensor(np.ones((2, 3, 4), np.int32)), None)
    with pytest.raises(TypeError, match="batch_valid_length"):
        layer(Tensor(np.ones((2, 3, 4), np.float32)), None, True, Tensor(np.ones(2, np.int32)))
    with pytest.raises(TypeError, match="label"):
        CrossEntropyLoss()(
            Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones(2, np.int64)), Tensor(np.ones(2, np.float32))
        )
    with pytest.raises(TypeError, match="param_init_type"):
        _LayerNorm((4,), param_init_type=mstype.int32)
