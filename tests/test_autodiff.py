"""The autodiff engine: GradOperation, grad / value_and_grad, the tape and bprop errors.

The per-operator gradients are checked against finite differences in ``test_grad_sweep.py``;
this file checks the machinery around them.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import opforge
from opforge import GradOperation, Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.bprop import bprop_getters, get_bprop
from opforge.bprop.tape import Tape
from opforge.dispatch.interpreter import current_interpreter
from opforge.kernels import KernelAttr, register_kernel, registry, select_kernel
from opforge.primitives import PrimitiveWithInfer, prim_attr_register, validator

mul = ops.Mul()
add = ops.Add()
reduce_sum = ops.ReduceSum()
tanh = ops.Tanh()
matmul = ops.MatMul()


def t(values, dtype=np.float64) -> Tensor:
    return Tensor(np.asarray(values, dtype))


def npv(x) -> np.ndarray:
    return x.asnumpy()


def close(actual, expected, rtol=1e-12, atol=1e-12) -> None:
    np.testing.assert_allclose(npv(actual), np.asarray(expected, np.float64), rtol=rtol, atol=atol)


@pytest.fixture
def xy(rng):
    return t(rng.uniform(-2, 2, (3, 4))), t(rng.uniform(-2, 2, (3, 4)))


def f_xy(x, y):
    return reduce_sum(mul(x, y))


# ---------------------------------------------------------------------------------------------
# GradOperation: the four return conventions and sens_param


def test_grad_operation_default_gives_the_first_input_gradient(xy):
    x, y = xy
    dx = GradOperation()(f_xy)(x, y)
    assert isinstance(dx, Tensor) and dx.shape == x.shape and dx.dtype is x.dtype
    close(dx, npv(y))


def test_grad_operation_get_all_gives_every_input_gradient(xy):
    x, y = xy
    dx, dy = GradOperation(get_all=True)(f_xy)(x, y)
    close(dx, npv(y))
    close(dy, npv(x))


def test_grad_operation_get_by_list_gives_the_weight_gradients(rng):
    w = Parameter(rng.standard_normal((4, 2)), name="w")
    b = Parameter(rng.standard_normal((2,)), name="b")
    x = t(rng.standard_normal((3, 4)))

    def net(x):
        return reduce_sum(ops.BiasAdd()(matmul(x, w), b))

    dw, db = GradOperation(get_by_list=True)(net, [w, b])(x)
    close(dw, npv(x).sum(0)[:, None] * np.ones((1, 2)))
    close(db, np.full(2, 3.0))
    (dw_only,) = GradOperation(get_by_list=True)(net, (w,))(x)  # a tuple of Parameters works too
    close(dw_only, npv(dw))
    single = GradOperation(get_by_list=True)(net, w)(x)  # one Parameter: still a tuple
    assert isinstance(single, tuple) and len(single) == 1


def test_grad_operation_get_all_and_get_by_list(rng):
    w = Parameter(rng.standard_normal((3, 4)), name="w")
    x, y = t(rng.standard_normal((3, 4))), t(rng.standard_normal((3, 4)))

    def net(x, y):
        return reduce_sum(mul(mul(x, y), w))

    (dx, dy), (dw,) = GradOperation(get_all=True, get_by_list=True)(net, [w])(x, y)
    close(dx, npv(y) * npv(w))
    close(dy, npv(x) * npv(w))
    close(dw, npv(x) * npv(y))


def test_grad_operation_sens_param(xy, rng):
    x, y = xy
    sens = t(rng.standard_normal((3, 4)))
    dx = GradOperation(sens_param=True)(lambda a, b: mul(a, b))(x, y, sens)
    close(dx, npv(sens) * npv(y))
    dx, dy = GradOperation(get_all=True, sens_param=True)(lambda a, b: mul(a, b))(x, y, sens)
    close(dy, npv(sens) * npv(x))


def test_sens_param_for_several_outputs(xy, rng):
    x, y = xy
    s1, s2 = t(rng.standard_normal((3, 4))), t(rng.standard_normal((3, 4)))
    dx = GradOperation(sens_param=True)(lambda a, b: (mul(a, b), tanh(a)))(x, y, (s1, s2))
    close(dx, npv(s1) * npv(y) + npv(s2) * (1 - np.tanh(npv(x)) ** 2))
    # Without sens, every output gets ones.
    dx = GradOperation()(lambda a, b: (mul(a, b), tanh(a)))(x, y)
    close(dx, npv(y) + (1 - np.tanh(npv(x)) ** 2))


def test_sens_must_match_the_outputs(xy):
    x, y = xy
    grad_fn = GradOperation(sens_param=True)(lambda a, b: mul(a, b))
    with pytest.raises(ValueError, match=r"GradOperation.*sens of output 0 must match it \(Float64\[3, 4\]\)"):
        grad_fn(x, y, t(np.ones(4)))
    with pytest.raises(ValueError, match=r"sens of output 0 must match.*Float32\[3, 4\]"):
        grad_fn(x, y, Tensor(np.ones((3, 4), np.float32)))
    with pytest.raises(ValueError, match="one Tensor per output"):
        grad_fn(x, y, (t(np.ones((3, 4))), t(np.ones((3, 4)))))
    with pytest.raises(TypeError, match="sens must be Tensors"):
        grad_fn(x, y, 1.0)
    with pytest.raises(TypeError, match="sens_param=True needs the sens"):
        grad_fn()


def test_grad_operation_argument_errors(xy):
    x, y = xy
    with pytest.raises(TypeError, match=r"'get_all' must be bool, but got int"):
        GradOperation(get_all=1)
    with pytest.raises(ValueError, match="get_by_list=True needs the weights"):
        GradOperation(get_by_list=True)(f_xy)
    with pytest.raises(TypeError, match="weights must be Parameters, but got float"):
        GradOperation(get_by_list=True)(f_xy, [1.0])
    with pytest.raises(TypeError, match="must return Tensors, but got float"):
        GradOperation()(lambda a: 1.0)(x)
    with pytest.raises(TypeError, match="at least one input"):
        GradOperation()(lambda: x)()


# ---------------------------------------------------------------------------------------------
# grad and value_and_grad


def f3(x, y, z):
    return reduce_sum(mul(mul(x, y), z))


@pytest.fixture
def xyz(rng):
    return tuple(t(rng.uniform(-2, 2, (2, 3))) for _ in range(3))


def test_grad_position_int_tuple_and_negative(xyz):
    x, y, z = xyz
    close(opforge.grad(f3)(x, y, z), npv(y) * npv(z))  # default: position 0
    close(opforge.grad(f3, 1)(x, y, z), npv(x) * npv(z))
    dy, dz = opforge.grad(f3, (1, 2))(x, y, z)
    close(dy, npv(x) * npv(z))
    close(dz, npv(x) * npv(y))
    (dz,) = opforge.grad(f3, (-1,))(x, y, z)
    close(dz, npv(x) * npv(y))


def test_grad_position_none_with_weights(xyz, rng):
    x, y, z = xyz
    w = Parameter(rng.standard_normal((2, 3)), name="w")

    def net(x):
        return reduce_sum(mul(x, w))

    (dw,) = opforge.grad(net, None, [w])(x)
    close(dw, npv(x))
    dx, (dw,) = opforge.grad(net, 0, [w])(x)
    close(dx, npv(w))
    close(dw, npv(x))
    (dx,), (dw,) = opforge.grad(net, (0,), w)(x)
    close(dx, npv(w))


def test_grad_has_aux(xyz):
    x, y, z = xyz

    def fn(x, y):
        return reduce_sum(mul(x, y)), add(x, y)

    dx, aux = opforge.grad(fn, has_aux=True)(x, y)
    close(dx, npv(y))
    close(aux, npv(x) + npv(y))

    def fn3(x, y):
        return reduce_sum(mul(x, y)), x, y

    (dx, dy), aux = opforge.grad(fn3, (0, 1), has_aux=True)(x, y)
    close(dy, npv(x))
    assert isinstance(aux, tuple) and len(aux) == 2
    with pytest.raises(TypeError, match=r"For 'grad', has_aux=True needs the function to return a tuple"):
        opforge.grad(lambda a: reduce_sum(a), has_aux=True)(x)


def test_value_and_grad(xyz, rng):
    x, y, z = xyz
    value, dx = opforge.value_and_grad(f3)(x, y, z)
    close(value, np.sum(npv(x) * npv(y) * npv(z)))
    close(dx, npv(y) * npv(z))
    w = Parameter(rng.standard_normal((2, 3)), name="w")
    value, (dw,) = opforge.value_and_grad(lambda a: reduce_sum(mul(a, w)), None, [w])(x)
    close(dw, npv(x))
    value, (dx, dy) = opforge.value_and_grad(lambda a, b: (reduce_sum(mul(a, b)), b), (0, 1), has_aux=True)(x, y)
    assert isinstance(value, tuple) and len(value) == 2
    close(value[1], npv(y))
    close(dy, npv(x))


def test_grad_argument_errors(xyz):
    x, y, z = xyz
    with pytest.raises(ValueError, match="'grad_position' and 'weights' cannot both be None"):
        opforge.grad(f3, None)
    with pytest.raises(ValueError, match=r"For 'value_and_grad', the 'grad_position' 3 is out of range for 3 inputs"):
        opforge.value_and_grad(f3, 3)(x, y, z)
    with pytest.raises(TypeError, match=r"For 'grad', the 'grad_position' must be an int, a tuple of ints or None"):
        opforge.grad(f3, [0, 1])
    with pytest.raises(TypeError, match="'grad_position' must be"):
        opforge.grad(f3, True)
    with pytest.raises(TypeError, match="'has_aux' must be bool"):
        opforge.grad(f3, 0, has_aux=1)
    with pytest.raises(TypeError, match="'fn' must be callable"):
        opforge.grad(3)


def test_non_tensor_argument_gets_none(xy):
    x, _ = xy
    dx, dscale = GradOperation(get_all=True)(lambda a, s: reduce_sum(mul(a, s)))(x, 3.0)
    close(dx, np.full((3, 4), 3.0))
    assert dscale is None


# ---------------------------------------------------------------------------------------------
# Tape semantics


def test_stop_gradient(xy):
    x, y = xy
    close(opforge.grad(lambda a: reduce_sum(mul(a, opforge.stop_gradient(a))))(x), npv(x))
    a, b = opforge.stop_gradient((x, y))
    assert np.array_equal(npv(a), npv(x)) and np.array_equal(npv(b), npv(y))
    close(opforge.grad(lambda a: reduce_sum(opforge.stop_gradient(tanh(a))))(x), np.zeros((3, 4)))
    with pytest.raises(TypeError, match="For 'stop_gradient', the input must be a Tensor"):
        opforge.stop_gradient(1.0)


def test_gradients_accumulate_when_a_tensor_is_used_twice(xy):
    x, _ = xy

    def f(a):
        h = tanh(a)
        return reduce_sum(add(mul(h, h), mul(a, 3.0)))  # h used twice, a used twice (through h and directly)

    th = np.tanh(npv(x))
    close(opforge.grad(f)(x), 2 * th * (1 - th**2) + 3.0, rtol=1e-12)
    close(opforge.grad(lambda a: reduce_sum(mul(a, a)))(x), 2 * npv(x))


def test_the_same_tensor_in_two_positions_gets_each_partial_derivative(xy):
    x, _ = xy
    dx1, dx2 = opforge.grad(lambda a, b: reduce_sum(mul(mul(a, a), b)), (0, 1))(x, x)
    close(dx1, 2 * npv(x) ** 2)
    close(dx2, npv(x) ** 2)


def test_nested_gradients_do_not_confuse_closed_over_tensors(xy):
    x, _ = xy

    def outer(a):
        inner = opforge.grad(lambda b: reduce_sum(mul(a, b)))(a)  # d/db (a * b) = a, not 2a
        return reduce_sum(mul(a, inner))

    close(opforge.grad(outer)(x), 2 * npv(x))


def test_integer_inputs_get_zero_gradients(rng):
    x = t(rng.standard_normal((2, 3)))
    i = Tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    dx, di = GradOperation(get_all=True)(lambda a, b: reduce_sum(mul(a, b)))(x, i)
    close(dx, npv(i))
    assert di.dtype is mstype.int32 and di.shape == (2, 3) and not np.any(npv(di))
    di = opforge.grad(lambda b: reduce_sum(ops.Cast()(b, mstype.float64)))(i)
    assert di.dtype is mstype.int32 and not np.any(npv(di))
    # A cast to an integer dtype stops the gradient.
    dx = opforge.grad(lambda a: reduce_sum(ops.Cast()(ops.Cast()(a, mstype.int32), mstype.float64)))(x)
    assert dx.dtype is mstype.float64 and not np.any(npv(dx))


def test_an_unused_input_gets_zeros(xy):
    x, y = xy
    dx, dy = GradOperation(get_all=True)(lambda a, b: reduce_sum(tanh(a)))(x, y)
    assert dy.shape == y.shape and dy.dtype is y.dtype and not np.any(npv(dy))


def test_python_scalars_and_mixed_dtypes(rng):
    x32 = Tensor(rng.standard_normal((2, 3)).astype(np.float32))
    y64 = t(rng.standard_normal((3,)))
    # x * 2.0 and 1.0 - x: the scalars are weak (no gradient); the tensor's gradient keeps its dtype.
    close(opforge.grad(lambda a: reduce_sum(mul(a, 2.0)))(y64), np.full(3, 2.0))
    close(opforge.grad(lambda a: reduce_sum(ops.Sub()(1.0, a)))(y64), np.full(3, -1.0))
    close(opforge.grad(lambda a: reduce_sum(ops.RealDiv()(1.0, a)))(y64), -1.0 / npv(y64) ** 2, rtol=1e-12)
    # float32 [2, 3] * float64 [3] promotes to float64; each gradient comes back in its input's dtype and shape.
    dx, dy = opforge.grad(lambda a, b: reduce_sum(mul(a, b)), (0, 1))(x32, y64)
    assert dx.dtype is mstype.float32 and dx.shape == (2, 3)
    assert dy.dtype is mstype.float64 and dy.shape == (3,)
    close(dy, npv(x32).astype(np.float64).sum(0), rtol=1e-6)
    dx, dw = opforge.grad(lambda a, b: reduce_sum(matmul(a, b)), (0, 1))(x32, t(rng.standard_normal((3, 2))))
    assert dx.dtype is mstype.float32 and dw.dtype is mstype.float64


def test_grad_of_grad(rng):
    x = t(rng.uniform(-1, 1, (5,)))
    d1 = opforge.grad(lambda a: reduce_sum(tanh(a)))
    d2 = opforge.grad(lambda a: reduce_sum(d1(a)))
    d3 = opforge.grad(lambda a: reduce_sum(d2(a)))
    th = np.tanh(npv(x))
    close(d2(x), -2 * th * (1 - th**2), rtol=1e-10)
    close(d3(x), (1 - th**2) * (6 * th**2 - 2), rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# Recording only when asked, releasing after


def test_nothing_is_recorded_without_a_gradient(monkeypatch, xy):
    recorded = []  # the records of each tape, seen as it is released
    original = Tape.release
    monkeypatch.setattr(Tape, "release", lambda self: recorded.append(len(self.records)) or original(self))
    x, y = xy
    reduce_sum(tanh(mul(x, y)))
    assert current_interpreter() is None
    assert recorded == []
    opforge.grad(f_xy)(x, y)
    assert recorded == [2]  # Mul and ReduceSum recorded while the gradient was taken ...
    assert current_interpreter() is None  # ... and no interpreter is left installed afterwards


def test_a_tape_records_only_calls_that_reach_its_tensors(xy):
    x, y = xy
    with Tape() as tape:
        tape.watch(x)
        tanh(y)  # y is not tracked
        h = tanh(x)
        mul(h, y)
    assert [record[0].name for record in tape.records] == ["Tanh", "Mul"]
    assert current_interpreter() is None


def test_the_tape_is_released_after_backward(xy):
    x, _ = xy
    seen = []

    def f(a):
        h = tanh(a)
        seen.append(weakref.ref(h))
        return reduce_sum(mul(h, h))

    opforge.grad(f)(x)
    gc.collect()
    assert seen[0]() is None, "an intermediate tensor outlived the gradient call"


def test_the_tape_is_released_when_the_function_raises(xy):
    x, _ = xy
    seen = []

    def f(a):
        h = tanh(a)
        seen.append(weakref.ref(h))
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        opforge.grad(f)(x)
    gc.collect()
    assert seen[0]() is None and current_interpreter() is None


def test_backward_drops_intermediate_gradients_it_is_not_asked_to_keep(xy):
    from opforge.bprop.tape import backward

    x, _ = xy
    with Tape() as tape:
        tape.watch(x)
        h = tanh(x)
        out = reduce_sum(mul(h, h))
    ones = Tensor(np.ones((), np.float64))
    everything = backward(tape, (out,), (ones,))
    assert id(h) in everything and id(x) in everything
    kept = backward(tape, (out,), (ones,), keep={id(x)})
    assert set(kept) == {id(x)}
    close(kept[id(x)], npv(everything[id(x)]))


def _live_tensors() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Tensor))


def test_no_memory_growth_over_1000_steps(rng):
    w = Parameter(rng.standard_normal((8, 8)) * 0.3, name="w")
    b = Parameter(np.zeros(8), name="b")
    x = t(rng.standard_normal((4, 8)))
    bias_add, relu = ops.BiasAdd(), ops.ReLU()

    def loss(x):
        h = relu(bias_add(matmul(x, w), b))
        return reduce_sum(mul(h, tanh(h)))

    step = opforge.value_and_grad(loss, None, [w, b])
    for _ in range(20):  # warm the plan caches
        step(x)
    live_before = _live_tensors()
    tracemalloc.start()
    try:
        for _ in range(20):
            step(x)
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(1000):
            step(x)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 1,000 gradient steps"
    assert _live_tensors() <= live_before + 4


# ---------------------------------------------------------------------------------------------
# User-defined primitives and bprop errors


class AutodiffCube(PrimitiveWithInfer):
    """y = x ** 3 (a Python kernel), for the bprop tests. dtypes: float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x):
        return x

    def infer_dtype(self, x):
        return validator.check_tensor_dtype_valid("x", x, [mstype.float32, mstype.float64], self.name)


