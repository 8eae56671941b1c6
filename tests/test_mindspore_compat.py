"""MindSpore's porting surface: module paths, names and Tensor methods a MindSpore program uses,
so that it runs after changing ``mindspore`` to ``opforge`` in its imports."""

from __future__ import annotations

import numpy as np
import pytest

import opforge as ms  # as a ported script would read: import mindspore as ms
from opforge import Parameter, ParameterTuple, Tensor, nn, ops
from opforge.common import dtype as mstype
from opforge.common.initializer import Normal, initializer
from opforge.ops import composite as C
from opforge.ops import functional as F
from opforge.ops import operations as P
from opforge.ops import signature as sig


def test_module_paths_and_names():
    assert P.Argmax is P.ArgMax and ops.ArgMax is P.Argmax and P.Argmax.__name__ == "Argmax"
    assert C.GradOperation is ops.GradOperation is ms.GradOperation
    assert mstype.float32 is ms.float32
    assert sig.make_sig("x", sig.sig_rw.RW_WRITE).name == "x"
    assert ops.op_info_register is not None and ops.CpuRegOp is not None and ops.DataType is not None
    w = initializer(Normal(0.02), (3, 4), mstype.float32)
    assert w.shape == (3, 4) and w.dtype is mstype.float32


def test_functional_api():
    x = Tensor(np.array([[1.0, -2.0], [3.0, 0.5]], np.float32))
    assert ops.expand_dims(x, 0).shape == (1, 2, 2)
    assert ops.argmax(x).asnumpy().tolist() == 2 and ops.argmax(x, 0).asnumpy().tolist() == [1, 1]  # 2: flattened
    assert ops.argmax(x, dim=1, keepdim=True).asnumpy().tolist() == [[0], [0]] and ops.argmax(x).dtype == ms.int64
    assert ops.argmax(x, axis=1).asnumpy().tolist() == [0, 0] and x.argmax().asnumpy().tolist() == 2
    assert ops.argmin(x).asnumpy().tolist() == 1 and x.argmin(1, keepdims=True).shape == (2, 1)
    assert ops.relu(x).asnumpy().tolist() == [[1.0, 0.0], [3.0, 0.5]]
    assert float(ops.mse_loss(x, x * 2).asnumpy()) == pytest.approx(np.mean(x.asnumpy() ** 2))
    assert ops.mse_loss(x, x, reduction="none").shape == (2, 2)
    assert F.zeros_like(x).asnumpy().sum() == 0
    with pytest.raises(ValueError, match="For 'mse_loss', the 'reduction'"):
        ops.mse_loss(x, x, reduction="avg")


def test_tensor_methods():
    x = Tensor(np.array([[1.0, -2.0], [3.0, 4.0]], np.float32))
    assert x.add(1).asnumpy().tolist() == [[2.0, -1.0], [4.0, 5.0]]
    assert x.maximum(0).asnumpy().tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert x.equal(x).dtype is mstype.bool_
    assert x.matmul(x).asnumpy().tolist() == (x.asnumpy() @ x.asnumpy()).tolist()
    assert x.expand_dims(1).shape == (2, 1, 2) and x.transpose().asnumpy().tolist() == [[1.0, 3.0], [-2.0, 4.0]]
    np.testing.assert_allclose(x.tanh().asnumpy(), np.tanh(x.asnumpy()), rtol=1e-6)
    assert x.argmax(1).asnumpy().tolist() == [0, 1] and float(x.max().asnumpy()) == 4.0


def test_a_mindspore_training_loop_with_parameter_tuple():
    net = nn.Dense(3, 1)
    weights = ParameterTuple(net.trainable_params())
    grad_op = C.GradOperation(get_by_list=True)
    x, y = Tensor(np.ones((4, 3), np.float32)), Tensor(np.zeros((4, 1), np.float32))

    def loss_fn(data, label):
        return ops.mse_loss(net(data), label)

    opt = nn.SGD(weights, learning_rate=0.1)
    first = float(loss_fn(x, y).asnumpy())
    for _ in range(5):
        opt(grad_op(loss_fn, weights)(x, y))
    assert float(loss_fn(x, y).asnumpy()) < first
    with pytest.raises(TypeError, match="For 'ParameterTuple', every element must be a Parameter"):
        ParameterTuple([Tensor(np.ones(2, np.float32))])
    clone = weights.clone("copy")
    assert all(isinstance(p, Parameter) and p.name.startswith("copy.") for p in clone)


