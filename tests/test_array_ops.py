"""The array operators beyond their sweep records: the functional forms (ops.concat, ops.split, ops.topk, ...),
Tensor indexing through StridedSlice, Tensor methods, out-of-range indices on the GPU (read back and
checked before the launch), ScatterNdUpdate writing its Parameter, and gradients through the functional forms."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import GradOperation, Parameter, Tensor, ops
from opforge.errors import KernelError

DEVICES = ["CPU", "GPU"]


def _x(shape=(3, 4, 5), device="CPU"):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape), device


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (1, 2),
        slice(1, 3),
        slice(None, None, -1),
        (slice(None), 2),
        (Ellipsis, 1),
        (None, 0, slice(1, None, 2)),
        (1, None, Ellipsis, slice(None, None, -2)),
        (slice(-2, None), slice(None, 1), slice(4, 0, -3)),
        (slice(10, 20),),
    ],
)
def test_getitem_matches_numpy(key, device):
    a, _ = _x()
    t = Tensor(a, device=device)
    np.testing.assert_array_equal(t[key].asnumpy(), a[key])


def test_getitem_reuses_an_index_across_shapes_and_tells_ints_from_bools_and_numpy_ints():
    """A basic index's StridedSlice call is kept by the index (_hashable_index), whatever the tensor."""
    for shape in [(3, 4), (2, 3, 5), (4,)]:
        a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        for key in [0, -1, (slice(None), 1) if len(shape) > 1 else 1, slice(1, None), (Ellipsis, 0)]:
            for _ in range(2):
                np.testing.assert_array_equal(Tensor(a)[key].asnumpy(), a[key])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(Tensor(a)[np.int64(1)].asnumpy(), a[1])
    assert Tensor(a)[None].shape == (1, 2, 3) and Tensor(a)[()].shape == (2, 3)


def test_getitem_errors():
    t = Tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError, match="StridedSlice"):
        t[3]
    with pytest.raises(TypeError, match="__getitem__"):
        t[[0, 1]]
    with pytest.raises(ValueError, match="StridedSlice"):
        t[0, 0, 0]
    assert [r.tolist() for r in Tensor(np.arange(4).reshape(2, 2))] == [[0, 1], [2, 3]]  # iteration stops


