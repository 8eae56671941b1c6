"""MindSpore names the model zoo's research programs use that opforge lacked (docs/zoo_api_survey.md, "Research
programs"): ``nn.MatMul``, ``ops.ScalarCast``, ``ops.LinSpace``, ``ms_function``, ``ops.MaxPool3D`` /
``AvgPool3D`` / ``MaxPoolWithArgmax``, ``LearningRateScheduler``, the deeper module paths (``nn.metrics.metric``,
``nn.loss.loss._Loss``, ``train.callback._callback``, ...), ``DropoutGenMask`` / ``DropoutDoMask`` and the
smaller ones (``DiagPart``, ``LpNorm``, ``tensor_dot``, ``batch_dot``, ``InstanceNorm1d/3d``,
``ForwardValueAndGrad``, ``LRN``, ``ROC``, ``auc``, ``mindspore.numpy``'s ``take_along_axis``, ...). Values
against NumPy references, gradients against central differences, MindSpore's error cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import opforge as ms
from opforge import Parameter, ParameterTuple, Tensor, nn, ops
from opforge import dtype as mstype
from opforge.ops import operations as P


def _rng(seed=0):
    return np.random.default_rng(seed)


def _check_grad(fn, x: np.ndarray, eps: float, rtol: float, atol: float, seed: int = 1) -> None:
    """The gradient of sum(fn(x) * w) (w random) against central differences in every element of ``x``."""
    w = _rng(seed).standard_normal(fn(Tensor(x)).shape).astype(x.dtype)

    def total(a):
        return float(np.sum(fn(Tensor(a)).asnumpy().astype(np.float64) * w))

    got = ms.grad(lambda t: ops.ReduceSum()(fn(t) * Tensor(w)))(Tensor(x)).asnumpy()
    want = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        want[i] = (total(up) - total(down)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- nn.MatMul -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "t1", "t2"),
    [
        ((3,), (3,), False, False),
        ((3,), (3, 4), True, False),
        ((2, 3), (3,), False, True),
        ((2, 3), (4, 3), False, True),
        ((3, 2), (3, 4), True, False),
        ((5, 1, 2, 3), (4, 3, 6), False, False),
        ((3,), (2, 3, 4), False, False),
        ((2, 4, 3), (4,), True, False),
        ((1, 3, 2), (5, 1, 4, 3), True, True),
    ],
)
def test_nn_matmul_matches_numpy(a, b, t1, t2):
    rng = _rng()
    x, y = rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32)
    xt = np.swapaxes(x, -1, -2) if t1 and x.ndim > 1 else x
    yt = np.swapaxes(y, -1, -2) if t2 and y.ndim > 1 else y
    got = nn.MatMul(t1, t2)(Tensor(x), Tensor(y)).asnumpy()
    want = np.matmul(xt, yt)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_nn_matmul_errors_and_gradient():
    with pytest.raises(TypeError, match="transpose_x1"):
        nn.MatMul(transpose_x1=1)
    with pytest.raises(ValueError, match="column of matrix dimensions of x1"):
        nn.MatMul()(Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((4, 2), np.float32)))
    with pytest.raises(ValueError, match="can not broadcast"):
        nn.MatMul()(Tensor(np.ones((2, 2, 3), np.float32)), Tensor(np.ones((3, 3, 4), np.float32)))
    y = Tensor(_rng(2).standard_normal((4, 3, 2)))
    net = nn.MatMul(transpose_x2=False)
    _check_grad(lambda t: net(t, y), _rng(3).standard_normal((1, 2, 3)), 1e-6, 1e-6, 1e-8)


# -- ScalarCast, ScalarToArray, LinSpace, ms_function ----------------------------------------------------------


def test_scalar_cast_and_scalar_to_array():
    cast = ops.ScalarCast()
    assert cast(2.7, mstype.int32) == 2 and isinstance(cast(2.7, mstype.int32), int)
    assert cast(-2.7, mstype.int64) == -2
    assert cast(3, mstype.float32) == 3.0 and isinstance(cast(3, mstype.float32), float)
    assert cast(0, mstype.bool_) is False and P.ScalarCast is ops.ScalarCast
    with pytest.raises(TypeError, match="input_x"):
        cast("1", mstype.int32)
    with pytest.raises(TypeError, match="input_y"):
        cast(1, int)
    out = ops.ScalarToArray()(3)
    assert out.dtype == mstype.int32 and out.shape == () and int(out.asnumpy()) == 3
    assert ops.ScalarToArray()(2.5).dtype == mstype.float32
    with pytest.raises(TypeError, match="ScalarToArray"):
        ops.ScalarToArray()(True)


def test_linspace():
    lin = P.LinSpace()
    got = lin(Tensor(np.float32(1.0)), Tensor(np.float32(10.0)), 5).asnumpy()
    np.testing.assert_allclose(got, np.linspace(1.0, 10.0, 5), rtol=1e-6)
    assert got.dtype == np.float32
    np.testing.assert_allclose(lin(Tensor(np.float32(2.0)), Tensor(np.float32(3.0)), 1).asnumpy(), [2.0])
    with pytest.raises(TypeError, match="start"):
        lin(0.0, Tensor(np.float32(1.0)), 3)
    with pytest.raises(TypeError):
        lin(Tensor(np.float64(0.0)), Tensor(np.float32(1.0)), 3)
    with pytest.raises(ValueError, match="0-D"):
        lin(Tensor(np.zeros(2, np.float32)), Tensor(np.float32(1.0)), 3)
    with pytest.raises(ValueError, match="positive"):
        lin(Tensor(np.float32(0.0)), Tensor(np.float32(1.0)), 0)
    jitted = ms.jit(lambda a, b: lin(a, b, 3))  # start and stop are read on the device
    for start in (0.0, 4.0):
        np.testing.assert_allclose(
            jitted(Tensor(np.float32(start)), Tensor(np.float32(8.0))).asnumpy(), np.linspace(start, 8.0, 3)
        )


def test_ms_function_is_jit():
    from opforge.common.api import ms_function

    assert ms.ms_function is ms_function

    @ms.ms_function
    def double(x):
        return ops.mul(x, 2.0)

    assert isinstance(double, ms.JitFunction)
    np.testing.assert_allclose(double(Tensor(np.arange(3, dtype=np.float32))).asnumpy(), [0.0, 2.0, 4.0])

    @ms_function(input_signature=None)
    def plus_one(x):
        return x + 1

    np.testing.assert_allclose(plus_one(Tensor(np.ones(2, np.float32))).asnumpy(), [2.0, 2.0])


# -- 3-D pooling and MaxPoolWithArgmax ---------------------------------------------------------------------


def _pool_reference(x, kernel, strides, pads, outs, kind, include_pad=True, divisor=0):
    """Pooling by definition: each output over its box (padded positions ignored by the max; the divisor from
    the box's positions inside the padding (``include_pad``) or the input, or ``divisor``)."""
    out = np.zeros(x.shape[:2] + tuple(outs))
    for pos in itertools.product(*(range(o) for o in outs)):
        slices, inside, padded = [], 1, 1
        for o, k, s, (before, after), n in zip(pos, kernel, strides, pads, x.shape[2:]):
            start = o * s - before
            lo, hi = max(start, 0), min(start + k, n)
            slices.append(slice(lo, hi))
            inside *= hi - lo
            padded *= min(start + k, n + after) - start
        window = x[(slice(None), slice(None), *slices)].reshape(x.shape[0], x.shape[1], -1)
        if kind == "max":
            out[(slice(None), slice(None), *pos)] = window.max(-1)
        else:
            out[(slice(None), slice(None), *pos)] = window.sum(-1) / (divisor or (padded if include_pad else inside))
    return out


_POOL_CASES = [
    # kernel, strides, pad_mode, pads (head, tail, top, bottom, left, right), ceil_mode, expected out (D, H, W)
    ((2, 2, 2), (2, 2, 2), "same", (0, 1, 0, 0, 0, 1), False, (3, 3, 4)),  # the "same" padding
    ((3, 2, 3), (1, 2, 2), "valid", (0,) * 6, False, (3, 3, 3)),
    ((3, 3, 3), (2, 2, 2), "pad", (1, 0, 1, 1, 0, 1), True, (3, 4, 4)),
    ((3, 3, 3), (2, 2, 2), "pad", (1, 1, 1, 1, 1, 1), False, (3, 3, 4)),
    (
        (2, 3, 3),
        (2, 2, 3),
        "pad",
        (1, 1, 1, 1, 1, 1),
        True,
        (3, 4, 3),
    ),  # D: ceil gives 4, the 4th window starting in the padding
]


@pytest.mark.parametrize(("kernel", "strides", "mode", "pads", "ceil", "outs"), _POOL_CASES)
def test_max_pool3d_matches_reference(kernel, strides, mode, pads, ceil, outs):
    x = _rng().standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    op = P.MaxPool3D(kernel, strides, mode, pads if mode == "pad" else 0, ceil if mode == "pad" else None)
    got = op(Tensor(x)).asnumpy()
    assert got.shape == (2, 3, *outs)
    pairs = [(pads[2 * i], pads[2 * i + 1]) for i in range(3)]
    np.testing.assert_array_equal(got, _pool_reference(x, kernel, strides, pairs, outs, "max").astype(np.float32))


@pytest.mark.parametrize(("kernel", "strides", "mode", "pads", "ceil", "outs"), _POOL_CASES)
@pytest.mark.parametrize("include_pad", [True, False])
def test_avg_pool3d_matches_reference(kernel, strides, mode, pads, ceil, outs, include_pad):
    x = _rng().standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    op = ops.AvgPool3D(kernel, strides, mode, pads if mode == "pad" else 0, ceil, include_pad)
    got = op(Tensor(x)).asnumpy()
    assert got.shape == (2, 3, *outs)
    pairs = [(pads[2 * i], pads[2 * i + 1]) for i in range(3)]
    want = _pool_reference(x.astype(np.float64), kernel, strides, pairs, outs, "avg", include_pad)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_avg_pool3d_divisor_override_and_zoo_use():
    x = _rng().standard_normal((1, 2, 4, 4, 4)).astype(np.float32)
    got = ops.AvgPool3D(2, 2, "pad", 1, divisor_override=3)(Tensor(x)).asnumpy()
    want = _pool_reference(x.astype(np.float64), (2, 2, 2), (2, 2, 2), [(1, 1)] * 3, (3, 3, 3), "avg", divisor=3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the zoo's PCB: AvgPool3D(kernel_size=(8, 1, 1), strides=(8, 1, 1)) over [N, 1, C, H, W]
    y = _rng(1).standard_normal((2, 1, 16, 3, 1)).astype(np.float32)
    got = ops.AvgPool3D(kernel_size=(8, 1, 1), strides=(8, 1, 1), pad_mode="valid")(Tensor(y)).asnumpy()
    np.testing.assert_allclose(got, y.reshape(2, 1, 2, 8, 3, 1).mean(3), rtol=1e-5, atol=1e-6)


def test_pool3d_errors():
    with pytest.raises(ValueError, match="pad_list"):
        P.MaxPool3D(2, 2, "valid", pad_list=1)
    with pytest.raises(ValueError, match="ceil_mode"):
        P.MaxPool3D(2, 2, "same", ceil_mode=True)
    with pytest.raises(ValueError, match="pad_mode"):
        P.MaxPool3D(2, 2, "full")
    with pytest.raises(ValueError, match="kernel_size"):
        ops.AvgPool3D(kernel_size=(2, 2))
    with pytest.raises(TypeError, match="strides"):
        ops.AvgPool3D(2, strides=2.0)
    with pytest.raises(ValueError, match="pad"):
        ops.AvgPool3D(2, 2, "pad", pad=(1, 1, 1))  # AvgPool3D takes an int or 6 pads
    with pytest.raises(ValueError, match="divisor_override"):
        ops.AvgPool3D(2, divisor_override=-1)
    with pytest.raises(ValueError, match="5-D"):
        P.MaxPool3D(2)(Tensor(np.ones((1, 2, 4, 4), np.float32)))
    with pytest.raises(TypeError):
        ops.AvgPool3D(2)(Tensor(np.ones((1, 1, 4, 4, 4), np.float64)))  # AvgPool3D: float16 and float32
    with pytest.raises(ValueError, match="larger than the input"):
        P.MaxPool3D(5)(Tensor(np.ones((1, 1, 4, 4, 4), np.float32)))


def test_pool3d_gradients():
    x = _rng(4).standard_normal((1, 2, 3, 4, 4))
    _check_grad(P.MaxPool3D(2, (1, 2, 2), "pad", (1, 0, 0, 1, 1, 0), True), x, 1e-6, 1e-6, 1e-8)
    _check_grad(P.MaxPool3D((2, 2, 2), 2, "same"), x, 1e-6, 1e-6, 1e-8)
    op = ops.AvgPool3D(2, (1, 2, 2), "pad", (1, 0, 0, 1, 1, 0), True, False)
    _check_grad(op, x.astype(np.float32), 1e-2, 1e-3, 1e-4)


@pytest.mark.parametrize("mode", ["valid", "same"])
def test_max_pool_with_argmax(mode):
    x = _rng(5).standard_normal((2, 3, 5, 7)).astype(np.float32)
    output, argmax = P.MaxPoolWithArgmax(kernel_size=3, strides=2, pad_mode=mode)(Tensor(x))
    np.testing.assert_array_equal(output.asnumpy(), ops.MaxPool(3, 2, mode)(Tensor(x)).asnumpy())
    assert argmax.dtype == mstype.int32 and argmax.shape == output.shape
    # each index is the flat (h * W + w) position of its output in the (H, W) plane, inside its window
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, argmax.asnumpy().reshape(2, 3, -1), -1).reshape(output.shape)
    np.testing.assert_array_equal(picked, output.asnumpy())
    pad = (0, 0) if mode == "valid" else (1, 1)
    rows, cols = np.divmod(argmax.asnumpy(), 7)
    h_start = np.arange(output.shape[2])[:, None] * 2 - pad[0]
    w_start = np.arange(output.shape[3])[None, :] * 2 - pad[1]
    assert np.all((rows >= h_start) & (rows < h_start + 3) & (cols >= w_start) & (cols < w_start + 3))
    _check_grad(lambda t: P.MaxPoolWithArgmax(2, 2, mode)(t)[0], x[:1, :1, :4, :5].astype(np.float32), 1e-2, 1e-3, 1e-4)
    with pytest.raises(TypeError):
        P.MaxPoolWithArgmax(2, 2)(Tensor(x.astype(np.float64)))


# -- train: LearningRateScheduler, _CallbackManager, module paths --------------------------------------------


def test_learning_rate_scheduler_changes_the_optimizer_rate():
    from opforge.train.callback import LearningRateScheduler, RunContext, _InternalCallbackParam

    net = nn.Dense(2, 1)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    seen = []

    def every_two_steps(lr, step):
        seen.append((lr, step))
        return lr * 0.5 if step % 2 == 0 else lr

    cb = LearningRateScheduler(every_two_steps)
    params = _InternalCallbackParam()
    params.optimizer = opt
    for step in (1, 2, 3, 4):
        params.cur_step_num = step
        cb.step_end(RunContext(params))
    assert seen == [(0.1, 1), (0.1, 2), (0.05, 3), (0.05, 4)]  # lr as NumPy prints the float32 value
    np.testing.assert_allclose(float(opt.learning_rate.asnumpy()), 0.025)
    assert ms.train.LearningRateScheduler is LearningRateScheduler


def test_learning_rate_scheduler_in_model_train():
    from opforge.dataset import NumpySlicesDataset

    rng = _rng(6)
    data = NumpySlicesDataset(
        {"x": rng.standard_normal((8, 3)).astype(np.float32), "y": rng.standard_normal((8, 1)).astype(np.float32)},
        shuffle=False,
    ).batch(2)
    net = nn.Dense(3, 1)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.2)
    model = ms.train.Model(net, nn.MSELoss(), opt)
    steps = []
    model.train(1, data, callbacks=[ms.train.LearningRateScheduler(lambda lr, step: steps.append(step) or lr / 2)])
    assert steps == [1, 2, 3, 4]
    np.testing.assert_allclose(float(opt.learning_rate.asnumpy()), 0.2 / 16, rtol=1e-6)