# ---------------------------------------------------------------------------------------------
# Optimizers: MindSpore's argument orders, loss_scale and dynamic learning rates


def _quadratic_step(optimizer_factory, steps=3):
    """Parameters after ``steps`` updates of w on the loss sum(w^2) (gradient 2w), from w = [1, -2]."""
    w = Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="w")
    opt = optimizer_factory([w])
    for _ in range(steps):
        opt((Tensor(2 * w.asnumpy()),))
    return w.asnumpy(), opt


def test_momentum_takes_mindspores_positional_order():
    # MindSpore: Momentum(params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False)
    opt = nn.Momentum([Parameter(Tensor(np.ones(2, np.float32)), name="p")], 0.1, 0.9, 0.01, 2.0, True)
    assert (opt.weight_decay, opt.loss_scale, opt.use_nesterov) == (0.01, 2.0, True)


def test_loss_scale_divides_the_gradients():
    scaled, _ = _quadratic_step(lambda p: nn.SGD(p, learning_rate=0.1, loss_scale=4.0))
    w = np.array([1.0, -2.0])
    for _ in range(3):
        w = w - 0.1 * (2 * w) / 4.0
    np.testing.assert_allclose(scaled, w, rtol=1e-6)
    with pytest.raises(ValueError, match=r"For 'SGD', the 'loss_scale' must be in \(0.0, inf\), but got 0.0"):
        nn.SGD([Parameter(Tensor(np.ones(1, np.float32)), name="q")], loss_scale=0.0)


def test_weight_decay_is_scaled_with_the_gradients_then_unscaled():
    # MindSpore's order: decay_weight adds weight_decay * loss_scale * w to the scaled gradient, then scale_grad
    # divides both: a net weight_decay * w.
    got, _ = _quadratic_step(lambda p: nn.SGD(p, learning_rate=0.1, weight_decay=0.5, loss_scale=4.0))
    w = np.array([1.0, -2.0])
    for _ in range(3):
        w = w - 0.1 * ((2 * w) / 4.0 + 0.5 * w)
    np.testing.assert_allclose(got, w, rtol=1e-6)


def test_weight_decay_skips_beta_and_gamma_without_groups():
    # MindSpore's default decay filter: normalization scales and shifts are not decayed.
    gamma = Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="bn.gamma")
    weight = Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="dense.weight")
    opt = nn.SGD([gamma, weight], learning_rate=0.1, weight_decay=0.5)
    zero = Tensor(np.zeros(2, np.float32))
    opt((zero, zero))
    np.testing.assert_allclose(gamma.asnumpy(), [1.0, -2.0])
    np.testing.assert_allclose(weight.asnumpy(), [0.95, -1.9], rtol=1e-6)


@pytest.mark.parametrize("lrs", [(0.1, 0.05), [0.1, 0.05], "tensor"])
def test_a_learning_rate_per_step(lrs):
    values = (0.1, 0.05)
    lrs = Tensor(np.array(values, np.float32)) if lrs == "tensor" else lrs
    got, opt = _quadratic_step(lambda p: nn.Momentum(p, lrs, 0.0), steps=3)
    w = np.array([1.0, -2.0])
    for lr in (0.1, 0.05, 0.05):  # the last value once the list runs out
        w = w - lr * 2 * w
    np.testing.assert_allclose(got, w, rtol=1e-6)
    assert int(opt.global_step.asnumpy()) == 3 and float(opt.get_lr().asnumpy()) == pytest.approx(0.05)


def test_maximum_grad_returns_gradients_in_the_inputs_shapes():
    # MindSpore's MaximumGrad sums each gradient over the dims its input was broadcast along.
    x = Tensor(np.array([[1.0], [5.0]], np.float32))  # [2, 1]
    y = Tensor(np.array([2.0, 3.0, 4.0], np.float32))  # [3]
    dout = Tensor(np.ones((2, 3), np.float32))
    dx, dy = P.MaximumGrad()(x, y, dout)
    assert dx.shape == (2, 1) and dy.shape == (3,)
    assert dx.asnumpy().tolist() == [[0.0], [3.0]] and dy.asnumpy().tolist() == [1.0, 1.0, 1.0]