class AutodiffNoBprop(AutodiffCube):
    """The same kernel, under an operator name with no bprop."""


@pytest.fixture
def cube():
    """AutodiffCube and AutodiffNoBprop with Python kernels; the registrations are removed afterwards."""
    attrs = [KernelAttr().add_input_attr(d).add_output_attr(d) for d in (mstype.float32, mstype.float64)]
    for name in ("AutodiffCube", "AutodiffNoBprop"):
        register_kernel(name, "CPU", attrs)(lambda x: x * x * x)

    @bprop_getters.register(AutodiffCube)
    def get_bprop_cube(self):
        def bprop(x, out, dout):
            return (mul(mul(dout, 3.0), mul(x, x)),)  # primitives: differentiable again

        return bprop

    yield AutodiffCube
    for name in ("AutodiffCube", "AutodiffNoBprop"):
        registry._table.pop((name, "CPU"), None)
        if name in bprop_getters:
            bprop_getters.unregister(name)
    select_kernel.cache_clear()


def test_gradient_through_a_user_primitive_with_a_python_kernel(cube, rng):
    x = t(rng.uniform(-2, 2, (4,)))
    close(cube()(x), npv(x) ** 3)
    close(opforge.grad(lambda a: reduce_sum(cube()(a)))(x), 3 * npv(x) ** 2)
    d2 = opforge.grad(lambda a: reduce_sum(opforge.grad(lambda b: reduce_sum(cube()(b)))(a)))(x)
    close(d2, 6 * npv(x))
    x32 = Tensor(npv(x).astype(np.float32))
    g32 = opforge.grad(lambda a: reduce_sum(cube()(a)))(x32)
    assert g32.dtype is mstype.float32


