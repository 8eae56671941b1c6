"""Sweep records of the data-movement operators (csrc/kernels/cpu/array.cc, csrc/kernels/cuda/array.cu):
Concat, Stack, Split, Unstack, Slice, StridedSlice, ReverseV2, Tile, Select, and the grad operators
SliceGrad and StridedSliceGrad. Joined to ``OP_DB`` at the end of ``tests/op_db.py``."""

from __future__ import annotations

import numpy as np
from op_db import LARGE, LARGE_N, Arg, ErrorInput, OpRecord, Sample, _p, _t, make_array

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelError

# ---------------------------------------------------------------------------------------------
# Concat, Stack

CONCAT_CASES = {  # axis -> list of tuples of shapes
    0: [((3,), (2,), (4,)), ((2, 3), (1, 3)), ((0, 3), (2, 3)), ((2, 3, 4),), ((LARGE[0] // 2, LARGE[1]),) * 2],
    1: [((2, 3), (2, 1), (2, 0)), ((2, 3, 4), (2, 5, 4)), ((0, 3), (0, 2)), ((LARGE[0], 100), (LARGE[0], 156))],
    -1: [((2, 3), (2, 2)), ((2, 3, 4), (2, 3, 1), (2, 3, 2)), ((3,), (3,))],
}


def _concat_samples(record, prim, ins, outs, rng):
    for shapes in CONCAT_CASES[prim.axis]:
        xs = tuple(make_array(s, ins[0], rng) for s in shapes)
        yield Sample((xs,), desc=f"{[list(s) for s in shapes]} axis={prim.axis}")
    if prim.axis == 0:
        many = tuple(make_array((2, 3), ins[0], rng) for _ in range(20))  # more operands than the stack holds
        yield Sample((many,), desc="20 tensors")
        yield Sample(([make_array((2,), ins[0], rng), make_array((1,), ins[0], rng)],), desc="a list")


def _concat_ref(prim, xs):
    return np.concatenate(xs, axis=prim.axis)


def _concat_errors():
    f = ops.Concat
    return [
        ErrorInput("shapes-differ", lambda: f(1)((_t((2, 3)), _t((3, 3)))), ValueError, "except along"),
        ErrorInput("ranks-differ", lambda: f()((_t((2, 3)), _t((3,)))), ValueError, "input_x[1]"),
        ErrorInput("dtypes-differ", lambda: f()((_t((2,)), _t((2,), mstype.int32))), TypeError, "input_x[1]"),
        ErrorInput("axis-out-of-range", lambda: f(2)((_t((2, 3)), _t((2, 3)))), ValueError, "axis"),
        ErrorInput("0-d", lambda: f()((_t(()), _t(()))), ValueError, "0-d"),
        ErrorInput("axis-float", lambda: f(0.0), TypeError, "axis"),
        ErrorInput("not-a-tuple", lambda: f()(_t((2,))), TypeError, "tuple"),
    ]


STACK_CASES = {
    0: [((3,), 2), ((2, 3), 3), ((), 4), ((0, 2), 2), (LARGE, 2)],
    1: [((3,), 2), ((2, 3), 1), ((2, 3, 4), 3)],
    -1: [((3,), 2), ((2, 3), 3), ((), 2)],
}


def _stack_samples(record, prim, ins, outs, rng):
    for shape, n in STACK_CASES[prim.axis]:
        xs = tuple(make_array(shape, ins[0], rng) for _ in range(n))
        yield Sample((xs,), desc=f"{n} x {list(shape)} axis={prim.axis}")


def _stack_errors():
    f = ops.Stack
    return [
        ErrorInput("shapes-differ", lambda: f()((_t((2, 3)), _t((3, 2)))), ValueError, "input_x[1]"),
        ErrorInput("dtypes-differ", lambda: f()((_t((2,)), _t((2,), mstype.int32))), TypeError, "input_x[1]"),
        ErrorInput("axis-out-of-range", lambda: f(3)((_t((2, 3)), _t((2, 3)))), ValueError, "axis"),
        ErrorInput("axis-str", lambda: f("0"), TypeError, "axis"),
    ]


# ---------------------------------------------------------------------------------------------
# Split, Unstack

SPLIT_CASES = {  # (axis, output_num) -> shapes
    (0, 1): [(3,), (2, 3), (0, 2)],
    (0, 2): [(4,), (2, 3), (6, 0)],
    (1, 3): [(2, 3), (2, 6, 2), (0, 3), (LARGE[0], 258)],
    (-1, 4): [(2, 8), (3, 2, 4)],
    (0, 20): [(40, 3)],  # more outputs than the stack holds
}


def _split_samples(record, prim, ins, outs, rng):
    for shape in SPLIT_CASES[(prim.axis, prim.output_num)]:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)}")


def _split_ref(prim, x):
    return tuple(np.split(x, prim.output_num, axis=prim.axis))


def _split_errors():
    f = ops.Split
    return [
        ErrorInput("not-divisible", lambda: f(0, 2)(_t((3,))), ValueError, "divisible"),
        ErrorInput("axis-out-of-range", lambda: f(2, 1)(_t((3, 2))), ValueError, "axis"),
        ErrorInput("output_num-zero", lambda: f(0, 0), ValueError, "output_num"),
        ErrorInput("output_num-float", lambda: f(0, 2.0), TypeError, "output_num"),
        ErrorInput("0-d", lambda: f()(_t(())), ValueError, "0-d"),
    ]


UNSTACK_CASES = {0: [(3,), (2, 3), (4, 0), (LARGE[1], 280)], 1: [(2, 3), (2, 3, 4), (0, 2)], -1: [(3, 2), (2, 1)]}


def _unstack_samples(record, prim, ins, outs, rng):
    for shape in UNSTACK_CASES[prim.axis]:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)}")