@pytest.mark.parametrize("device", DEVICES)
def test_functional_forms(device):
    a, _ = _x((4, 6))
    t = Tensor(a, device=device)
    np.testing.assert_array_equal(ops.concat([t, t], 1).asnumpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(ops.cat((t, t)).asnumpy(), np.concatenate([a, a]))
    np.testing.assert_array_equal(ops.stack([t, t], -1).asnumpy(), np.stack([a, a], -1))
    parts = ops.split(t, 2, axis=1)
    assert len(parts) == 3 and all(p.shape == (4, 2) for p in parts)
    parts = ops.split(t, [1, 2, 3], axis=1)
    np.testing.assert_array_equal(parts[2].asnumpy(), a[:, 3:])
    parts = ops.split(t, 4, axis=1)  # the last part smaller
    assert [p.shape for p in parts] == [(4, 4), (4, 2)]
    assert len(ops.split(t, 4, axis=0)) == 1
    assert [u.shape for u in ops.unstack(t, 1)] == [(4,)] * 6
    np.testing.assert_array_equal(ops.slice(t, (1, 2), (2, -1)).asnumpy(), a[1:3, 2:])
    np.testing.assert_array_equal(ops.flip(t, 0).asnumpy(), a[::-1])
    np.testing.assert_array_equal(ops.reverse(t, (0, 1)).asnumpy(), a[::-1, ::-1])
    np.testing.assert_array_equal(ops.tile(t, (2, 1, 1)).asnumpy(), np.tile(a, (2, 1, 1)))
    np.testing.assert_array_equal(ops.addn([t, t, t]).asnumpy(), 3 * a)
    cond = Tensor(a > 10, device=device)
    np.testing.assert_array_equal(ops.select(cond, t, -t).asnumpy(), np.where(a > 10, a, -a))
    np.testing.assert_array_equal(ops.range(2, 11, 3).asnumpy(), np.arange(2, 11, 3))
    np.testing.assert_allclose(ops.range(5.0).asnumpy(), np.arange(5.0))
    b = np.ones((2, 6, 3), np.float32)
    np.testing.assert_allclose(
        ops.bmm(Tensor(a[None].repeat(2, 0), device=device), Tensor(b, device=device)).asnumpy(), a @ b
    )
    values, indices = ops.topk(t, 2)
    np.testing.assert_array_equal(values.asnumpy(), a[:, ::-1][:, :2])
    np.testing.assert_array_equal(indices.asnumpy(), np.array([[5, 4]] * 4, np.int32))
    values, indices = ops.topk(t, 1, dim=0, largest=False)
    np.testing.assert_array_equal(values.asnumpy(), a[:1])
    values, indices = ops.sort(t, axis=0, descending=True)
    np.testing.assert_array_equal(values.asnumpy(), a[::-1])
    np.testing.assert_array_equal(t.tile((1, 2)).asnumpy(), np.tile(a, (1, 2)))
    np.testing.assert_array_equal(t.flip(1).asnumpy(), a[:, ::-1])
    assert len(t.split(3, 1)) == 2


@pytest.mark.parametrize("device", DEVICES)
def test_out_of_range_indices_name_the_op_and_index(device):
    params = Tensor(np.zeros((3, 2), np.float32), device=device)
    with pytest.raises(KernelError, match=r"For 'Gather'.*input_indices\[1\] = 3"):
        ops.Gather()(params, Tensor(np.array([0, 3], np.int32), device=device), 0)
    with pytest.raises(KernelError, match=r"For 'Gather'.*= -1"):
        ops.Gather()(params, Tensor(np.array([-1], np.int64), device=device), 0)
    with pytest.raises(KernelError, match=r"For 'GatherNd'.*row 1 \[2, 5\]"):
        ops.GatherNd()(params, Tensor(np.array([[0, 1], [2, 5]], np.int32), device=device))
    var = Parameter(Tensor(np.zeros((3,), np.float32), device=device), name="v")
    with pytest.raises(KernelError, match=r"For 'ScatterNdUpdate'.*\[7\]"):
        ops.ScatterNdUpdate()(
            var, Tensor(np.array([[7]], np.int64), device=device), Tensor(np.ones(1, np.float32), device=device)
        )
    assert not var.asnumpy().any()  # nothing written


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_nd_update_writes_the_parameter(device):
    var = Parameter(Tensor(np.zeros((3, 2), np.float32), device=device), name="v")
    out = ops.ScatterNdUpdate()(
        var, Tensor(np.array([[2], [0]], np.int32), device=device), Tensor(np.ones((2, 2), np.float32), device=device)
    )
    assert out is var
    np.testing.assert_array_equal(var.asnumpy(), [[1, 1], [0, 0], [1, 1]])


def test_gradients_through_functional_forms():
    a = Tensor(np.arange(12.0).reshape(3, 4))

    def f(x):
        parts = ops.split(x, [1, 3], axis=1)
        top, _ = ops.topk(x, 2)
        return ops.concat([parts[1] * 2.0, parts[0]], 1).sum() + x[1:, ::2].sum() + top.sum()

    g = GradOperation()(f)(a).asnumpy()
    want = np.full((3, 4), 2.0)
    want[:, 0] = 1.0
    want[1:, ::2] += 1.0
    want[:, 2:] += 1.0
    np.testing.assert_allclose(g, want)


def test_concat_of_many_and_split_into_many():
    xs = [Tensor(np.full((2,), i, np.float32)) for i in range(40)]
    whole = ops.concat(xs)
    assert whole.shape == (80,)
    parts = ops.Split(0, 40)(whole)
    assert len(parts) == 40 and parts[39].asnumpy().tolist() == [39.0, 39.0]
    assert opforge.ops.AddN()(xs).asnumpy().tolist() == [780.0, 780.0]


def test_split_into_one_is_a_tuple_of_one():
    t = Tensor(np.arange(4.0))
    (part,) = ops.Split(0, 1)(t)
    (row,) = ops.Unstack()(Tensor(np.ones((1, 3))))
    assert part.shape == (4,) and row.shape == (3,)
    np.testing.assert_array_equal(GradOperation()(lambda x: ops.Split(0, 1)(x)[0].sum())(t).asnumpy(), np.ones(4))


def test_gather_functional_and_methods():
    a = np.arange(12.0).reshape(3, 4)
    t, idx = Tensor(a), Tensor(np.array([2, 0], np.int32))
    np.testing.assert_array_equal(ops.gather(t, idx, 1).asnumpy(), a[:, [2, 0]])
    np.testing.assert_array_equal(t.gather(idx, 0).asnumpy(), a[[2, 0]])
    np.testing.assert_array_equal(ops.gather_nd(t, Tensor(np.array([[1, 3]], np.int64))).asnumpy(), [7.0])
    np.testing.assert_array_equal(t.sort(descending=True)[0].asnumpy(), a[:, ::-1])
    np.testing.assert_array_equal(t.topk(1)[1].asnumpy(), [[3], [3], [3]])


def test_gather_slices_and_single_elements_match_numpy():
    """Gather copies a slice per index (axis 0, middle axes) or single elements (the last axis)."""
    import numpy as np

    from opforge import Tensor, ops

    x = np.arange(3 * 7 * 5, dtype=np.float32).reshape(3, 7, 5)
    idx = np.array([[6, 0, 3], [3, 3, 1]], np.int32)
    for axis in (0, 1, 2, -1):
        picked = idx % x.shape[axis]
        got = ops.Gather()(Tensor(x), Tensor(picked), axis).asnumpy()
        np.testing.assert_array_equal(got, np.take(x, picked, axis=axis))


def test_float32_max_min_and_argmax_runs_keep_nan_and_ties():
    """ReduceMax, ReduceMin and Argmax scan float32 runs eight at a time (AVX) and the tail one by one:
    a NaN anywhere in a row wins (its first place for Argmax), ties keep the first index, and -0.0 and
    0.0 compare equal, as NumPy."""
    import numpy as np

    from opforge import Tensor, ops

    rng = np.random.default_rng(7)
    for n in (1, 7, 8, 9, 63, 1024 + 5):
        x = rng.standard_normal((6, n)).astype(np.float32)
        x[1, n // 2] = np.nan  # a lane
        x[2, -1] = np.nan  # the tail
        x[3] = x[3].max()  # all equal
        x[4, :] = -np.inf
        x[5, 0] = -0.0
        got_max = ops.ReduceMax()(Tensor(x), 1).asnumpy()
        got_min = ops.ReduceMin()(Tensor(x), 1).asnumpy()
        np.testing.assert_array_equal(got_max, x.max(1))
        np.testing.assert_array_equal(got_min, x.min(1))
        np.testing.assert_array_equal(ops.Argmax()(Tensor(x)).asnumpy(), x.argmax(1))


def test_transpose_tiles_of_16_and_32_match_numpy():
    """Transpose walks tiles of 16 when its strided reads step by a power of two of bytes, else of 32:
    both, with edges that are not whole tiles, in several element sizes."""
    import numpy as np

    from opforge import Tensor, ops

    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64, np.int8, np.complex128):
        for shape, perm in (
            ((64, 37), (1, 0)),
            ((3, 256, 19), (0, 2, 1)),
            ((50, 33), (1, 0)),
            ((2, 5, 7, 64), (0, 2, 3, 1)),
        ):
            x = (rng.standard_normal(shape) * 50).astype(dtype)
            np.testing.assert_array_equal(ops.Transpose()(Tensor(x), perm).asnumpy(), np.transpose(x, perm))


def _stable_order(row: np.ndarray, descending: bool) -> list:
    """Sort's order written out: NaN (of either sign) greatest, -0.0 equal to 0.0, ties by index."""
    v = row.astype(np.float64)
    if descending:
        return sorted(range(len(v)), key=lambda i: (not np.isnan(v[i]), 0.0 if np.isnan(v[i]) else -v[i], i))
    return sorted(range(len(v)), key=lambda i: (bool(np.isnan(v[i])), 0.0 if np.isnan(v[i]) else v[i], i))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [8, 320, 1500], ids=["insertion", "radix", "radix-blocks"])
def test_cpu_sort_and_topk_order_negative_nan_and_signed_zeros(dtype, n):
    """The CPU kernels sort integer keys of the values (a NaN with its sign bit set is still the greatest,
    -0.0 ties with 0.0); TopK of a small k scans a long row in blocks."""
    negative_nan = np.copysign(np.nan, -1.0)
    pattern = np.array([negative_nan, 1.0, np.nan, -np.inf, -0.0, 0.0, -1.0, np.inf, 2.5, -2.5])
    row = np.resize(pattern, n)
    x = Tensor(row.astype(np.float32)).astype(getattr(opforge, dtype))
    for descending in (False, True):
        values, indices = ops.Sort(-1, descending)(x)
        order = _stable_order(row, descending)
        assert indices.asnumpy().tolist() == order
        np.testing.assert_array_equal(values.astype(opforge.float64).asnumpy(), row[order])
    for k in (1, 5, n):
        values, indices = ops.TopK()(x, k)
        assert indices.asnumpy().tolist() == _stable_order(row, True)[:k]