def _with_bprop(bprop):
    """Register ``bprop`` as AutodiffCube's and return the scalar loss of one call."""
    bprop_getters.register(AutodiffCube)(lambda self: bprop)
    return lambda a: reduce_sum(AutodiffCube()(a))


def test_operator_without_a_bprop_is_a_type_error_naming_it(cube):
    x = t([1.0, 2.0])
    with pytest.raises(TypeError, match=r"For 'AutodiffNoBprop', no bprop is registered") as info:
        opforge.grad(lambda a: reduce_sum(AutodiffNoBprop()(a)))(x)
    assert not isinstance(info.value, KeyError)
    with pytest.raises(TypeError, match=r"For 'AutodiffNoBprop', no bprop is registered"):
        get_bprop(AutodiffNoBprop())
    # In-place operators have none either: differentiating through one names it.
    p = Parameter(np.ones(2), name="p")
    with pytest.raises(TypeError, match=r"For 'Assign', no bprop is registered"):
        opforge.grad(lambda a: reduce_sum(mul(ops.Assign()(p, a), 2.0)), None, [p])(x)


def test_bprop_returning_the_wrong_number_of_gradients(cube):
    f = _with_bprop(lambda x, out, dout: (dout, dout))
    with pytest.raises(ValueError, match=r"For 'AutodiffCube', the bprop must return one gradient per input \(1\)"):
        opforge.grad(f)(t([1.0, 2.0]))


