"""MindSpore's nn.EmbeddingLookup, nn.LazyAdam, nn.MicroBatchInterleaved and the metrics ConfusionMatrixMetric and
HausdorffDistance (opforge/nn/embedding_lookup.py, optim_lazy_adam.py, micro_batch.py, metrics_segmentation.py):
MindSpore's documented examples, NumPy references (SciPy's distance transforms for the Hausdorff distance when
SciPy is installed), gradients, the slice modes' shard strategies, and bad arguments."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from test_data_parallel import needs_mpi, run_job

import opforge
from opforge import Tensor, communication, nn, train
from opforge import dtype as mstype
from opforge.nn.metrics import get_metric_fn
from opforge.parallel_context import reset_auto_parallel_context, set_auto_parallel_context

# -- EmbeddingLookup ----------------------------------------------------------------------------------------


def test_embedding_lookup_mindspore_example_and_table():
    net = nn.EmbeddingLookup(4, 2)
    out = net(Tensor(np.array([[1, 0], [3, 2]]), mstype.int32))
    assert out.shape == (2, 2, 2) and out.dtype == mstype.float32
    assert [p.name for p in net.trainable_params()] == ["embedding_table"]
    np.testing.assert_array_equal(out.asnumpy(), net.embedding_table.asnumpy()[[[1, 0], [3, 2]]])


def test_embedding_lookup_out_of_range_ids_give_zeros_and_gradient(rng):
    table = rng.standard_normal((5, 3)).astype(np.float32)
    net = nn.EmbeddingLookup(5, 3, param_init=Tensor(table), target="DEVICE", sparse=False)
    ids = np.array([[0, 4, 5], [7, 2, 2]], np.int64)
    want = np.where((ids < 5)[..., None], table[np.minimum(ids, 4)], 0.0)
    np.testing.assert_array_equal(net(Tensor(ids)).asnumpy(), want)
    r = rng.standard_normal((2, 3, 3)).astype(np.float32)
    grads = opforge.grad(lambda i: (net(i) * Tensor(r)).sum(), None, net.trainable_params())(Tensor(ids))
    want_grad = np.zeros_like(table)
    for index, row in zip(ids.reshape(-1), r.reshape(-1, 3)):
        if index < 5:
            want_grad[index] += row
    np.testing.assert_allclose(grads[0].asnumpy(), want_grad, rtol=1e-6, atol=1e-6)


def test_embedding_lookup_max_norm_and_dtype(rng):
    table = (rng.standard_normal((6, 4)) * 3).astype(np.float64)
    net = nn.EmbeddingLookup(6, 4, param_init=Tensor(table), max_norm=1.5, dtype=mstype.float64)
    ids = np.array([5, 1, 1, 0], np.int32)
    rows = table[ids]
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    out = net(Tensor(ids))
    assert out.dtype == mstype.float64
    np.testing.assert_allclose(out.asnumpy(), rows * 1.5 / np.maximum(norms, 1.5), rtol=1e-6)


def test_embedding_lookup_slice_modes_set_gather_strategies():
    try:
        set_auto_parallel_context(parallel_mode="semi_auto_parallel", device_num=1)
        for mode, want in [
            ("table_row_slice", ((1, 1), (1, 1))),
            ("table_column_slice", ((1, 1), (1, 1))),
            ("batch_slice", ((1, 1), (1, 1))),
            ("field_slice", ((1, 1), (1, 1))),
        ]:
            manual = (4,) if mode == "field_slice" else None
            net = nn.EmbeddingLookup(4, 2, slice_mode=mode, manual_shapes=manual)
            assert tuple(map(tuple, net.gather.in_strategy)) == want, mode
        with pytest.raises(ValueError, match="'manual_shapes' should not be none"):
            nn.EmbeddingLookup(4, 2, slice_mode="field_slice")
        with pytest.raises(TypeError, match="'manual_shapes' must be tuple"):
            nn.EmbeddingLookup(4, 2, slice_mode="field_slice", manual_shapes=[4])
    finally:
        reset_auto_parallel_context()
    assert getattr(nn.EmbeddingLookup(4, 2, slice_mode="table_row_slice").gather, "in_strategy", None) is None


def test_embedding_lookup_runs_whole_under_semi_auto_parallel_on_one_device(rng):
    communication.init()  # a world of one rank in this process
    table = rng.standard_normal((6, 4)).astype(np.float32)
    ids = Tensor(np.array([[0, 5, 6], [2, 2, 1]], np.int32))
    r = Tensor(rng.standard_normal((2, 3, 4)).astype(np.float32))

    def run():
        net = nn.EmbeddingLookup(6, 4, param_init=Tensor(table), slice_mode="table_row_slice")
        grads = opforge.grad(lambda i: (net(i) * r).sum(), None, net.trainable_params())(ids)
        return net(ids).asnumpy(), grads[0].asnumpy()

    want = run()
    try:
        set_auto_parallel_context(parallel_mode="semi_auto_parallel")
        got = run()
    finally:
        reset_auto_parallel_context()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


@needs_mpi
def test_embedding_lookup_slice_modes_on_two_ranks_equal_one_process():
    script = pathlib.Path(__file__).parent / "mpi_scripts" / "embedding_lookup.py"
    job = run_job([str(script)], n=2, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    assert float(re.search(r"EMB-OK (\S+)", job.stdout).group(1)) <= 1e-5


def test_embedding_lookup_bad_arguments():
    with pytest.raises(TypeError, match="'EmbeddingLookup'.*'sparse'"):
        nn.EmbeddingLookup(4, 2, sparse=1)
    with pytest.raises(ValueError, match="'sparse' must be True when 'target' is \"CPU\""):
        nn.EmbeddingLookup(4, 2, sparse=False)
    with pytest.raises(ValueError, match="'EmbeddingLookup'.*'target'"):
        nn.EmbeddingLookup(4, 2, target="GPU")
    with pytest.raises(ValueError, match="'EmbeddingLookup'.*'vocab_size'"):
        nn.EmbeddingLookup(0, 2)
    with pytest.raises(TypeError, match="'EmbeddingLookup'.*'embedding_size'"):
        nn.EmbeddingLookup(4, 2.0)
    with pytest.raises(ValueError, match="'EmbeddingLookup'.*'vocab_cache_size'"):
        nn.EmbeddingLookup(4, 2, vocab_cache_size=2)
    with pytest.raises(ValueError, match="'EmbeddingLookup'.*'slice_mode'"):
        nn.EmbeddingLookup(4, 2, slice_mode="row_slice")
    with pytest.raises(TypeError, match="'EmbeddingLookup'.*'max_norm'"):
        nn.EmbeddingLookup(4, 2, max_norm=1)
    with pytest.raises(TypeError, match="'EmbeddingLookup'.*int32 or int64"):
        nn.EmbeddingLookup(4, 2)(Tensor(np.zeros(3, np.float32)))


# -- LazyAdam -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"use_nesterov": True, "weight_decay": 0.01, "learning_rate": 0.05}])
def test_lazy_adam_equals_adam_on_dense_gradients(rng, kwargs):
    start = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)]
    params = {name: [opforge.Parameter(Tensor(v.copy()), name=f"w{i}") for i, v in enumerate(start)] for name in "ab"}
    lazy, adam = nn.LazyAdam(params["a"], **kwargs), nn.Adam(params["b"], **kwargs)
    for _ in range(4):
        grads = tuple(Tensor(rng.standard_normal(v.shape).astype(np.float32)) for v in start)
        lazy(grads)
        adam(grads)
    for p, q in zip(params["a"], params["b"]):
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy())
    assert isinstance(lazy, nn.Adam) and {"moment1.w0", "beta1_power"} <= set(lazy.parameters_dict())


def test_lazy_adam_bad_arguments_and_module_path():
    w = [opforge.Parameter(Tensor(np.ones(2, np.float32)), name="w")]
    for name in ("beta1", "beta2", "eps"):
        with pytest.raises(TypeError, match=f"'LazyAdam'.*'{name}' must be a float"):
            nn.LazyAdam(w, **{name: 1})
    with pytest.raises(ValueError, match="'LazyAdam'.*'beta1'"):
        nn.LazyAdam(w, beta1=1.0)
    with pytest.raises(TypeError, match="'LazyAdam'.*'use_nesterov'"):
        nn.LazyAdam(w, use_nesterov=1)
    from opforge.nn.optim.lazyadam import LazyAdam  # MindSpore's module path

    assert LazyAdam is nn.LazyAdam


# -- MicroBatchInterleaved ----------------------------------------------------------------------------------


class _Loss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2)

    def construct(self, x, y):
        return ((self.dense(x) - y) ** 2).mean()


def test_micro_batch_interleaved_sums_the_parts_and_their_gradients(rng):
    net = _Loss()
    wrapped = nn.MicroBatchInterleaved(net, 2)
    x, y = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((5, 2)).astype(np.float32)
    want = net(Tensor(x[:2]), Tensor(y[:2])) + net(Tensor(x[2:]), Tensor(y[2:]))  # parts [0, 2) and [2, 5)
    np.testing.assert_allclose(wrapped(Tensor(x), Tensor(y)).asnumpy(), want.asnumpy(), rtol=1e-6)
    weights = net.trainable_params()
    got = opforge.grad(wrapped, None, weights)(Tensor(x), Tensor(y))
    parts = [opforge.grad(net, None, weights)(Tensor(x[s]), Tensor(y[s])) for s in (slice(0, 2), slice(2, 5))]
    for g, a, b in zip(got, *parts):
        np.testing.assert_allclose(g.asnumpy(), a.asnumpy() + b.asnumpy(), rtol=1e-5, atol=1e-6)
    assert [p.name for p in wrapped.trainable_params()] == [p.name for p in weights]
    three = nn.MicroBatchInterleaved(net, 3)(Tensor(x), Tensor(y))
    want3 = sum(float(net(Tensor(x[a:b]), Tensor(y[a:b])).asnumpy()) for a, b in ((0, 1), (1, 3), (3, 5)))
    assert float(three.asnumpy()) == pytest.approx(want3, rel=1e-6)


def test_micro_batch_interleaved_bad_arguments():
    with pytest.raises(TypeError, match="'interleave_num' must be integer"):
        nn.MicroBatchInterleaved(_Loss(), 2.0)
    with pytest.raises(ValueError, match="'interleave_num' must be large than 0"):
        nn.MicroBatchInterleaved(_Loss(), 0)
    with pytest.raises(ValueError, match="dim 0 must be at least interleave_num"):
        nn.MicroBatchInterleaved(_Loss(), 4)(Tensor(np.ones((3, 3), np.float32)), Tensor(np.ones((3, 2), np.float32)))

    class Pair(nn.Cell):
        def construct(self, x):
            return x, x

    with pytest.raises(TypeError, match="single Tensor"):
        nn.MicroBatchInterleaved(Pair())(Tensor(np.ones((2, 1), np.float32)))


# -- ConfusionMatrixMetric -----------------------------------------------------------------------------------


def _np_metric(short, tp, fp, tn, fn):
    """Independent formulas of the confusion-matrix metrics (NaN on 0 / 0)."""
    p, n = tp + fn, fp + tn

    def div(a, b):
        return a / b if b else float("nan")

    tpr, tnr, ppv, npv = div(tp, p), div(tn, n), div(tp, tp + fp), div(tn, tn + fn)
    return {
        "tpr": tpr, "tnr": tnr, "ppv": ppv, "npv": npv, "fnr": div(fn, p), "fpr": div(fp, n), "fdr": div(fp, fp + tp),
        "for": div(fn, fn + tn), "pt": div(np.sqrt(tpr * (1 - tnr)) + tnr - 1, tpr + tnr - 1),
        "ts": div(tp, tp + fn + fp), "acc": div(tp + tn, p + n), "ba": (tpr + tnr) / 2,
        "f1": div(2 * tp, 2 * tp + fn + fp),
        "mcc": div(tp * tn - fp * fn, np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))),
        "fm": np.sqrt(ppv * tpr), "bm": tpr + tnr - 1, "mk": ppv + npv - 1,
    }[short]  # fmt: skip


_NAMES = {
    "sensitivity": "tpr", "specificity": "tnr", "precision": "ppv", "negative predictive value": "npv",
    "miss rate": "fnr", "fall out": "fpr", "false discovery rate": "fdr", "false omission rate": "for",
    "prevalence threshold": "pt", "threat score": "ts", "accuracy": "acc", "balanced accuracy": "ba",
    "f1 score": "f1", "matthews correlation coefficient": "mcc", "fowlkes mallows index": "fm",
    "informedness": "bm", "markedness": "mk",
}  # fmt: skip


def test_confusion_matrix_metric_mindspore_example():
    metric = train.ConfusionMatrixMetric(
        skip_channel=True, metric_name="tpr", calculation_method=False, decrease="mean"
    )
    metric.clear()
    metric.update(Tensor(np.array([[[0], [1]], [[1], [0]]])), Tensor(np.array([[[0], [1]], [[0], [1]]])))
    np.testing.assert_allclose(metric.eval(), [0.5])


def _counts(pred, y):
    return [float(((pred == a) & (y == b)).sum()) for a, b in ((1, 1), (1, 0), (0, 0), (0, 1))]  # tp, fp, tn, fn


@pytest.mark.parametrize("metric_name", sorted(_NAMES))
def test_confusion_matrix_metric_accumulates_counts(rng, metric_name):
    metric = nn.ConfusionMatrixMetric(metric_name=metric_name)
    preds, ys = [], []
    for _ in range(2):
        pred, y = (rng.uniform(size=(3, 2, 4, 4)) < 0.5).astype(np.int32), (rng.uniform(size=(3, 2, 4, 4)) < 0.4)
        metric.update(pred, y.astype(np.float32))
        preds.append(pred)
        ys.append(y)
    want = _np_metric(_NAMES[metric_name], *_counts(np.concatenate(preds), np.concatenate(ys).astype(int)))
    got = metric.eval()
    assert got.shape == (1,)
    np.testing.assert_allclose(got, [want], rtol=1e-12)


def test_confusion_matrix_metric_per_sample_and_skip_channel(rng):
    pred = (rng.uniform(size=(4, 3, 5, 5)) < 0.5).astype(np.float32)
    y = (rng.uniform(size=(4, 3, 5, 5)) < 0.5).astype(np.float32)
    y[1, 2] = 0  # a (sample, channel) with no positives: NaN sensitivity, left out
    per = np.array([[_np_metric("tpr", *_counts(pred[b, c], y[b, c])) for c in range(3)] for b in range(4)])
    metric = nn.ConfusionMatrixMetric(metric_name="recall", calculation_method=True, decrease="mean")
    metric.update(pred, y)
    per_batch = np.nanmean(per, axis=1)
    assert metric.eval() == pytest.approx(per_batch.mean(), rel=1e-12)
    summed = nn.ConfusionMatrixMetric(calculation_method=True, decrease="sum")
    summed.update(pred, y)
    assert summed.eval() == pytest.approx(np.nansum(per), rel=1e-12)  # the sum, weighted by its count per update
    # MindSpore's code leaves channel 0 out when skip_channel is False
    no_first = nn.ConfusionMatrixMetric(skip_channel=False)
    no_first.update(pred, y)
    np.testing.assert_allclose(no_first.eval(), [_np_metric("tpr", *_counts(pred[:, 1:], y[:, 1:]))])
    with pytest.raises(ValueError, match="reduce each update to one value"):
        several = nn.ConfusionMatrixMetric(calculation_method=True, decrease="mean_batch")
        several.update(pred, y)
    assert get_metric_fn("confusion_matrix_metric").metric_name == "sensitivity"


def test_confusion_matrix_metric_bad_arguments():
    with pytest.raises(TypeError, match="'skip_channel' must be bool"):
        nn.ConfusionMatrixMetric(skip_channel=1)
    with pytest.raises(ValueError, match="'decrease' must be one of"):
        nn.ConfusionMatrixMetric(decrease="max")
    with pytest.raises(NotImplementedError, match="'hit rates'"):
        nn.ConfusionMatrixMetric(metric_name="hit rates")
    metric = nn.ConfusionMatrixMetric(calculation_method=True)
    with pytest.raises(RuntimeError, match="nothing to evaluate"):
        metric.eval()
    with pytest.raises(ValueError, match="give 2 inputs"):
        metric.update(np.ones((2, 2)))
    with pytest.raises(ValueError, match="binarized"):
        metric.update(np.ones((2, 2, 2)), np.full((2, 2, 2), 0.5))
    with pytest.raises(ValueError, match="at least 2 dims"):
        metric.update(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="one shape"):
        metric.update(np.ones((2, 2, 3)), np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="Tensor, a list or a numpy.ndarray"):
        metric.update("ab", np.ones(2))


# -- HausdorffDistance --------------------------------------------------------------------------------------


def test_hausdorff_distance_mindspore_example():
    metric = train.HausdorffDistance()
    metric.clear()
    metric.update(
        Tensor(np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]])), Tensor(np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]])), 0
    )
    assert metric.eval() == pytest.approx(1.4142135623730951, rel=1e-15)


def _scipy_hausdorff(y_pred, y, label, metric="euclidean", percentile=None, directed=False, crop=True):
    """MindSpore's algorithm on SciPy's erosion and distance transforms."""
    ndimage = pytest.importorskip("scipy.ndimage")
    a, b = y_pred == label, y == label
    if crop:
        union = a | b
        if not union.any():
            return np.inf
        box = tuple(slice(i.min(), i.max() + 1) for i in np.nonzero(union))
        a, b = np.squeeze(a[box]), np.squeeze(b[box])
    a, b = ndimage.binary_erosion(a) ^ a, ndimage.binary_erosion(b) ^ b

    def directed_hd(src, dst):
        if not src.any():
            return np.inf
        if not dst.any():
            dist = np.inf * np.ones_like(dst)
        elif metric == "euclidean":
            dist = ndimage.distance_transform_edt(~dst)
        else:
            dist = ndimage.distance_transform_cdt(~dst, metric=metric)
        values = dist[src]
        return values.max() if not percentile else np.percentile(values, percentile)

    hd = directed_hd(a, b)
    return hd if directed else max(hd, directed_hd(b, a))


@pytest.mark.parametrize("metric", ["euclidean", "chessboard", "taxicab"])
@pytest.mark.parametrize("options", [{}, {"directed": True}, {"percentile": 75.0}, {"crop": False}])
def test_hausdorff_distance_matches_scipy(rng, metric, options):
    for shape in ((12, 15), (6, 7, 5)):
        y_pred = rng.integers(0, 3, shape)
        y = np.where(rng.uniform(size=shape) < 0.7, y_pred, rng.integers(0, 3, shape))
        y_pred[..., :3] = 0  # a region of the label in neither
        got = nn.HausdorffDistance(metric, **options)
        got.update(y_pred, y, 1)
        want = _scipy_hausdorff(y_pred, y, 1, metric, **options)
        assert got.eval() == pytest.approx(want, rel=1e-12)


def test_hausdorff_distance_edge_cases():
    metric = nn.HausdorffDistance()
    a = np.zeros((5, 5), int)
    a[1:4, 2] = 1  # a one-column bar: the crop squeezes it to 1-D, its edges its two ends
    b = np.zeros((5, 5), int)
    b[1:4, 2] = 2
    metric.update(a, b, 1)
    assert metric.eval() == np.inf  # no pixel of label 1 in y: its edges are empty
    metric.update(a, np.where(a == 1, 1, 0), 1)
    assert metric.eval() == 0.0
    single = np.zeros((3, 3), int)
    single[1, 1] = 1
    metric.update(single, single, 1)
    assert metric.eval() == np.inf  # one pixel squeezes to 0-d: its erosion is itself, no edge
    assert get_metric_fn("hausdorff_distance").distance_metric == "euclidean"


def test_hausdorff_distance_bad_arguments():
    with pytest.raises(ValueError, match="'distance_metric' must be one of"):
        nn.HausdorffDistance("cosine")
    with pytest.raises(TypeError, match="'percentile' must be a float"):
        nn.HausdorffDistance(percentile=50)
    with pytest.raises(TypeError, match="'directed' must be bool"):
        nn.HausdorffDistance(directed=1)
    metric = nn.HausdorffDistance(percentile=150.0)
    with pytest.raises(RuntimeError, match="call update first"):
        metric.eval()
    with pytest.raises(ValueError, match="give 3 inputs"):
        metric.update(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="'label_idx' must be an int or a float"):
        metric.update(np.ones(3), np.ones(3), "1")
    with pytest.raises(ValueError, match="must occur in"):
        metric.update(np.ones(3), np.ones(3), 2)
    with pytest.raises(ValueError, match="one non-empty shape"):
        metric.update(np.ones(3), np.ones(4), 1)
    metric.update(np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0]), 1)
    with pytest.raises(ValueError, match="'percentile' must be in \\[0, 100\\]"):
        metric.eval()