def test_callback_manager_and_module_paths():
    from opforge.nn.loss.loss import LossBase, _Loss
    from opforge.nn.metrics.metric import Metric, rearrange_inputs
    from opforge.train.callback._callback import Callback as Callback2
    from opforge.train.callback._callback import _CallbackManager as Manager2
    from opforge.train.callback._loss_monitor import LossMonitor
    from opforge.train.callback._time_monitor import TimeMonitor
    from opforge.train.summary.summary_record import SummaryRecord

    from opforge.train.callback import Callback, RunContext, _CallbackManager, _InternalCallbackParam

    assert Callback2 is Callback and Manager2 is _CallbackManager and _Loss is LossBase
    assert LossMonitor is ms.train.LossMonitor and TimeMonitor is ms.train.TimeMonitor
    assert SummaryRecord is ms.train.SummaryRecord and Metric is nn.Metric and rearrange_inputs is nn.rearrange_inputs
    calls = []

    class Old(Callback):  # a MindSpore 1.x callback: the old hook names
        def begin(self, run_context):
            calls.append("begin")

        def step_end(self, run_context):
            calls.append(("step_end", run_context.original_args().cur_step_num))

    class New(Callback):
        def on_train_step_end(self, run_context):
            calls.append("on_train_step_end")

    manager = _CallbackManager([Old(), New()])
    params = _InternalCallbackParam()
    params.cur_step_num = 7
    with manager:
        manager.begin(RunContext(params))
        manager.step_end(RunContext(params))
    assert calls == ["begin", ("step_end", 7), "on_train_step_end"]
    with pytest.raises(TypeError, match="Callback"):
        _CallbackManager([Old(), 3])


