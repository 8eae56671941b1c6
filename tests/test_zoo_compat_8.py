"""What the model zoo's EfficientNet-B0, DenseNet-121 and CycleGAN (tests/zoo/efficientnet, densenet, cyclegan;
tests/test_zoo_efficientnet.py, test_zoo_densenet.py, test_zoo_cyclegan.py) needed of opforge, one focused
check each: ``Dataset.batch``'s ``per_batch_map`` / ``input_columns`` / ``output_columns`` and a callable
``batch_size`` with ``BatchInfo`` (opforge had ignored them: EfficientNet's RandAugment never ran), the vision
transforms ``RandomResizedCrop``, ``RandomCropDecodeResize``, ``ToPIL`` and ``ToTensor``, and the summary files
of ``SummaryRecord`` and the ``SummaryCollector`` callback (EfficientNet's train.py imports it from
``mindspore.train.callback``). References are NumPy, Pillow and an independent reader of the file format
(tests/summary_reader.py)."""

import io
import math
import os
import warnings

import numpy as np
import pytest
import summary_reader
from PIL import Image

import opforge
import opforge.dataset as ds
import opforge.dataset.vision as vision
from opforge import Tensor, nn
from opforge.train.callback import LambdaCallback
from opforge.train.model import Model
from opforge.train.summary import SummaryCollector, SummaryRecord


@pytest.fixture(autouse=True)
def _seed():
    ds.config._state["seed"] = None
    opforge.set_seed(0)
    yield
    ds.config._state["seed"] = None


def _rows(count=5):
    a = np.arange(count, dtype=np.int32)
    return ds.NumpySlicesDataset({"a": a, "b": a * 100}, shuffle=False)


def _read(data, epochs=1):
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[[c.tolist() for c in row] for row in it] for _ in range(epochs)]


# ---------------------------------------------------------------------------------------------
# batch: per_batch_map, input_columns, output_columns, a callable batch_size


def test_per_batch_map_gets_lists_of_a_column_and_the_batch_info():
    seen = []

    def add_batch_number(a, info):
        seen.append((info.get_epoch_num(), info.get_batch_num(), [x.tolist() for x in a]))
        return ([x * 10 + info.get_batch_num() for x in a],)

    data = _rows().batch(2, per_batch_map=add_batch_number, input_columns=["a"])
    assert data.get_col_names() == ["a", "b"] and data.get_dataset_size() == 3
    first, second = _read(data, epochs=2)
    assert first == [[[0, 10], [0, 100]], [[21, 31], [200, 300]], [[42], [400]]]
    assert second == first
    assert seen == [(e, n, rows) for e in (0, 1) for n, rows in enumerate([[0, 1], [2, 3], [4]])]


def test_per_batch_map_may_return_more_columns_or_whole_arrays():
    def sums(a, b, info):
        return list(a), [x + y for x, y in zip(a, b)], np.stack([x * y for x, y in zip(a, b)])  # an array: the batch

    data = _rows(4).batch(
        2, drop_remainder=True, per_batch_map=sums, input_columns=["a", "b"], output_columns=["a", "s", "p"]
    )
    assert data.get_col_names() == ["a", "s", "p"]
    assert _read(data)[0] == [[[0, 1], [0, 101], [0, 100]], [[2, 3], [202, 303], [400, 900]]]
    # the output columns take the input columns' place, the others keep theirs
    keyed = ds.NumpySlicesDataset({"x": np.zeros(2), "a": np.ones(2), "y": np.full(2, 2.0)}, shuffle=False)
    data = keyed.batch(2, per_batch_map=lambda a, info: (a, a), input_columns="a", output_columns=["p", "q"])
    assert data.get_col_names() == ["x", "p", "q", "y"]


def test_a_callable_batch_size_gets_the_batch_info():
    data = _rows(6).batch(batch_size=lambda info: info.get_batch_num() + 1)
    assert data.get_dataset_size() == 3
    assert [row[0] for row in _read(data)[0]] == [[0], [1, 2], [3, 4, 5]]
    data = _rows(6).batch(batch_size=lambda info: 4, drop_remainder=True)
    assert data.get_dataset_size() == 1 and len(_read(data)[0]) == 1


