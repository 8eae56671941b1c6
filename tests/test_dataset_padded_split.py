"""``Dataset.padded_batch`` (and MindSpore 1.x's ``batch(..., pad_info=...)``) and ``Dataset.split``, against
batches and splits built with NumPy: padding values, shapes, cut rows, drop_remainder, the split sizes, the parts'
disjointness and coverage, their determinism under ``ds.config.set_seed``, and the errors."""

import logging

import numpy as np
import pytest

import opforge.dataset as ds


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def _batches(dataset):
    return list(dataset.create_tuple_iterator(output_numpy=True, num_epochs=1))


def _padded(values, shape, fill, dtype):
    """The NumPy expectation: each value written into a ``shape`` array of ``fill``, cut where it is larger."""
    out = np.full((len(values), *shape), fill, dtype=dtype)
    for k, v in enumerate(values):
        cut = tuple(slice(0, min(a, b)) for a, b in zip(v.shape, shape))
        out[(k, *cut)] = v[cut]
    return out


def _masks(rng, count):
    """MaskRCNN-like rows: a (instances, h, w) uint8 mask and an int32 label per row."""
    rows = []
    for i in range(count):
        shape = (int(rng.integers(1, 6)), int(rng.integers(2, 5)), int(rng.integers(2, 5)))
        rows.append((rng.integers(1, 256, shape).astype(np.uint8), np.array(i, np.int32)))
    return rows


# ---------------------------------------------------------------------------------------------
# padded_batch


def test_padded_batch_maskrcnn_form(rng):
    """The zoo's MaskRCNN: pad_info={"mask": ([max_instance_count, None, None], 0)}, drop_remainder=True; a row
    with more instances than the pad shape is cut to it."""
    rows = _masks(rng, 7)
    data = ds.GeneratorDataset(rows, ["mask", "label"], shuffle=False)
    batched = data.padded_batch(3, drop_remainder=True, pad_info={"mask": ([4, None, None], 0)})
    assert batched.get_dataset_size() == 2 and batched.get_batch_size() == 3
    got = _batches(batched)
    assert len(got) == 2
    for b, (mask, label) in enumerate(got):
        part = [r[0] for r in rows[3 * b : 3 * b + 3]]
        shape = (4, max(v.shape[1] for v in part), max(v.shape[2] for v in part))
        expected = _padded(part, shape, 0, np.uint8)
        assert mask.dtype == np.uint8 and mask.shape == expected.shape
        np.testing.assert_array_equal(mask, expected)
        np.testing.assert_array_equal(label, np.arange(3 * b, 3 * b + 3, dtype=np.int32))


def test_batch_pad_info_is_padded_batch(rng):
    """MindSpore 1.x's batch(..., pad_info=...) (the zoo's PointRend) pads as padded_batch does."""
    rows = _masks(rng, 5)
    pad_info = {"mask": ([3, None, None], 0)}
    old = _batches(ds.GeneratorDataset(rows, ["mask", "label"], shuffle=False).batch(2, pad_info=pad_info))
    new = _batches(ds.GeneratorDataset(rows, ["mask", "label"], shuffle=False).padded_batch(2, pad_info=pad_info))
    assert len(old) == len(new) == 3  # the last batch kept (drop_remainder False)
    for (a_mask, a_label), (b_mask, b_label) in zip(old, new):
        np.testing.assert_array_equal(a_mask, b_mask)
        np.testing.assert_array_equal(a_label, b_label)
    part = [r[0] for r in rows[4:]]
    np.testing.assert_array_equal(old[-1][0], _padded(part, (3, part[0].shape[1], part[0].shape[2]), 0, np.uint8))


def test_empty_pad_info_pads_every_column_to_the_largest(rng):
    lengths = [3, 1, 4, 2, 5]
    rows = [(rng.standard_normal(n).astype(np.float32), np.arange(n + 1, dtype=np.int64).reshape(1, -1))
            for n in lengths]  # fmt: skip
    got = _batches(ds.GeneratorDataset(rows, ["a", "b"], shuffle=False).padded_batch(2, pad_info={}))
    for b, (a, bb) in enumerate(got):
        part = rows[2 * b : 2 * b + 2]
        longest = max(len(r[0]) for r in part)
        np.testing.assert_array_equal(a, _padded([r[0] for r in part], (longest,), 0, np.float32))
        np.testing.assert_array_equal(bb, _padded([r[1] for r in part], (1, longest + 1), 0, np.int64))
        assert a.dtype == np.float32 and bb.dtype == np.int64