def test_rearrange_inputs_and_set_indexes():
    class Picked(nn.Metric):
        def clear(self):
            self.got = None

        @nn.rearrange_inputs
        def update(self, *inputs):
            self.got = inputs

        def eval(self):
            return self.got

    metric = Picked().set_indexes([2, 0])
    assert metric.indexes == [2, 0]
    assert tuple(metric(1, 2, 3)) == (3, 1)  # Metric.__call__: clear, update, eval
    assert tuple(Picked()(1, 2)) == (1, 2)
    with pytest.raises(ValueError, match="set_indexes"):
        Picked().set_indexes((0, 1))


# -- DropoutGenMask / DropoutDoMask ----------------------------------------------------------------------------


def test_dropout_gen_mask_and_do_mask():
    keep = Tensor(np.float32(0.7))
    assert P.DropoutGenMask()((2, 4, 5), keep).shape == (16,)  # ceil(40 / 128) * 16 bytes
    gen = P.DropoutGenMask(Seed0=3, Seed1=5)
    mask = gen((30, 40), keep)
    assert mask.dtype == mstype.uint8 and mask.shape == (160,)
    bits = np.unpackbits(mask.asnumpy(), bitorder="little")
    assert abs(bits[:1200].mean() - 0.7) < 0.05
    again = gen((30, 40), keep)  # a new mask at each call ...
    assert (again.asnumpy() != mask.asnumpy()).any()
    first = P.DropoutGenMask(Seed0=3, Seed1=5)((30, 40), keep)  # ... and the same sequence for the same seeds
    np.testing.assert_array_equal(first.asnumpy(), mask.asnumpy())
    x = _rng(7).standard_normal((30, 40)).astype(np.float32)
    out = P.DropoutDoMask()(Tensor(x), mask, keep).asnumpy()
    np.testing.assert_allclose(out, x * bits[:1200].reshape(30, 40) / np.float32(0.7), rtol=1e-6, atol=1e-6)
    dx = ms.grad(lambda t: ops.ReduceSum()(P.DropoutDoMask()(t, mask, keep)))(Tensor(x)).asnumpy()
    np.testing.assert_allclose(dx, bits[:1200].reshape(30, 40) / np.float32(0.7), rtol=1e-6)
    jitted = ms.jit(lambda t: P.DropoutDoMask()(t, gen((30, 40), keep), keep))  # new bits at each replay
    kept = [jitted(Tensor(np.ones((30, 40), np.float32))).asnumpy() != 0 for _ in range(3)]
    assert (kept[0] != kept[1]).any() and (kept[1] != kept[2]).any()
    with pytest.raises(TypeError, match="shape"):
        gen([30, 40], keep)
    with pytest.raises(TypeError, match="keep_prob"):
        gen((30, 40), 0.7)
    with pytest.raises(TypeError, match="Seed0"):
        P.DropoutGenMask(Seed0=1.0)
    with pytest.raises(ValueError, match="mask"):
        P.DropoutDoMask()(Tensor(x), Tensor(np.zeros(16, np.uint8)), keep)
    with pytest.raises(TypeError):
        P.DropoutDoMask()(Tensor(x), Tensor(np.zeros(160, np.int32)), keep)