def test_per_batch_map_errors():
    with pytest.raises(ValueError, match="per_batch_map and input_columns need to be passed in together"):
        _rows().batch(2, per_batch_map=lambda a, info: (a,))
    with pytest.raises(ValueError, match="per_batch_map and input_columns need to be passed in together"):
        _rows().batch(2, input_columns=["a"])
    with pytest.raises(ValueError, match="signature of per_batch_map"):
        _rows().batch(2, per_batch_map=lambda a, b, info: (a,), input_columns=["a"])
    with pytest.raises(ValueError, match="input column 'c' is not one of"):
        _rows().batch(2, per_batch_map=lambda c, info: (c,), input_columns=["c"])
    with pytest.raises(TypeError, match="'input_columns' must be a str or a non-empty list of str"):
        _rows().batch(2, per_batch_map=lambda info: (), input_columns=[])
    with pytest.raises(RuntimeError, match="should return a tuple"):
        _read(_rows().batch(2, per_batch_map=lambda a, info: a, input_columns=["a"]))
    with pytest.raises(RuntimeError, match="returned 2 column"):
        _read(_rows().batch(2, per_batch_map=lambda a, info: (a, a), input_columns=["a"]))
    with pytest.raises(RuntimeError, match="raised ZeroDivisionError"):
        _read(_rows().batch(2, per_batch_map=lambda a, info: (1 / 0,), input_columns=["a"]))
    with pytest.raises(ValueError, match="must return an int >= 1"):
        _read(_rows().batch(lambda info: 0))


# ---------------------------------------------------------------------------------------------
# RandomResizedCrop, RandomCropDecodeResize


def _reference_crop(image, size, scale, ratio, seed, attempts=10):
    """The crop MindSpore's RandomResizedCrop takes, drawn from the same stream, then Pillow's resize."""
    rng = np.random.default_rng(seed)
    height, width = image.shape[:2]
    for _ in range(attempts):
        area = height * width * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(math.log(ratio[0]), math.log(ratio[1])))
        w = max(1, math.floor(math.sqrt(area * aspect) + 0.5))  # C++'s std::round
        h = max(1, math.floor(w / aspect + 0.5))
        if w <= width and h <= height:
            left = int(rng.integers(0, width - w + 1))  # MindSpore draws the left first
            top = int(rng.integers(0, height - h + 1))
            break
    else:
        raise AssertionError("the reference expects a box that fits")
    crop = image[top : top + h, left : left + w]
    return np.asarray(Image.fromarray(crop).resize((size[1], size[0]), Image.BILINEAR))


def test_random_resized_crop_matches_the_reference_draws():
    image = np.random.default_rng(1).integers(0, 256, (40, 60, 3)).astype(np.uint8)
    for seed in (3, 4, 5):
        ds.config.set_seed(seed)
        got = vision.RandomResizedCrop((24, 16), scale=(0.3, 0.9))(image)
        assert got.shape == (24, 16, 3) and got.dtype == np.uint8
        np.testing.assert_array_equal(got, _reference_crop(image, (24, 16), (0.3, 0.9), (3 / 4, 4 / 3), seed))


def _half_up(value):
    return math.floor(value + 0.5)


def test_random_resized_crop_boxes_and_the_centred_fallback():
    rng = np.random.default_rng(2)
    for _ in range(200):
        top, left, h, w = vision.resized_crop.crop_box(50, 80, (0.2, 0.8), (0.5, 2.0), 10, rng)
        assert 0 <= top and top + h <= 50 and 0 <= left and left + w <= 80
        assert 0.2 * 4000 * 0.9 <= h * w <= 0.8 * 4000 * 1.1 and 0.45 <= w / h <= 2.2
    tall = vision.resized_crop.crop_box(40, 20, (2.0, 3.0), (0.75, 4 / 3), 10, rng)
    assert tall == (_half_up((40 - 27) / 2), 0, 27, 20)  # height round(20 / 0.75) = 27
    # no box fits (area over the image): the centred box of the image's aspect clamped to the ratio range
    assert vision.resized_crop.crop_box(20, 40, (2.0, 3.0), (0.75, 4 / 3), 10, rng) == (0, 7, 20, 27)  # 6.5 up
    assert vision.resized_crop.crop_box(30, 30, (2.0, 3.0), (0.75, 4 / 3), 10, rng) == (0, 0, 30, 30)
    image = np.arange(20 * 40, dtype=np.float32).reshape(20, 40)
    got = vision.RandomResizedCrop(10, scale=(2.0, 3.0))(image)  # float images resize per channel, as Resize
    want = np.asarray(Image.fromarray(image[:, 7:34], mode="F").resize((10, 10), Image.BILINEAR))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_random_crop_decode_resize_decodes_then_crops():
    pixels = np.random.default_rng(3).integers(0, 256, (30, 36, 3)).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    encoded = np.frombuffer(buffer.getvalue(), np.uint8)
    ds.config.set_seed(11)
    got = vision.RandomCropDecodeResize(16, scale=(0.5, 1.0))(encoded)
    assert got.shape == (16, 16, 3) and got.dtype == np.uint8
    np.testing.assert_array_equal(got, _reference_crop(pixels, (16, 16), (0.5, 1.0), (3 / 4, 4 / 3), 11))