def test_mindspore2_names_found_by_ported_programs():
    """Names a MindSpore 2 training script reaches for (found by running such scripts)."""
    assert ms.LossMonitor is ms.train.LossMonitor and ms.Accuracy is ms.train.Accuracy and ms.Model is ms.train.Model
    assert ops.stop_gradient is ms.stop_gradient and ops.value_and_grad is ms.value_and_grad
    np.testing.assert_allclose(ops.linspace(0, 1, 5).asnumpy(), [0.0, 0.25, 0.5, 0.75, 1.0])
    assert ops.linspace(Tensor(np.float32(2.0)), 4.0, 3).dtype == ms.float32
    x = Tensor(np.array([[3.0, -4.0], [1.0, 2.0]], np.float32))
    np.testing.assert_allclose(ops.norm(x).asnumpy(), np.linalg.norm(x.asnumpy()), rtol=1e-6)
    np.testing.assert_allclose(ops.norm(x, dim=1).asnumpy(), [5.0, np.sqrt(5.0)], rtol=1e-6)
    np.testing.assert_allclose(ops.norm(x, 1, 1, True).asnumpy(), [[7.0], [3.0]])
    assert float(ops.norm(x, float("inf")).asnumpy()) == 4.0 and float(ops.norm(x, float("-inf")).asnumpy()) == 1.0
    with pytest.raises(ValueError, match="For 'norm', the 'ord'"):
        ops.norm(x, 3)
    with pytest.raises(ValueError, match="For 'linspace', the 'steps'"):
        ops.linspace(0, 1, 0)


def test_clip_by_global_norm_scales_every_gradient_by_the_norm_of_all():
    a, b = np.array([3.0, 0.0], np.float32), np.array([[4.0]], np.float32)
    clipped = ops.clip_by_global_norm((Tensor(a), Tensor(b)), 1.0)  # global norm 5
    np.testing.assert_allclose(clipped[0].asnumpy(), a / 5, rtol=1e-6)
    np.testing.assert_allclose(clipped[1].asnumpy(), b / 5, rtol=1e-6)
    kept = ops.clip_by_global_norm([Tensor(a)], 10.0)
    np.testing.assert_allclose(kept[0].asnumpy(), a, rtol=1e-6)
    grads = opforge_grad_of_sum_squares(Tensor(a))
    assert ops.clip_by_global_norm(grads, 2.0)[0].dtype == ms.float32
    with pytest.raises(TypeError, match="clip_by_global_norm"):
        ops.clip_by_global_norm(Tensor(a))
    with pytest.raises(ValueError, match="clip_norm"):
        ops.clip_by_global_norm((Tensor(a),), 0.0)


def opforge_grad_of_sum_squares(t):
    return (ms.grad(lambda v: (v * v).sum())(t),)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_is_numpys(indexing):
    axes = [np.arange(n, dtype=np.float32) * (n + 1) for n in (2, 3, 4)]
    got = ops.meshgrid(*(Tensor(a) for a in axes), indexing=indexing)
    for g, w in zip(got, np.meshgrid(*axes, indexing=indexing)):
        np.testing.assert_array_equal(g.asnumpy(), w)
    pair = ops.Meshgrid(indexing)((Tensor(axes[0]), Tensor(axes[1])))
    for g, w in zip(pair, np.meshgrid(axes[0], axes[1], indexing=indexing)):
        np.testing.assert_array_equal(g.asnumpy(), w)
    grad = ms.grad(lambda t: (ops.meshgrid(t, Tensor(axes[1]), indexing=indexing)[0] * 2.0).sum())(Tensor(axes[0]))
    np.testing.assert_array_equal(grad.asnumpy(), [6.0, 6.0])  # each x appears in 3 rows, times 2
    with pytest.raises(ValueError, match="indexing"):
        ops.meshgrid(Tensor(axes[0]), Tensor(axes[1]), indexing="yx")
    with pytest.raises(TypeError, match="1-D Tensors"):
        ops.meshgrid(Tensor(axes[0]))


_EINSUM = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij->", [(3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("abc,cd", [(2, 3, 4), (4, 5)]),  # the implicit output: "abd"
    ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
]