def _unstack_ref(prim, x):
    return tuple(np.moveaxis(x, prim.axis, 0))


def _unstack_errors():
    f = ops.Unstack
    return [
        ErrorInput("zero-size-axis", lambda: f()(_t((0, 2))), ValueError, "zero-size"),
        ErrorInput("num-mismatch", lambda: f(0, 3)(_t((2, 2))), ValueError, "num"),
        ErrorInput("axis-out-of-range", lambda: f(2)(_t((2, 2))), ValueError, "axis"),
        ErrorInput("0-d", lambda: f()(_t(())), ValueError, "0-d"),
    ]


# ---------------------------------------------------------------------------------------------
# Slice, StridedSlice, and their grads

SLICE_CASES = [
    ((5,), (1,), (3,)),
    ((5,), (0,), (-1,)),
    ((4, 5), (1, 2), (2, 3)),
    ((4, 5), (0, 0), (4, 5)),
    ((2, 3, 4), (1, 0, 1), (1, -1, 2)),
    ((2, 3, 4), (0, 1, 0), (2, 2, 4)),
    ((3, 4), (1, 1), (0, 2)),
    ((), (), ()),
    (LARGE, (7, 3), (200, 250)),
]


def _slice_samples(record, prim, ins, outs, rng):
    for shape, begin, size in SLICE_CASES:
        yield Sample((make_array(shape, ins[0], rng), begin, size), desc=f"x{list(shape)} begin={begin} size={size}")


def _slice_ref(prim, x, begin, size):
    return x[tuple(slice(b, x.shape[d] if s == -1 else b + s) for d, (b, s) in enumerate(zip(begin, size)))]


def _slice_errors():
    f = ops.Slice
    return [
        ErrorInput("out-of-range", lambda: f()(_t((3, 4)), (2, 0), (2, 4)), ValueError, "within"),
        ErrorInput("negative-begin", lambda: f()(_t((3,)), (-1,), (1,)), ValueError, "within"),
        ErrorInput("too-few-entries", lambda: f()(_t((3, 4)), (0,), (1,)), ValueError, "one entry per dim"),
        ErrorInput("begin-float", lambda: f()(_t((3,)), (0.0,), (1,)), TypeError, "begin"),
        ErrorInput("size-tensor", lambda: f()(_t((3,)), (0,), _t((1,))), TypeError, "'size' must be a constant"),
    ]


# (shape, begin, end, strides, masks (begin, end, ellipsis, new_axis, shrink)), with the NumPy index
STRIDED_CASES = [
    ((7,), (1,), (6,), (2,), (0, 0, 0, 0, 0), np.s_[1:6:2]),
    ((7,), (-2,), (0,), (-1,), (0, 0, 0, 0, 0), np.s_[-2:0:-1]),
    ((7,), (0,), (0,), (-2,), (1, 1, 0, 0, 0), np.s_[::-2]),
    ((7,), (-100,), (100,), (3,), (0, 0, 0, 0, 0), np.s_[-100:100:3]),
    ((7,), (5,), (2,), (1,), (0, 0, 0, 0, 0), np.s_[5:2]),
    ((4, 5), (1, 0), (3, 5), (1, 2), (0, 0, 0, 0, 0), np.s_[1:3, 0:5:2]),
    ((4, 5), (1, 0), (0, 0), (1, 1), (0, 2, 0, 0, 1), np.s_[1, 0:]),
    ((4, 5), (0, -1), (0, 0), (1, 1), (1, 1, 0, 0, 2), np.s_[:, -1]),
    ((2, 3, 4), (0, 1), (0, 3), (1, 1), (0, 0, 1, 0, 0), np.s_[..., 1:3]),
    ((2, 3, 4), (0, 0, 1), (0, 0, 2), (1, 1, 1), (0, 0, 0, 2, 0), np.s_[0:0, None, 1:2]),
    ((2, 3, 4), (1, 0, 0, 0), (0, 0, 0, 0), (1, 1, 1, -1), (8, 8, 4, 2, 1), np.s_[1, None, ..., ::-1]),
    ((2, 3, 4), (0, 0, 0), (0, 0, 0), (1, 1, 1), (7, 7, 0, 0, 0), np.s_[:, :, :]),
    ((0, 3), (0,), (0,), (1,), (1, 1, 0, 0, 0), np.s_[:]),
    ((2, 1, 3, 1, 2, 1, 3, 2, 2), (0,), (2,), (1,), (0, 0, 0, 0, 0), np.s_[0:2]),
    (LARGE, (3, 255), (270, 0), (5, -3), (0, 0, 0, 0, 0), np.s_[3:270:5, 255:0:-3]),
]

STRIDED_MASKS = sorted({c[4] for c in STRIDED_CASES})
_MASK_NAMES = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided_variants(op):
    return {str(m): (lambda m=m: op(**dict(zip(_MASK_NAMES, m)))) for m in STRIDED_MASKS}


def _strided_samples(record, prim, ins, outs, rng):
    masks = tuple(getattr(prim, n) for n in _MASK_NAMES)
    for shape, begin, end, strides, m, index in STRIDED_CASES:
        if m != masks:
            continue
        x = make_array(shape, ins[0], rng)
        yield Sample((x, begin, end, strides), desc=f"x{list(shape)} [{index}]")


