"""Keyword arguments the model zoo passes that opforge rejected or ignored (/tmp/kwsurvey's survey,
docs/zoo_api_survey.md "Keyword arguments the zoo passes"): MindSpore 1.x's ``ops.interpolate(x, sizes=...,
scales=..., coordinate_transformation_mode=...)``, ``set_context(ascend_config=..., auto_tune_mode=...)``,
``set_auto_parallel_context(enable_alltoall=..., loss_repeated_mean=...)`` and ``Dataset.map(column_order=...)``."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import opforge
from opforge import GradOperation, Tensor, ops
from opforge import dataset as ds


def _rng():
    return np.random.default_rng(7)


def _src_coords(n: int, m: int, mode: str) -> np.ndarray:
    """TensorFlow's / MindSpore ResizeBilinearV2's source coordinate of each of ``m`` outputs over ``n`` inputs."""
    d = np.arange(m, dtype=np.float64)
    if mode == "align_corners":
        return d * ((n - 1) / (m - 1) if m > 1 else 0.0)
    if mode == "half_pixel":
        return (d + 0.5) * (n / m) - 0.5
    return d * (n / m)  # asymmetric


def _resize_ref(x: np.ndarray, out: tuple, mode: str) -> np.ndarray:
    """Separable linear resize of the trailing dims of ``x``, in TensorFlow's form of the weights: lower =
    max(floor(src), 0), upper = min(ceil(src), n - 1), lerp = src - floor(src)."""
    y = x.astype(np.float64)
    for k, m in enumerate(out):
        axis = x.ndim - len(out) + k
        n = y.shape[axis]
        src = _src_coords(n, m, mode)
        f = np.floor(src)
        lower = np.maximum(f, 0).astype(int)
        upper = np.minimum(np.ceil(src), n - 1).astype(int)
        lerp = (src - f).reshape([-1 if a == axis else 1 for a in range(y.ndim)])
        y = np.take(y, lower, axis=axis) * (1 - lerp) + np.take(y, upper, axis=axis) * lerp
    return y


@pytest.mark.parametrize("mode", ["half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize("out", [(5, 7), (2, 3), (1, 4)])
def test_interpolate_v1_bilinear_sizes_matches_reference(mode, out):
    x = _rng().standard_normal((2, 3, 4, 5)).astype(np.float32)
    got = ops.interpolate(Tensor(x), sizes=out, mode="bilinear", coordinate_transformation_mode=mode)
    assert got.shape == (2, 3, *out) and got.dtype == opforge.float32
    np.testing.assert_allclose(got.asnumpy(), _resize_ref(x, out, mode), rtol=1e-5, atol=1e-5)


def test_interpolate_v1_scales_and_the_default_coordinate_mode():
    """MODNet's call: ``scales`` of every dim of x (the first two 1.0), out = int(scale * size); without
    ``coordinate_transformation_mode`` the older default, "align_corners"."""
    x = _rng().standard_normal((1, 2, 3, 5)).astype(np.float32)
    got = ops.interpolate(Tensor(x), scales=(1.0, 1.0, 2.5, 0.5), mode="bilinear")
    assert got.shape == (1, 2, 7, 2)  # int(2.5 * 3), int(0.5 * 5)
    np.testing.assert_allclose(got.asnumpy(), _resize_ref(x, (7, 2), "align_corners"), rtol=1e-5, atol=1e-5)
    x16 = Tensor(x.astype(np.float16))
    got16 = ops.interpolate(x16, sizes=(4, 4), mode="bilinear", coordinate_transformation_mode="half_pixel")
    assert got16.dtype == opforge.float16
    np.testing.assert_allclose(got16.asnumpy(), _resize_ref(x.astype(np.float16), (4, 4), "half_pixel"), atol=2e-3)


def test_interpolate_v1_linear_mode_gives_mindspores_documented_values():
    x = Tensor(np.array([[[1, 2, 3], [4, 5, 6]]], np.float32))
    got = ops.interpolate(x, sizes=(6,), coordinate_transformation_mode="align_corners", mode="linear")
    np.testing.assert_allclose(got.asnumpy(), [[[1, 1.4, 1.8, 2.2, 2.6, 3], [4, 4.4, 4.8, 5.2, 5.6, 6]]], rtol=1e-6)
    y = _rng().standard_normal((2, 3, 7)).astype(np.float32)
    for mode in ("half_pixel", "asymmetric"):
        got = ops.interpolate(Tensor(y), sizes=(4,), coordinate_transformation_mode=mode, mode="linear")
        np.testing.assert_allclose(got.asnumpy(), _resize_ref(y, (4,), mode), rtol=1e-5, atol=1e-6)


def test_interpolate_v1_gradient_sums_the_weights_back():
    x = _rng().standard_normal((1, 1, 3, 4)).astype(np.float32)
    w = _rng().standard_normal((1, 1, 5, 6)).astype(np.float32)
    wt = Tensor(w)

    def f(t):
        out = ops.interpolate(t, sizes=(5, 6), mode="bilinear", coordinate_transformation_mode="half_pixel")
        return (out * wt).sum()

    got = GradOperation()(f)(Tensor(x)).asnumpy()
    # the gradient of sum(w * resize(x)) is the transposed resize of w: one column per input element
    want = np.zeros_like(x, dtype=np.float64)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x, dtype=np.float64)
        e[idx] = 1.0
        want[idx] = (_resize_ref(e, (5, 6), "half_pixel") * w).sum()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_interpolate_v1_refuses_what_mindspore_1x_refuses():
    x = Tensor(np.ones((1, 1, 4, 4), np.float32))
    with pytest.raises(ValueError, match="'linear' or 'bilinear'"):
        ops.interpolate(x, sizes=(2, 2), mode="bicubic", coordinate_transformation_mode="half_pixel")
    with pytest.raises(ValueError, match="'linear' or 'bilinear'"):  # the 2.x default mode is not the 1.x one
        ops.interpolate(x, sizes=(2, 2))
    with pytest.raises(ValueError, match="4-D"):
        ops.interpolate(Tensor(np.ones((1, 4, 4), np.float32)), sizes=(2, 2), mode="bilinear")
    with pytest.raises(ValueError, match="exactly one"):
        ops.interpolate(x, sizes=(2, 2), scales=(1.0, 1.0, 2.0, 2.0), mode="bilinear")
    with pytest.raises(ValueError, match="exactly one"):
        ops.interpolate(x, coordinate_transformation_mode="half_pixel", mode="bilinear")
    with pytest.raises(TypeError, match="floats"):
        ops.interpolate(x, scales=(1, 1, 2, 2), mode="bilinear")
    with pytest.raises(ValueError, match=r"scales\[0\]"):
        ops.interpolate(x, scales=(2.0, 1.0, 2.0, 2.0), mode="bilinear")
    with pytest.raises(TypeError, match="tuple"):
        ops.interpolate(x, sizes=[2, 2], mode="bilinear")
    with pytest.raises(ValueError, match="positive ints"):
        ops.interpolate(x, sizes=(2, 0), mode="bilinear")
    with pytest.raises(TypeError, match="coordinate_transformation_mode"):
        ops.interpolate(x, sizes=(2, 2), mode="bilinear", coordinate_transformation_mode="tf_crop_and_resize")
    with pytest.raises(TypeError, match="cannot be mixed"):
        ops.interpolate(x, size=(2, 2), sizes=(2, 2), mode="bilinear")
    with pytest.raises(TypeError, match="cannot be mixed"):
        ops.interpolate(x, sizes=(2, 2), mode="bilinear", align_corners=True)
    # the 2.x form is unchanged: half-pixel bilinear by default
    np.testing.assert_allclose(
        ops.interpolate(x, size=(2, 3), mode="bilinear").asnumpy(),
        ops.interpolate(x, sizes=(2, 3), mode="bilinear", coordinate_transformation_mode="half_pixel").asnumpy(),
    )


@pytest.fixture
def _context_restored():
    yield
    opforge.reset_auto_parallel_context()


def test_set_context_ascend_options_are_checked_then_ignored_with_mindspores_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="opforge"):
        opforge.set_context(ascend_config={"precision_mode": "allow_fp32_to_fp16"}, auto_tune_mode="GA")
    assert "'ascend_config'" in caplog.text and "'auto_tune_mode'" in caplog.text and "ignore it" in caplog.text
    assert opforge.get_context("ascend_config") is None and opforge.get_context("auto_tune_mode") is None
    with pytest.raises(TypeError, match="ascend_config"):
        opforge.set_context(ascend_config="allow_fp32_to_fp16")
    with pytest.raises(TypeError, match="auto_tune_mode"):
        opforge.set_context(auto_tune_mode=1)
    with pytest.raises(ValueError, match="unknown option"):
        opforge.set_context(ascend_configs={})


def test_set_auto_parallel_context_enable_alltoall_and_loss_repeated_mean(_context_restored):
    opforge.reset_auto_parallel_context()  # from the defaults, whatever another test in this process left
    assert opforge.get_auto_parallel_context("enable_alltoall") is False
    assert opforge.get_auto_parallel_context("loss_repeated_mean") is True
    # PanGu-alpha's and OPT's call
    opforge.set_auto_parallel_context(full_batch=True, loss_repeated_mean=True, enable_alltoall=True)
    assert opforge.get_auto_parallel_context("enable_alltoall") is True
    assert opforge.get_auto_parallel_context("loss_repeated_mean") is True
    with pytest.raises(TypeError, match="enable_alltoall"):
        opforge.set_auto_parallel_context(enable_alltoall=1)
    with pytest.raises(TypeError, match="loss_repeated_mean"):
        opforge.set_auto_parallel_context(loss_repeated_mean="yes")
    with pytest.raises(TypeError, match="loss_repeated_mean"):
        opforge.set_auto_parallel_context(loss_repeated_mean=0, gradients_mean=True)
    assert opforge.get_auto_parallel_context("gradients_mean") is False  # a refused call changes nothing
    opforge.set_auto_parallel_context(loss_repeated_mean=False)  # MindSpore's sums (tensor_parallel.py)
    assert opforge.get_auto_parallel_context("loss_repeated_mean") is False
    opforge.reset_auto_parallel_context()
    assert opforge.get_auto_parallel_context("enable_alltoall") is False


class _Rows:
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.array([i], np.int32), np.array([10 * i], np.int32), np.array([100 * i], np.int32)

    def __len__(self):
        return self.n


def test_map_column_order_projects_after_the_map():
    """MindSpore 1.x's ``map(..., column_order=...)`` (6 research networks): the columns it names, in its order;
    before, opforge took it into **kwargs and ignored it, handing the network its columns in another order."""
    base = ds.GeneratorDataset(_Rows(4), ["a", "b", "c"], shuffle=False)
    data = base.map(
        operations=lambda b: (b + 1, b * 2),
        input_columns=["b"],
        output_columns=["b1", "b2"],
        column_order=["c", "b2", "a"],
    )
    assert data.get_col_names() == ["c", "b2", "a"]
    rows = [[int(v.asnumpy()[0]) for v in row] for row in data.create_tuple_iterator()]
    assert rows == [[100 * i, 20 * i, i] for i in range(4)]
    plain = base.map(operations=lambda b: b + 1, input_columns=["b"])
    assert plain.get_col_names() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="'d'"):
        base.map(operations=lambda b: b, input_columns=["b"], column_order=["a", "d"])


def test_mindspore_pipeline_inference_sample_names(_context_restored):
    """The names MindSpore's pipeline-inference tutorial uses: ``@lazy_inline`` on a cell's ``__init__``,
    ``Cell.compile(*inputs)`` before predicting, ``pipeline_result_broadcast`` in the context."""

    class Block(opforge.nn.Cell):
        @opforge.lazy_inline
        def __init__(self):
            super().__init__()
            self.dense = opforge.nn.Dense(3, 2)

        def construct(self, x):
            return self.dense(x)

    @opforge.lazy_inline(attrs=["size"], policy="front")
    def init(size):
        return size

    assert init(4) == 4
    with pytest.raises(TypeError, match="'attrs' must be a str or a list/tuple of str"):
        opforge.lazy_inline(attrs=3)
    with pytest.raises(ValueError, match="'policy' must be None or 'front'"):
        opforge.lazy_inline(policy="back")
    block = Block()
    block.set_inputs(Tensor(shape=[None, 3], dtype=opforge.float32))
    block.compile(Tensor(np.ones((2, 3), np.float32)))  # checked against set_inputs, nothing runs
    with pytest.raises(ValueError):
        block.compile(Tensor(np.ones((2, 4), np.float32)))
    opforge.set_auto_parallel_context(pipeline_result_broadcast=True)
    assert opforge.get_auto_parallel_context("pipeline_result_broadcast") is True
    with pytest.raises(TypeError, match="pipeline_result_broadcast"):
        opforge.set_auto_parallel_context(pipeline_result_broadcast=1)