@pytest.mark.parametrize("equation, shapes", _EINSUM, ids=[e for e, _ in _EINSUM])
def test_einsum_is_numpys_and_differentiable(equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = ops.einsum(equation, *(Tensor(a) for a in arrays))
    np.testing.assert_allclose(got.asnumpy(), np.einsum(equation, *arrays), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.Einsum(equation)(tuple(Tensor(a) for a in arrays)).asnumpy(), got.asnumpy())
    grad = ms.grad(lambda t: ops.einsum(equation, t, *(Tensor(a) for a in arrays[1:])).sum())(Tensor(arrays[0]))
    ones = np.ones(np.einsum(equation, *arrays).shape)
    # d(sum)/d(first operand): the einsum of ones with the others, back to the first operand's subscripts
    terms, _, out = equation.partition("->")
    first, *rest = terms.split(",")
    if not out and "->" not in equation:
        letters = "".join(terms.split(","))
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    want = (
        np.einsum(",".join([out, *rest]) + "->" + first, ones, *arrays[1:])
        if rest
        else np.broadcast_to(np.einsum(out + "->" + "".join(c for c in first if c in out), ones), arrays[0].shape)
    )
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_einsum_refuses_what_it_does_not_take():
    x = Tensor(np.ones((3, 3), np.float32))
    for equation, match in [("ii->i", "repeats"), ("...ij->ij", r"'\.\.\.'"), ("ij,jk->ik", "3 operand"),
                            ("ij->k", "no operand has"), ("ijk->k", "names 3 dims")]:  # fmt: skip
        with pytest.raises(ValueError, match=match):
            ops.einsum(equation, x) if equation != "ij,jk->ik" else ops.einsum(equation, x, x, x)


def test_multitype_func_graph_and_hyper_map_as_mindspore_optimizers_write_them():
    grad_scale = C.MultitypeFuncGraph("grad_scale")

    @grad_scale.register("Tensor", "Tensor")
    def _scale_tensor(scale, grad):
        return grad / scale

    @grad_scale.register("Number", "Tensor")
    def _scale_number(scale, grad):
        return grad * (1.0 / scale)

    grads = (Tensor(np.array([2.0, 4.0], np.float32)), (Tensor(np.array([8.0], np.float32)),))
    scaled = C.HyperMap()(F.partial(grad_scale, Tensor(np.float32(2.0))), grads)
    assert isinstance(scaled, tuple) and isinstance(scaled[1], tuple)
    np.testing.assert_allclose(scaled[0].asnumpy(), [1.0, 2.0])
    np.testing.assert_allclose(scaled[1][0].asnumpy(), [4.0])
    halved = ops.HyperMap(F.partial(grad_scale, 4.0))(list(grads[:1]))
    assert isinstance(halved, list) and halved[0].asnumpy().tolist() == [0.5, 1.0]
    pairs = ops.Map()(lambda a, b: a + b, (1, 2), (10, 20))
    assert pairs == (11, 22)
    with pytest.raises(TypeError, match="grad_scale"):
        grad_scale("a", grads[0])
    with pytest.raises(ValueError, match="one length"):
        C.HyperMap()(lambda a, b: a, (1, 2), (1,))
    with pytest.raises(ValueError, match="type name"):
        grad_scale.register("Matrix")


def test_adam_amsgrad_and_its_keyword_arguments():
    # AMSGrad keeps the largest second moment: large gradients first, then small ones, so vhat != v.
    w = Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="w")
    opt = nn.Adam([w], learning_rate=0.1, use_amsgrad=True, use_lazy=True, use_offload=False)
    ref, m, v, vhat = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2), np.zeros(2)
    for t, scale in enumerate((10.0, 1.0, 0.1, 0.01), start=1):
        g = np.array([scale, -scale])
        opt((Tensor(g.astype(np.float32)),))
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        vhat = np.maximum(vhat, v)
        ref = ref - 0.1 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t) * m / (np.sqrt(vhat) + 1e-8)
    np.testing.assert_allclose(w.asnumpy(), ref, rtol=1e-5)
    assert not np.allclose(vhat, v)
    params = [Parameter(Tensor(np.ones(2, np.float32)), name="p")]
    with pytest.raises(TypeError, match="For 'Adam', the keyword arguments \\['use_lzy'\\] are not Adam's"):
        nn.Adam(params, use_lzy=True)
    with pytest.raises(TypeError, match="For 'Adam', the 'use_lazy' must be bool"):
        nn.Adam(params, use_lazy=1)
    with pytest.raises(ValueError, match="'use_amsgrad' and 'use_nesterov' cannot both be True"):
        nn.Adam(params, use_amsgrad=True, use_nesterov=True)
