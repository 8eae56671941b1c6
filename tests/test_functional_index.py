"""The composite ops of opforge/ops/functional_index.py: tensor_scatter_elements / scatter /
TensorScatterElements, index_add / IndexAdd / Tensor.index_add, mode, matrix_band_part / MatrixBandPart and
random_categorical / RandomCategorical. Values against NumPy references and MindSpore's documented examples,
gradients (float64) against central differences, jit equal to eager, vmap equal to a loop, the GPU equal to
the CPU, the categorical distribution by a chi-square test, and errors naming the op and the argument."""

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, context, ops
from opforge import dtype as ms


def _rng(seed=0):
    return np.random.default_rng(seed)


def _t(a):
    return Tensor(np.asarray(a))


def _close(got, want, rtol=1e-6, atol=1e-6):
    got = got.asnumpy() if isinstance(got, Tensor) else np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _numeric_grad(f, args, i, eps=1e-6):
    """d sum(f(*args)) / d args[i] by central differences (float64 arrays; the others passed as they are)."""
    x = args[i]
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus, minus = list(args), list(args)
        plus[i], minus[i] = x.copy(), x.copy()
        plus[i][idx] += eps
        minus[i][idx] -= eps
        fp = f(*(Tensor(a) if isinstance(a, np.ndarray) else a for a in plus)).asnumpy().sum()
        fm = f(*(Tensor(a) if isinstance(a, np.ndarray) else a for a in minus)).asnumpy().sum()
        grad[idx] = (fp - fm) / (2 * eps)
    return grad


def _check_grad(f, args, positions):
    """The engine's gradients of sum(f(*args)) at ``positions`` (float64 inputs) against central differences."""
    tensors = [Tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    got = opforge.grad(lambda *xs: f(*xs).sum(), grad_position=positions)(*tensors)
    got = got if isinstance(got, tuple) else (got,)
    for g, i in zip(got, positions):
        np.testing.assert_allclose(g.asnumpy(), _numeric_grad(f, args, i), rtol=1e-5, atol=1e-6)


# -- NumPy references ------------------------------------------------------------------------------------------


def _np_scatter_elements(x, axis, index, updates, add):
    """In index order (the last of repeated "none" writes wins); negatives from the end, others dropped."""
    out = x.copy()
    n = x.shape[axis]
    for pos in np.ndindex(index.shape):
        j = int(index[pos])
        j = j + n if j < 0 else j
        if not 0 <= j < n:
            continue
        target = list(pos)
        target[axis] = j
        if add:
            out[tuple(target)] += updates[pos]
        else:
            out[tuple(target)] = updates[pos]
    return out


def _np_index_add(x, indices, y, axis):
    out = np.moveaxis(x.copy(), axis, 0)
    rows = np.moveaxis(y, axis, 0)
    for r, i in enumerate(indices):
        if 0 <= i < out.shape[0]:
            out[i] += rows[r]
    return np.moveaxis(out, 0, axis)


def _np_mode(x, axis):
    """The smallest most frequent value along ``axis`` and the index of its last occurrence (torch.mode)."""
    moved = np.moveaxis(x, axis, -1)
    values = np.empty(moved.shape[:-1], x.dtype)
    index = np.empty(moved.shape[:-1], np.int64)
    for pos in np.ndindex(moved.shape[:-1]):
        row = moved[pos]
        uniq, counts = np.unique(row, return_counts=True)
        values[pos] = uniq[np.argmax(counts)]  # np.unique sorts, argmax takes the first: the smallest
        index[pos] = np.flatnonzero(row == values[pos])[-1]
    return values, index


def _np_band(x, lower, upper):
    i = np.arange(x.shape[-2])[:, None]
    j = np.arange(x.shape[-1])[None, :]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, x, 0).astype(x.dtype)


def _unique_index(shape, n, axis, rng):
    """int64 indices of ``shape`` along ``axis`` (size <= n there) with no repeat in any fiber along it."""
    keys = rng.random(shape[:axis] + (n,) + shape[axis + 1 :])
    return np.take(np.argsort(keys, axis=axis), np.arange(shape[axis]), axis=axis).astype(np.int64)