def _strided_ref(prim, x, begin, end, strides):
    masks = tuple(getattr(prim, n) for n in _MASK_NAMES)
    for shape, b, e, s, m, index in STRIDED_CASES:
        if (tuple(shape), b, e, s, m) == (x.shape, begin, end, strides, masks):
            return x[index]
    raise AssertionError("no case")


def _strided_errors():
    f = ops.StridedSlice
    return [
        ErrorInput("zero-stride", lambda: f()(_t((3,)), (0,), (2,), (0,)), ValueError, "strides"),
        ErrorInput("shrink-out-of-range", lambda: f(shrink_axis_mask=1)(_t((3,)), (3,), (4,), (1,)), IndexError, "3"),
        ErrorInput("too-many-entries", lambda: f()(_t((3,)), (0, 0), (1, 1), (1, 1)), ValueError, "more entries"),
        ErrorInput("lengths-differ", lambda: f()(_t((3,)), (0,), (1, 1), (1,)), ValueError, "one length"),
        ErrorInput(
            "two-ellipses", lambda: f(ellipsis_mask=3)(_t((3,)), (0, 0), (1, 1), (1, 1)), ValueError, "ellipsis"
        ),
        ErrorInput("mask-negative", lambda: f(begin_mask=-1), ValueError, "begin_mask"),
        ErrorInput("mask-float", lambda: f(end_mask=1.0), TypeError, "end_mask"),
    ]


def _slice_grad_samples(record, prim, ins, outs, rng):
    for shape, begin, size in SLICE_CASES:
        x = make_array(shape, ins[1], rng)
        dy = np.asarray(_slice_ref(None, x, begin, size))
        yield Sample((make_array(dy.shape, ins[0], rng), x, begin, size), desc=f"x{list(shape)} begin={begin}")


def _slice_grad_ref(prim, dy, x, begin, size):
    out = np.zeros_like(x)
    out[tuple(slice(b, x.shape[d] if s == -1 else b + s) for d, (b, s) in enumerate(zip(begin, size)))] = dy
    return out


def _slice_grad_errors():
    f = ops.SliceGrad
    return [
        ErrorInput("dy-shape", lambda: f()(_t((2,)), _t((3,)), (0,), (1,)), ValueError, "slice's shape"),
        ErrorInput("dtypes-differ", lambda: f()(_t((1,)), _t((3,), mstype.int32), (0,), (1,)), TypeError, "dtype"),
    ]


def _strided_grad_samples(record, prim, ins, outs, rng):
    masks = tuple(getattr(prim, n) for n in _MASK_NAMES)
    for shape, begin, end, strides, m, index in STRIDED_CASES:
        if m != masks:
            continue
        dy_shape = np.zeros(shape, np.int8)[index].shape
        yield Sample((make_array(dy_shape, ins[0], rng), shape, begin, end, strides), desc=f"x{list(shape)} [{index}]")


def _strided_grad_ref(prim, dy, shapex, begin, end, strides):
    masks = tuple(getattr(prim, n) for n in _MASK_NAMES)
    for shape, b, e, s, m, index in STRIDED_CASES:
        if (tuple(shape), b, e, s, m) == (tuple(shapex), begin, end, strides, masks):
            out = np.zeros(shapex, dy.dtype)
            out[index] = dy
            return out
    raise AssertionError("no case")


def _strided_grad_errors():
    f = ops.StridedSliceGrad
    return [
        ErrorInput("dy-shape", lambda: f()(_t((2,)), (3,), (0,), (1,), (1,)), ValueError, "slice's shape"),
        ErrorInput("shapex-negative", lambda: f()(_t((0,)), (-1,), (0,), (1,), (1,)), ValueError, "shapex"),
    ]


# ---------------------------------------------------------------------------------------------
# ReverseV2, Tile, Select

REVERSE_CASES = {
    (0,): [(5,), (3, 4), (0, 2), (LARGE)],
    (1,): [(3, 4), (2, 3, 4)],
    (0, -1): [(3, 4), (2, 3, 4), (1, 1)],
    (): [(), (3,)],
    (0, 1, 2): [(2, 3, 4), (2, 1, 3)],
}


def _reverse_samples(record, prim, ins, outs, rng):
    for shape in REVERSE_CASES[prim.axis]:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)} axis={prim.axis}")


def _reverse_errors():
    f = ops.ReverseV2
    return [
        ErrorInput("axis-out-of-range", lambda: f((2,))(_t((2, 3))), ValueError, "axis"),
        ErrorInput("axis-twice", lambda: f((0, -2))(_t((2, 3))), ValueError, "twice"),
        ErrorInput("axis-int", lambda: f(0), TypeError, "axis"),
        ErrorInput("axis-float", lambda: f((0.0,)), TypeError, "axis"),
    ]


TILE_CASES = [
    ((3,), (2,)),
    ((3,), (1,)),
    ((2, 3), (2, 3)),
    ((2, 3), (1, 2)),
    ((2, 3), (3, 1)),
    ((2, 3), (2, 1, 1)),
    ((), (3, 2)),
    ((2, 1, 3), (1, 4, 1)),
    ((2, 3), (0, 2)),
    ((0, 3), (2, 2)),
    ((LARGE[0], 64), (1, 4)),
]


def _tile_samples(record, prim, ins, outs, rng):
    for shape, multiples in TILE_CASES:
        yield Sample((make_array(shape, ins[0], rng), multiples), desc=f"x{list(shape)} multiples={multiples}")