# -- DiagPart, LpNorm, tensor_dot, batch_dot, InplaceAdd, LRN and the old names -----------------------------------


def test_diag_part():
    x = _rng(8).standard_normal((2, 3, 2, 3))
    np.testing.assert_array_equal(P.DiagPart()(Tensor(x)).asnumpy(), np.einsum("ijij->ij", x))
    _check_grad(P.DiagPart(), x, 1e-6, 1e-6, 1e-8)
    for bad in ((2, 3, 2), (2, 3, 3, 2)):
        with pytest.raises(ValueError, match="DiagPart"):
            P.DiagPart()(Tensor(np.ones(bad)))


def test_lp_norm():
    x = _rng(9).standard_normal((2, 3, 4)).astype(np.float32)
    for p in (1, 2, 3):
        got = ops.LpNorm([0, 2], p)(Tensor(x)).asnumpy()
        np.testing.assert_allclose(got, (np.abs(x) ** p).sum((0, 2)) ** (1 / p), rtol=1e-5)
    assert ops.LpNorm(-1, keep_dims=True)(Tensor(x)).shape == (2, 3, 1)
    doc = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], np.float32)
    np.testing.assert_allclose(ops.LpNorm(axis=[0, 1])(Tensor(doc)).asnumpy(), [9.165152, 10.954452], rtol=1e-6)
    np.testing.assert_allclose(ops.LpNorm(0, epsilon=0.5)(Tensor(np.zeros((3,), np.float32))).asnumpy(), 0.5)
    _check_grad(ops.LpNorm(1, 3), x, 1e-2, 2e-3, 2e-3)
    with pytest.raises(TypeError, match="'p'"):
        ops.LpNorm(0, p=2.0)
    with pytest.raises(TypeError, match="keep_dims"):
        ops.LpNorm(0, keep_dims=1)
    with pytest.raises(ValueError, match="axis"):
        ops.LpNorm(3)(Tensor(x))
    with pytest.raises(TypeError):
        ops.LpNorm(0)(Tensor(x.astype(np.float64)))