# -- tensor_scatter_elements, scatter, TensorScatterElements ---------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_tensor_scatter_elements_matches_numpy(dtype, axis):
    rng = _rng(1)
    x = (rng.standard_normal((4, 5, 3)) * 10).astype(dtype)
    shape = [3, 4, 2]
    ax = axis % 3
    shape[ax] = 3
    index = _unique_index(tuple(shape), x.shape[ax], ax, rng)
    updates = (rng.standard_normal(shape) * 10).astype(dtype)
    for reduction, add in (("none", False), ("add", True)):
        for idx in (index, index.astype(np.int32)):
            out = ops.tensor_scatter_elements(_t(x), _t(idx), _t(updates), axis, reduction)
            assert out.dtype == Tensor(x).dtype
            _close(out, _np_scatter_elements(x, ax, idx, updates, add))
    # repeated indices add up
    repeated = rng.integers(0, x.shape[ax], size=shape)
    out = ops.tensor_scatter_elements(_t(x), _t(repeated), _t(updates), axis, "add")
    _close(out, _np_scatter_elements(x, ax, repeated, updates, True), rtol=1e-5, atol=1e-5)


def test_negative_indices_count_from_the_end_and_out_of_range_ones_are_dropped():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    index = np.array([[-1, 4, -5], [0, -4, 9]])
    updates = np.array([[100, 200, 300], [400, 500, 600]], np.float32)
    for reduction, add in (("none", False), ("add", True)):
        out = ops.tensor_scatter_elements(_t(x), _t(index), _t(updates), 1, reduction)
        _close(out, _np_scatter_elements(x, 1, index, updates, add))
    out = ops.tensor_scatter_elements(_t(x), _t(index), _t(updates), 1, "none").asnumpy()
    assert out[0].tolist() == [0, 1, 2, 100] and out[1].tolist() == [500, 5, 6, 7]


def test_repeated_indices_with_reduction_none_write_one_of_their_updates():
    x = np.zeros((1, 3), np.float32)
    out = ops.tensor_scatter_elements(_t(x), _t(np.array([[1, 1, 1]])), _t(np.array([[5.0, 6.0, 7.0]], np.float32)), 1)
    assert out.asnumpy()[0, 1] in (5.0, 6.0, 7.0) and out.asnumpy()[0, 0] == 0 and out.asnumpy()[0, 2] == 0


def test_scatter_docs_examples():
    x = Tensor(np.array([[1, 2, 3, 4, 5]]), ms.float32)
    out = ops.scatter(
        input=x, axis=1, index=Tensor(np.array([[2, 4]]), ms.int64), src=Tensor(np.array([[8, 8]]), ms.float32)
    )
    assert out.asnumpy().tolist() == [[1.0, 2.0, 8.0, 4.0, 8.0]]
    zeros = Tensor(np.zeros((5, 5)), ms.float32)
    src = Tensor(np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), ms.float32)
    out = ops.scatter(zeros, 0, Tensor(np.array([[0, 0, 0], [2, 2, 2], [4, 4, 4]]), ms.int64), src)
    want = np.zeros((5, 5), np.float32)
    want[[0, 2, 4], :3] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    _close(out, want)
    out = ops.scatter(zeros, 1, Tensor(np.array([[0, 2, 4], [0, 2, 4], [0, 2, 4]]), ms.int64), src)
    want = np.zeros((5, 5), np.float32)
    want[:3, [0, 2, 4]] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    _close(out, want)


def test_scatter_number_src_larger_src_class_and_tensor_method():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    index = np.array([[2], [0]])
    _close(ops.scatter(_t(x), 1, _t(index), 9.0), [[0, 1, 9], [9, 4, 5]])
    big = np.arange(100, 106, dtype=np.float32).reshape(2, 3)
    _close(ops.scatter(_t(x), 1, _t(index), _t(big)), [[0, 1, 100], [103, 4, 5]])
    _close(_t(x).scatter(1, _t(index), _t(big[:, :1])), [[0, 1, 100], [103, 4, 5]])
    op = ops.TensorScatterElements(axis=1, reduction="add")
    _close(op(_t(x), _t(index), _t(big[:, :1])), [[0, 1, 102], [106, 4, 5]])
    b = np.array([[True, False]])
    out = ops.scatter(_t(b), 1, _t(np.array([[1]])), _t(np.array([[True]])))
    assert out.dtype == ms.bool_ and out.asnumpy().tolist() == [[True, True]]


