"""bprops of the neural-network operators (primitives/nn_ops.py) and of the activation grad operators
(ReluGrad, EluGrad, SigmoidGrad, TanhGrad), for higher-order gradients.

The optimizer updates (ApplyGradientDescent, ApplyMomentum, Adam, ApplyRMSProp, ApplyCenteredRMSProp,
ApplyAdagrad, AdamWeightDecay) write Parameters in place and have no bprop: differentiating through
one raises a TypeError naming it."""

from __future__ import annotations

from opforge.bprop._utils import broadcast_to, grad_for, needs_input_grad, output_grad_reached, sum_rows, zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import _grad_ops as G
from opforge.primitives import math_ops as M
from opforge.primitives import nn_ops as P


@bprop_getters.register(P.ReLU)
def get_bprop_relu(self):
    relu_grad = G.ReluGrad()

    def bprop(x, out, dout):
        return (relu_grad(dout, out),)

    return bprop


@bprop_getters.register(P.Elu)
def get_bprop_elu(self):
    elu_grad = G.EluGrad(alpha=self.alpha)

    def bprop(x, out, dout):
        return (elu_grad(dout, out),)

    return bprop


@bprop_getters.register(P.Sigmoid)
def get_bprop_sigmoid(self):
    sigmoid_grad = G.SigmoidGrad()

    def bprop(x, out, dout):
        return (sigmoid_grad(out, dout),)

    return bprop


@bprop_getters.register(P.Tanh)
def get_bprop_tanh(self):
    tanh_grad = G.TanhGrad()

    def bprop(x, out, dout):
        if out.dtype.kind == "c":  # dx = dout * conj(1 - out^2) (TanhGrad is real)
            return (F.mul(dout, F.conj(F.sub(1.0, F.mul(out, out)))),)
        return (tanh_grad(out, dout),)

    return bprop


@bprop_getters.register(P.BiasAdd)
def get_bprop_bias_add(self):
    reduce_sum = M.ReduceSum(keep_dims=False)
    channel_last = self.data_format == "NHWC"

    def bprop(x, bias, out, dout):
        dx = grad_for(x, dout)  # in x's dtype when the call promoted it (docs/dtypes.md)
        if not needs_input_grad(1):
            return dx, None
        ndim = len(x.shape)
        if ndim == 2:  # [N, C] (a Dense layer): the sum over the batch
            return dx, grad_for(bias, sum_rows(dout))
        axes = tuple(range(ndim - 1)) if channel_last else (0, *range(2, ndim))  # every axis but the channel's
        return dx, grad_for(bias, reduce_sum(dout, axes))

    return bprop


# Second order: the grad operators' own bprops.


@bprop_getters.register(G.ReluGrad)
def get_bprop_relu_grad(self):
    relu_grad = G.ReluGrad()

    def bprop(dy, y, out, dout):
        ddy = relu_grad(dout, y) if needs_input_grad(0) else None
        return ddy, (zeros_like(y) if needs_input_grad(1) else None)

    return bprop


@bprop_getters.register(G.EluGrad)
def get_bprop_elu_grad(self):
    elu_grad = G.EluGrad(alpha=self.alpha)
    relu_grad = G.ReluGrad()

    def bprop(dy, y, out, dout):
        # d/dy of dy * (y + alpha) on y <= 0 is dy; ReluGrad(., -y) keeps exactly that region.
        ddy = elu_grad(dout, y) if needs_input_grad(0) else None
        return ddy, (relu_grad(dout * dy, -y) if needs_input_grad(1) else None)

    return bprop


@bprop_getters.register(G.SigmoidGrad)
def get_bprop_sigmoid_grad(self):
    sigmoid_grad = G.SigmoidGrad()

    def bprop(y, dy, out, dout):
        # out = dy * y * (1 - y): d/dy = dy * (1 - 2y), d/d(dy) = y * (1 - y).
        d_y = dout * dy * (1.0 - 2.0 * y) if needs_input_grad(0) else None
        return d_y, (sigmoid_grad(y, dout) if needs_input_grad(1) else None)

    return bprop


@bprop_getters.register(G.TanhGrad)
def get_bprop_tanh_grad(self):
    tanh_grad = G.TanhGrad()

    def bprop(y, dy, out, dout):
        # out = dy * (1 - y^2): d/dy = -2 * y * dy, d/d(dy) = 1 - y^2.
        d_y = dout * dy * y * -2.0 if needs_input_grad(0) else None
        return d_y, (tanh_grad(y, dout) if needs_input_grad(1) else None)

    return bprop