def test_random_resized_crop_errors():
    with pytest.raises(ValueError, match="'size' must be positive"):
        vision.RandomResizedCrop(0)
    with pytest.raises(TypeError, match="'size' must be an int or a sequence"):
        vision.RandomResizedCrop("32")
    with pytest.raises(ValueError, match="'scale' must be"):
        vision.RandomResizedCrop(8, scale=(0.9, 0.1))
    with pytest.raises(ValueError, match="'ratio' must be"):
        vision.RandomResizedCrop(8, ratio=(0.0, 1.0))
    with pytest.raises(TypeError, match="'ratio' must be a sequence of two numbers"):
        vision.RandomResizedCrop(8, ratio=1.0)
    with pytest.raises(ValueError, match="'interpolation' must be"):
        vision.RandomResizedCrop(8, interpolation="area")
    with pytest.raises(ValueError, match="'max_attempts' must be an int >= 1"):
        vision.RandomResizedCrop(8, max_attempts=0)
    with pytest.raises(ValueError, match="must be HWC or HW"):
        vision.RandomResizedCrop(8)(np.zeros((1, 4, 4, 3), np.uint8))
    with pytest.raises(TypeError, match="For 'Decode'"):
        vision.RandomCropDecodeResize(8)(np.zeros((4, 4, 3), np.uint8))


# ---------------------------------------------------------------------------------------------
# ToPIL, ToTensor


def test_to_pil_and_to_tensor():
    pixels = np.random.default_rng(4).integers(0, 256, (6, 5, 3)).astype(np.uint8)
    pil = vision.ToPIL()(pixels)
    assert isinstance(pil, Image.Image) and pil.size == (5, 6) and vision.ToPIL()(pil) is pil
    np.testing.assert_array_equal(np.asarray(pil), pixels)
    got = vision.ToTensor()(pil)
    assert got.dtype == np.float32 and got.shape == (3, 6, 5)
    np.testing.assert_allclose(got, pixels.transpose(2, 0, 1) / 255.0, rtol=1e-7)
    gray = vision.ToTensor(output_type=np.float64)(pixels[:, :, 0])
    assert gray.dtype == np.float64 and gray.shape == (1, 6, 5)
    assert vision.ToPIL()(pixels[:, :, :1]).mode == "L"


def test_to_pil_and_to_tensor_errors():
    with pytest.raises(TypeError, match="For 'ToPIL', the image must be uint8"):
        vision.ToPIL()(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="For 'ToPIL', the image must be HW or HWC"):
        vision.ToPIL()(np.zeros((4, 4, 2), np.uint8))
    with pytest.raises(ValueError, match="For 'ToTensor', the image must be HWC or HW"):
        vision.ToTensor()(np.zeros((2, 4, 4, 3), np.uint8))
    with pytest.raises(TypeError, match="'output_type' must be a NumPy dtype"):
        vision.ToTensor(output_type="not a dtype")


# ---------------------------------------------------------------------------------------------
# SummaryRecord, SummaryCollector


def _summary_file(directory):
    (name,) = os.listdir(directory)
    assert name.startswith("events.out.events.summary.") and name.endswith("_MS")
    return os.path.join(directory, name)