def test_tensor_scatter_elements_gradients():
    rng = _rng(3)
    x = rng.standard_normal((3, 4))
    index = _unique_index((3, 2), 4, 1, rng)
    updates = rng.standard_normal((3, 2))
    # "none": x's gradient is masked where written, the updates' gathered
    _check_grad(lambda a, u: ops.tensor_scatter_elements(a, _t(index), u, 1) * a, [x, updates], (0, 1))
    repeated = np.array([[0, 2, 2, 0], [1, 1, 1, 1]])
    u2 = rng.standard_normal((2, 4))
    _check_grad(lambda a, u: ops.tensor_scatter_elements(a, _t(repeated), u, 0, "add") ** 2, [x, u2], (0, 1))
    dropped = np.array([[5, -1]] * 3)
    _check_grad(lambda a, u: ops.scatter(a, 1, _t(dropped), u) ** 2, [x, updates], (0, 1))


# -- index_add, IndexAdd, Tensor.index_add ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_index_add_matches_numpy(dtype, axis):
    rng = _rng(4)
    x = rng.integers(-20, 20, (4, 5, 3)).astype(dtype)
    ax = axis % 3
    shape = list(x.shape)
    shape[ax] = 6
    y = rng.integers(-20, 20, shape).astype(dtype)
    indices = rng.integers(0, x.shape[ax], 6).astype(np.int32)
    indices[0] = x.shape[ax]  # out of range: dropped, as MindSpore's kernels
    indices[1] = -1
    out = ops.index_add(_t(x), _t(indices), _t(y), axis)
    assert out.dtype == Tensor(x).dtype
    _close(out, _np_index_add(x, indices, y, ax))


def test_index_add_docs_example_updates_a_parameter_in_place():
    x = Parameter(Tensor(np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), ms.float32), name="name_x")
    y = Tensor(np.array([[0.5, 1.0], [1.0, 1.5], [2.0, 2.5]]), ms.float32)
    out = ops.IndexAdd(axis=1)(x, Tensor(np.array([0, 2]), ms.int32), y)
    want = [[1.5, 2.0, 4.0], [5.0, 5.0, 7.5], [9.0, 8.0, 11.5]]
    _close(out, want)
    _close(x, want)
    t = Tensor(np.ones((2, 2), np.float32))
    ops.index_add(t, Tensor(np.array([1]), ms.int32), Tensor(np.ones((2, 1), np.float32)), 1)
    _close(t, np.ones((2, 2)))  # a Tensor is not written


def test_tensor_index_add_alpha():
    x = np.zeros((2, 3), np.float32)
    out = _t(x).index_add(1, _t(np.array([0, 0, 2], np.int32)), _t(np.ones((2, 3), np.float32)), alpha=2)
    _close(out, [[4, 0, 2], [4, 0, 2]])
    _close(_t(x).index_add(0, _t(np.array([1])), _t(np.ones((1, 3), np.float32))), [[0, 0, 0], [1, 1, 1]])


def test_index_add_gradients():
    rng = _rng(5)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 3))
    indices = np.array([1, 1, 7], np.int32)
    _check_grad(lambda a, b: ops.index_add(a, _t(indices), b, 1) ** 2, [x, y], (0, 1))


# -- mode ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_mode_matches_numpy(dtype):
    x = _rng(6).integers(0, 4, (3, 7, 5)).astype(dtype)  # many ties between equally frequent values
    for axis in (0, 1, -1):
        for keep in (False, True):
            values, index = ops.mode(_t(x), axis, keep)
            want_v, want_i = _np_mode(x, axis)
            if keep:
                want_v, want_i = np.expand_dims(want_v, axis), np.expand_dims(want_i, axis)
            assert values.dtype == Tensor(x).dtype and index.dtype == ms.int64
            np.testing.assert_array_equal(values.asnumpy(), want_v)
            np.testing.assert_array_equal(index.asnumpy(), want_i)


def test_mode_pytorch_docs_example_and_edges():
    b = np.array(
        [
            [0, 0, 0, 2, 0, 0, 2],
            [0, 3, 0, 0, 2, 0, 1],
            [2, 2, 2, 0, 0, 0, 3],
            [2, 2, 3, 0, 1, 1, 0],
            [1, 1, 0, 0, 2, 0, 2],
        ]
    )
    values, index = ops.mode(_t(b), 0)
    assert values.asnumpy().tolist() == [0, 2, 0, 0, 0, 0, 2] and index.asnumpy().tolist() == [1, 3, 4, 4, 2, 4, 4]
    values, index = ops.mode(_t(np.array([6, 2, 5, 3, 3, 5, 4, 3])))
    assert values.asnumpy() == 3 and index.asnumpy() == 7
    values, index = ops.mode(_t(np.array([[4.5]], np.float32)))
    assert values.asnumpy().tolist() == [4.5] and index.asnumpy().tolist() == [0]
    values, index = ops.mode(_t(np.float32(2.0)))
    assert values.shape == () and index.asnumpy() == 0


