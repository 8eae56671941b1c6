"""Inputs of user operators. Variadic: a tuple (or list) of Tensors in one argument, as MindSpore's AddN takes
``inputs``. Inference sees a tuple of shapes and of dtypes; the kernel sees each element as an
input of its own (a KernelAttr with all_same); the tape differentiates each element. Optional: an
input given as None selects the kernel registered without it."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor
from opforge.bprop import bprop_getters
from opforge.kernels import KernelAttr, register_kernel
from opforge.primitives import PrimitiveWithInfer, prim_attr_register


class SumOfAll(PrimitiveWithInfer):
    """out = inputs[0] * scale + inputs[1] * scale + ... (a user's AddN)."""

    @prim_attr_register
    def __init__(self, scale=1.0):
        self.init_prim_io_names(inputs=["inputs"], outputs=["y"])

    def infer_shape(self, inputs):
        assert isinstance(inputs, tuple)
        if len({tuple(s) for s in inputs}) != 1:
            raise ValueError(f"For '{self.name}', the inputs must have one shape, but got {list(inputs)}.")
        return inputs[0]

    def infer_dtype(self, inputs):
        return inputs[0]


@pytest.fixture
def sum_of_all(isolated_registries):
    attr = KernelAttr().add_input_attr(opforge.float32).add_output_attr(opforge.float32).add_all_same_attr()

    @register_kernel("SumOfAll", "CPU", attr)
    def kernel(inputs, scale=1.0):
        assert isinstance(inputs, tuple)
        return (sum(inputs) * np.float32(scale)).astype(np.float32)

    @bprop_getters.register(SumOfAll)
    def get_bprop(self):
        def bprop(inputs, out, dout):
            return (tuple(dout * self.scale for _ in inputs),)

        return bprop

    return SumOfAll


def test_a_tuple_of_tensors_is_one_argument(sum_of_all):
    xs = [Tensor(np.full(3, i, np.float32)) for i in range(1, 4)]
    op = sum_of_all(scale=2.0)
    assert op(tuple(xs)).asnumpy().tolist() == [12.0, 12.0, 12.0]
    assert op(xs[:2]).asnumpy().tolist() == [6.0, 6.0, 6.0]  # a list; another count, another plan
    assert op((xs[0],)).asnumpy().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="For 'SumOfAll', the inputs must have one shape"):
        op((xs[0], Tensor(np.ones(2, np.float32))))


def test_gradients_flow_to_each_element(sum_of_all):
    x, y = Tensor(np.array([1.0, 2.0], np.float32)), Tensor(np.array([3.0, 4.0], np.float32))
    op = sum_of_all(scale=3.0)
    gx, gy = opforge.grad(lambda a, b: (op((a, b, a)) * a).sum(), grad_position=(0, 1))(x, y)
    # d/da of (3(2a + b)) * a = 6a + 3(2a + b); d/db = 3a
    np.testing.assert_allclose(gx.asnumpy(), 6 * x.asnumpy() + 3 * (2 * x.asnumpy() + y.asnumpy()))
    np.testing.assert_allclose(gy.asnumpy(), 3 * x.asnumpy())


def test_elements_on_two_devices_are_named(sum_of_all):
    xs = (Tensor(np.ones(2, np.float32)), Tensor(np.ones(2, np.float32), device="GPU"))
    with pytest.raises(ValueError, match=r"input 'inputs\[0\]' is on CPU and input 'inputs\[1\]' is on GPU"):
        sum_of_all()(xs)


class ScaleAndShift(PrimitiveWithInfer):
    """y = x * scale + bias, with ``bias`` an optional input (None: no shift)."""

    @prim_attr_register
    def __init__(self, scale=1.0):
        self.init_prim_io_names(inputs=["x", "bias"], outputs=["y"])

    def infer_shape(self, x, bias):
        return x

    def infer_dtype(self, x, bias):
        return x


def test_an_optional_input_may_be_none(isolated_registries):
    f32 = opforge.float32
    one = KernelAttr().add_input_attr(f32).add_output_attr(f32)
    two = KernelAttr().add_input_attr(f32).add_input_attr(f32).add_output_attr(f32)

    @register_kernel("ScaleAndShift", "CPU", [one, two])
    def kernel(x, bias, scale=1.0):
        return x * np.float32(scale) + (0 if bias is None else bias)

    op, x = ScaleAndShift(scale=2.0), Tensor(np.array([1.0, 2.0], np.float32))
    assert op(x, None).asnumpy().tolist() == [2.0, 4.0]
    assert op(x, Tensor(np.array([10.0, 20.0], np.float32))).asnumpy().tolist() == [12.0, 24.0]


class UserCube(PrimitiveWithInfer):
    """y = x ** 3, a user operator with a Python kernel and a bprop written with primitives."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x):
        return x

    def infer_dtype(self, x):
        return x


def test_double_grad_of_a_user_op_whose_bprop_uses_primitives(isolated_registries):
    from opforge import ops

    f64 = opforge.float64
    register_kernel("UserCube", "CPU", KernelAttr().add_input_attr(f64).add_output_attr(f64))(lambda x: x**3)

    @bprop_getters.register(UserCube)
    def get_bprop(self):
        mul = ops.Mul()

        def bprop(x, out, dout):
            return (mul(mul(mul(x, x), 3.0), dout),)  # differentiable: built from primitives

        return bprop

    cube, x = UserCube(), Tensor(np.array([0.5, -2.0], np.float64))
    first = opforge.grad(lambda v: cube(v).sum())
    second = opforge.grad(lambda v: first(v).sum())
    np.testing.assert_allclose(first(x).asnumpy(), 3 * x.asnumpy() ** 2)
    np.testing.assert_allclose(second(x).asnumpy(), 6 * x.asnumpy())