def test_tensor_dot():
    rng = _rng(10)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 5))
    for axes in (((1, 2), (1, 0)), 1, ((2,), (0,))):
        want = np.tensordot(a, b, axes)
        got = ops.tensor_dot(Tensor(a.astype(np.float32)), Tensor(b.astype(np.float32)), axes).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    u, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    got = ops.tensor_dot(Tensor(u.astype(np.float32)), Tensor(v.astype(np.float32)), (1, 1)).asnumpy()  # the zoo's
    np.testing.assert_allclose(got, u @ v.T, rtol=1e-5, atol=1e-5)
    outer = ops.tensor_dot(Tensor(u.astype(np.float32)), Tensor(v.astype(np.float32)), 0)
    assert outer.shape == (3, 4, 5, 4)
    bt = Tensor(b.astype(np.float32))
    _check_grad(lambda t: ops.tensor_dot(t, bt, ((1, 2), (1, 0))), a.astype(np.float32), 1e-2, 1e-3, 1e-3)
    with pytest.raises(ValueError, match="contracted dims must match"):
        ops.tensor_dot(Tensor(a.astype(np.float32)), bt, ((0,), (0,)))
    with pytest.raises(TypeError, match="one dtype"):
        ops.tensor_dot(Tensor(a.astype(np.float32)), Tensor(b.astype(np.float16)), 1)
    with pytest.raises(ValueError, match="repeat"):
        ops.tensor_dot(Tensor(a.astype(np.float32)), bt, ((1, 1), (1, 0)))


