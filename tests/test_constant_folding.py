"""Tensors where an operator takes a Python value (an axis, a shape, a range's bounds) are folded to
their values at the call, as MindSpore folds constant Tensors (``Primitive.constant_inputs``)."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge.jit import TraceError


def test_integer_tensors_fold_to_axes_and_shapes():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(ops.ReduceSum()(x, Tensor(1)).asnumpy(), [3.0, 12.0])
    np.testing.assert_array_equal(ops.ReduceSum(keep_dims=True)(x, Tensor([0, 1])).asnumpy(), [[15.0]])
    assert ops.Reshape()(x, Tensor(np.array([3, 2], np.int32))).shape == (3, 2)
    assert ops.Transpose()(x, Tensor([1, 0])).shape == (3, 2)
    assert ops.Tile()(x, Tensor([2, 1])).shape == (4, 3)


def test_zero_d_tensors_fold_to_numbers():
    np.testing.assert_array_equal(ops.Range()(Tensor(0), Tensor(5), Tensor(2)).asnumpy(), [0, 2, 4])
    out = ops.Range()(Tensor(np.float32(0)), Tensor(np.float32(1)), Tensor(np.float32(0.25)))
    np.testing.assert_allclose(out.asnumpy(), [0, 0.25, 0.5, 0.75])


def test_a_float_tensor_where_an_int_belongs_is_refused_naming_the_argument():
    x = Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="For 'ExpandDims', the 'axis' must be int"):
        ops.ExpandDims()(x, Tensor(np.float32(0)))
    with pytest.raises(TypeError, match="For 'Reshape', the 'shape' must be a constant"):
        ops.Reshape()(x, Tensor(np.array([3.0, 2.0], np.float32)))


def test_under_jit_a_constant_folds_and_a_traced_input_is_refused():
    x = Tensor(np.ones((2, 3), np.float32))
    axis = Tensor(1)
    summed = opforge.jit(lambda t: ops.ReduceSum()(t, axis))
    np.testing.assert_array_equal(summed(x).asnumpy(), [3.0, 3.0])
    with pytest.raises(TraceError, match="a trace records operators"):
        opforge.jit(lambda t, a: ops.ReduceSum()(t, a), fullgraph=True)(x, Tensor(1))