def test_bprop_returning_a_bare_tensor(cube):
    f = _with_bprop(lambda x, out, dout: dout)
    with pytest.raises(TypeError, match=r"For 'AutodiffCube', the bprop must return a tuple of gradients"):
        opforge.grad(f)(t([1.0, 2.0]))


def test_bprop_returning_a_gradient_of_the_wrong_shape(cube):
    f = _with_bprop(lambda x, out, dout: (reduce_sum(dout),))
    with pytest.raises(
        ValueError, match=r"For 'AutodiffCube', the gradient of input 0 must have the input's shape \(Float64\[2\]\)"
    ):
        opforge.grad(f)(t([1.0, 2.0]))


def test_bprop_returning_a_gradient_of_the_wrong_dtype(cube):
    f = _with_bprop(lambda x, out, dout: (ops.Cast()(dout, mstype.float32),))
    with pytest.raises(
        TypeError, match=r"For 'AutodiffCube', the gradient of input 0 must have the input's dtype.*got Float32\[2\]"
    ):
        opforge.grad(f)(t([1.0, 2.0]))


def test_bprop_returning_none_for_a_tensor_input(cube):
    f = _with_bprop(lambda x, out, dout: (None,))
    with pytest.raises(
        TypeError, match=r"For 'AutodiffCube', the gradient of input 0 .* must be a Tensor, but got NoneType"
    ):
        opforge.grad(f)(t([1.0, 2.0]))