def test_batch_dot():
    rng = _rng(11)
    cases = [
        ((2, 2, 3), (2, 3, 2), (-1, -2), "bij,bjk->bik"),
        ((6, 2, 3, 4), (6, 5, 4, 8), None, "bijk,blkm->bijlm"),
        ((2, 2, 4), (2, 5, 4, 5), 2, "bik,bjkl->bijl"),
        ((2, 2), (2, 3, 2), (1, 2), "bi,bji->bj"),
        ((2, 3), (2, 3), None, "bi,bi->b"),
    ]
    for s1, s2, axes, spec in cases:
        x1, x2 = rng.standard_normal(s1).astype(np.float32), rng.standard_normal(s2).astype(np.float32)
        got = ops.batch_dot(Tensor(x1), Tensor(x2), axes).asnumpy()
        want = np.einsum(spec, x1, x2)
        if len(s1) == 2 and len(s2) == 2:
            want = want[:, None]  # two 2-D inputs give (batch, 1)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    y = Tensor(rng.standard_normal((2, 5, 4, 3)).astype(np.float32))
    _check_grad(lambda t: ops.batch_dot(t, y, 2), rng.standard_normal((2, 3, 4)).astype(np.float32), 1e-2, 1e-3, 1e-3)
    ones = Tensor(np.ones((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="batch dim"):
        ops.batch_dot(ones, ones, (0, 1))
    with pytest.raises(ValueError, match="batch size"):
        ops.batch_dot(ones, Tensor(np.ones((3, 3, 4), np.float32)))
    with pytest.raises(TypeError):
        ops.batch_dot(Tensor(np.ones((2, 3, 4), np.float16)), Tensor(np.ones((2, 4, 3), np.float16)))


def test_inplace_add_and_index_add():
    rng = _rng(12)
    x, v = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 3)).astype(np.float32)
    want = x.copy()
    for i, row in enumerate((0, 2, 0)):
        want[row] += v[i]
    np.testing.assert_allclose(P.InplaceAdd((0, 2, 0))(Tensor(x), Tensor(v)).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(P.InplaceAdd(1)(Tensor(x), Tensor(v[:1])).asnumpy()[1], x[1] + v[0], rtol=1e-6)
    vt = Tensor(v)
    _check_grad(lambda t: P.InplaceAdd((0, 2, 0))(t, vt), x, 1e-2, 1e-3, 1e-3)
    with pytest.raises(ValueError, match="input_v"):
        P.InplaceAdd((0, 1))(Tensor(x), Tensor(v))
    with pytest.raises(ValueError, match="indices"):
        P.InplaceAdd((0, 4, 1))(Tensor(x), Tensor(v))
    with pytest.raises(TypeError):
        P.InplaceAdd(0.5)
    assert P.IndexAdd is ops.IndexAdd and P.RandomCategorical is ops.RandomCategorical


def test_lrn():
    x = _rng(13).standard_normal((2, 7, 3, 3)).astype(np.float32)
    squares = np.pad(x**2, ((0, 0), (2, 2), (0, 0), (0, 0)))
    window = sum(squares[:, i : i + 7] for i in range(5))
    got = P.LRN(depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)(Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, x / (1.0 + 0.5 * window) ** 0.75, rtol=1e-5, atol=1e-6)
    _check_grad(P.LRN(1, 2.0, 0.3, 0.5), x[:1, :4, :2, :2], 1e-2, 2e-3, 2e-3)
    with pytest.raises(TypeError, match="bias"):
        P.LRN(bias=1)
    with pytest.raises(ValueError, match="norm_region"):
        P.LRN(norm_region="WITHIN_CHANNEL")
    with pytest.raises(ValueError, match="4-D"):
        P.LRN()(Tensor(np.ones((2, 3), np.float32)))


def test_old_names_prelu_kl_div_masked_select():
    x = _rng(14).standard_normal((2, 3, 4)).astype(np.float32)
    assert P.Gelu is P.GeLU and P.Pack is P.Stack
    np.testing.assert_array_equal(P.Pack(axis=1)((Tensor(x), Tensor(x))).asnumpy(), np.stack([x, x], 1))
    w = np.array([0.1, 0.2, 0.3], np.float32)
    np.testing.assert_allclose(P.PReLU()(Tensor(x), Tensor(w)).asnumpy(), np.where(x > 0, x, x * w[:, None]), rtol=1e-6)
    with pytest.raises(TypeError):
        P.PReLU()(Tensor(x), Tensor(w.astype(np.float16)))
    logits = np.log(np.array([[0.2, 0.8], [0.5, 0.5]], np.float32))
    labels = np.array([[0.0, 1.0], [0.3, 0.7]], np.float32)
    terms = np.where(labels > 0, labels * (np.log(np.where(labels > 0, labels, 1.0)) - logits), 0.0)
    for reduction, want in (("mean", terms.mean()), ("sum", terms.sum()), ("none", terms)):
        got = ops.KLDivLoss(reduction)(Tensor(logits), Tensor(labels)).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="reduction"):
        ops.KLDivLoss("avg")
    mask = x > 0
    np.testing.assert_array_equal(ops.MaskedSelect()(Tensor(x), Tensor(mask)).asnumpy(), x[mask])


# -- nn: InstanceNorm1d/3d, ForwardValueAndGrad, Norm, ROC, auc -------------------------------------------------