# Softmax and the softmax cross-entropy losses.


def _softmax_bprop(s, dout, reduce_sum, axis):
    """The adjoint of y = softmax(x) along ``axis`` given y = ``s``: (dout - sum(dout * s)) * s."""
    return F.mul(F.sub(dout, reduce_sum(F.mul(dout, s), axis)), s)


@bprop_getters.register(P.Softmax)
def get_bprop_softmax(self):
    reduce_sum = M.ReduceSum(keep_dims=True)
    axis = self.axis

    def bprop(x, out, dout):
        return (_softmax_bprop(out, dout, reduce_sum, axis),)

    return bprop


@bprop_getters.register(P.LogSoftmax)
def get_bprop_log_softmax(self):
    reduce_sum = M.ReduceSum(keep_dims=True)
    axis = self.axis

    def bprop(x, out, dout):
        # y = x - logsumexp(x): dx = dout - softmax(x) * sum(dout).
        return (F.sub(dout, F.mul(F.exp(out), reduce_sum(dout, axis))),)

    return bprop


@bprop_getters.register(P.SoftmaxCrossEntropyWithLogits)
def get_bprop_softmax_cross_entropy_with_logits(self):
    reduce_sum = M.ReduceSum(keep_dims=True)
    log_softmax = P.LogSoftmax(axis=-1)

    def bprop(logits, labels, out, dout):
        # loss_i = -sum_j labels_ij log s_ij and backprop = s - labels, with s = softmax(logits).
        # For any labels (rows need not sum to 1): dloss_i/dlogits_ij = s_ij sum_k labels_ik - labels_ij.
        backprop = out[1]
        dloss, dbackprop = dout
        d = F.reshape(dloss, (logits.shape[0], 1))
        dlogits = dlabels = None
        if needs_input_grad(0):
            s = F.add(backprop, labels)
            dlogits = F.mul(d, F.sub(F.mul(s, reduce_sum(labels, -1)), labels))
            # The backprop output's own gradient (it is an output too, and grad of grad reaches it).
            dlogits = F.add(dlogits, _softmax_bprop(s, dbackprop, reduce_sum, -1))
        if needs_input_grad(1):
            dlabels = F.sub(F.neg(F.mul(d, log_softmax(logits))), dbackprop)
        return dlogits, dlabels

    return bprop


@bprop_getters.register(P.SparseSoftmaxCrossEntropyWithLogits)
def get_bprop_sparse_softmax_cross_entropy_with_logits(self):
    if not self.is_grad:
        grad_op = P.SparseSoftmaxCrossEntropyWithLogits(is_grad=True)

        def bprop(logits, labels, out, dout):
            # out is the mean loss; its gradient is the same operator with is_grad=True, times dout.
            # The labels are class indices: no gradient is used (zeros when asked outside a tape).
            dlabels = zeros_like(labels) if needs_input_grad(1) else None
            return F.mul(grad_op(logits, labels), dout), dlabels

        return bprop

    softmax = P.Softmax(axis=-1)
    reduce_sum = M.ReduceSum(keep_dims=True)

    def bprop_grad(logits, labels, out, dout):
        # out = (softmax(logits) - onehot(labels)) / N: the softmax Jacobian, scaled by 1/N.
        n = max(logits.shape[0], 1)
        dlogits = _softmax_bprop(softmax(logits), dout, reduce_sum, -1)
        dlabels = zeros_like(labels) if needs_input_grad(1) else None
        return F.div(dlogits, float(n)), dlabels

    return bprop_grad


# ---------------------------------------------------------------------------------------------
# Normalisations


def _channel_view(t, x):
    """A [C] tensor broadcast along axis 1 of ``x`` [N, C, ...]."""
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return broadcast_to(F.reshape(t, shape), x.shape)


def _stats_into_dx(dx, x, mean_b, d_mean_b, d_var_b, count):
    """dx plus the gradient through a mean and a biased variance of ``count`` elements (all broadcast to
    x's shape): d mean / d x = 1 / M, d var / d x = 2 (x - mean) / M."""
    inv = 1.0 / max(count, 1)
    through = F.add(F.mul(d_mean_b, inv), F.mul(F.mul(d_var_b, F.sub(x, mean_b)), 2.0 * inv))
    return F.add(dx, through)