def test_mode_gradient_reaches_the_mode_element():
    x = _rng(7).permutation(12).reshape(3, 4).astype(np.float64) / 7.0  # distinct: the mode is the minimum
    _check_grad(lambda a: ops.mode(a, 1)[0] * 3.0, [x], (0,))


# -- matrix_band_part, MatrixBandPart ---------------------------------------------------------------------------


def test_matrix_band_part_docs_example():
    out = ops.matrix_band_part(Tensor(np.ones([2, 4, 4]).astype(np.float32)), 2, 1)
    want = [[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 1, 1]]
    _close(out, [want, want])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_matrix_band_part_matches_numpy(dtype):
    x = (_rng(8).standard_normal((2, 4, 6)) * 5).astype(dtype)
    for lower, upper in ((0, 0), (1, 2), (-1, 0), (0, -1), (-1, -1), (10, 3), (2, -5)):
        want = _np_band(x, lower, upper)
        np.testing.assert_array_equal(ops.matrix_band_part(_t(x), lower, upper).asnumpy(), want)
        low = Tensor(np.array(lower, np.int32))
        up = Tensor(np.array(upper, np.int64))
        np.testing.assert_array_equal(ops.MatrixBandPart()(_t(x), low, up).asnumpy(), want)
        np.testing.assert_array_equal(ops.matrix_band_part(_t(x), lower, up).asnumpy(), want)


def test_matrix_band_part_gradient():
    x = _rng(9).standard_normal((2, 3, 4))
    _check_grad(lambda a: ops.matrix_band_part(a, 1, 0) ** 2, [x], (0,))
    _check_grad(lambda a: ops.matrix_band_part(a, Tensor(np.array(-1, np.int32)), 1) * 2.0, [x], (0,))


# -- random_categorical, RandomCategorical --------------------------------------------------------------------


def test_random_categorical_shape_dtype_and_docs_example():
    logits = Tensor(_rng(10).random((10, 5)).astype(np.float32), ms.float32)
    out = ops.random_categorical(logits, 8)
    assert out.shape == (10, 8) and out.dtype == ms.int64
    v = out.asnumpy()
    assert v.min() >= 0 and v.max() < 5
    for dtype in (ms.int16, ms.int32):
        assert ops.random_categorical(logits, 3, 1, dtype).dtype == dtype
        assert ops.RandomCategorical(dtype)(logits, 3).dtype == dtype


def test_random_categorical_follows_softmax_of_the_logits():
    from scipy import stats

    probs = np.array([0.05, 0.1, 0.2, 0.25, 0.4])
    logits = np.log(probs)[None, :] + np.array([[3.0], [-2.0]])  # softmax removes the per-row shift
    draws = ops.random_categorical(Tensor(logits.astype(np.float32)), 20_000, seed=5).asnumpy()
    for row in draws:
        counts = np.bincount(row, minlength=5)
        assert stats.chisquare(counts, probs * row.size).pvalue > 1e-3
    # a class of -inf logit (probability 0) never comes
    masked = np.array([[0.0, -np.inf, 0.0]], np.float32)
    assert not np.any(ops.random_categorical(Tensor(masked), 2000, seed=6).asnumpy() == 1)


def test_random_categorical_seeds():
    logits = Tensor(np.zeros((3, 6), np.float32))
    a = ops.random_categorical(logits, 50, seed=7).asnumpy()
    np.testing.assert_array_equal(ops.RandomCategorical()(logits, 50, 7).asnumpy(), a)  # a seed: the same draws
    assert not np.array_equal(ops.random_categorical(logits, 50, seed=8).asnumpy(), a)
    opforge.set_seed(12)
    first = [ops.random_categorical(logits, 50).asnumpy() for _ in range(2)]
    assert not np.array_equal(first[0], first[1])  # seed 0: the default generator moves on
    opforge.set_seed(12)
    again = [ops.random_categorical(logits, 50).asnumpy() for _ in range(2)]
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)

    @opforge.jit
    def sample(t):
        return ops.random_categorical(t, 50)

    opforge.set_seed(12)
    for want in first:
        np.testing.assert_array_equal(sample(logits).asnumpy(), want)


# -- jit, vmap, GPU -----------------------------------------------------------------------------------------