def test_none_shape_pads_to_the_largest_with_the_value():
    rows = [(np.full(n, n, np.float64),) for n in (2, 5, 3)]
    got = _batches(ds.GeneratorDataset(rows, ["x"], shuffle=False).padded_batch(3, pad_info={"x": (None, -1.5)}))
    (x,) = got[0]
    np.testing.assert_array_equal(x, _padded([r[0] for r in rows], (5,), -1.5, np.float64))
    # a column named with None as its value: padded to the largest, with 0
    (y,) = _batches(ds.GeneratorDataset(rows, ["x"], shuffle=False).padded_batch(3, pad_info={"x": None}))[0]
    np.testing.assert_array_equal(y, _padded([r[0] for r in rows], (5,), 0, np.float64))


def test_pad_value_cast_to_the_column_dtype():
    rows = [(np.ones((1, n), np.int32),) for n in (1, 3)]
    (x,) = _batches(ds.GeneratorDataset(rows, ["x"], shuffle=False).padded_batch(2, pad_info={"x": ([2, 4], 7.9)}))[0]
    assert x.dtype == np.int32
    np.testing.assert_array_equal(x, _padded([r[0] for r in rows], (2, 4), 7, np.int32))  # 7.9 -> int32 7


def test_only_the_named_columns_are_padded():
    rows = [(np.arange(n), np.array([n, n])) for n in (2, 4)]
    data = ds.GeneratorDataset(rows, ["x", "fixed"], shuffle=False)
    x, fixed = _batches(data.padded_batch(2, pad_info={"x": ([6], 9)}))[0]
    np.testing.assert_array_equal(x, _padded([r[0] for r in rows], (6,), 9, x.dtype))
    np.testing.assert_array_equal(fixed, np.array([[2, 2], [4, 4]]))
    # a column left out of pad_info must batch as it is
    ragged = data.padded_batch(2, pad_info={"fixed": None})
    with pytest.raises(RuntimeError, match="'padded_batch'.*one shape per column"):
        _batches(ragged)


def test_padded_batch_keeps_the_remainder_and_takes_a_callable_size():
    rows = [(np.arange(n),) for n in (1, 2, 3, 4, 5)]
    data = ds.GeneratorDataset(rows, ["x"], shuffle=False)
    kept = data.padded_batch(2, pad_info={"x": (None, -1)})
    assert kept.get_dataset_size() == 3
    last = _batches(kept)[-1][0]
    np.testing.assert_array_equal(last, np.arange(5)[None])
    assert data.padded_batch(2, drop_remainder=True, pad_info={}).get_dataset_size() == 2

    sizes = data.padded_batch(lambda info: info.get_batch_num() + 1, pad_info={"x": (None, -1)})
    got = [b[0] for b in _batches(sizes)]
    assert [g.shape for g in got] == [(1, 1), (2, 3), (2, 5)]
    np.testing.assert_array_equal(got[1], _padded([np.arange(2), np.arange(3)], (3,), -1, got[1].dtype))


def test_pad_after_per_batch_map():
    """MindSpore pads after per_batch_map: the map may change the lengths."""

    def grow(x, info):
        return ([np.concatenate([v, v]) for v in x],)

    rows = [(np.arange(n, dtype=np.int32),) for n in (1, 3)]
    data = ds.GeneratorDataset(rows, ["x"], shuffle=False)
    (x,) = _batches(data.batch(2, per_batch_map=grow, input_columns=["x"], pad_info={"x": (None, -1)}))[0]
    expected = _padded([np.tile(r[0], 2) for r in rows], (6,), -1, np.int32)
    np.testing.assert_array_equal(x, expected)


def test_string_columns_pad_with_text():
    rows = [(np.array(["a"]),), (np.array(["bb", "ccc"]),)]
    data = ds.GeneratorDataset(rows, ["s"], shuffle=False)
    (s,) = _batches(data.padded_batch(2, pad_info={"s": (None, "<pad>")}))[0]
    assert s.tolist() == [["a", "<pad>"], ["bb", "ccc"]]
    (t,) = _batches(data.padded_batch(2, pad_info={}))[0]
    assert t.tolist() == [["a", ""], ["bb", "ccc"]]


