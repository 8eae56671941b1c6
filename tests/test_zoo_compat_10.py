"""What the model zoo's GoogleNet, SqueezeNet and AlexNet (tests/zoo/googlenet, squeezenet, alexnet) needed of
opforge, one focused check each: ``vision.RandomCrop``'s padding forms (an int, 2 or 4 values),
``pad_if_needed``, ``fill_value`` and ``Border`` modes, ``vision.CutOut``, ``dataset.config.set_prefetch_size``
and ``opforge.profiler.Profiler``. References are NumPy."""

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
import opforge.dataset.vision as vision
from opforge import Tensor
from opforge.profiler import Profiler


@pytest.fixture(autouse=True)
def _seed():
    ds.config.set_seed(3)
    yield
    ds.config._state["seed"] = None


def _image(h=5, w=6, c=3):
    return (np.arange(h * w * c) % 251).reshape(h, w, c).astype(np.uint8)


def _windows(padded, ch, cw):
    return [
        padded[t : t + ch, s : s + cw] for t in range(padded.shape[0] - ch + 1) for s in range(padded.shape[1] - cw + 1)
    ]


@pytest.mark.parametrize(
    "padding, widths",
    [
        (2, ((2, 2), (2, 2))),
        ((1, 3), ((3, 3), (1, 1))),
        ([1, 2, 3, 4], ((2, 4), (1, 3))),
        ((4, 4, 4, 4), ((4, 4), (4, 4))),
    ],
)
def test_random_crop_padding_forms(padding, widths):
    img = _image()
    padded = np.pad(img, [*widths, (0, 0)])
    crop = vision.RandomCrop((5, 6), padding)
    for _ in range(5):
        out = crop(img)
        assert out.shape == (5, 6, 3) and any(np.array_equal(out, w) for w in _windows(padded, 5, 6))
    # the full padded size: the one window
    full = vision.RandomCrop(padded.shape[:2], padding)(img)
    np.testing.assert_array_equal(full, padded)


@pytest.mark.parametrize("mode", [vision.Border.EDGE, vision.Border.REFLECT, vision.Border.SYMMETRIC])
def test_random_crop_padding_modes_and_fill(mode):
    img = _image()
    out = vision.RandomCrop((9, 10), 2, padding_mode=mode)(img)
    np.testing.assert_array_equal(out, np.pad(img, [(2, 2), (2, 2), (0, 0)], mode=mode))
    out = vision.RandomCrop((7, 8), 1, fill_value=(10, 20, 30))(img)
    want = np.stack([np.pad(img[..., c], 1, constant_values=v) for c, v in enumerate((10, 20, 30))], -1)
    np.testing.assert_array_equal(out, want)


def test_random_crop_pad_if_needed_and_errors():
    img = _image(4, 6)
    out = vision.RandomCrop((6, 6), pad_if_needed=True)(img)  # the 2 missing rows on each side: 8 rows to crop
    assert out.shape == (6, 6, 3)
    assert any(np.array_equal(out, w) for w in _windows(np.pad(img, [(2, 2), (0, 0), (0, 0)]), 6, 6))
    with pytest.raises(ValueError, match="larger than the padded image"):
        vision.RandomCrop((6, 6))(img)
    with pytest.raises(TypeError, match="'padding'"):
        vision.RandomCrop(4, (1, 2, 3))
    with pytest.raises(ValueError, match="'padding'"):
        vision.RandomCrop(4, -1)
    with pytest.raises(TypeError, match="'pad_if_needed'"):
        vision.RandomCrop(4, pad_if_needed=1)
    with pytest.raises(ValueError, match="'fill_value'"):
        vision.RandomCrop(4, fill_value=300)
    with pytest.raises(TypeError, match="'padding_mode'"):
        vision.RandomCrop(4, padding_mode="wrap")
    with pytest.raises(ValueError, match="'size'"):
        vision.RandomCrop(0)


def test_cut_out_zeroes_whole_squares_inside_the_image():
    img = np.full((10, 12, 3), 7, np.uint8)
    for _ in range(10):
        out = vision.CutOut(4)(img)
        zero = (out == 0).all(-1)
        rows, cols = np.nonzero(zero)
        assert zero.sum() == 16 and np.ptp(rows) == 3 and np.ptp(cols) == 3
        assert np.all(out[~zero] == 7) and np.all(img == 7)  # the input is not written
    chw = vision.CutOut(3, num_patches=2, is_hwc=False)(np.ones((2, 6, 6), np.float32))
    assert 9 <= (chw[0] == 0).sum() <= 18 and np.array_equal(chw[0] == 0, chw[1] == 0)
    out = vision.CutOut(6)(np.ones((6, 6, 1)))
    assert not out.any()
    with pytest.raises(ValueError, match="larger than the image"):
        vision.CutOut(7)(np.ones((6, 6, 3)))
    with pytest.raises(TypeError, match="'length'"):
        vision.CutOut(2.0)
    with pytest.raises(ValueError, match="'num_patches'"):
        vision.CutOut(2, num_patches=0)
    with pytest.raises(TypeError, match="'is_hwc'"):
        vision.CutOut(2, is_hwc=1)


def test_cut_out_in_a_pipeline_and_the_prefetch_size():
    ds.config.set_prefetch_size(64)
    assert ds.config.get_prefetch_size() == 64
    with pytest.raises(ValueError, match="'size'"):
        ds.config.set_prefetch_size(0)
    with pytest.raises(TypeError, match="'size'"):
        ds.config.set_prefetch_size(2.0)
    ds.config.set_prefetch_size(16)
    data = ds.NumpySlicesDataset({"image": np.ones((3, 8, 8, 3), np.uint8)}, shuffle=False)
    data = data.map(operations=[vision.CutOut(2), vision.HWC2CHW()], input_columns="image")
    for (image,) in data.create_tuple_iterator(output_numpy=True):
        assert image.shape == (3, 8, 8) and (image[0] == 0).sum() == 4


def test_profiler_records_the_kernels_between_start_and_analyse(tmp_path):
    prof = Profiler(output_path=str(tmp_path))
    x = Tensor(np.ones((2, 2), np.float32))
    opforge.ops.matmul(x, x)
    path = prof.analyse()
    assert path == str(tmp_path / "profiler" / "kernel_stats.txt")
    assert "MatMul" in open(path).read()
    idle = Profiler(output_path=str(tmp_path / "b"), start_profile=False)
    with pytest.raises(RuntimeError, match="not started"):
        idle.stop()
    with pytest.raises(TypeError, match="'output_path'"):
        Profiler(output_path=1)