@bprop_getters.register(P.BatchNorm)
def get_bprop_batch_norm(self):
    training, eps = self.is_training, self.epsilon
    grad = G.BatchNormGrad(is_training=training, epsilon=eps)
    rsqrt = M.Rsqrt()

    def bprop(x, scale, bias, mean, variance, out, dout):
        dy, d_bm, d_bv, d_r1, d_r2 = dout
        d_mean_out, d_var_out = F.add(d_bm, d_r1), F.add(d_bv, d_r2)
        save_mean, save_var = (out[3], out[4]) if training else (mean, variance)
        dx, dscale, dbias = grad(dy, x, scale, save_mean, save_var)
        if training:
            # The batch statistics are outputs too: their gradients flow into x (unless nobody read them,
            # as in a training step: nine passes over x per layer for zeros). The moving statistics are
            # not read (the kernel gets plain Tensors), so they get none.
            if any(output_grad_reached(i) for i in range(1, 5)):
                count = x.size // max(x.shape[1], 1)
                mean_b = _channel_view(save_mean, x)
                dx = _stats_into_dx(dx, x, mean_b, _channel_view(d_mean_out, x), _channel_view(d_var_out, x), count)
            return dx, dscale, dbias, zeros_like(mean), zeros_like(variance)
        # Inference: y depends on mean and variance, and batch_mean / batch_variance pass them through.
        r = rsqrt(F.add(variance, eps))
        d_mean = F.sub(d_mean_out, F.mul(F.mul(dbias, scale), r))
        d_var = F.sub(d_var_out, F.mul(F.mul(F.mul(dscale, scale), F.mul(r, r)), 0.5))
        return dx, dscale, dbias, d_mean, d_var

    return bprop


@bprop_getters.register(P.LayerNorm)
def get_bprop_layer_norm(self):
    grad = G.LayerNormGrad(self.begin_norm_axis, self.begin_params_axis, self.epsilon)

    def bprop(x, gamma, beta, out, dout):
        dy, d_mean, d_var = dout
        _, mean, var = out
        dx, dgamma, dbeta = grad(x, dy, var, mean, gamma)
        if not (output_grad_reached(1) or output_grad_reached(2)):  # mean and variance unread
            return dx, dgamma, dbeta
        norm_axis = self.begin_norm_axis % x.ndim
        count = 1
        for d in x.shape[norm_axis:]:
            count *= d
        dx = _stats_into_dx(
            dx,
            x,
            broadcast_to(mean, x.shape),
            broadcast_to(d_mean, x.shape),
            broadcast_to(d_var, x.shape),
            count,
        )
        return dx, dgamma, dbeta

    return bprop


# ---------------------------------------------------------------------------------------------
# Dropout and losses


@bprop_getters.register(P.Dropout)
def get_bprop_dropout(self):
    grad = G.DropoutGrad(keep_prob=self.keep_prob)

    def bprop(x, out, dout):
        # output = x * mask / keep_prob; the mask is a constant of the seeds (its gradient is dropped).
        return (grad(dout[0], out[1]),)

    return bprop


@bprop_getters.register(P.DropoutExt)
def get_bprop_dropout_ext(self):
    grad = G.DropoutGrad(keep_prob=1.0 - self.p)

    def bprop(x, seed, offset, out, dout):
        # as Dropout's; the seeds are integers (no gradient)
        return grad(dout[0], out[1]), zeros_like(seed), zeros_like(offset)

    return bprop


@bprop_getters.register(P.L2Loss)
def get_bprop_l2_loss(self):
    def bprop(x, out, dout):
        return (F.mul(x, dout),)

    return bprop


@bprop_getters.register(P.SmoothL1Loss)
def get_bprop_smooth_l1_loss(self):
    grad = G.SmoothL1LossGrad(beta=self.beta, reduction=self.reduction)

    def bprop(logits, labels, out, dout):
        d = grad(logits, labels, dout)
        return d, (F.neg(d) if needs_input_grad(1) else None)

    return bprop


