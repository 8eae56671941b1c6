"""Special values and odd shapes on both backends, each a case the bad-input campaign on the GPU
(``tests/fuzz_campaign.py --device GPU``) found where the GPU (the host emulation here), and sometimes the CPU
too, gave a wrong answer or an unclean error: the CPU and the GPU give the same result, NumPy's where it has
one."""

from __future__ import annotations

import numpy as np
import pytest

from opforge import Tensor, ops
from opforge.errors import IndexOutOfRangeError, KernelError
from opforge.primitives._grad_ops import NLLLossGrad

DEVICES = ("CPU", "GPU")


def _host(out):
    return tuple(o.asnumpy() for o in out) if isinstance(out, tuple) else out.asnumpy()


@pytest.mark.parametrize("device", DEVICES)
def test_a_relu_rnn_keeps_a_nan_as_relu_does(device, rng):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    x[0, 0, 0] = np.nan
    h0, w_ih, w_hh, bias = (rng.standard_normal(s).astype(np.float32) for s in ((2, 5), (5, 4), (5, 5), (5,)))
    y, _ = ops.RNNLayer(nonlinearity="relu")(*(Tensor(a, device=device) for a in (x, h0, w_ih, w_hh, bias)))
    assert np.isnan(y.asnumpy()[:, 0]).all()  # the NaN reaches every later step of its sample
    assert not np.isnan(y.asnumpy()[:, 1]).any()


@pytest.mark.parametrize("device", DEVICES)
def test_polygamma_at_infinity_is_zero(device):
    x = Tensor(np.array([np.inf, 1.0], np.float64), device=device)
    for n in (1, 2, 3):
        got = ops.Polygamma()(Tensor(np.array(n), device=device), x).asnumpy()
        assert got[0] == 0 and np.signbit(got[0]) == (n % 2 == 0) and np.isfinite(got[1])