def test_jit_equals_eager():
    rng = _rng(11)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    u = rng.standard_normal((3, 2)).astype(np.float32)
    index = _unique_index((3, 2), 5, 1, rng)
    sizes = rng.integers(0, 3, (3, 5)).astype(np.int32)

    def f(a, b, i, s, low):
        return (
            ops.tensor_scatter_elements(a, i, b, 1, "add"),
            ops.scatter(a, 1, i, b),
            ops.index_add(a, Tensor(np.array([4, 0], np.int32)), b, 1),
            *ops.mode(s, 1),
            ops.matrix_band_part(a, low, 1),
        )

    args = (_t(x), _t(u), _t(index), _t(sizes), Tensor(np.array(0, np.int32)))
    eager = f(*args)
    jitted = opforge.jit(f)
    for _ in range(2):
        for e, j in zip(eager, jitted(*args)):
            np.testing.assert_array_equal(e.asnumpy(), j.asnumpy())


def test_vmap_equals_a_loop():
    rng = _rng(12)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    u = rng.standard_normal((4, 3, 2)).astype(np.float32)
    index = _unique_index((3, 2), 5, 1, rng)
    sizes = rng.integers(0, 3, (4, 3, 6)).astype(np.int32)
    cases = [
        (lambda a, b: ops.tensor_scatter_elements(a, _t(index), b, 1, "add"), (x, u)),
        (lambda a, b: ops.scatter(a, 1, _t(index), b), (x, u)),
        (lambda a, b: ops.index_add(a, Tensor(np.array([1, 1], np.int32)), b, 1), (x, u)),
        (lambda s: ops.mode(s, 1)[0], (sizes,)),
        (lambda s: ops.mode(s, 0)[1], (sizes,)),
        (lambda a: ops.matrix_band_part(a, 1, 0), (x,)),
    ]
    for f, arrays in cases:
        out = ops.vmap(f)(*(_t(a) for a in arrays))
        want = np.stack([f(*(_t(a[k]) for a in arrays)).asnumpy() for k in range(arrays[0].shape[0])])
        np.testing.assert_array_equal(out.asnumpy(), want)


def test_the_gpu_gives_the_cpu_values():
    rng = _rng(13)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    index = _unique_index((3, 2), 4, 1, rng)
    u = rng.standard_normal((3, 2)).astype(np.float32)
    sizes = rng.integers(0, 3, (3, 6)).astype(np.int32)

    def run():
        return [
            ops.tensor_scatter_elements(_t(x), _t(index), _t(u), 1, "add"),
            ops.scatter(_t(x), 1, _t(index), _t(u)),
            ops.index_add(_t(x), Tensor(np.array([3, 9], np.int32)), _t(u), 1),
            *ops.mode(_t(sizes), 1),
            ops.matrix_band_part(_t(x), 1, 0),
            ops.random_categorical(_t(x), 16, seed=3),
        ]

    cpu = [t.asnumpy() for t in run()]
    context.set_context(device_target="GPU")
    try:
        outs = run()
        assert all(t.device == "GPU" for t in outs)
        gpu = [t.asnumpy() for t in outs]
    finally:
        context.set_context(device_target="CPU")
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


# -- errors ----------------------------------------------------------------------------------------------------