def _tile_errors():
    f = ops.Tile
    return [
        ErrorInput("too-few-multiples", lambda: f()(_t((2, 3)), (2,)), ValueError, "at least as many"),
        ErrorInput("negative", lambda: f()(_t((2,)), (-1,)), ValueError, ">= 0"),
        ErrorInput("float", lambda: f()(_t((2,)), (2.0,)), TypeError, "multiples"),
        ErrorInput("tensor", lambda: f()(_t((2,)), _t((2,))), TypeError, "'multiples' must be a constant"),
    ]


PAD_CASES = {
    "1d": ((2, 3),),
    "2d": ((1, 0), (2, 1)),
    "3d": ((0, 0), (1, 1), (0, 3)),
    "none": ((0, 0), (0, 0)),
}
PAD_SHAPES = {"1d": [(5,), (0,)], "2d": [(3, 4), (0, 2)], "3d": [(2, 3, 4), (2, 300, 257)], "none": [(3, 4)]}


def _pad_samples(record, prim, ins, outs, rng):
    name = next(k for k, v in PAD_CASES.items() if v == prim.paddings)
    for shape in PAD_SHAPES[name]:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)} paddings={prim.paddings}")


def _pad_errors():
    f = ops.Pad
    return [
        ErrorInput("negative", lambda: f(((0, -1),)), ValueError, "non-negative"),
        ErrorInput("not-pairs", lambda: f((1, 2)), ValueError, "pairs"),
        ErrorInput("rank", lambda: f(((1, 1),))(_t((2, 3))), ValueError, "one pair per dim"),
        ErrorInput("float", lambda: f(((1.0, 1),)), ValueError, "ints"),
    ]


def _select_samples(record, prim, ins, outs, rng):
    for shape in [(), (5,), (3, 4), (0, 2), LARGE]:
        cond = rng.random(shape) < 0.5
        x, y = make_array(shape, ins[1], rng), make_array(shape, ins[2], rng)
        yield Sample((np.asarray(cond), x, y), desc=f"{list(shape)}")


def _select_errors():
    f = ops.Select
    b = mstype.bool_
    return [
        ErrorInput("cond-float", lambda: f()(_t((2,)), _t((2,)), _t((2,))), TypeError, "cond"),
        ErrorInput("shapes-differ", lambda: f()(_t((2,), b), _t((3,)), _t((3,))), ValueError, "one shape"),
        # x and y are one dtype group (promoted, as MindSpore's signature): only a non-number is refused there
        ErrorInput("y-not-a-number", lambda: f()(_t((2,), b), _t((2,)), "y"), TypeError, "'y'"),
    ]


# ---------------------------------------------------------------------------------------------
# AddN, BatchMatMul


def _add_n_samples(record, prim, ins, outs, rng):
    # up to 8 inputs a launch (the GPU's two kernels: one launch, or 8 at a time); 65: more than C's launches take
    for shape, k in [((), 2), ((5,), 1), ((3, 4), 3), ((0, 2), 2), (LARGE, 4), ((7,), 8), ((7,), 9), ((2, 3), 20),
                     ((3,), 16), ((2,), 65)]:  # fmt: skip
        xs = tuple(make_array(shape, ins[0], rng) for _ in range(k))
        yield Sample((xs,), desc=f"{k} x {list(shape)}")
    if ins[0].kind in "iu":
        info = np.iinfo(ins[0].np_dtype)
        hi = np.array([info.max, info.min], ins[0].np_dtype)
        yield Sample(((hi, hi, np.ones(2, ins[0].np_dtype)),), desc="integer overflow wraps")


def _add_n_ref(prim, xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def _add_n_errors():
    f = ops.AddN
    return [
        ErrorInput("shapes-differ", lambda: f()((_t((2,)), _t((3,)))), ValueError, "x[1]"),
        ErrorInput("dtypes-differ", lambda: f()((_t((2,)), _t((2,), mstype.float64))), TypeError, "x[1]"),
        ErrorInput("bool", lambda: f()((_t((2,), mstype.bool_),)), TypeError, "x[0]"),
        ErrorInput("not-a-tuple", lambda: f()(_t((2,))), TypeError, "tuple"),
    ]


BMM_CASES = [  # (batch of x, batch of y, m, k, n)
    ((2,), (2,), 3, 4, 5),
    ((3, 2), (3, 2), 2, 3, 2),
    ((4,), (), 3, 2, 3),
    ((2, 1), (1, 3), 2, 2, 2),
    ((3, 1, 2), (2, 1), 2, 3, 2),  # partly broadcast: the middle dim, y's first absent
    ((1, 2), (3, 2), 3, 2, 2),
    ((2,), (2,), 0, 3, 2),
    ((2,), (2,), 2, 0, 2),
    ((0,), (0,), 2, 2, 2),
    ((), (), 4, 3, 2),
    ((8,), (8,), 40, 64, 48),
]


def _bmm_samples(record, prim, ins, outs, rng):
    ta, tb = prim.transpose_a, prim.transpose_b
    for bx, by, m, k, n in BMM_CASES:
        a = make_array(bx + ((k, m) if ta else (m, k)), ins[0], rng, -2, 2)
        b = make_array(by + ((n, k) if tb else (k, n)), ins[1], rng, -2, 2)
        yield Sample((a, b), desc=f"x{list(a.shape)} y{list(b.shape)}")


def _bmm_operands(prim, a, b):
    return (a.swapaxes(-1, -2) if prim.transpose_a else a), (b.swapaxes(-1, -2) if prim.transpose_b else b)


def _bmm_ref(prim, a, b):
    a, b = _bmm_operands(prim, a, b)
    return np.matmul(a, b)


def _bmm_mag(prim, a, b):
    a, b = _bmm_operands(prim, a, b)
    return np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))