def test_padded_batch_errors():
    rows = [(np.arange(n),) for n in (1, 2)]
    data = ds.GeneratorDataset(rows, ["x"], shuffle=False)
    with pytest.raises(TypeError, match="'padded_batch'.*'pad_info' must be a dict"):
        data.padded_batch(2, pad_info=[("x", None)])
    with pytest.raises(TypeError, match=r"pad_info\['x'\] must be a tuple"):
        data.padded_batch(2, pad_info={"x": [[3], 0]})
    with pytest.raises(ValueError, match=r"pad_info\['x'\] must be a tuple of size 2"):
        data.padded_batch(2, pad_info={"x": ([3], 0, 1)})
    with pytest.raises(ValueError, match="must be > 0"):
        data.padded_batch(2, pad_info={"x": ([0], 0)})
    with pytest.raises(TypeError, match="must be an int or None"):
        data.padded_batch(2, pad_info={"x": ([2.0], 0)})
    with pytest.raises(TypeError, match="pad_shape .* must be a list"):
        data.padded_batch(2, pad_info={"x": ((2,), 0)})
    with pytest.raises(TypeError, match="pad_value .* must be an int, a float, a str"):
        data.padded_batch(2, pad_info={"x": ([2], [0])})
    with pytest.raises(RuntimeError, match="'padded_batch'.*column 'y' is not one of"):
        data.padded_batch(2, pad_info={"y": None})
    with pytest.raises(RuntimeError, match="'batch'.*column 'y' is not one of"):
        data.batch(2, pad_info={"y": None})
    with pytest.raises(TypeError, match="'padded_batch'.*'drop_remainder' must be a bool"):
        data.padded_batch(2, drop_remainder=1)
    with pytest.raises(ValueError, match="'padded_batch'.*'batch_size'"):
        data.padded_batch(0)
    with pytest.raises(RuntimeError, match="pad_shape \\[2, 2\\] of column 'x' must have one dim per dim"):
        _batches(data.padded_batch(2, pad_info={"x": ([2, 2], 0)}))
    with pytest.raises(RuntimeError, match="same type"):
        _batches(data.padded_batch(2, pad_info={"x": (None, "pad")}))
    mixed = ds.GeneratorDataset([(np.zeros(2),), (np.zeros((2, 2)),)], ["x"], shuffle=False)
    with pytest.raises(RuntimeError, match="must have one rank"):
        _batches(mixed.padded_batch(2, pad_info={}))


# ---------------------------------------------------------------------------------------------
# split


def _values(dataset, epochs=1):
    out = []
    for _ in range(epochs):
        out.append([int(np.asarray(row[0]).reshape(-1)[0]) for row in dataset.create_tuple_iterator(
            output_numpy=True, num_epochs=1)])  # fmt: skip
    return out if epochs > 1 else out[0]


def _numbers(n):
    return ds.NumpySlicesDataset({"v": np.arange(n)}, shuffle=False)


@pytest.mark.parametrize(
    "k, sizes, expected",
    [
        (10, [0.25, 0.25, 0.5], [3, 2, 5]),  # round(2.5) = 2 twice: the missing row goes to the first part
        (5, [0.5, 0.5], [3, 2]),
        (7, [0.3, 0.3, 0.4], [2, 2, 3]),
        (3, [0.5, 0.5], [1, 2]),  # round(1.5) = 2 twice: the excess comes off the first part
        (10, [0.15, 0.15, 0.7], [1, 2, 7]),
        (10, [3, 7], [3, 7]),
    ],
)
def test_split_sizes_and_consecutive_rows(k, sizes, expected):
    parts = _numbers(k).split(sizes, randomize=False)
    assert isinstance(parts, tuple) and [p.get_dataset_size() for p in parts] == expected
    starts = np.cumsum([0, *expected])
    for part, lo, hi in zip(parts, starts[:-1], starts[1:]):
        assert _values(part) == list(range(lo, hi))


def _check_partition(parts, n, sizes):
    got = [_values(p) for p in parts]
    assert [len(g) for g in got] == sizes
    everything = sorted(v for g in got for v in g)
    assert everything == list(range(n))  # disjoint and covering
    return got


def test_randomized_split_of_a_mappable_source():
    """The zoo's ShuffleNet: set_seed, then split([0.8, 0.2], randomize=True) of an unshuffled source."""
    ds.config.set_seed(1)
    train, test = _numbers(50).split([0.8, 0.2], randomize=True)
    got = _check_partition((train, test), 50, [40, 10])
    assert got[0] != list(range(40))  # randomized
    # the same parts every epoch
    assert _values(train, epochs=3) == [got[0]] * 3
    # and in every run with the seed
    ds.config.set_seed(1)
    again = _numbers(50).split([0.8, 0.2])
    assert [_values(p) for p in again] == got


def test_randomized_split_without_a_seed_is_still_a_partition():
    for parts in (_numbers(30).split([10, 20]), _numbers(30).map(lambda v: v, "v").split([10, 20])):
        _check_partition(parts, 30, [10, 20])


def test_split_above_operations_goes_row_by_row():
    """The zoo's cnn_direction_model: a map, then split([0.5, 0.5]) (randomize by default)."""
    ds.config.set_seed(5)
    data = _numbers(20).map(lambda v: v * 3, "v")
    lr, rl = data.split([0.5, 0.5])
    got = [_values(p) for p in (lr, rl)]
    assert sorted(got[0] + got[1]) == [3 * i for i in range(20)] and len(got[0]) == len(got[1]) == 10
    assert got[0] != [3 * i for i in range(10)]
    assert _values(lr, epochs=2) == [got[0]] * 2
    ds.config.set_seed(5)
    assert [_values(p) for p in data.split([0.5, 0.5])] == got
    # after the split the parts take further operations
    batched = rl.map(lambda v: -v, "v").batch(1, drop_remainder=True)
    assert sorted(_values(batched)) == sorted(-v for v in got[1])


