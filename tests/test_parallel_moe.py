"""MindSpore's Mixture of Experts (opforge.parallel._transformer.moe) against NumPy references written here from
MindSpore's routing rules (top-k by the gating softmax, a token's slot = the tokens before it that chose the same
expert plus the tokens the expert kept in earlier choices, tokens at or past the capacity dropped, the k > 1
weights renormalized, the load-balancing loss E^2 * mean(density * mean probability)), walked token by token:
TopkRouter's dispatch / combine / loss, MoE's output and aux loss (groups, k > 1, the split FFN path, float16),
the encoder / decoder layers and stacks and Transformer with experts (the extra aux-loss output), gradients
(central differences through the gates; a few training steps of an encoder with four experts) and the
validation errors."""

import math

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn
from opforge.common import dtype as mstype
from opforge.parallel._transformer import (
    FeedForward,
    MoEConfig,
    Transformer,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    TransformerOpParallelConfig,
)
from opforge.parallel._transformer.moe import MoE, Router, TopkRouter, default_moe_config
from opforge.parallel._transformer.op_parallel_config import MoEParallelConfig, OpParallelConfig
from opforge.testing import numeric_grad

F32, F16 = mstype.float32, mstype.float16


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    opforge.set_seed(0)


def _fp32(cell):
    """Every sub-cell computes in float32 (MindSpore's default float16 would blur the comparisons)."""
    for _, c in cell.cells_and_names():
        if getattr(c, "dtype", None) == F16:
            c.dtype = F32
        if getattr(c, "softmax_dtype", None) == F16:
            c.softmax_dtype = F32
    return cell


def _randomize(cell, rng, scale=0.5):
    for p in cell.get_parameters():
        p.set_data(Tensor((rng.standard_normal(p.shape) * scale).astype(np.float32)))
    return cell


def _params(cell):
    return {p.name: p.asnumpy().astype(np.float64) for p in cell.get_parameters()}


# ---------------------------------------------------------------------------------------------
# NumPy references