def test_summary_record_writes_scalars_histograms_and_images(tmp_path):
    values = np.concatenate([np.random.default_rng(5).standard_normal(100), [np.nan, np.inf, -np.inf]])
    images = np.zeros((2, 3, 4, 5), np.float32)
    images[1] = 1.0
    with SummaryRecord(str(tmp_path)) as record:
        record.add_value("scalar", "loss", Tensor(np.float32(0.25)))
        record.add_value("histogram", "weights", Tensor(values.astype(np.float32)))
        record.add_value("image", "inputs", Tensor(images))
        assert record.record(3) is True
        record.add_value("scalar", "loss", Tensor(np.array([0.5], np.float32)))
        record.record(4, plugin_filter=lambda plugin: plugin != "scalar")  # filtered out: nothing written
        record.add_value("scalar", "loss", Tensor(np.array([0.125], np.float32)))
        record.record(5)
    events = summary_reader.events(_summary_file(tmp_path))
    assert events[0]["version"] == "MindSpore.Event:1" and [e["step"] for e in events[1:]] == [3, 5]
    got = {tag: (kind, value) for tag, kind, value in events[1]["values"]}
    assert got["loss"] == ("scalar", 0.25) and events[2]["values"] == [("loss", "scalar", 0.125)]
    kind, hist = got["weights"]
    finite = values[np.isfinite(values)].astype(np.float32).astype(np.float64)
    assert kind == "histogram" and hist["count"] == 103
    assert (hist["nan_count"], hist["pos_inf_count"], hist["neg_inf_count"]) == (1, 1, 1)
    assert hist["min"] == finite.min() and hist["max"] == finite.max()
    assert hist["sum"] == pytest.approx(finite.sum(), rel=1e-9)
    counts, edges = np.histogram(finite, bins=np.linspace(finite.min(), finite.max(), 100 // 10 + 2))
    assert [b[2] for b in hist["buckets"]] == counts.tolist()
    np.testing.assert_allclose([b[0] for b in hist["buckets"]], edges[:-1])
    kind, (height, width, colorspace, png) = got["inputs"]
    canvas = np.asarray(Image.open(io.BytesIO(png)))
    assert (kind, height, width, colorspace) == ("image", 4, 10, 3) and canvas.shape == (4, 10, 3)
    assert not canvas[:, :5].any() and np.all(canvas[:, 5:] == 255)  # values in [0, 1] scaled by 255


def test_summary_record_errors(tmp_path):
    record = SummaryRecord(str(tmp_path / "a"))
    with pytest.raises(ValueError, match="the plugin must be one of"):
        record.add_value("text", "x", Tensor(np.float32(1)))
    with pytest.raises(ValueError, match="opforge does not write the plugin 'tensor'"):
        record.add_value("tensor", "x", Tensor(np.float32(1)))
    with pytest.raises(ValueError, match="the name should be a non-empty string"):
        record.add_value("scalar", "", Tensor(np.float32(1)))
    with pytest.raises(TypeError, match="the value should be a Tensor"):
        record.add_value("scalar", "x", 1.0)
    with pytest.raises(ValueError, match="a scalar must have one element"):
        record.add_value("scalar", "x", Tensor(np.zeros(2, np.float32)))
    with pytest.raises(ValueError, match="NCHW with 1 or 3 channels"):
        record.add_value("image", "x", Tensor(np.zeros((2, 2, 4, 4), np.float32)))
    with pytest.raises(TypeError, match="'step' must be an int"):
        record.record(1.5)
    record.close()
    with pytest.warns(UserWarning, match="closed"):
        assert record.record(1) is False
    with pytest.raises(ValueError, match="'max_file_size' must be a positive int"):
        SummaryRecord(str(tmp_path / "b"), max_file_size=0)
    with pytest.raises(ValueError, match="'file_prefix' must be"):
        SummaryRecord(str(tmp_path / "b"), file_prefix="a/b")
    small = SummaryRecord(str(tmp_path / "c"), max_file_size=60)  # the version record fits, a scalar does not
    small.add_value("scalar", "loss", Tensor(np.float32(1)))
    with pytest.warns(UserWarning, match="max_file_size"):
        small.record(1)
    small.close()
    assert len(summary_reader.records(_summary_file(tmp_path / "c"))) == 1
    strict = SummaryRecord(str(tmp_path / "d"), max_file_size=60, raise_exception=True)
    strict.add_value("scalar", "loss", Tensor(np.float32(1)))
    with pytest.raises(RuntimeError, match="max_file_size"):
        strict.record(1)
    strict.close()


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Dense(4, 8), nn.Dense(8, 8), nn.Dense(8, 3)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


def _train(callbacks, steps=10):
    rng = np.random.default_rng(6)
    data = ds.NumpySlicesDataset(
        {
            "x": rng.standard_normal((steps * 2, 4)).astype(np.float32),
            "y": rng.integers(0, 3, steps * 2).astype(np.int32),
        },
        shuffle=False,
    ).batch(2)
    net = _Net()
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt)
    losses = []
    record = LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the run gives no input images to collect
        model.train(1, data, callbacks=[*callbacks, record])
    return opt, losses


def test_summary_collector_records_the_loss_and_histograms_every_collect_freq_steps(tmp_path):
    opt, losses = _train([SummaryCollector(str(tmp_path / "all"), collect_freq=4)])
    events = summary_reader.events(_summary_file(tmp_path / "all"))
    assert [e["step"] for e in events[1:]] == [1, 4, 8]
    for event in events[1:]:
        values = {tag: (kind, value) for tag, kind, value in event["values"]}
        assert values.pop("loss/auto") == ("scalar", pytest.approx(losses[event["step"] - 1], rel=1e-6))
        assert sorted(values) == sorted(p.name + "/auto" for p in opt.parameters[:5])  # the first five
        assert all(kind == "histogram" for kind, _ in values.values())
    # the last histograms are of the parameters at step 8 (one more step since): their counts and ranges
    fc1 = dict((t, v) for t, _, v in events[-1]["values"])["fc1.weight/auto"]
    assert fc1["count"] == 32 and sum(b[2] for b in fc1["buckets"]) == 32

    specified = {"collect_metric": False, "histogram_regular": "^fc2"}
    _train([SummaryCollector(str(tmp_path / "fc2"), collect_freq=5, collect_specified_data=specified)])
    events = summary_reader.events(_summary_file(tmp_path / "fc2"))
    assert [e["step"] for e in events[1:]] == [1, 5, 10]
    assert sorted(t for t, _, _ in events[1]["values"]) == ["fc2.bias/auto", "fc2.weight/auto"]

    only_loss = SummaryCollector(
        str(tmp_path / "loss"),
        collect_freq=3,
        collect_specified_data={"collect_metric": True},
        keep_default_action=False,
    )
    _train([only_loss])
    events = summary_reader.events(_summary_file(tmp_path / "loss"))
    assert [(e["step"], [t for t, _, _ in e["values"]]) for e in events[1:]] == [
        (s, ["loss/auto"]) for s in (1, 3, 6, 9)
    ]


def test_summary_collector_in_a_with_block_keeps_one_file_for_several_runs(tmp_path):
    with SummaryCollector(
        str(tmp_path), collect_freq=100, collect_specified_data={"collect_metric": True}, keep_default_action=False
    ) as collector:
        _, first = _train([collector], steps=2)
        _, second = _train([collector], steps=2)
    events = summary_reader.events(_summary_file(tmp_path))
    assert [(e["step"], e["values"][0][2]) for e in events[1:]] == [
        (1, pytest.approx(first[0], rel=1e-6)),
        (1, pytest.approx(second[0], rel=1e-6)),
    ]


def test_summary_collector_records_the_input_images_a_run_gives(tmp_path):
    from opforge.train.callback import CallbackParam, RunContext

    images = Tensor(np.random.default_rng(7).uniform(0, 1, (3, 3, 4, 4)).astype(np.float32))
    cb = CallbackParam(
        mode="train",
        cur_step_num=1,
        cur_epoch_num=1,
        net_outputs=Tensor(np.float32(2.5)),
        train_dataset_element=[images, Tensor(np.zeros(3, np.int32))],
        optimizer=None,
        list_callback=[],
        dataset_sink_mode=False,
    )
    collector = SummaryCollector(str(tmp_path))
    for hook in (collector.begin, collector.step_end, collector.end):
        hook(RunContext(cb))
    values = {t: (k, v) for t, k, v in summary_reader.events(_summary_file(tmp_path))[1]["values"]}
    assert values["loss/auto"] == ("scalar", 2.5)
    kind, (height, width, _, png) = values["input_data/auto"]  # the first column, 3 images side by side
    assert kind == "image" and (height, width) == (4, 12)
    canvas = np.asarray(Image.open(io.BytesIO(png)))
    np.testing.assert_array_equal(canvas[:, 4:8].transpose(2, 0, 1), (images.asnumpy()[1] * 255).astype(np.uint8))


def test_summary_collector_errors(tmp_path):
    with pytest.raises(ValueError, match="`collect_freq` should be greater than 0"):
        SummaryCollector(str(tmp_path), collect_freq=0)
    with pytest.raises(TypeError, match="'collect_freq' must be an int"):
        SummaryCollector(str(tmp_path), collect_freq="10")
    with pytest.raises(ValueError, match=r"the keys \['collect_images'\] of `collect_specified_data` are unsupported"):
        SummaryCollector(str(tmp_path), collect_specified_data={"collect_images": True})
    with pytest.raises(ValueError, match="`histogram_regular` is not a valid regular expression"):
        SummaryCollector(str(tmp_path), collect_specified_data={"histogram_regular": "("})
    with pytest.raises(TypeError, match="'collect_metric' must be a bool"):
        SummaryCollector(str(tmp_path), collect_specified_data={"collect_metric": 1})
    with pytest.raises(TypeError, match="'keep_default_action' must be a bool"):
        SummaryCollector(str(tmp_path), keep_default_action=None)
    with pytest.raises(ValueError, match="more than one SummaryCollector"):
        _train([SummaryCollector(str(tmp_path / "a")), SummaryCollector(str(tmp_path / "b"))])