@pytest.mark.parametrize("device", DEVICES)
def test_matrix_decompositions_of_special_values_agree(device):
    """Svd without u and v gives zeros for them, a non-finite matrix included; Eigh gives NaN for a NaN in the
    triangle it does not read, as for one it reads; Qr takes a -0.0 pivot's sign as LAPACK does."""
    x = np.arange(8, dtype=np.float32).reshape(2, 2, 2) + np.eye(2, dtype=np.float32)
    x[1, 0, 1] = np.nan
    s, u, v = _host(ops.Svd(compute_uv=False)(Tensor(x, device=device)))
    assert np.isnan(s[1]).all() and not np.isnan(s[0]).any()
    assert not u.any() and not v.any()
    w, _ = _host(ops.Eigh()(Tensor(x, device=device)))  # lower: x[1, 0, 1] is not read
    assert np.isnan(w[1]).all() and not np.isnan(w[0]).any()
    a = np.array([[-0.0, 1.0], [3.0, 2.0], [4.0, -1.0]], np.float64)
    q, r = _host(ops.Qr()(Tensor(a, device=device)))
    want_q, want_r = np.linalg.qr(a)
    np.testing.assert_allclose(q, want_q, atol=1e-12)
    np.testing.assert_allclose(r, want_r, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_attention_backward_adds_nothing_for_a_score_of_probability_zero(device, rng):
    """A fully hidden query row (its output NaN) and a row whose logsumexp is +inf get zero gradients, an
    infinite dout in that row included, where 0 * inf would give NaN."""
    q, k, v = (rng.standard_normal((1, 1, 2, 3)).astype(np.float32) for _ in range(3))
    mask = np.zeros((1, 1, 2, 2), np.float32)
    mask[0, 0, 0] = -np.inf  # query 0 sees no key
    gpu = [Tensor(a, device=device) for a in (q, k, v, mask)]
    out, lse = ops.ScaledDotProductAttention()(*gpu)
    assert np.isnan(out.asnumpy()[0, 0, 0]).all()
    dout = np.ones((1, 1, 2, 3), np.float32)
    dq, dk, dv = _host(ops.ScaledDotProductAttentionGrad()(*gpu, out, Tensor(dout, device=device), lse))
    assert not dq[0, 0, 0].any() and np.isfinite(dq).all() and np.isfinite(dk).all() and np.isfinite(dv).all()
    lse_inf = lse.asnumpy().copy()
    lse_inf[0, 0, 1] = np.inf
    dout[0, 0, 1] = -np.inf
    grads = ops.ScaledDotProductAttentionGrad()(*gpu, out, Tensor(dout, device=device), Tensor(lse_inf, device=device))
    for g in _host(grads):
        assert not g.any()  # every score of both rows has p = 0


@pytest.mark.parametrize("device", DEVICES)
def test_attention_backward_ignores_infinities_behind_a_hidden_score(device, rng):
    """An infinite key, value or dout meets only hidden scores (p = 0) here: the output and the gradients stay
    finite and the hidden key gets no gradient, where a product of blocks would add 0 * inf = NaN."""
    q, k, v = (rng.standard_normal((1, 1, 1, 3)).astype(np.float32) for _ in range(3))
    k, v = (np.concatenate([a, np.full_like(a, np.inf)], axis=2) for a in (k, v))  # key 1: infinite
    mask = np.zeros((1, 1, 1, 2), np.float32)
    causal = ops.ScaledDotProductAttention(0.5, 1.0, True)  # query 0 never sees key 1
    ins = [Tensor(a, device=device) for a in (q, k, v, mask)]
    out, lse = causal(*ins)
    grad = ops.ScaledDotProductAttentionGrad(0.5, 1.0, True)
    dq, dk, dv = _host(grad(*ins, out, Tensor(np.ones((1, 1, 1, 3), np.float32), device=device), lse))
    assert np.isfinite(dq).all() and np.isfinite(dk).all() and np.isfinite(dv).all()
    assert not dk[0, 0, 1].any() and not dv[0, 0, 1].any()
    finite = [Tensor(a, device=device) for a in (q, np.nan_to_num(k), np.nan_to_num(v), mask)]
    out, lse = causal(*finite)
    dout = np.ones((1, 1, 1, 3), np.float32)
    dout[..., 0] = np.inf
    _, _, dv = _host(grad(*finite, out, Tensor(dout, device=device), lse))
    assert dv[0, 0, 0, 0] == np.inf and not dv[0, 0, 1].any()
    mask[..., 1] = -np.inf  # key 1 hidden by the mask: its infinite value stays out of the output
    k = np.concatenate([k[:, :, :1]] * 2, axis=2)
    out, _ = ops.ScaledDotProductAttention()(*(Tensor(a, device=device) for a in (q, k, v, mask)))
    np.testing.assert_allclose(out.asnumpy()[0, 0, 0], v[0, 0, 0], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_a_pooling_window_far_larger_than_its_input_costs_only_the_input(device, rng):
    """A kernel of 2**31 (the largest the kernels take) over a 4x5 image, 'same' padding: each window covers
    the whole image, and the loops run over the covered input only (they ran over every window position: a
    hang); a larger kernel is refused, on the GPU as on the CPU."""
    x = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
    big = (1 << 31, 1 << 31)
    got = ops.MaxPool(kernel_size=big, pad_mode="same")(Tensor(x, device=device)).asnumpy()
    np.testing.assert_array_equal(got, np.broadcast_to(x.max(axis=(2, 3), keepdims=True), got.shape))
    mean = ops.AvgPool(kernel_size=big, pad_mode="same")(Tensor(x, device=device)).asnumpy()
    np.testing.assert_allclose(mean, np.broadcast_to(x.mean(axis=(2, 3), keepdims=True), mean.shape), rtol=1e-5)
    with pytest.raises(KernelError, match="'MaxPool', the kernel size, strides and dilations must be at most"):
        ops.MaxPool(kernel_size=(3, 1 << 40), pad_mode="same")(Tensor(x, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_loss_arguments_of_the_wrong_size_are_refused_or_broadcast(device, rng):
    """BCEWithLogitsLoss broadcasts a number for weight or pos_weight as it does a Tensor; NLLLossGrad refuses
    labels that are not one per sample (the GPU kernel read past them)."""
    x, y = (rng.uniform(size=(4, 5)).astype(np.float32) for _ in range(2))
    w = np.full(5, 2.5, np.float32)
    bce = ops.BCEWithLogitsLoss()
    by_number = bce(
        Tensor(x, device=device), Tensor(y, device=device), 2.5, Tensor(np.ones(5, np.float32), device=device)
    )
    by_tensor = bce(*(Tensor(a, device=device) for a in (x, y, w, np.ones(5, np.float32))))
    np.testing.assert_allclose(by_number.asnumpy(), by_tensor.asnumpy(), rtol=1e-6)
    logits = Tensor(x, device=device)
    scalar, labels = Tensor(np.float32(1), device=device), Tensor(np.array(1, np.int32), device=device)
    with pytest.raises(ValueError, match=r"For 'NLLLossGrad', the 'labels' must have 4 elements, but got shape \[\]"):
        NLLLossGrad()(logits, scalar, labels, Tensor(np.ones(5, np.float32), device=device), scalar)


@pytest.mark.parametrize("device", DEVICES)
def test_an_index_out_of_range_is_an_index_error_and_a_value_error(device):
    x = Tensor(np.zeros((0, 5), np.float32), device=device)
    for kind in (IndexError, ValueError, IndexOutOfRangeError):
        with pytest.raises(kind, match=r"For 'StridedSlice', the index 1 is out of range for dim 0"):
            x[1, 0:]
    assert not issubclass(IndexOutOfRangeError, KernelError)