def _bmm_errors():
    f = ops.BatchMatMul
    return [
        ErrorInput("1d-input", lambda: f()(_t((3,)), _t((3, 2))), ValueError, "at least 2 dims"),
        ErrorInput("inner-mismatch", lambda: f()(_t((2, 2, 3)), _t((2, 4, 2))), ValueError, "inner dimensions"),
        ErrorInput("batch-mismatch", lambda: f()(_t((2, 2, 3)), _t((3, 3, 2))), ValueError, "broadcast"),
        ErrorInput("transpose_a-int", lambda: f(transpose_a=1), TypeError, "transpose_a"),
        ErrorInput("bool-inputs", lambda: f()(_t((2, 2), mstype.bool_), _t((2, 2), mstype.bool_)), TypeError),
    ]


def _bmm_variants():
    out = {}
    for ta in (False, True):
        for tb in (False, True):
            out[f"ta={ta} tb={tb}"] = lambda ta=ta, tb=tb: ops.BatchMatMul(ta, tb)
    return out


# ---------------------------------------------------------------------------------------------
# Gather, GatherNd, ScatterNdUpdate, UnsortedSegmentSum

GATHER_CASES = [  # params shape, indices shape, axis
    ((5,), (3,), 0),
    ((5, 3), (2, 2), 0),
    ((4, 5, 3), (6,), 1),
    ((4, 5), (), 1),
    ((4, 5), (0,), 0),
    ((3, 4), (2,), -1),
    ((LARGE[0], 256), (100,), 0),
]


def _indices(shape, high, dtype, rng):
    return np.asarray(rng.integers(0, max(high, 1), size=shape)).astype(dtype.np_dtype)


def _gather_samples(record, prim, ins, outs, rng):
    for pshape, ishape, axis in GATHER_CASES:
        params = make_array(pshape, ins[0], rng)
        idx = _indices(ishape, pshape[axis], ins[1], rng)
        yield Sample((params, idx, axis), desc=f"params{list(pshape)} indices{list(ishape)} axis={axis}")


def _gather_errors():
    f = ops.Gather
    i32 = mstype.int32
    return [
        ErrorInput(
            "index-too-large", lambda: f()(_t((3, 2)), Tensor(np.array([0, 3], np.int32)), 0), KernelError, "= 3"
        ),
        ErrorInput("index-negative", lambda: f()(_t((3, 2)), Tensor(np.array([-1], np.int64)), 0), KernelError, "= -1"),
        ErrorInput("float-indices", lambda: f()(_t((3,)), _t((2,)), 0), TypeError, "input_indices"),
        ErrorInput("axis-out-of-range", lambda: f()(_t((3,)), _t((2,), i32), 1), ValueError, "axis"),
        # (an int Tensor is folded to its value, as MindSpore does: here out of range)
        ErrorInput("axis-tensor", lambda: f()(_t((3,)), _t((2,), i32), _t((), i32)), ValueError, "'axis'"),
        ErrorInput("0-d-params", lambda: f()(_t(()), _t((2,), i32), 0), ValueError, "0-d"),
    ]


GATHER_ND_CASES = [  # x shape, indices shape (last dim K)
    ((5,), (3, 1)),
    ((4, 5), (2, 2)),
    ((4, 5), (3, 1)),
    ((2, 3, 4), (2, 2, 2)),
    ((2, 3), (0, 2)),
    ((3, 4), (2, 0)),
    ((LARGE[0], 256), (50, 1)),
]


def _nd_indices(xshape, ishape, dtype, rng):
    k = ishape[-1]
    cols = [rng.integers(0, max(xshape[d], 1), size=ishape[:-1]) for d in range(k)]
    out = np.stack(cols, axis=-1) if k else np.zeros(ishape, np.int64)
    return np.asarray(out).reshape(ishape).astype(dtype.np_dtype)


def _gather_nd_samples(record, prim, ins, outs, rng):
    for xshape, ishape in GATHER_ND_CASES:
        x = make_array(xshape, ins[0], rng)
        yield Sample((x, _nd_indices(xshape, ishape, ins[1], rng)), desc=f"x{list(xshape)} indices{list(ishape)}")


def _gather_nd_ref(prim, x, indices):
    k = indices.shape[-1]
    return x[tuple(indices[..., d] for d in range(k))] if k else np.broadcast_to(x, indices.shape[:-1] + x.shape)


def _gather_nd_errors():
    f = ops.GatherNd
    return [
        ErrorInput(
            "index-out-of-range",
            lambda: f()(_t((3, 2)), Tensor(np.array([[0, 1], [2, 2]], np.int32))),
            KernelError,
            "[2, 2]",
        ),
        ErrorInput("k-too-large", lambda: f()(_t((3,)), _t((1, 2), mstype.int32)), ValueError, "last dim"),
        ErrorInput("float-indices", lambda: f()(_t((3,)), _t((1, 1))), TypeError, "indices"),
    ]


SCATTER_CASES = [((5,), (3, 1)), ((4, 5), (2, 2)), ((4, 5), (3, 1)), ((2, 3, 4), (2, 2)), ((3,), (0, 1))]
SCATTER_CASES += [((LARGE[0], 64), (100, 1))]


def _reduction(prim) -> str:
    """A scatter's reduction: "Update", or the R of ScatterR, ScatterNdR, TensorScatterR (Add, Sub, ...)."""
    return prim.name.removeprefix("Tensor").removeprefix("Scatter").removeprefix("Nd")


_NP_REDUCTIONS = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": np.divide,
    "Max": np.maximum,
    "Min": np.minimum,
}