def softmax_ref(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def route_ref(logits, k, capacity_factor, groups):
    """Routes the (tokens, experts) logits token by token; returns combine (groups, T, E, C) and the loss."""
    n, experts = logits.shape
    t_group = n // groups
    capacity = math.ceil(k * t_group * capacity_factor / experts)
    combine = np.zeros((groups, t_group, experts, capacity))
    loss = 0.0
    for g in range(groups):
        prob = softmax_ref(logits[g * t_group : (g + 1) * t_group].astype(np.float64))
        holds = np.zeros((t_group, experts), bool)  # the experts a token holds a slot with
        kept_before = np.zeros(experts, int)  # each expert's tokens kept in earlier choices
        for _ in range(k):
            p = np.where(holds, 0.0, prob)
            choice = p.argmax(1)
            # load balance: the fraction of tokens choosing e times e's mean (renormalized) probability
            density = np.bincount(choice, minlength=experts) / t_group
            proxy = (p / (p.sum(1, keepdims=True) + 1e-9)).mean(0)
            loss += float((density * proxy).sum()) * experts / groups
            seen = np.zeros(experts, int)
            kept_now = np.zeros(experts, int)
            for t in range(t_group):
                e = choice[t]
                slot = kept_before[e] + seen[e]
                seen[e] += 1
                if slot < capacity:
                    combine[g, t, e, slot] += p[t, e]
                    holds[t, e] = True
                    kept_now[e] += 1
            kept_before += kept_now
    if k > 1:
        combine /= combine.sum((2, 3), keepdims=True) + 1e-9
    return combine, loss


def moe_ref(P, prefix, x, k, capacity_factor, aux_factor, groups, act):
    """MoE's output: each token's chosen experts' FFNs weighted by its combine weights."""
    hidden = x.shape[-1]
    tokens = x.reshape(-1, hidden).astype(np.float64)
    logits = tokens @ P[prefix + "router.dense.weight"].T
    combine, loss = route_ref(logits, k, capacity_factor, groups)
    weights = combine.sum(-1).reshape(tokens.shape[0], -1)  # (tokens, experts)
    w1, b1 = P[prefix + "ffn.mapping.weight"], P[prefix + "ffn.mapping.bias"][0, :, 0]
    w2, b2 = P[prefix + "ffn.projection.weight"], P[prefix + "ffn.projection.bias"][0, :, 0]
    out = np.zeros_like(tokens)
    for e in range(w1.shape[0]):
        expert = act(tokens @ w1[e] + b1[e]) @ w2[e] + b2[e]
        out += weights[:, e : e + 1] * expert
    return out.reshape(x.shape), aux_factor * loss


def _prefixes(cell, key="layernorm1.gamma"):
    """The parameter-name prefixes of the layers in a stack, in order."""
    return [p.name[: -len(key)] for p in cell.get_parameters() if p.name.endswith(key)]


def relu(x):
    return np.maximum(x, 0)


def ln_ref(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


def mha_ref(P, prefix, q, kv, mask, heads):
    """MultiHeadAttention: q (B, S, H), kv (B, T, H), mask (B, S, T); query/key/value weights (out, in)."""
    B, S, H = q.shape
    T, d = kv.shape[1], H // heads

    def lin(x, name, transpose_b=True):
        w = P[prefix + name + ".weight"]
        return x @ (w.T if transpose_b else w) + P[prefix + name + ".bias"]

    Q = lin(q, "dense1").reshape(B, S, heads, d).transpose(0, 2, 1, 3)
    K = lin(kv, "dense2").reshape(B, T, heads, d).transpose(0, 2, 1, 3)
    V = lin(kv, "dense3").reshape(B, T, heads, d).transpose(0, 2, 1, 3)
    scores = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(d) - 10000.0 * (1.0 - mask[:, None])
    out = (softmax_ref(scores) @ V).transpose(0, 2, 1, 3).reshape(B, S, H)
    return lin(out, "projection", transpose_b=False)


def encoder_layer_ref(P, prefix, x, mask, heads, moe):
    ln = lambda y, n: ln_ref(y, P[prefix + n + ".gamma"], P[prefix + n + ".beta"])  # noqa: E731
    a = ln(x, "layernorm1")
    h = x + mha_ref(P, prefix + "attention.", a, a, mask, heads)
    mlp, aux = moe_ref(P, prefix + "output.", ln(h, "layernorm2"), *moe)
    return h + mlp, aux


def decoder_layer_ref(P, prefix, x, mask, enc, memory_mask, heads, moe):
    ln = lambda y, n: ln_ref(y, P[prefix + n + ".gamma"], P[prefix + n + ".beta"])  # noqa: E731
    a = ln(x, "layernorm1")
    h = x + mha_ref(P, prefix + "attention.", a, a, mask, heads)
    h = h + mha_ref(P, prefix + "cross_attention.", ln(h, "cross_attention_layernorm"), enc, memory_mask, heads)
    mlp, aux = moe_ref(P, prefix + "output.", ln(h, "layernorm2"), *moe)
    return h + mlp, aux


# ---------------------------------------------------------------------------------------------
# The router


@pytest.mark.parametrize(
    "tokens,groups,experts,k,factor,capacity",
    [
        (20, 1, 4, 1, 1.1, 6),  # ceil(5.5)
        (16, 1, 4, 1, 1.0, 4),
        (16, 1, 4, 2, 1.0, 8),
        (20, 2, 4, 2, 1.0, 5),
        (12, 1, 3, 3, 1.5, 18),
        (18, 3, 5, 2, 1.2, 3),  # ceil(2.88)
    ],
)
def test_topk_router_dispatch_combine_and_dropping(tokens, groups, experts, k, factor, capacity):
    rng = np.random.default_rng(tokens * 10 + k)
    logits = rng.standard_normal((tokens, experts)).astype(np.float32)
    logits[:, 0] += 1.0  # crowd expert 0 so that tokens overflow its capacity
    config = MoEConfig(expert_num=experts, capacity_factor=factor, num_experts_chosen=k)
    router = TopkRouter(d_model=8, moe_config=config, parallel_config=MoEParallelConfig(data_parallel=groups))
    dispatch, combine, loss = router(Tensor(logits))
    ref_combine, ref_loss = route_ref(logits, k, factor, groups)
    assert tuple(combine.shape) == (groups, tokens // groups, experts, capacity) == ref_combine.shape
    assert dispatch.dtype == mstype.bool_ and combine.dtype == F32 and loss.dtype == F32
    np.testing.assert_array_equal(dispatch.asnumpy(), ref_combine != 0)
    np.testing.assert_allclose(combine.asnumpy(), ref_combine, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(loss.asnumpy()), ref_loss, rtol=1e-5)
    # every expert holds at most `capacity` tokens, each slot at most one token
    assert (ref_combine != 0).sum(1).max() <= 1


def test_topk_router_drops_past_capacity():
    # six tokens all preferring expert 0, capacity ceil(6 * 1.0 / 2) = 3: the first three keep it
    logits = np.tile(np.array([[2.0, 0.0]], np.float32), (6, 1))
    logits[:, 0] += np.linspace(0, 0.1, 6, dtype=np.float32)
    router = TopkRouter(8, MoEConfig(expert_num=2, capacity_factor=1.0), parallel_config=MoEParallelConfig())
    dispatch, combine, _ = router(Tensor(logits))
    d = dispatch.asnumpy()[0]
    assert d.shape == (6, 2, 3)
    np.testing.assert_array_equal(d[:3, 0], np.eye(3, dtype=bool))
    assert not d[3:].any() and not d[:, 1].any()
    gates = softmax_ref(logits.astype(np.float64))[:3, 0]
    np.testing.assert_allclose(combine.asnumpy()[0, np.arange(3), 0, np.arange(3)], gates, rtol=1e-6)
    # with two choices the dropped tokens take expert 1, after the kept ones' second choices
    router2 = TopkRouter(8, MoEConfig(expert_num=2, capacity_factor=1.0, num_experts_chosen=2),
                         parallel_config=MoEParallelConfig())  # fmt: skip
    dispatch2, _, _ = router2(Tensor(logits))
    np.testing.assert_array_equal(dispatch2.asnumpy(), route_ref(logits, 2, 1.0, 1)[0] != 0)


def test_router_gating_dense():
    rng = np.random.default_rng(3)
    config = MoEConfig(expert_num=4, num_experts_chosen=2)
    router = _randomize(Router(6, config, parallel_config=MoEParallelConfig()), rng)
    assert router.dense.weight.shape == (4, 6) and router.dense.bias is None
    x = rng.standard_normal((1, 10, 6)).astype(np.float16)  # cast to float32 inside
    _, combine, loss = router(Tensor(x))
    ref_combine, ref_loss = route_ref(x[0].astype(np.float64) @ _params(router)["dense.weight"].T, 2, 1.1, 1)
    np.testing.assert_allclose(combine.asnumpy(), ref_combine, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(loss.asnumpy()), ref_loss, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# The MoE layer


@pytest.mark.parametrize(
    "k,groups,comm",
    [(1, 1, False), (2, 1, False), (2, 2, False), (1, 1, True), (3, 2, True), (1, 1, "a2a")],
)
def test_moe_matches_numpy(k, groups, comm):
    """comm True: the FFN over capacity slices (padded when odd); "a2a": the group-wise all-to-all's padding of
    the capacity to a multiple of model_parallel."""
    rng = np.random.default_rng(k * 7 + groups)
    config = MoEConfig(expert_num=4, capacity_factor=1.0, aux_loss_factor=0.05, num_experts_chosen=k,
                       comp_comm_parallel=comm is True, comp_comm_parallel_degree=2,
                       group_wise_a2a=comm == "a2a")  # fmt: skip
    ways = MoEParallelConfig(data_parallel=groups, expert_parallel=groups, model_parallel=2 if comm == "a2a" else 1)
    moe = MoE(8, 12, 0.0, hidden_act="relu", moe_config=config, parallel_config=ways)
    assert moe.group_wise_a2a == (comm == "a2a")
    moe = _fp32(_randomize(moe, rng)).set_train(False)
    assert moe.ffn.mapping.weight.shape == (4, 8, 12) and moe.ffn.projection.bias.shape == (1, 4, 1, 8)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    out, aux = moe(Tensor(x))
    ref, ref_aux = moe_ref(_params(moe), "", x, k, 1.0, 0.05, groups, relu)
    assert out.shape == x.shape and aux.shape == () and aux.dtype == F32
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(float(aux.asnumpy()), ref_aux, rtol=1e-5)


def test_moe_float16_default_and_2d_input():
    rng = np.random.default_rng(5)
    moe = _randomize(MoE(8, 16, 0.0, moe_config=MoEConfig(expert_num=2)), rng, 0.3).set_train(False)
    assert moe.hidden_size == 8 and moe.expert_dim == 2 and moe.dp_group == 1
    x = rng.standard_normal((12, 8)).astype(np.float16)
    out, aux = moe(Tensor(x))
    assert out.dtype == F16 and out.shape == (12, 8)
    gelu = lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))  # noqa: E731
    ref, ref_aux = moe_ref(_params(moe), "", x, 1, 1.1, 0.05, 1, gelu)
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), ref, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(float(aux.asnumpy()), ref_aux, rtol=1e-5)


def test_feed_forward_experts_batched():
    """FeedForward with expert_num > 1 runs each expert's weights over its own block of rows."""
    rng = np.random.default_rng(9)
    ffn = FeedForward(6, 10, 0.0, hidden_act="relu", expert_num=3, parallel_config=MoEParallelConfig())
    ffn = _fp32(_randomize(ffn, rng)).set_train(False)
    x = rng.standard_normal((3 * 4, 6)).astype(np.float32)  # (expert, tokens) rows
    P = _params(ffn)
    ref = np.concatenate([
        relu(x[4 * e : 4 * e + 4] @ P["mapping.weight"][e] + P["mapping.bias"][0, e, 0]) @ P["projection.weight"][e]
        + P["projection.bias"][0, e, 0]
        for e in range(3)
    ])  # fmt: skip
    np.testing.assert_allclose(ffn(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-5)


def test_moe_gradients_central_differences():
    rng = np.random.default_rng(21)
    moe = MoE(4, 6, 0.0, hidden_act="tanh", moe_config=MoEConfig(expert_num=3, num_experts_chosen=2))
    moe = _fp32(_randomize(moe, rng)).set_train(False)
    x = Tensor(rng.standard_normal((6, 4)).astype(np.float32))
    w = Tensor(rng.standard_normal((6, 4)).astype(np.float32))

    def loss():
        out, aux = moe(x)
        return (out * w).sum() + aux * 10.0

    for name in ("router.dense.weight", "ffn.mapping.weight"):
        param = [p for p in moe.trainable_params() if p.name == name][0]
        grad = opforge.grad(lambda: loss(), grad_position=None, weights=[param])()[0].asnumpy()
        base = param.asnumpy().copy()

        def at(v, param=param):
            param.set_data(Tensor(v.astype(np.float32)))
            return float(loss().asnumpy())

        numeric = numeric_grad(at, base.astype(np.float64), 1e-3)
        param.set_data(Tensor(base))
        assert np.abs(grad).max() > 1e-3, name
        np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=2e-3, err_msg=name)


def test_moe_jit_matches_eager():
    rng = np.random.default_rng(23)
    moe = MoE(8, 12, 0.0, moe_config=MoEConfig(expert_num=4, num_experts_chosen=2))
    moe = _fp32(_randomize(moe, rng)).set_train(False)
    x = Tensor(rng.standard_normal((2, 5, 8)).astype(np.float32))
    fn = lambda v: moe(v)  # noqa: E731
    (out, aux), (out_j, aux_j) = fn(x), opforge.jit(fn)(x)
    np.testing.assert_allclose(out_j.asnumpy(), out.asnumpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(aux_j.asnumpy(), aux.asnumpy(), rtol=1e-6)
    loss = lambda v: moe(v)[0].sum() + moe(v)[1]  # noqa: E731
    np.testing.assert_allclose(opforge.jit(opforge.grad(loss))(x).asnumpy(), opforge.grad(loss)(x).asnumpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The layers and stacks with experts


def test_encoder_layer_and_stack_with_experts():
    rng = np.random.default_rng(31)
    config = MoEConfig(expert_num=4, num_experts_chosen=2, aux_loss_factor=0.1)
    moe_args = (2, 1.1, 0.1, 1, relu)
    mask = np.tril(np.ones((5, 5)))[None].repeat(2, 0).astype(np.float32)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    layer = TransformerEncoderLayer(2, 8, 12, 2, 5, hidden_act="relu", moe_config=config,
                                    parallel_config=MoEParallelConfig())  # fmt: skip
    layer = _fp32(_randomize(layer, rng, 0.4)).set_train(False)
    assert layer.use_moe and isinstance(layer.output, MoE)
    out, present, aux = layer(Tensor(x), Tensor(mask))
    ref, ref_aux = encoder_layer_ref(_params(layer), "", x, mask, 2, moe_args)
    assert len(present) == 2
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float(aux.asnumpy()), ref_aux, rtol=1e-5)

    stack = TransformerEncoder(2, 2, 8, 12, 5, 2, hidden_act="relu", moe_config=config)
    stack = _fp32(_randomize(stack, rng, 0.4)).set_train(False)
    outputs = stack(Tensor(x), Tensor(mask))
    assert len(outputs) == 3 and len(outputs[1]) == 2
    P, h, total = _params(stack), x.astype(np.float64), 0.0
    for prefix in _prefixes(stack):
        h, a = encoder_layer_ref(P, prefix, h, mask, 2, moe_args)
        total += a
    np.testing.assert_allclose(outputs[0].asnumpy(), h, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float(outputs[2].asnumpy()), total, rtol=1e-5)


def test_decoder_and_transformer_with_experts():
    rng = np.random.default_rng(41)
    config = MoEConfig(expert_num=2)
    moe_args = (1, 1.1, 0.05, 1, relu)
    enc = rng.standard_normal((1, 4, 8)).astype(np.float32)
    dec = rng.standard_normal((1, 3, 8)).astype(np.float32)
    dmask = np.tril(np.ones((3, 3)))[None].astype(np.float32)
    mmask = np.ones((1, 3, 4), np.float32)
    layer = TransformerDecoderLayer(8, 12, 2, 1, 4, 3, hidden_act="relu", moe_config=config,
                                    parallel_config=MoEParallelConfig())  # fmt: skip
    layer = _fp32(_randomize(layer, rng, 0.4)).set_train(False)
    out, present, aux = layer(Tensor(dec), Tensor(dmask), Tensor(enc), Tensor(mmask))
    ref, ref_aux = decoder_layer_ref(_params(layer), "", dec, dmask, enc, mmask, 2, moe_args)
    assert len(present) == 4
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float(aux.asnumpy()), ref_aux, rtol=1e-5)

    model = Transformer(8, 1, 12, 4, 3, encoder_layers=1, decoder_layers=1, hidden_act="relu", moe_config=config)
    model = _fp32(_randomize(model, rng, 0.4)).set_train(False)
    emask = np.ones((1, 4, 4), np.float32)
    output, enc_present, dec_present, accum = model(Tensor(enc), Tensor(emask), Tensor(dec), Tensor(dmask),
                                                    Tensor(mmask))  # fmt: skip
    P, (enc_prefix, dec_prefix) = _params(model), _prefixes(model)
    enc_out, enc_aux = encoder_layer_ref(P, enc_prefix, enc.astype(np.float64), emask, 2, moe_args)
    dec_out, dec_aux = decoder_layer_ref(P, dec_prefix, dec, dmask, enc_out, mmask, 2, moe_args)
    assert len(enc_present) == 1 and len(dec_present) == 1
    np.testing.assert_allclose(output.asnumpy(), dec_out, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float(accum.asnumpy()), enc_aux + dec_aux, rtol=1e-5)
    # an encoder-only Transformer: no decoder present, the encoder's loss
    only = Transformer(8, 1, 12, 4, 3, encoder_layers=1, decoder_layers=0, moe_config=config)
    outs = only(Tensor(enc), Tensor(emask))
    assert len(outs) == 4 and outs[2] is None and outs[3].shape == ()
    # without experts the outputs stay MindSpore's three
    assert len(Transformer(8, 1, 12, 4, 3, encoder_layers=1, decoder_layers=0)(Tensor(enc), Tensor(emask))) == 3


class _MoERegression(nn.Cell):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.mask = Tensor(np.ones((4, 6, 6), np.float32))

    def construct(self, x, y):
        out, _, aux = self.encoder(x, self.mask)
        return ((out - y) ** 2).mean() + aux


def test_training_encoder_with_experts_reduces_loss():
    rng = np.random.default_rng(51)
    encoder = TransformerEncoder(4, 1, 8, 16, 6, 2, attention_dropout_rate=0.0, hidden_dropout_rate=0.0,
                                 moe_config=MoEConfig(expert_num=4))  # fmt: skip
    net = _MoERegression(encoder)
    train = nn.TrainOneStepCell(net, nn.Adam(net.trainable_params(), 1e-2))
    train.set_train(True)
    x = rng.standard_normal((4, 6, 8)).astype(np.float32)
    y = np.tanh(x[..., ::-1] * 2.0).astype(np.float32)
    router = [p for p in net.trainable_params() if p.name.endswith("router.dense.weight")][0]
    before = router.asnumpy().copy()
    losses = [float(train(Tensor(x), Tensor(y)).asnumpy()) for _ in range(25)]
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.6 * losses[0], losses
    assert np.abs(router.asnumpy() - before).max() > 1e-3  # the gates' gradient reached the router


# ---------------------------------------------------------------------------------------------
# Validation


def test_moe_config_validation():
    cfg = MoEConfig(expert_num=4, capacity_factor=2.0, aux_loss_factor=0.01, num_experts_chosen=2,
                    expert_group_size=64, group_wise_a2a=True, comp_comm_parallel=True,
                    comp_comm_parallel_degree=3)  # fmt: skip
    assert (cfg.expert_num, cfg.capacity_factor, cfg.aux_loss_factor, cfg.num_experts_chosen) == (4, 2.0, 0.01, 2)
    assert cfg.expert_group_size == 64 and cfg.group_wise_a2a and cfg.comp_comm_parallel_degree == 3
    assert default_moe_config.expert_num == 1 and default_moe_config.capacity_factor == 1.1
    with pytest.raises(ValueError, match="capacity_factor"):
        MoEConfig(capacity_factor=0.9)
    with pytest.raises(ValueError, match="aux_loss_factor"):
        MoEConfig(aux_loss_factor=1.0)
    with pytest.raises(ValueError, match="num_experts_chosen"):
        MoEConfig(expert_num=2, num_experts_chosen=3)
    with pytest.raises((TypeError, ValueError), match="expert_num"):
        MoEConfig(expert_num=0)
    with pytest.raises((TypeError, ValueError), match="expert_group_size"):
        MoEConfig(expert_group_size=0)
    with pytest.raises(TypeError, match="group_wise_a2a"):
        MoEConfig(group_wise_a2a=1)
    with pytest.raises((TypeError, ValueError), match="comp_comm_parallel_degree"):
        MoEConfig(comp_comm_parallel_degree=0)


def test_moe_parallel_ways_validation():
    moe = MoEConfig(expert_num=4)
    with pytest.raises(ValueError, match="multiple of 'expert_parallel'"):
        TransformerEncoder(
            1, 1, 8, 8, 4, 2, moe_config=moe, parallel_config=TransformerOpParallelConfig(expert_parallel=3)
        )
    with pytest.raises(ValueError, match="device_num"):  # one device before communication's init
        TransformerEncoder(
            1, 1, 8, 8, 4, 2, moe_config=moe, parallel_config=TransformerOpParallelConfig(expert_parallel=2)
        )
    with pytest.raises(ValueError, match="product of the data parallel"):
        Transformer(8, 1, 8, 4, 4, moe_config=moe, parallel_config=TransformerOpParallelConfig(data_parallel=2))
    with pytest.raises(TypeError, match="MoEParallelConfig"):
        TransformerEncoderLayer(1, 8, 8, 2, 4, moe_config=moe, parallel_config=OpParallelConfig())
    with pytest.raises(TypeError, match="MoEParallelConfig"):
        FeedForward(8, 8, 0.1, expert_num=2, parallel_config=OpParallelConfig())
    with pytest.raises(TypeError, match="moe_config"):
        TransformerEncoder(1, 1, 8, 8, 4, 2, moe_config={"expert_num": 4})
    with pytest.raises(TypeError, match="MoEParallelConfig"):
        MoE(8, 8, 0.1, moe_config=moe, parallel_config=OpParallelConfig())