def test_instance_norm_1d_and_3d():
    rng = _rng(15)
    for cls, shape in ((nn.InstanceNorm1d, (2, 3, 5)), (nn.InstanceNorm3d, (2, 3, 2, 3, 4))):
        net = cls(3, gamma_init="normal", beta_init="normal")
        x = rng.standard_normal(shape).astype(np.float32)
        axes = tuple(range(2, len(shape)))
        gamma = net.gamma.asnumpy().reshape((-1,) + (1,) * len(axes))
        beta = net.beta.asnumpy().reshape((-1,) + (1,) * len(axes))
        want = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5) * gamma + beta
        np.testing.assert_allclose(net(Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
        net.set_train()
        net(Tensor(x))
        count = int(np.prod(shape[2:]))
        np.testing.assert_allclose(net.moving_mean.asnumpy(), 0.1 * x.mean((0, *axes)), rtol=1e-4, atol=1e-6)
        unbiased = x.var(axes).mean(0) * count / (count - 1)
        np.testing.assert_allclose(net.moving_variance.asnumpy(), 0.9 + 0.1 * unbiased, rtol=1e-4)
        with pytest.raises(ValueError, match=cls.__name__):
            net(Tensor(np.ones((2, 3, 4, 4), np.float32)))
    with pytest.raises(ValueError, match="'InstanceNorm3d'.*num_features"):
        nn.InstanceNorm3d(0)


def test_forward_value_and_grad():
    rng = _rng(16)
    net = nn.Dense(3, 2)
    with_loss = nn.WithLossCell(net, nn.MSELoss())
    weights = ParameterTuple(net.trainable_params())
    x, y = Tensor(rng.standard_normal((4, 3)).astype(np.float32)), Tensor(np.zeros((4, 2), np.float32))
    loss, (input_grads, weight_grads) = nn.ForwardValueAndGrad(with_loss, weights, get_all=True, get_by_list=True)(x, y)
    np.testing.assert_allclose(loss.asnumpy(), with_loss(x, y).asnumpy(), rtol=1e-6)
    want = ops.GradOperation(get_all=True, get_by_list=True)(with_loss, weights)(x, y)
    for got, ref in zip((*input_grads, *weight_grads), (*want[0], *want[1])):
        np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-6)
    sens = Tensor(np.float32(3.0))
    loss, dx = nn.ForwardValueAndGrad(with_loss, sens_param=True)(x, y, sens)
    ref = ops.GradOperation(sens_param=True)(with_loss)(x, y, sens)
    np.testing.assert_allclose(dx.asnumpy(), ref.asnumpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="weights"):
        nn.ForwardValueAndGrad(with_loss, get_by_list=True)
    with pytest.raises(TypeError, match="get_all"):
        nn.ForwardValueAndGrad(with_loss, get_all=1)
    with pytest.raises(TypeError, match="network"):
        nn.ForwardValueAndGrad(3)


def test_nn_norm():
    x = np.array([[4, 4, 9, 1], [2, 1, 3, 6]], np.float32)
    np.testing.assert_allclose(nn.Norm(axis=0)(Tensor(x)).asnumpy(), np.sqrt((x**2).sum(0)), rtol=1e-6)
    assert nn.Norm(axis=0, keep_dims=True)(Tensor(x)).shape == (1, 4)
    np.testing.assert_allclose(nn.Norm(axis=1)(Tensor(x)).asnumpy(), [10.677078, 7.071068], rtol=1e-6)
    np.testing.assert_allclose(nn.Norm()(Tensor(x)).asnumpy(), np.sqrt((x**2).sum()), rtol=1e-6)
    with pytest.raises(TypeError, match="keep_dims"):
        nn.Norm(keep_dims=1)


def test_roc_and_auc():
    metric = nn.ROC(pos_label=2)
    metric.clear()
    metric.update(Tensor(np.array([3, 1, 4, 2])), Tensor(np.array([0, 1, 2, 3])))
    fpr, tpr, thresholds = metric.eval()
    np.testing.assert_allclose(fpr, [0.0, 0.0, 1 / 3, 2 / 3, 1.0])
    np.testing.assert_allclose(tpr, [0.0, 1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(thresholds, [5, 4, 3, 2, 1])
    scores = np.array(
        [[0.28, 0.55, 0.15, 0.05], [0.10, 0.20, 0.05, 0.05], [0.20, 0.05, 0.15, 0.05], [0.05] * 3 + [0.75]]
    )
    metric = nn.ROC(class_num=4)
    metric.update(Tensor(scores), Tensor(np.array([0, 1, 2, 3])))
    fpr, tpr, thresholds = metric.eval()
    np.testing.assert_allclose(fpr[1], [0.0, 1 / 3, 1 / 3, 1.0])
    np.testing.assert_allclose(tpr[1], [0.0, 0.0, 1.0, 1.0])
    np.testing.assert_allclose(thresholds[0], [1.28, 0.28, 0.2, 0.1, 0.05])
    metric = nn.ROC(pos_label=2)
    metric.update(np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]]), np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]]))
    fpr, tpr, _ = metric.eval()
    np.testing.assert_allclose(nn.auc(fpr, tpr), 0.5357142857142857)
    np.testing.assert_allclose(nn.auc(np.array([1.0, 0.5, 0.0]), np.array([1.0, 1.0, 0.0])), 0.75)
    np.testing.assert_allclose(nn.auc(np.array([0.5, 0.0, 1.0]), np.array([1.0, 0.0, 1.0]), reorder=True), 0.75)
    with pytest.raises(ValueError, match="increasing or decreasing"):
        nn.auc(np.array([0.5, 0.0, 1.0]), np.array([1.0, 0.0, 1.0]))
    with pytest.raises(TypeError, match="np.ndarray"):
        nn.auc([0.0, 1.0], np.array([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="update"):
        nn.ROC().eval()
    with pytest.raises(ValueError, match="class_num"):
        nn.ROC(class_num=3).update(Tensor(scores), Tensor(np.array([0, 1, 2, 3])))
    with pytest.raises(ValueError, match="no negative"):
        m = nn.ROC()
        m.update(np.array([0.2, 0.9]), np.array([1, 1]))
        m.eval()


# -- mindspore.numpy ---------------------------------------------------------------------------------------------


def test_numpy_functions():
    import opforge.numpy as mnp

    ms.set_seed(3)
    first = mnp.rand(2, 3)
    assert (
        first.shape == (2, 3) and first.dtype == mstype.float32 and mnp.rand((4,), dtype=mstype.float16).shape == (4,)
    )
    values = first.asnumpy()
    assert np.all((values >= 0) & (values < 1))
    with pytest.raises(ValueError, match="float"):
        mnp.rand(2, dtype=mstype.int32)
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([[[0, 3, -1]], [[1, 2, 0]]])
    np.testing.assert_array_equal(
        mnp.take_along_axis(Tensor(a), Tensor(idx), 2).asnumpy(), np.take_along_axis(a, idx % 4, 2)
    )
    np.testing.assert_array_equal(
        mnp.take_along_axis(Tensor(a), Tensor(np.array([5, 0, 23])), None).asnumpy(), [5.0, 0.0, 23.0]
    )
    idx2 = np.array([[[2], [0], [1]]])
    got = mnp.take_along_axis(Tensor(a), Tensor(idx2), 2).asnumpy()
    np.testing.assert_array_equal(got, np.take_along_axis(a, idx2, 2))
    with pytest.raises(ValueError, match="same number of dimensions"):
        mnp.take_along_axis(Tensor(a), Tensor(np.zeros((2, 3), np.int32)), 2)
    for order in ("C", "F"):
        got = mnp.unravel_index(Tensor(np.array([22, 41, 37])), (7, 6), order)
        for g, w in zip(got, np.unravel_index([22, 41, 37], (7, 6), order=order)):
            np.testing.assert_array_equal(g.asnumpy(), w)
    corners = mnp.unravel_index(Tensor(np.arange(8)), (2, 2, 2))  # the zoo's PointPillars
    np.testing.assert_array_equal(
        np.stack([c.asnumpy() for c in corners]), np.stack(np.unravel_index(range(8), (2,) * 3))
    )
    x = np.arange(8.0, dtype=np.float32)
    for sections in (3, [3, 5, 10]):
        got = mnp.array_split(Tensor(x), sections)
        want = np.array_split(x, sections)
        assert [g.shape for g in got] == [w.shape for w in want]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w)
    # split: NumPy's (MindSpore's mnp.split): an int is the number of equal pieces, a list the split points
    x = np.arange(256.0, dtype=np.float32)
    for sections in (64, [2, 3], [-100, 200]):  # (MindSpore's per_sample_gradient sample: 64 micro-batches)
        got, want = mnp.split(Tensor(x), sections), np.split(x, sections)
        assert isinstance(got, tuple if isinstance(sections, int) else list) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w)
    for bad in (3, 0, [3, 3], [300]):  # unequal pieces, none, an empty one: MindSpore's ValueError
        with pytest.raises(ValueError, match="'split'"):
            mnp.split(Tensor(x), bad)
    cube = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    for name, sections in (("vsplit", 2), ("hsplit", [1]), ("dsplit", 2)):
        got, want = getattr(mnp, name)(Tensor(cube), sections), getattr(np, name)(cube, sections)
        assert [g.asnumpy().tolist() for g in got] == [w.tolist() for w in want]
    boxes = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    h, w = mnp.array_split(Tensor(boxes), 2, axis=1)  # the zoo's CFDT
    np.testing.assert_array_equal(h.asnumpy(), boxes[:, :1])
    got = mnp.column_stack((Tensor(np.array([1, 2, 3])), Tensor(np.array([[2, 3], [3, 4], [4, 5]]))))
    np.testing.assert_array_equal(got.asnumpy(), np.column_stack(([1, 2, 3], [[2, 3], [3, 4], [4, 5]])))
    with pytest.raises(TypeError, match="column_stack"):
        mnp.column_stack(Tensor(np.ones(3)))
    got = mnp.floor_divide(Tensor(np.array([7.0, -7.0, 5.5], np.float32)), 2)
    np.testing.assert_array_equal(got.asnumpy(), np.floor_divide([7.0, -7.0, 5.5], 2))
    np.testing.assert_array_equal(
        mnp.floor_divide(Tensor(np.array([7, -7])), Tensor(np.array([2, 2]))).asnumpy(), [3, -4]
    )
    param = Parameter(Tensor(a), name="a")
    assert mnp.take_along_axis(param, Tensor(idx2), 2).shape == (2, 3, 1)  # indices broadcast as NumPy