def _scatter_samples(record, prim, ins, outs, rng):
    """Distinct rows for the updates (the GPU writes any one of equal rows); repeated rows too for the
    reductions. A row-indexed scatter (ScatterR, ScatterUpdate) takes the N-d case's indices without their last
    dim. Div divides by updates at least 1 from 0."""
    reduces = _reduction(prim) != "Update"
    for xshape, ishape in SCATTER_CASES + ([((6, 3), (9, 1)), ((7,), (40, 1))] if reduces else []):
        x = make_array(xshape, ins[0], rng)
        k = 1 if prim.row_indices else ishape[-1]
        ishape = ishape[:-1] + (k,)
        rows, slots = int(np.prod(ishape[:-1])), int(np.prod(xshape[:k]))
        flat = rng.integers(0, slots, size=rows) if rows > slots else rng.permutation(slots)[:rows]
        idx = np.stack(np.unravel_index(flat, xshape[:k]), axis=-1).reshape(ishape).astype(ins[1].np_dtype)
        if prim.row_indices:
            idx = idx[..., 0]
        updates = make_array(ishape[:-1] + xshape[k:], ins[2], rng)
        if _reduction(prim) == "Div":
            updates = np.where(updates >= 0, updates + 1, updates - 1).astype(updates.dtype)
        yield Sample((x, idx, updates), desc=f"x{list(xshape)} indices{list(idx.shape)}")


def _scatter_where(prim, indices) -> tuple:
    return (indices,) if prim.row_indices else tuple(indices[..., d] for d in range(indices.shape[-1]))


def _scatter_ref(prim, x, indices, updates):
    """NumPy's ufunc.at, which applies repeated rows one after another in the array's dtype, as the kernels."""
    out = x.copy()
    where = _scatter_where(prim, indices)
    reduction = _reduction(prim)
    if reduction == "Update":
        out[where] = updates
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            _NP_REDUCTIONS[reduction].at(out, where, updates)
    return out


def _scatter_mag(prim, x, indices, updates):
    """The size of the rounding at each element: the sum of |terms| for Add and Sub (float16 rounds at every
    add of a repeated row), |result| for Mul and Div; Update, Max and Min are exact."""
    if _reduction(prim) in ("Add", "Sub"):
        absolute = np.abs(x.astype(np.float64))
        np.add.at(absolute, _scatter_where(prim, indices), np.abs(updates.astype(np.float64)))
        return absolute
    if _reduction(prim) in ("Mul", "Div"):
        return np.abs(_scatter_ref(prim, x.astype(np.float64), indices, updates.astype(np.float64)))
    return None


def _scatter_errors(f):
    i32 = mstype.int32
    x = _p if f.inplace else _t
    row = (lambda *shape: shape[:-1]) if f.row_indices else (lambda *shape: shape)  # an index's shape
    errors = [
        ErrorInput(
            "index-out-of-range",
            lambda: f()(x((3,)), Tensor(np.full(row(1, 1), 3, np.int32)), _t((1,))),
            KernelError,
            "[3]",
        ),
        ErrorInput("updates-shape", lambda: f()(x((3,)), _t(row(2, 1), i32), _t((3,))), ValueError, "updates"),
        ErrorInput("float-indices", lambda: f()(x((3,)), _t(row(1, 1)), _t((1,))), TypeError, "indices"),
    ]
    if f.inplace:
        errors += [
            ErrorInput("not-a-parameter", lambda: f()(_t((3,)), _t(row(1, 1), i32), _t((1,))), TypeError, "Parameter"),
            ErrorInput("use_locking-int", lambda: f(use_locking=1), TypeError, "use_locking"),
        ]
    return errors


def _segment_samples(record, prim, ins, outs, rng):
    for xshape, ishape, n in [
        ((6,), (6,), 3),
        ((5, 3), (5,), 4),
        ((2, 3, 2), (2, 3), 5),
        ((4, 2), (4,), 0),
        ((0, 2), (0,), 3),
    ]:
        x = make_array(xshape, ins[0], rng)
        ids = np.asarray(rng.integers(-1, n + 1, size=ishape)).astype(ins[1].np_dtype)  # some dropped
        yield Sample((x, ids, n), desc=f"x{list(xshape)} ids{list(ishape)} num_segments={n}")


def _segment_ref(prim, x, ids, n):
    flat_ids = ids.reshape(-1)
    rows = x.reshape((flat_ids.size,) + x.shape[ids.ndim :])
    out = np.zeros((n,) + x.shape[ids.ndim :], x.dtype)
    for i, s in enumerate(flat_ids):
        if 0 <= s < n:
            out[s] = out[s] + rows[i]
    return out


def _segment_errors():
    f = ops.UnsortedSegmentSum
    i32 = mstype.int32
    return [
        ErrorInput("ids-not-prefix", lambda: f()(_t((3, 2)), _t((2,), i32), 2), ValueError, "prefix"),
        ErrorInput("negative-num", lambda: f()(_t((3,)), _t((3,), i32), -1), ValueError, "num_segments"),
        ErrorInput("float-ids", lambda: f()(_t((3,)), _t((3,)), 2), TypeError, "segment_ids"),
    ]


# ---------------------------------------------------------------------------------------------
# Range

RANGE_INT_CASES = [(0, 5, 1), (2, 11, 3), (5, 0, -2), (3, 3, 1), (-4, 4, 3), (0, LARGE_N, 1)]
RANGE_FLOAT_CASES = [(0.0, 1.0, 0.1), (1, -2.5, -0.5), (0.5, 0.5, 1.0), (0, 10, 0.25), (-1e3, 1e3, 0.7)]