def test_an_error_inside_a_bprop_names_the_operator(cube):
    def bprop(x, out, dout):
        raise ArithmeticError("bad bprop")

    f = _with_bprop(bprop)
    with pytest.raises(ArithmeticError, match="bad bprop") as info:
        opforge.grad(f)(t([1.0, 2.0]))
    if hasattr(info.value, "__notes__"):
        assert "(raised by the bprop of 'AutodiffCube')" in info.value.__notes__


def test_bprop_getter_must_return_a_function(cube):
    bprop_getters.register(AutodiffCube)(lambda self: None)
    with pytest.raises(TypeError, match=r"For 'AutodiffCube', the bprop getter must return a function"):
        opforge.grad(lambda a: reduce_sum(AutodiffCube()(a)))(t([1.0]))


def test_per_instance_get_bprop_override(cube):
    x = t([1.0, 2.0])
    prim = AutodiffCube()
    prim.get_bprop = lambda: lambda x, out, dout: (mul(dout, 10.0),)  # this instance only
    close(opforge.grad(lambda a: reduce_sum(prim(a)))(x), [10.0, 10.0])
    close(opforge.grad(lambda a: reduce_sum(AutodiffCube()(a)))(x), 3 * npv(x) ** 2)  # others: the registry's


def test_class_get_bprop_overrides_the_registry(cube):
    class AutodiffCubeOwn(AutodiffCube):
        def get_bprop(self):
            def bprop(x, out, dout):
                return (mul(dout, 7.0),)

            return bprop

    register_kernel(
        "AutodiffCubeOwn", "CPU", KernelAttr().add_input_attr(mstype.float64).add_output_attr(mstype.float64)
    )(lambda x: x * x * x)
    try:
        close(opforge.grad(lambda a: reduce_sum(AutodiffCubeOwn()(a)))(t([1.0, 2.0])), [7.0, 7.0])
    finally:
        registry._table.pop(("AutodiffCubeOwn", "CPU"), None)
        select_kernel.cache_clear()


def test_bprop_cache_follows_attrs_and_getters(cube):
    prim = ops.Elu(alpha=1.0)
    first = get_bprop(prim)
    assert get_bprop(prim) is first  # built once per primitive
    prim.add_prim_attr("alpha", 0.5)
    assert get_bprop(prim) is not first  # rebuilt when an attr changes
    x = t([-1.0, 2.0])
    grad_elu = opforge.grad(lambda a: reduce_sum(prim(a)))(x)
    close(grad_elu, [0.5 * np.exp(-1.0), 1.0], rtol=1e-12)
    cube_prim = AutodiffCube()
    before = get_bprop(cube_prim)
    bprop_getters.register(AutodiffCube)(lambda self: lambda x, out, dout: (dout,))
    assert get_bprop(cube_prim) is not before  # a new getter replaces the cached bprop


def test_registry_keys_and_unregister():
    with pytest.raises(TypeError, match="a registry key must be a Primitive class or an operator name"):
        bprop_getters.register(3)
    with pytest.raises(KeyError, match="no bprop getter is registered for 'NotAnOp'"):
        bprop_getters.unregister("NotAnOp")
    with pytest.raises(TypeError, match="must be callable"):
        bprop_getters.register("NotAnOp")(3)
    assert "Tanh" in bprop_getters and ops.Tanh in bprop_getters