def test_split_of_batches_dkt_form():
    """The zoo's DKT: a shuffled GeneratorDataset, batched, then split([0.8, 0.2]): parts of batches."""
    ds.config.set_seed(3)
    source = ds.GeneratorDataset([(np.array(i),) for i in range(40)], ["x"], shuffle=True)
    batches = source.batch(4)
    for randomize in (False, True):
        train, test = batches.split([0.8, 0.2], randomize=randomize)
        assert train.get_dataset_size() == 8 and test.get_dataset_size() == 2
        rows = [r[0].tolist() for p in (train, test) for r in p.create_tuple_iterator(output_numpy=True, num_epochs=1)]
        assert sorted(v for batch in rows for v in batch) == list(range(40))  # one epoch: disjoint, covering


def test_split_parts_have_their_own_pipeline():
    a, b = _numbers(8).split([4, 4], randomize=False)
    a.use_sampler(ds.SequentialSampler(num_samples=2))
    assert _values(a) == [0, 1] and _values(b) == [4, 5, 6, 7]
    c, d = _numbers(8).map(lambda v: v, "v").split([4, 4], randomize=False)
    c.use_sampler(ds.SubsetSampler([7, 6, 5, 4, 3, 2, 1, 0]))
    assert _values(c) == [7, 6, 5, 4] and _values(d) == [4, 5, 6, 7]


def test_split_of_a_text_file_goes_row_by_row(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line{i}\n" for i in range(6)))
    first, second = ds.TextFileDataset(str(path), shuffle=False).split([4, 2], randomize=False)
    text = [[str(r[0]) for r in p.create_tuple_iterator(output_numpy=True, num_epochs=1)] for p in (first, second)]
    assert text == [[f"line{i}" for i in range(4)], ["line4", "line5"]]


def test_random_sampler_fixed_across_epochs():
    sampler = ds.RandomSampler()
    sampler.reshuffle_each_epoch = False
    data = ds.NumpySlicesDataset({"v": np.arange(12)}, sampler=sampler)
    orders = _values(data, epochs=3)
    assert orders[0] == orders[1] == orders[2] and sorted(orders[0]) == list(range(12))


def test_split_refuses_a_sharded_dataset_and_warns_on_a_shuffled_one(caplog):
    sharded = ds.NumpySlicesDataset({"v": np.arange(8)}, shuffle=False, num_shards=2, shard_id=0)
    with pytest.raises(RuntimeError, match="'split'.*sharded"):
        sharded.split([2, 2])
    with pytest.raises(RuntimeError, match="'split'.*sharded"):
        sharded.map(lambda v: v, "v").split([2, 2])
    used = _numbers(8)
    used.use_sampler(ds.DistributedSampler(2, 1, shuffle=False))
    with pytest.raises(RuntimeError, match="'split'.*sharded"):
        used.split([2, 2])
    one_shard = ds.NumpySlicesDataset({"v": np.arange(8)}, shuffle=False, num_shards=1, shard_id=0)
    assert [p.get_dataset_size() for p in one_shard.split([6, 2])] == [6, 2]
    with caplog.at_level(logging.WARNING, logger="opforge.dataset.engine"):
        _numbers(8).shuffle(4).split([4, 4])
    assert "shuffled before split" in caplog.text


def test_split_argument_errors():
    data = _numbers(10)
    with pytest.raises(TypeError, match="'split'.*'sizes' must be a list"):
        data.split((5, 5))
    with pytest.raises(TypeError, match="'split'.*'randomize' must be a bool"):
        data.split([5, 5], randomize=1)
    with pytest.raises(ValueError, match="'split'.*'sizes' cannot be empty"):
        data.split([])
    with pytest.raises(ValueError, match="'split'.*list of int or a list of float"):
        data.split([5, 0.5])
    with pytest.raises(ValueError, match="'split'.*every one must be > 0"):
        data.split([10, 0])
    with pytest.raises(ValueError, match=r"'split'.*in \(0, 1\]"):
        data.split([1.5, -0.5])
    with pytest.raises(ValueError, match="'split'.*sum to 1"):
        data.split([0.5, 0.4])
    with pytest.raises(RuntimeError, match="'split'.*sum to 9, but the dataset has 10 rows"):
        data.split([4, 5])
    with pytest.raises(RuntimeError, match="'split'.*size 0.5 is too small"):
        _numbers(1).split([0.5, 0.5])
    with pytest.raises(RuntimeError, match="'get_dataset_size'"):
        data.repeat().split([0.5, 0.5])