def _range_samples(record, prim, ins, outs, rng):
    for case in RANGE_INT_CASES if outs[0].kind == "i" else RANGE_FLOAT_CASES:
        yield Sample(case, desc=f"range{case}")


def _range_ref(prim, start, limit, delta):
    start, limit, delta = (v.item() if isinstance(v, np.generic) else v for v in (start, limit, delta))
    if all(isinstance(v, int) for v in (start, limit, delta)):
        return np.arange(start, limit, delta, dtype=np.int64)
    n = len(np.arange(start, limit, delta))
    return np.float64(start) + np.arange(n, dtype=np.float64) * np.float64(delta)


def _range_errors():
    f = ops.Range
    return [
        ErrorInput("zero-delta", lambda: f()(0, 5, 0), ValueError, "delta"),
        ErrorInput("wrong-direction", lambda: f()(0, 5, -1), ValueError, "toward"),
        ErrorInput("too-long", lambda: f(maxlen=3)(0, 5, 1), ValueError, "maxlen"),
        ErrorInput("tensor-start", lambda: f()(_t((1,)), 5, 1), TypeError, "'start' must be a constant"),
        ErrorInput("str-limit", lambda: f()(0, "5", 1), TypeError, "limit"),
        ErrorInput("nan", lambda: f()(0.0, float("nan"), 1.0), ValueError, "finite"),
    ]


# ---------------------------------------------------------------------------------------------
# TopK, Sort


def _ordered_values(shape, dtype, rng):
    """Few distinct values (many ties), with NaN and infinities for floats."""
    if dtype.kind == "f":
        vals = rng.choice(np.array([np.nan, -np.inf, np.inf, -1.5, 0.0, 2.0, 3.25, -0.0]), size=shape)
        return np.asarray(vals).astype(dtype.np_dtype)
    return make_array(shape, dtype, rng, -3, 3)


def _sort_order(x, axis, descending):
    """NumPy reference of the kernels' order: NaN greatest, ties by index (a stable sort)."""
    moved = np.moveaxis(x, axis, -1)
    keys = moved.astype(np.float64) if moved.dtype.kind == "f" else moved
    if descending:
        # stable descending with NaN first: sort by (not NaN, -value) ascending
        if keys.dtype.kind == "f":
            nan = np.isnan(keys)
            order = np.lexsort((np.where(nan, 0.0, -keys), ~nan), axis=-1)
        else:
            order = np.argsort(-keys.astype(np.int64), axis=-1, kind="stable")
    else:
        order = np.argsort(keys, axis=-1, kind="stable")  # NaN last
    values = np.take_along_axis(moved, order, axis=-1)
    return np.moveaxis(values, -1, axis), np.moveaxis(order, -1, axis)


# Rows of up to 32 are sorted by insertion, longer ones by radix (700: strided along axis 0).
SORT_SHAPES = [(5,), (3, 4), (2, 3, 4), (0, 3), (3, 1), (LARGE[1], 64), (700, 3)]


def _sort_samples(record, prim, ins, outs, rng):
    for shape in SORT_SHAPES:
        if prim.axis >= len(shape):
            continue
        yield Sample((_ordered_values(shape, ins[0], rng),), desc=f"x{list(shape)} axis={prim.axis}")


def _sort_ref(prim, x):
    return _sort_order(x, prim.axis, prim.descending)


def _sort_errors():
    f = ops.Sort
    return [
        ErrorInput("axis-out-of-range", lambda: f(2)(_t((2, 3))), ValueError, "axis"),
        ErrorInput("0-d", lambda: f()(_t(())), ValueError, "0-d"),
        ErrorInput("bool-input", lambda: f()(_t((3,), mstype.bool_)), TypeError, "'x'"),
        ErrorInput("descending-int", lambda: f(descending=1), TypeError, "descending"),
    ]


# A small k of a long row is selected by a scan, in blocks of 512 (the last case); the rest sorted.
TOPK_CASES = [((5,), 2), ((3, 4), 4), ((2, 3, 4), 1), ((3, 4), 0), ((0, 3), 2), ((LARGE[1], 64), 10), ((3, 1300), 7)]


def _topk_samples(record, prim, ins, outs, rng):
    for shape, k in TOPK_CASES:
        yield Sample((_ordered_values(shape, ins[0], rng), k), desc=f"x{list(shape)} k={k}")


def _topk_ref(prim, x, k):
    values, indices = _sort_order(x, -1, True)
    return values[..., :k], indices[..., :k]


def _topk_errors():
    f = ops.TopK
    return [
        ErrorInput("k-too-large", lambda: f()(_t((2, 3)), 4), ValueError, "'k'"),
        ErrorInput("k-negative", lambda: f()(_t((2, 3)), -1), ValueError, "'k'"),
        ErrorInput("k-float", lambda: f()(_t((2, 3)), 1.0), TypeError, "k"),
        ErrorInput("0-d", lambda: f()(_t(()), 0), ValueError, "0-d"),
        ErrorInput("sorted-int", lambda: f(sorted=1), TypeError, "sorted"),
    ]