# ---------------------------------------------------------------------------------------------
# Operators at kinks, and non-differentiable operators inside differentiated code


def test_reduce_max_splits_the_gradient_between_ties():
    x = t([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])
    close(opforge.grad(lambda a: reduce_sum(ops.ReduceMax()(a, 1)))(x), [[0, 0.5, 0.5], [1, 0, 0]])
    close(opforge.grad(lambda a: ops.ReduceMax()(a))(x), [[0, 0.5, 0.5], [0, 0, 0]])


def test_maximum_and_minimum_send_ties_to_x():
    x, y = t([1.0, 2.0, 3.0]), t([1.0, 5.0, 0.0])
    dx, dy = opforge.grad(lambda a, b: reduce_sum(ops.Maximum()(a, b)), (0, 1))(x, y)
    close(dx, [1, 0, 1])
    close(dy, [0, 1, 0])
    dx, dy = opforge.grad(lambda a, b: reduce_sum(ops.Minimum()(a, b)), (0, 1))(x, y)
    close(dx, [1, 1, 0])
    close(dy, [0, 0, 1])
    # ReLU as Maximum(x, 0.0): a weak scalar operand gets no gradient.
    close(opforge.grad(lambda a: reduce_sum(ops.Maximum()(a, 0.0)))(t([-1.0, 2.0])), [0, 1])


def test_non_differentiable_operators_inside_a_differentiated_loss(rng):
    logits = t(rng.standard_normal((4, 3)))
    labels = Tensor(np.array([0, 2, 1, 2], np.int32))

    def loss(z):
        onehot = ops.OneHot()(labels, 3, t(1.0), t(0.0))
        pred = ops.Argmax()(z)  # int32: no gradient flows through it
        hits = ops.Cast()(ops.Equal()(pred, labels), mstype.float64)
        zero = ops.ZerosLike()(z)
        one = ops.Fill()(mstype.float64, (4, 3), 1.0)
        ce = reduce_sum(mul(onehot, ops.LogSoftmax()(z)))
        return add(add(ops.Neg()(ce), reduce_sum(hits)), reduce_sum(mul(add(zero, one), 0.0)))

    z = npv(logits)
    softmax = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    close(opforge.grad(loss)(logits), softmax - np.eye(3)[npv(labels)], rtol=1e-12, atol=1e-14)


def test_sparse_softmax_cross_entropy_gradient_is_the_is_grad_op(rng):
    logits = t(rng.standard_normal((5, 4)))
    labels = Tensor(rng.integers(0, 4, 5).astype(np.int32))
    dlogits = opforge.grad(lambda z: ops.SparseSoftmaxCrossEntropyWithLogits()(z, labels))(logits)
    expected = ops.SparseSoftmaxCrossEntropyWithLogits(is_grad=True)(logits, labels)
    close(dlogits, npv(expected), rtol=1e-14, atol=1e-16)
    (dl, dlab) = GradOperation(get_all=True)(lambda z, y: ops.SparseSoftmaxCrossEntropyWithLogits()(z, y))(
        logits, labels
    )
    assert dlab.dtype is mstype.int32 and not np.any(npv(dlab))


def test_softmax_cross_entropy_gradient_of_both_outputs(rng):
    logits, labels = t(rng.standard_normal((3, 4))), t(rng.dirichlet(np.ones(4), 3))
    sce = ops.SoftmaxCrossEntropyWithLogits()
    loss, backprop = sce(logits, labels)
    dlogits = opforge.grad(lambda z: reduce_sum(sce(z, labels)[0]))(logits)
    close(dlogits, npv(backprop), rtol=1e-12, atol=1e-14)  # the loss gradient is the backprop output


# ---------------------------------------------------------------------------------------------
# Only the gradients somebody uses are computed (needs_input_grad)


def _kernel_calls(fn) -> dict:
    """{operator: calls} of the kernels ``fn()`` runs."""
    from opforge import profiler

    with profiler.profile() as p:
        fn()
    calls: dict = {}
    for s in p.stats():
        calls[s.op] = calls.get(s.op, 0) + s.calls
    return calls


def test_matmul_skips_the_product_of_an_input_nobody_differentiates(rng):
    w = Parameter(rng.standard_normal((4, 3)), name="w")
    x = t(rng.standard_normal((5, 4)))
    loss = lambda a: reduce_sum(matmul(a, w))  # noqa: E731
    # Weights only: the data's gradient (a second product) is not computed.
    assert _kernel_calls(lambda: opforge.grad(loss, None, [w])(x))["MatMul"] == 2
    (dw,) = opforge.grad(loss, None, [w])(x)
    close(dw, npv(x).sum(0)[:, None] * np.ones((1, 3)))
    # Both: one forward product and two backward ones.
    assert _kernel_calls(lambda: opforge.grad(loss, 0, [w])(x))["MatMul"] == 3
    dx, (dw2,) = opforge.grad(loss, 0, [w])(x)
    close(dx, np.ones((5, 3)) @ npv(w).T)
    close(dw2, npv(dw))