@bprop_getters.register(P.BCEWithLogitsLoss)
def get_bprop_bce_with_logits_loss(self):
    reduction = self.reduction
    relu, sigmoid, log1p, exp = P.ReLU(), P.Sigmoid(), M.Log1p(), M.Exp()

    def bprop(logits, label, weight, pos_weight, out, dout):
        # The primitive broadcast weight and pos_weight to the logits' shape (BroadcastTo, whose bprop
        # sums their gradients back), so all four have one shape here.
        x, y, w, p = logits, label, weight, pos_weight
        d = dout if reduction == "none" else broadcast_to(dout, x.shape)
        if reduction == "mean":
            d = F.div(d, float(max(x.size, 1)))
        neg_x = F.neg(x)
        # softplus(-x) = log1p(exp(-|x|)) + relu(-x), stable for large |x|.
        softplus = F.add(log1p(exp(F.neg(F.add(relu(x), relu(neg_x))))), relu(neg_x))
        py = F.mul(p, y)
        dw = dx = dy = dp = None
        if needs_input_grad(0):  # w (sigmoid(x) (1 - y + p y) - p y)
            dx = F.mul(F.mul(d, w), F.sub(F.mul(sigmoid(x), F.add(F.sub(1.0, y), py)), py))
        if needs_input_grad(1):  # w ((p - 1) softplus(-x) - x)
            dy = F.mul(F.mul(d, w), F.sub(F.mul(F.sub(p, 1.0), softplus), x))
        if needs_input_grad(2):  # the unweighted loss
            unweighted = F.add(F.mul(F.sub(1.0, y), x), F.mul(F.add(F.sub(1.0, y), py), softplus))
            dw = F.mul(d, unweighted)
        if needs_input_grad(3):  # w y softplus(-x)
            dp = F.mul(F.mul(d, w), F.mul(y, softplus))
        return dx, dy, dw, dp

    return bprop


@bprop_getters.register(P.NLLLoss)
def get_bprop_nll_loss(self):
    grad = G.NLLLossGrad(reduction=self.reduction, ignore_index=self.ignore_index)

    def bprop(logits, labels, weight, out, dout):
        # total_weight does not depend on logits; weight gets no gradient (as in MindSpore).
        return grad(logits, dout[0], labels, weight, out[1]), None, zeros_like(weight)

    return bprop


@bprop_getters.register(G.DropoutGrad)
def get_bprop_dropout_grad(self):
    grad = G.DropoutGrad(keep_prob=self.keep_prob)
    keep_prob = self.keep_prob

    def bprop(dy, mask, out, dout):
        # out = dy * mask / keep_prob: linear in each.
        d_mask = F.div(F.mul(dout, dy), keep_prob) if needs_input_grad(1) else None
        return grad(dout, mask), d_mask

    return bprop


@bprop_getters.register(P.LSTMLayer)
def get_bprop_lstm_layer(self):
    """BPTT in one kernel (LSTMLayerGrad); the saved gates and cell states are the forward's outputs, so
    nothing is recomputed. The gates and c outputs are for the backward pass: their gradients are not
    propagated (they are zero for a user's loss, which reads y, h_n and c_n). An x that needs no gradient
    (the first layer's input) skips its product."""
    grads = _by_compute_dx(G.LSTMLayerGrad, self.reverse)

    def bprop(x, h0, c0, w_ih, w_hh, bias, out, dout):
        y, _, _, gates, c = out
        dy, dh_n, dc_n = dout[0], dout[1], dout[2]
        return _drop_dx(grads[needs_input_grad(0)](x, h0, c0, w_ih, w_hh, y, gates, c, dy, dh_n, dc_n))

    return bprop


def _by_compute_dx(grad_class, *args) -> dict:
    """The layer's grad primitive for each answer of ``needs_input_grad(0)``: the one that skips dx for False."""
    return {True: grad_class(*args), False: grad_class(*args, compute_dx=False)}


def _drop_dx(grads: tuple) -> tuple:
    """No gradient for an x that needs none (the kernel left its dx zeros)."""
    return grads if needs_input_grad(0) else (None, *grads[1:])


@bprop_getters.register(P.GRULayer)
def get_bprop_gru_layer(self):
    """BPTT in one kernel (GRULayerGrad) from the saved gates; the gates output takes no gradient."""
    grads = _by_compute_dx(G.GRULayerGrad, self.reverse)

    def bprop(x, h0, w_ih, w_hh, b_ih, b_hh, out, dout):
        return _drop_dx(grads[needs_input_grad(0)](x, h0, w_ih, w_hh, out[0], out[2], dout[0], dout[1]))

    return bprop


@bprop_getters.register(P.RNNLayer)
def get_bprop_rnn_layer(self):
    """BPTT in one kernel (RNNLayerGrad); the activation's derivative comes from the outputs."""
    grads = _by_compute_dx(G.RNNLayerGrad, self.reverse, self.nonlinearity)

    def bprop(x, h0, w_ih, w_hh, bias, out, dout):
        return _drop_dx(grads[needs_input_grad(0)](x, h0, w_ih, w_hh, out[0], dout[0], dout[1]))

    return bprop
