"""``Dataset.get_batch_size`` (MindSpore's): the batch size of the nearest ``batch`` above the source, 1 without
one, -1 for a callable ``batch_size``; through a concat or a zip, its last dataset's. The zoo's PointNet eval.py
prints it (tests/test_zoo_pointnet.py)."""

import numpy as np

import opforge.dataset as ds


def _numbers(n=10):
    return ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.int32)}, shuffle=False)


def test_the_nearest_batch_gives_the_size():
    data = _numbers()
    assert data.get_batch_size() == 1
    batched = data.batch(3, drop_remainder=True)
    assert batched.get_batch_size() == 3
    # operations above the batch keep it; the nearest of two batches counts
    assert batched.map(lambda x: x * 2, input_columns="x").repeat(2).shuffle(4).get_batch_size() == 3
    assert data.batch(2).batch(4).get_batch_size() == 4
    assert data.batch(2, per_batch_map=lambda x, info: (x,), input_columns=["x"]).get_batch_size() == 2
    assert data.batch(lambda info: 2).get_batch_size() == -1
    assert len(next(batched.create_tuple_iterator(output_numpy=True))[0]) == batched.get_batch_size()


def test_concat_and_zip_take_their_last_dataset():
    assert (_numbers().batch(2) + _numbers().batch(5)).get_batch_size() == 5
    other = ds.NumpySlicesDataset({"y": np.arange(10, dtype=np.int32)}, shuffle=False)
    assert _numbers().batch(2).zip(other.batch(3)).get_batch_size() == 3
    assert _numbers().batch(2).zip(other).get_batch_size() == 1