def test_integer_labels_get_no_zeros_in_the_backward_pass(rng):
    logits = t(rng.standard_normal((6, 4)))
    labels = Tensor(rng.integers(0, 4, 6).astype(np.int32))
    sce = ops.SparseSoftmaxCrossEntropyWithLogits()
    calls = _kernel_calls(lambda: opforge.grad(lambda z: sce(z, labels))(logits))
    assert "ZerosLike" not in calls
    # Asked for explicitly, the labels still get zeros of their dtype.
    _, dlabels = GradOperation(get_all=True)(lambda z, y: sce(z, y))(logits, labels)
    assert dlabels.dtype is mstype.int32 and not np.any(npv(dlabels))


def test_needs_input_grad_tells_a_bprop_which_inputs_are_differentiated(cube):
    from opforge.bprop import needs_input_grad

    seen = []

    class AutodiffTwo(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            self.init_prim_io_names(inputs=["x", "y"], outputs=["z"])

    register_kernel(
        "AutodiffTwo",
        "CPU",
        KernelAttr().add_input_attr(mstype.float64).add_input_attr(mstype.float64).add_output_attr(mstype.float64),
    )(lambda x, y: x * y)

    @bprop_getters.register(AutodiffTwo)
    def get_bprop_two(self):
        def bprop(x, y, out, dout):
            needs = (needs_input_grad(0), needs_input_grad(1))
            seen.append(needs)
            # Gradients nobody uses may be None.
            return (mul(dout, y) if needs[0] else None), (mul(dout, x) if needs[1] else None)

        return bprop

    try:
        x, y = t([1.0, 2.0]), t([3.0, 4.0])
        two = AutodiffTwo()
        close(opforge.grad(lambda a: reduce_sum(two(a, y)))(x), [3.0, 4.0])
        close(opforge.grad(lambda b: reduce_sum(two(x, b)))(y), [1.0, 2.0])
        dx, dy = opforge.grad(lambda a, b: reduce_sum(two(a, b)), (0, 1))(x, y)
        close(dx, [3.0, 4.0])
        close(dy, [1.0, 2.0])
        assert seen == [(True, False), (False, True), (True, True)]
        assert needs_input_grad(0) and needs_input_grad(5)  # outside a backward pass: every input
        # A constant input of the inner gradient that the outer one differentiates: second order
        # d/dx sum(x * d/db sum(x * b)) = d/dx sum(x * x) = 2x.
        seen.clear()
        close(
            opforge.grad(lambda a: reduce_sum(mul(a, opforge.grad(lambda b: reduce_sum(two(a, b)))(y))))(x), [2.0, 4.0]
        )
        assert seen[0] == (False, True)  # the inner pass skips x, which only the outer tape tracks
    finally:
        registry._table.pop(("AutodiffTwo", "CPU"), None)
        bprop_getters.unregister("AutodiffTwo")
        select_kernel.cache_clear()


def test_output_grad_reached_tells_a_bprop_which_outputs_got_a_gradient():
    from opforge.bprop import output_grad_reached

    seen = []

    class AutodiffPair(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            self.init_prim_io_names(inputs=["x"], outputs=["double", "square"])

        def infer_shape(self, x):
            return x, x

        def infer_dtype(self, x):
            return x, x

    register_kernel(
        "AutodiffPair",
        "CPU",
        KernelAttr().add_input_attr(mstype.float64).add_output_attr(mstype.float64).add_output_attr(mstype.float64),
    )(lambda x: (2 * x, x * x))

    @bprop_getters.register(AutodiffPair)
    def get_bprop_pair(self):
        def bprop(x, out, dout):
            reached = (output_grad_reached(0), output_grad_reached(1))
            seen.append(reached)
            dx = mul(dout[0], 2.0)
            return (add(dx, mul(dout[1], mul(x, 2.0))) if reached[1] else dx,)

        return bprop

    try:
        x = t([1.0, 3.0])
        pair = AutodiffPair()
        close(opforge.grad(lambda a: reduce_sum(pair(a)[0]))(x), [2.0, 2.0])
        close(opforge.grad(lambda a: reduce_sum(pair(a)[1]))(x), [2.0, 6.0])
        close(opforge.grad(lambda a: reduce_sum(add(pair(a)[0], pair(a)[1])))(x), [4.0, 8.0])
        assert seen == [(True, False), (False, True), (False, True), (True, False)]
        assert output_grad_reached(0) and output_grad_reached(7)  # outside a backward pass: every output
    finally:
        registry._table.pop(("AutodiffPair", "CPU"), None)
        bprop_getters.unregister("AutodiffPair")
        select_kernel.cache_clear()


@pytest.mark.parametrize("norm", ["BatchNorm", "LayerNorm"])
def test_norm_gradient_without_its_statistics_matches_the_full_one(norm, rng):
    # Nobody reads the batch statistics: the bprop leaves their (zero) terms out; with zero senses on
    # them (reached, so computed) the gradients are the same.
    x = t(rng.standard_normal((4, 3, 5)))
    scale, bias = t(rng.uniform(0.5, 1.5, 3)), t(rng.standard_normal(3))
    if norm == "BatchNorm":
        prim = ops.BatchNorm(is_training=True)
        moving = [Parameter(np.zeros(3), name="mm"), Parameter(np.ones(3), name="mv")]
        call = lambda a, g, b: prim(a, g, b, *moving)  # noqa: E731
    else:
        prim = ops.LayerNorm(begin_norm_axis=1, begin_params_axis=2)
        scale, bias = t(rng.uniform(0.5, 1.5, 5)), t(rng.standard_normal(5))
        call = prim
    r = t(rng.standard_normal((4, 3, 5)))
    grad_y = GradOperation(get_all=True)(lambda a, g, b: reduce_sum(mul(call(a, g, b)[0], r)))
    skipped = grad_y(x, scale, bias)
    outs = call(x, scale, bias)
    senses = (r, *(t(np.zeros(o.shape)) for o in outs[1:]))
    grad_all = GradOperation(get_all=True, sens_param=True)(call)
    full = grad_all(x, scale, bias, senses)
    assert "Sub" not in _kernel_calls(lambda: grad_y(x, scale, bias))  # x - mean: the statistics' term
    assert "Sub" in _kernel_calls(lambda: grad_all(x, scale, bias, senses))
    for a, b in zip(skipped, full):
        np.testing.assert_allclose(npv(a), npv(b), rtol=1e-12, atol=1e-12)


def test_second_order_through_a_skipped_product_matches_finite_differences(rng):
    # The inner gradient is with respect to w only (its pass skips d/dx of x @ w); the outer one
    # differentiates that gradient with respect to x, through the products the inner pass recorded.
    w = Parameter(rng.standard_normal((3, 2)) * 0.5, name="w")
    v = rng.standard_normal((3, 2))

    def inner_dw(a):
        (dw,) = opforge.grad(lambda b: reduce_sum(tanh(matmul(b, w))), None, [w])(a)
        return dw

    def outer(a):
        return reduce_sum(mul(inner_dw(a), t(v)))

    x0 = rng.standard_normal((4, 3))
    got = npv(opforge.grad(outer)(t(x0)))

    def f(x):
        h = np.tanh(x @ npv(w))
        return float(np.sum((x.T @ (1 - h**2)) * v))

    eps, expected = 1e-6, np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        hi, lo = x0.copy(), x0.copy()
        hi[idx] += eps
        lo[idx] -= eps
        expected[idx] = (f(hi) - f(lo)) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_bias_add_gradient_of_a_batch_in_float32(rng):
    x = Tensor(rng.standard_normal((7, 5)).astype(np.float32))
    b = Parameter(rng.standard_normal(5).astype(np.float32), name="b")
    s = Tensor(rng.standard_normal((7, 5)).astype(np.float32))
    bias_add = ops.BiasAdd()
    dx, db = GradOperation(get_all=True, sens_param=True)(lambda a, c: bias_add(a, c))(x, b, s)
    assert dx.dtype is mstype.float32 and db.dtype is mstype.float32 and db.shape == (5,)
    np.testing.assert_allclose(npv(db), npv(s).sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(npv(dx), npv(s))
    # Add broadcasting a row vector reduces the same way.
    db2 = opforge.grad(lambda c: reduce_sum(mul(add(x, c), s)))(Tensor(npv(b)))
    np.testing.assert_allclose(npv(db2), npv(s).sum(0), rtol=1e-5, atol=1e-6)


def test_bprop_cache_is_rebuilt_when_another_getter_is_registered(cube):
    prim = ops.Tanh()
    first = get_bprop(prim)
    assert get_bprop(prim) is first
    bprop_getters.register(AutodiffCube)(lambda self: lambda x, out, dout: (dout,))  # any registration
    rebuilt = get_bprop(prim)
    assert rebuilt is not first and get_bprop(prim) is rebuilt


def test_a_plain_tape_records_cached_calls_in_c(monkeypatch, xy):
    """Under a Tape over eager evaluation, a call with a cached plan is run and recorded by the C fast
    path (csrc/python/tape.cc): Tape.process_primitive, the Python path, is not entered."""
    x, y = xy
    grad_fn = opforge.grad(f_xy)
    want = grad_fn(x, y)  # builds and caches the plans
    entered = []
    original = Tape.process_primitive
    monkeypatch.setattr(Tape, "process_primitive", lambda self, *a: entered.append(a[0].name) or original(self, *a))
    close(grad_fn(x, y), npv(want), rtol=0)
    assert entered == []


def test_bprop_sees_the_inputs_in_the_dtype_their_group_computed_in():
    """A float16 input promoted with float32 ones (a dtype group) gets its bprop run in float32, as the
    forward kernel did, and its gradient back in float16."""
    ln = ops.LayerNorm(begin_norm_axis=-1, begin_params_axis=-1)
    x = Tensor(np.linspace(-1, 1, 8).reshape(2, 4).astype(np.float16))
    gamma, beta = Tensor(np.full(4, 1.5, np.float32)), Tensor(np.zeros(4, np.float32))
    grads = opforge.grad(lambda a, g, b: (ln(a, g, b)[0] * a).sum(), grad_position=(0, 1, 2))(x, gamma, beta)
    assert [g.dtype for g in grads] == [mstype.float16, mstype.float32, mstype.float32]
    want = opforge.grad(lambda a, g, b: (ln(a, g, b)[0] * a).sum(), grad_position=(0, 1, 2))(
        Tensor(x.asnumpy().astype(np.float32)), gamma, beta
    )
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got.asnumpy().astype(np.float32), ref.asnumpy(), rtol=2e-3, atol=2e-3)