RECORDS = [
    OpRecord(
        "Concat",
        {f"axis={a}": (lambda a=a: ops.Concat(a)) for a in CONCAT_CASES},
        _concat_samples,
        _concat_ref,
        exact=True,
        error_inputs=_concat_errors,
    ),
    OpRecord(
        "Stack",
        {f"axis={a}": (lambda a=a: ops.Stack(a)) for a in STACK_CASES},
        _stack_samples,
        lambda prim, xs: np.stack(xs, axis=prim.axis),
        exact=True,
        error_inputs=_stack_errors,
    ),
    OpRecord(
        "Split",
        {f"axis={a} output_num={n}": (lambda a=a, n=n: ops.Split(a, n)) for a, n in SPLIT_CASES},
        _split_samples,
        _split_ref,
        exact=True,
        error_inputs=_split_errors,
    ),
    OpRecord(
        "Unstack",
        {f"axis={a}": (lambda a=a: ops.Unstack(a)) for a in UNSTACK_CASES},
        _unstack_samples,
        _unstack_ref,
        exact=True,
        error_inputs=_unstack_errors,
    ),
    OpRecord("Slice", {"": ops.Slice}, _slice_samples, _slice_ref, exact=True, error_inputs=_slice_errors),
    OpRecord(
        "StridedSlice",
        _strided_variants(ops.StridedSlice),
        _strided_samples,
        _strided_ref,
        exact=True,
        error_inputs=_strided_errors,
    ),
    OpRecord(
        "SliceGrad",
        {"": ops.SliceGrad},
        _slice_grad_samples,
        _slice_grad_ref,
        args=(Arg(), Arg()),
        exact=True,
        error_inputs=_slice_grad_errors,
    ),
    OpRecord(
        "StridedSliceGrad",
        _strided_variants(ops.StridedSliceGrad),
        _strided_grad_samples,
        _strided_grad_ref,
        exact=True,
        error_inputs=_strided_grad_errors,
    ),
    OpRecord(
        "ReverseV2",
        {f"axis={a}": (lambda a=a: ops.ReverseV2(a)) for a in REVERSE_CASES},
        _reverse_samples,
        lambda prim, x: np.flip(x, prim.axis) if prim.axis else x,
        exact=True,
        error_inputs=_reverse_errors,
    ),
    OpRecord(
        "Pad",
        {k: (lambda p=p: ops.Pad(p)) for k, p in PAD_CASES.items()},
        _pad_samples,
        lambda prim, x: np.pad(x, prim.paddings),
        exact=True,
        error_inputs=_pad_errors,
    ),
    OpRecord(
        "Tile",
        {"": ops.Tile},
        _tile_samples,
        lambda prim, x, multiples: np.tile(x, multiples),
        exact=True,
        error_inputs=_tile_errors,
    ),
    OpRecord(
        "Select",
        {"": ops.Select},
        _select_samples,
        lambda prim, cond, x, y: np.where(cond, x, y),
        args=(Arg(), Arg(), Arg()),
        exact=True,
        error_inputs=_select_errors,
    ),
    OpRecord("AddN", {"": ops.AddN}, _add_n_samples, _add_n_ref, error_inputs=_add_n_errors),
    OpRecord(
        "BatchMatMul",
        _bmm_variants(),
        _bmm_samples,
        _bmm_ref,
        args=(Arg(), Arg()),
        magnitude=_bmm_mag,
        mag_tols={"Float32": 1e-5},
        error_inputs=_bmm_errors,
    ),
    OpRecord(
        "Gather",
        {"": ops.Gather},
        _gather_samples,
        lambda prim, params, idx, axis: np.take(params, idx, axis=axis),
        args=(Arg(), Arg()),
        exact=True,
        error_inputs=_gather_errors,
    ),
    OpRecord(
        "GatherNd",
        {"": ops.GatherNd},
        _gather_nd_samples,
        _gather_nd_ref,
        args=(Arg(), Arg()),
        exact=True,
        error_inputs=_gather_nd_errors,
    ),
    *(
        OpRecord(
            name,
            {"": getattr(ops, name)},
            _scatter_samples,
            _scatter_ref,
            args=(Arg(), Arg(), Arg()),
            exact=name.endswith(("Update", "Max", "Min")),
            magnitude=None if name.endswith(("Update", "Max", "Min")) else _scatter_mag,
            # half types round at each step of a repeated row (as NumPy's ufunc.at in them): half an ulp of
            # the partial result per step, up to about 6 steps per element in these samples
            mag_tols={"Float16": 3e-3, "BFloat16": 1.2e-2},
            params=(0,) if getattr(ops, name).inplace else (),
            error_inputs=lambda name=name: _scatter_errors(getattr(ops, name)),
        )
        for name in ("ScatterUpdate", "ScatterNdUpdate", "TensorScatterUpdate")
        + tuple(
            f"{spelling}{r}"
            for r in ("Add", "Sub", "Mul", "Div", "Max", "Min")
            for spelling in ("Scatter", "ScatterNd", "TensorScatter")
        )
    ),
    OpRecord(
        "UnsortedSegmentSum",
        {"": ops.UnsortedSegmentSum},
        _segment_samples,
        _segment_ref,
        args=(Arg(), Arg()),
        error_inputs=_segment_errors,
    ),
    OpRecord("Range", {"": ops.Range}, _range_samples, _range_ref, args=(), error_inputs=_range_errors),
    OpRecord(
        "Sort",
        {f"axis={a} descending={d}": (lambda a=a, d=d: ops.Sort(a, d)) for a in (-1, 0, 1) for d in (False, True)},
        _sort_samples,
        _sort_ref,
        exact=True,
        error_inputs=_sort_errors,
    ),
    OpRecord(
        "TopK",
        {"sorted=True": ops.TopK, "sorted=False": lambda: ops.TopK(sorted=False)},
        _topk_samples,
        _topk_ref,
        exact=True,
        error_inputs=_topk_errors,
    ),
]
