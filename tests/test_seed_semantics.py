"""MindSpore's seeding, as the model zoo relies on it (tests/zoo/mobilenetv3, tests/zoo/pix2pix, tests/zoo/inceptionv3):
``set_seed`` also seeds ``numpy.random`` (the zoo draws initial weights with ``np.random.normal``) and the
datasets' seed; ``dataset.config.set_seed`` seeds Python's ``random`` and ``numpy.random`` and restarts the
random transforms, so that transforms made after the same seed draw alike (Pix2Pix flips its input and target
images together so); a seeded map run by several workers gives the same rows whichever worker takes a row."""

import random

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
import opforge.dataset.vision as vision
from opforge import nn


@pytest.fixture(autouse=True)
def _reset():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def test_set_seed_seeds_numpy_random_the_initializers_and_the_dataset_seed():
    opforge.set_seed(7)
    drawn = np.random.rand(4)
    np.testing.assert_array_equal(drawn, np.random.RandomState(7).rand(4))  # numpy.random.seed(7)'s draws
    assert ds.config.get_seed() == 7 and opforge.get_seed() == 7
    opforge.set_seed(7)
    first = nn.Dense(3, 2).weight.asnumpy()
    opforge.set_seed(7)
    np.testing.assert_array_equal(nn.Dense(3, 2).weight.asnumpy(), first)
    np.testing.assert_array_equal(np.random.rand(4), drawn)
    opforge.set_seed(2**32 - 1)
    with pytest.raises(ValueError, match="4294967295"):
        opforge.set_seed(2**32)
    with pytest.raises(ValueError):
        opforge.set_seed(-1)


def test_dataset_set_seed_seeds_python_and_numpy_random():
    ds.config.set_seed(9)
    assert random.random() == random.Random(9).random()
    np.testing.assert_array_equal(np.random.rand(3), np.random.RandomState(9).rand(3))
    with pytest.raises(ValueError, match="4294967295"):
        ds.config.set_seed(2**32)


def _ramp():
    return np.tile(np.arange(8, dtype=np.uint8)[None, :, None], (4, 1, 3))


def test_each_dataset_set_seed_restarts_the_random_transforms():
    image = _ramp()
    outcomes = []
    for seed in range(16):
        # the zoo's Pix2Pix: a seed, a new flip of the input; the same seed, a new flip of the target
        ds.config.set_seed(seed)
        a = vision.RandomHorizontalFlip(prob=0.5)(image)
        ds.config.set_seed(seed)
        b = vision.RandomHorizontalFlip(prob=0.5)(image)
        np.testing.assert_array_equal(a, b)
        outcomes.append(bool(a[0, 0, 0] == 7))
    assert 0 < sum(outcomes) < 16  # the flips depend on the seed
    op = vision.RandomCrop(4, padding=2)
    ds.config.set_seed(3)
    first = [op(image) for _ in range(5)]
    ds.config.set_seed(3)  # the same seed again: the same draws again
    for want in first:
        np.testing.assert_array_equal(op(image), want)


def _augmented(workers, processes=False, seed=11):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (24, 12, 12, 3)).astype(np.uint8)
    ds.config.set_seed(seed)
    data = ds.NumpySlicesDataset({"image": images, "label": np.arange(24, dtype=np.int32)}, shuffle=False)
    ops = [vision.RandomCrop(8, padding=2), vision.RandomHorizontalFlip(), vision.RandomColorAdjust(brightness=0.5)]
    data = data.map(ops, input_columns="image", num_parallel_workers=workers, python_multiprocessing=processes)
    return [row[0] for row in data.create_tuple_iterator(output_numpy=True)]


def test_a_seeded_map_on_several_workers_gives_the_same_rows_in_every_run():
    want = _augmented(4)
    assert len({r.tobytes() for r in want}) == 24  # every row drawn differently
    for workers, processes in ((4, False), (2, False), (3, True)):
        got = _augmented(workers, processes)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    other = _augmented(4, seed=12)
    assert any(not np.array_equal(a, b) for a, b in zip(other, want))
