"""Regression tests for the gaps the model zoo's SSD (tests/zoo/ssd, tests/test_zoo_ssd.py) met:
``dataset.vision.RandomColorAdjust`` (create_ssd_dataset's colour jitter), ``load_param_into_net(net, d,
strict_load=True)`` returning what it did not load instead of raising (train.py's ``filter_weight`` path), and
``auto_parallel_context().get_device_num_is_set()`` (TrainingWrapper in data-parallel mode)."""

import numpy as np
import pytest

import opforge.dataset as ds
import opforge.nn as nn
from opforge import Tensor, parallel_context
from opforge.common import dtype as mstype
from opforge.context import ParallelMode
from opforge.parallel import _auto_parallel_context as apc


@pytest.fixture(autouse=True)
def _reset():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None
    parallel_context.reset_auto_parallel_context()


def _image(seed=0):
    return np.random.default_rng(seed).integers(0, 256, (6, 7, 3), dtype=np.uint8)


def _grey(img):
    """ITU-R 601-2 luma, as Pillow's convert('L')."""
    return img[..., 0] * 0.299 + img[..., 1] * 0.587 + img[..., 2] * 0.114


def test_random_color_adjust_brightness_contrast_saturation_match_numpy():
    img = _image().astype(np.float64)
    f = 1.3
    out = ds.vision.RandomColorAdjust(brightness=(f, f))(_image())
    np.testing.assert_allclose(out, np.clip(img * f, 0, 255), atol=1.01)
    out = ds.vision.RandomColorAdjust(contrast=(f, f))(_image())
    mean = np.floor(_grey(img).mean() + 0.5)
    np.testing.assert_allclose(out, np.clip(mean + f * (img - mean), 0, 255), atol=1.51)
    out = ds.vision.RandomColorAdjust(saturation=(0.4, 0.4))(_image())
    grey = _grey(img)[..., None]
    np.testing.assert_allclose(out, np.clip(grey + 0.4 * (img - grey), 0, 255), atol=1.51)
    assert out.dtype == np.uint8 and out.shape == (6, 7, 3)


def test_random_color_adjust_defaults_are_identity_and_hue_rotates():
    np.testing.assert_array_equal(ds.vision.RandomColorAdjust()(_image()), _image())
    red = np.zeros((2, 2, 3), np.uint8)
    red[..., 0] = 255
    green = ds.vision.RandomColorAdjust(hue=(1 / 3, 1 / 3))(red)
    np.testing.assert_allclose(green[0, 0], [0, 255, 0], atol=8)


def test_random_color_adjust_draws_within_the_range_and_follows_the_dataset_seed():
    op = ds.vision.RandomColorAdjust(brightness=0.4)
    flat = np.full((2, 2, 3), 100, np.uint8)
    values = [int(op(flat)[0, 0, 0]) for _ in range(30)]
    assert 59 <= min(values) < max(values) <= 140 and len(set(values)) > 5
    ds.config.set_seed(5)
    first = [op(_image()) for _ in range(3)]
    ds.config.set_seed(6)
    op(_image())
    ds.config.set_seed(5)
    second = [op(_image()) for _ in range(3)]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_random_color_adjust_errors():
    with pytest.raises(ValueError, match="'brightness' must not be negative"):
        ds.vision.RandomColorAdjust(brightness=-0.1)
    with pytest.raises(TypeError, match="'contrast'"):
        ds.vision.RandomColorAdjust(contrast="0.4")
    with pytest.raises(ValueError, match="'hue' must lie in"):
        ds.vision.RandomColorAdjust(hue=0.6)
    with pytest.raises(ValueError, match="'saturation' must be"):
        ds.vision.RandomColorAdjust(saturation=(2.0, 1.0))
    with pytest.raises(ValueError, match="RGB uint8"):
        ds.vision.RandomColorAdjust(brightness=0.4)(np.zeros((4, 4), np.uint8))


def test_load_param_into_net_strict_load_returns_what_it_did_not_load():
    src, dst = nn.Dense(3, 2), nn.Dense(3, 2)
    params = {"weight": src.weight, "extra": src.bias}
    not_loaded, unused = nn.load_param_into_net(dst, params, True)
    assert not_loaded == ["bias"] and unused == ["extra"]
    np.testing.assert_array_equal(dst.weight.asnumpy(), src.weight.asnumpy())
    # strict: no look-up under a prefix (the non-strict default finds "network.bias")
    assert nn.load_param_into_net(dst, {"network.bias": src.bias}, strict_load=True)[0] == ["weight", "bias"]
    assert nn.load_param_into_net(dst, {"network.bias": src.bias})[0] == ["weight"]


def test_load_param_into_net_strict_load_refuses_a_dtype_change():
    dst = nn.Dense(3, 2)
    half = {"weight": Tensor(np.ones((2, 3), np.float16))}
    with pytest.raises(RuntimeError, match="'weight' is Float32 in the network but Float16"):
        nn.load_param_into_net(dst, half, strict_load=True)
    nn.load_param_into_net(dst, half)  # converted when not strict
    assert dst.weight.dtype == mstype.float32
    np.testing.assert_array_equal(dst.weight.asnumpy(), 1)


def test_auto_parallel_context_device_num_is_set():
    ctx = apc.auto_parallel_context()
    assert ctx.get_device_num_is_set() is False and ctx.get_global_rank_is_set() is False
    parallel_context.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, device_num=2)
    assert ctx.get_device_num_is_set() is True and ctx.get_device_num() == 2
    parallel_context.reset_auto_parallel_context()
    assert ctx.get_device_num_is_set() is False