_X = Tensor(np.zeros((2, 3), np.float32))
_I = Tensor(np.zeros((2, 3), np.int64))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: ops.tensor_scatter_elements(_X, _I.astype(ms.float32), _X),
            TypeError,
            "tensor_scatter_elements.*'indices'",
        ),
        (lambda: ops.tensor_scatter_elements(_X, _I, _X, 2), ValueError, "tensor_scatter_elements.*'axis'"),
        (lambda: ops.tensor_scatter_elements(_X, _I, _X, 0, "mul"), ValueError, "tensor_scatter_elements.*'reduction'"),
        (lambda: ops.tensor_scatter_elements(_X, _I[0], _X[0]), ValueError, "tensor_scatter_elements.*'indices'.*rank"),
        (
            lambda: ops.tensor_scatter_elements(_X, _I, _X[:, :2]),
            ValueError,
            "tensor_scatter_elements.*'updates'.*shape",
        ),
        (
            lambda: ops.tensor_scatter_elements(_X, _I, _X.astype(ms.float64)),
            TypeError,
            "tensor_scatter_elements.*'updates'.*dtype",
        ),
        (
            lambda: ops.tensor_scatter_elements(
                _X, Tensor(np.zeros((3, 3), np.int32)), Tensor(np.zeros((3, 3), np.float32)), 1
            ),
            ValueError,
            "'indices' shape.*must not exceed",
        ),
        (
            lambda: ops.tensor_scatter_elements(_X.astype(ms.bool_), _I, _X.astype(ms.bool_), 0, "add"),
            TypeError,
            "tensor_scatter_elements.*'input_x'",
        ),
        (lambda: ops.tensor_scatter_elements([1.0], _I, _X), TypeError, "tensor_scatter_elements.*'input_x'.*Tensor"),
        (lambda: ops.TensorScatterElements(reduction=1), TypeError, "TensorScatterElements.*'reduction'"),
        (lambda: ops.TensorScatterElements(axis=1.0), TypeError, "TensorScatterElements.*'axis'"),
        (lambda: ops.TensorScatterElements()(_X, _I, _X[0]), ValueError, "TensorScatterElements.*'updates'"),
        (lambda: ops.scatter(_X, 0, _I, "a"), TypeError, "scatter.*'src'"),
        (lambda: ops.scatter(_X, 0, _I, _X[:, :1]), ValueError, "scatter.*'src'.*shape"),
        (lambda: ops.index_add(_X, Tensor(np.array([0], np.int32)), _X, 0), ValueError, "index_add.*'indices'"),
        (lambda: ops.index_add(_X, Tensor(np.array([0.0], np.float32)), _X[:1], 0), TypeError, "index_add.*'indices'"),
        (lambda: ops.index_add(_X, Tensor(np.array([0], np.int32)), _X[:1, :2], 0), ValueError, "index_add.*'y' shape"),
        (lambda: ops.index_add(_X, Tensor(np.array([0], np.int32)), _X[0], 0), ValueError, "index_add.*'y'.*rank"),
        (
            lambda: ops.index_add(_X, Tensor(np.array([0], np.int32)), _X[:1].astype(ms.float64), 0),
            TypeError,
            "index_add.*'y'.*dtype",
        ),
        (lambda: ops.index_add(_X, Tensor(np.array([0], np.int32)), _X[:1], 2), ValueError, "index_add.*'axis'"),
        (
            lambda: ops.index_add(_X, Tensor(np.array([0], np.int32)), _X[:1], 0, use_lock=1),
            TypeError,
            "index_add.*'use_lock'",
        ),
        (lambda: ops.IndexAdd(axis="0"), TypeError, "IndexAdd.*'axis'"),
        (lambda: ops.IndexAdd(0, check_index_bound=None), TypeError, "IndexAdd.*'check_index_bound'"),
        (lambda: _X.index_add(0, Tensor(np.array([0], np.int32)), _X[:1], alpha="2"), TypeError, "index_add.*'alpha'"),
        (lambda: ops.mode(_X, 2), ValueError, "mode.*'axis'"),
        (lambda: ops.mode(_X, keepdim=1), TypeError, "mode.*'keepdim'"),
        (lambda: ops.mode(_X.astype(ms.bool_)), TypeError, "mode.*'input'"),
        (lambda: ops.mode(Tensor(np.zeros((2, 0), np.float32))), ValueError, "mode.*empty"),
        (lambda: ops.matrix_band_part(_X[0], 1, 1), ValueError, "matrix_band_part.*'x'.*2 dims"),
        (lambda: ops.matrix_band_part(_X, 1.0, 1), TypeError, "matrix_band_part.*'lower'"),
        (
            lambda: ops.matrix_band_part(_X, 1, Tensor(np.array(1.0, np.float32))),
            TypeError,
            "matrix_band_part.*'upper'",
        ),
        (
            lambda: ops.MatrixBandPart()(_X, Tensor(np.array([1], np.int32)), 1),
            ValueError,
            "MatrixBandPart.*'lower'.*0-D",
        ),
        (lambda: ops.random_categorical(_X.astype(ms.int32), 2), TypeError, "random_categorical.*'logits'"),
        (lambda: ops.random_categorical(_X[0], 2), ValueError, "random_categorical.*'logits'.*2-D"),
        (lambda: ops.random_categorical(_X, 2.0), TypeError, "random_categorical.*'num_sample'"),
        (lambda: ops.random_categorical(_X, 0), ValueError, "random_categorical.*'num_sample'"),
        (lambda: ops.random_categorical(_X, 2, seed=-1), ValueError, "random_categorical.*'seed'"),
        (lambda: ops.random_categorical(_X, 2, dtype=ms.float32), TypeError, "random_categorical.*'dtype'"),
        (lambda: ops.RandomCategorical(ms.uint8), TypeError, "RandomCategorical.*'dtype'"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
