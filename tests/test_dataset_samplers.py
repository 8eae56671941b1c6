"""MindSpore's dataset samplers (opforge/dataset/samplers.py) and PaddedDataset (opforge/dataset/padded.py):
the rows each sampler picks against index lists worked out by hand or with NumPy, get_dataset_size, chained
samplers, use_sampler, the readers' ``sampler``, a concatenation padded for a DistributedSampler (the model
zoo's BERT create_eval_dataset), and the errors."""

import numpy as np
import pytest
from tfrecord_encoder import write as write_tfrecord
from zoo.bert import dataset as bert_dataset

import opforge.dataset as ds
from opforge.dataset.samplers import SamplerError
from opforge.mindrecord import FileWriter


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def _source(n):
    return [np.array(i, np.int64) for i in range(n)]


def _data(n=10, **kwargs):
    return ds.GeneratorDataset(_source(n), ["x"], **kwargs)


def _epochs(data, epochs=1):
    """Each epoch's values of the first column, as lists of Python values."""
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[r[0].tolist() for r in it] for _ in range(epochs)]


def _rows(data):
    return _epochs(data)[0]


# ---------------------------------------------------------------------------------------------
# Each sampler's rows


def test_sequential_sampler():
    assert _rows(_data(sampler=ds.SequentialSampler())) == list(range(10))
    data = _data(sampler=ds.SequentialSampler(start_index=3, num_samples=4))
    assert _rows(data) == [3, 4, 5, 6] and data.get_dataset_size() == 4
    data = _data(sampler=ds.SequentialSampler(start_index=7, num_samples=5))  # capped by the rows left
    assert _rows(data) == [7, 8, 9] and data.get_dataset_size() == 3
    assert _rows(_data(sampler=ds.SequentialSampler(num_samples=0))) == list(range(10))  # 0: every row


def test_random_sampler_draws_from_the_dataset_seed():
    ds.config.set_seed(7)
    data = _data(sampler=ds.RandomSampler())
    want = [np.random.default_rng([7, e]).permutation(10).tolist() for e in range(2)]
    assert _epochs(data, 2) == want and want[0] != want[1]
    assert _epochs(_data(shuffle=True), 2) == want  # the order shuffle=True reads
    data = _data(sampler=ds.RandomSampler(num_samples=4))
    assert _rows(data) == want[0][:4] and data.get_dataset_size() == 4
    data = _data(sampler=ds.RandomSampler(replacement=True, num_samples=6))
    assert _rows(data) == np.random.default_rng([7, 0]).integers(0, 10, 6).tolist()
    assert data.get_dataset_size() == 6
    assert ds.RandomSampler(replacement=True, num_samples=20)._count(10, None, None) == 10  # capped by the rows
    assert sorted(_rows(_data(sampler=ds.RandomSampler()))) == list(range(10))


def _shard_rows(n, shards, **kwargs):
    return [_rows(_data(n, sampler=ds.DistributedSampler(shards, d, **kwargs))) for d in range(shards)]


def test_distributed_sampler_equal_shards_wrap_around():
    # 10 rows, 4 shards: ceil(10/4) = 3 each, shard d reads positions d, d+4, d+8 (mod 10)
    assert _shard_rows(10, 4, shuffle=False) == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    assert _shard_rows(3, 5, shuffle=False) == [[0], [1], [2], [0], [1]]
    assert _shard_rows(10, 4, shuffle=False, num_samples=2) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    data = _data(sampler=ds.DistributedSampler(4, 2, shuffle=False))
    assert data.get_dataset_size() == 3
    # offset: the rows dealt from shard `offset` on, without wrapping: row p to shard (p + 1) % 4
    assert _shard_rows(10, 4, shuffle=False, offset=1) == [[3, 7], [0, 4, 8], [1, 5, 9], [2, 6]]
    assert [_data(sampler=ds.DistributedSampler(4, d, False, offset=1)).get_dataset_size() for d in range(4)] == [
        2,
        3,
        3,
        2,
    ]


def test_distributed_sampler_shuffle_is_one_order_for_every_rank():
    ds.config.set_seed(3)
    order = np.random.default_rng([3, 0]).permutation(10)
    shards = _shard_rows(10, 4)
    assert shards == [order[[0, 4, 8]].tolist(), order[[1, 5, 9]].tolist(), order[[2, 6, 0]].tolist(),
                      order[[3, 7, 1]].tolist()]  # fmt: skip
    # the same rows as the sources' num_shards/shard_id
    assert shards == [_rows(_data(num_shards=4, shard_id=d)) for d in range(4)]
    ds.config._state["seed"] = None  # no seed: MindSpore's default 5489, alike on every rank
    shards = _shard_rows(12, 3)
    assert sorted(sum(shards, [])) == list(range(12))
    assert shards[0] == np.random.default_rng([5489, 0]).permutation(12)[[0, 3, 6, 9]].tolist()


def test_subset_samplers():
    assert _rows(_data(sampler=ds.SubsetSampler([4, 2, 2, 9]))) == [4, 2, 2, 9]
    data = _data(sampler=ds.SubsetSampler(np.array([4, 2, 2, 9]), num_samples=2))
    assert _rows(data) == [4, 2] and data.get_dataset_size() == 2
    assert ds.SubsetSampler(3).indices == [3] and ds.SubsetSampler(range(5), 2).get_num_samples() == 2
    assert _rows(_data(sampler=[7, 1, 3])) == [7, 1, 3]  # a list: MindSpore's SubsetSampler of it
    ds.config.set_seed(11)
    data = _data(sampler=ds.SubsetRandomSampler([8, 1, 5, 3]))
    want = [np.random.default_rng([11, e]).permutation([8, 1, 5, 3]).tolist() for e in range(2)]
    assert _epochs(data, 2) == want and data.get_dataset_size() == 4
    assert ds.SubsetRandomSampler([8, 1, 5], num_samples=2).indices == [8, 1]


def test_weighted_random_sampler():
    ds.config.set_seed(5)
    weights = [0.5, 0.0, 2.0, 1.5]
    data = _data(sampler=ds.WeightedRandomSampler(weights, num_samples=8))
    w = np.array(weights) / sum(weights)
    assert _rows(data) == np.random.default_rng([5, 0]).choice(4, 8, p=w).tolist()
    assert 1 not in _rows(data) and data.get_dataset_size() == 8
    # without replacement: keys Exp(1) / w, smallest first; the zero weight is drawn last
    data = _data(sampler=ds.WeightedRandomSampler(weights, num_samples=4, replacement=False))
    with np.errstate(divide="ignore"):
        keys = np.random.default_rng([5, 0]).exponential(size=4) / np.array(weights)
    assert _rows(data) == np.argsort(keys, kind="stable").tolist() and _rows(data)[-1] == 1
    # num_samples defaults to the rows: 10 draws among the 4 weighted rows
    assert _data(sampler=ds.WeightedRandomSampler(weights)).get_dataset_size() == 10
    with pytest.raises(ValueError, match="the 11 weights must not exceed the 10 rows"):
        _rows(_data(sampler=ds.WeightedRandomSampler([1.0] * 11)))
    with pytest.raises(RuntimeError, match="without replacement the 4 weights must be at least the 10 samples"):
        _data(sampler=ds.WeightedRandomSampler(weights, replacement=False)).get_dataset_size()


def _write_mnist(directory, labels):
    images = np.arange(len(labels) * 4, dtype=np.uint8).reshape(len(labels), 2, 2)
    for name, magic, array in (("images-idx3", 2051, images), ("labels-idx1", 2049, np.array(labels))):
        header = np.array([magic, *array.shape], ">u4").tobytes()
        (directory / f"train-{name}-ubyte").write_bytes(header + array.astype(np.uint8).tobytes())
    return str(directory)


def test_pk_sampler_draws_num_val_rows_of_each_class(tmp_path):
    labels = [2, 0, 1, 2, 0, 1, 2, 2, 0]
    path = _write_mnist(tmp_path, labels)
    ds.config.set_seed(1)
    data = ds.MnistDataset(path, usage="train", sampler=ds.PKSampler(2))
    got = [int(r[1]) for r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert got == [0, 0, 1, 1, 2, 2] and data.get_dataset_size() == 6  # classes sorted, 2 rows each
    # the rows: drawn (with replacement) among each class's rows, by the epoch's generator
    rng = np.random.default_rng([1, 0])
    members = {c: np.flatnonzero(np.array(labels) == c) for c in (0, 1, 2)}
    want = [int(members[c][rng.integers(len(members[c]))]) for c in (0, 0, 1, 1, 2, 2)]
    images = [
        r[0] for r in ds.MnistDataset(path, "train", sampler=ds.PKSampler(2)).create_tuple_iterator(output_numpy=True)
    ]
    assert [int(im.reshape(-1)[0]) // 4 for im in images] == want
    data = ds.MnistDataset(path, "train", sampler=ds.PKSampler(3, shuffle=True, num_samples=5))
    got = [int(r[1]) for r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    order = np.random.default_rng([1, 0]).permutation([0, 1, 2])
    assert got == [order[0]] * 3 + [order[1]] * 2 and data.get_dataset_size() == 5
    with pytest.raises(ValueError, match="PKSampler needs a reader of labelled rows; GeneratorDataset"):
        _data(sampler=ds.PKSampler(2))


# ---------------------------------------------------------------------------------------------
# Chains, user samplers, iterables


def test_child_sampler_positions_index_the_childs_rows():
    sampler = ds.SequentialSampler(start_index=1, num_samples=3)
    sampler.add_child(ds.SubsetSampler([9, 7, 5, 3, 1]))
    data = _data(sampler=sampler)
    assert _rows(data) == [7, 5, 3] and data.get_dataset_size() == 3
    shard = ds.DistributedSampler(2, 1, shuffle=False)
    shard.add_child(ds.SubsetSampler([5, 6, 7, 8, 9]))  # 5 rows over 2 shards: positions 1, 3, 0
    assert _rows(_data(sampler=shard)) == [6, 8, 5] and _data(sampler=shard).get_dataset_size() == 3
    with pytest.raises(RuntimeError, match="already has a child"):
        shard.add_child(ds.SequentialSampler())
    # get_num_samples: the smaller of its own and its child's, either when the other is None
    for own, child, want in ((3, 4, 3), (None, 4, 4), (5, None, 5), (None, None, None)):
        s = ds.SequentialSampler(num_samples=own)
        s.add_child(ds.RandomSampler(num_samples=child))
        assert s.get_num_samples() == want
    assert ds.SequentialSampler().get_child() is None and sampler.get_child().indices == [9, 7, 5, 3, 1]
    assert ds.RandomSampler().is_shuffled() and not ds.DistributedSampler(2, 0, False).is_shuffled()
    assert ds.DistributedSampler(2, 0).is_sharded() and not ds.DistributedSampler(1, 0).is_sharded()


class ReverseSampler(ds.Sampler):
    """MindSpore's example of a user sampler, counting its resets."""

    resets = 0

    def __iter__(self):
        yield from range(self.dataset_size - 1, -1, -1)

    def reset(self):
        self.resets += 1


def test_user_sampler():
    sampler = ReverseSampler()
    data = _data(6, sampler=sampler)
    assert data.get_dataset_size() == 6 and sampler.dataset_size == 6
    assert _epochs(data, 2) == [[5, 4, 3, 2, 1, 0]] * 2 and sampler.resets == 1
    data = _data(6, sampler=ReverseSampler(num_samples=2))
    assert _rows(data) == [5, 4] and data.get_dataset_size() == 2
    assert ReverseSampler(num_samples=20)._count(6, None, None) == 6  # capped by the rows


def test_iterable_sampler_is_capped_by_the_rows():
    assert _rows(_data(3, sampler=iter([0, 0, 1, 1, 2, 2]))) == [0, 0, 1]
    assert _rows(_data(5, sampler=range(4, -1, -1), num_samples=2)) == [4, 3]


# ---------------------------------------------------------------------------------------------
# use_sampler, readers


def test_use_sampler_replaces_the_sources_order_through_operations():
    data = _data(num_shards=2, shard_id=1)
    pipeline = data.map(lambda x: x * 10, input_columns="x")
    pipeline.use_sampler(ds.SequentialSampler(start_index=2, num_samples=3))
    assert _rows(pipeline) == [20, 30, 40] and pipeline.get_dataset_size() == 3
    assert pipeline.batch(2).get_dataset_size() == 2
    # the replaced sampler's child stays under the new one
    old = ds.SequentialSampler()
    old.add_child(ds.SubsetSampler([1, 3, 5, 7]))
    data = _data(sampler=old)
    data.use_sampler(ds.DistributedSampler(2, 0, shuffle=False))
    assert _rows(data) == [1, 5]
    with pytest.raises(TypeError, match="'new_sampler' can not be None"):
        data.use_sampler(None)
    with pytest.raises(TypeError, match="'new_sampler' must be a sampler.*list"):
        data.use_sampler([1, 2])
    with pytest.raises(ValueError, match="needs a random-access source"):
        ds.GeneratorDataset(lambda: iter(_source(3)), ["x"]).use_sampler(ds.SequentialSampler())


def test_numpy_slices_and_readers_take_a_sampler(tmp_path):
    data = ds.NumpySlicesDataset({"x": np.arange(10) * 2}, sampler=ds.SequentialSampler(6))
    assert _rows(data) == [12, 14, 16, 18]
    path = _write_mnist(tmp_path, [0, 1, 2, 3, 4, 5, 6])
    data = ds.MnistDataset(path, "train", sampler=ds.DistributedSampler(3, 2, shuffle=False))
    assert [int(r[1]) for r in data.create_tuple_iterator(output_numpy=True)] == [2, 5, 1]
    assert data.get_dataset_size() == 3
    data = ds.MnistDataset(path, "train", sampler=4)  # an int: that row (MindSpore's SubsetSampler([4]))
    assert [int(r[1]) for r in data.create_tuple_iterator(output_numpy=True)] == [4]
    with pytest.raises(TypeError, match=r"'MnistDataset'.*'sampler' must be an iterable of row indices or a sampler"):
        ds.MnistDataset(path, "train", sampler=object())
    with pytest.raises(RuntimeError, match="'sampler' and 'shuffle' cannot be specified at the same time"):
        ds.MnistDataset(path, "train", sampler=ds.RandomSampler(), shuffle=False)


def _write_mindrecord(tmp_path, shards=2, rows=6):
    writer = FileWriter(str(tmp_path / "m.mindrecord"), shard_num=shards, overwrite=True)
    writer.add_schema({"x": {"type": "int64"}, "label": {"type": "int32"}}, "test")
    writer.write_raw_data([{"x": i, "label": i % 2} for i in range(rows)])
    writer.commit()
    return str(tmp_path / "m.mindrecord0")


def _mind_rows(data):
    return [int(r[data.get_col_names().index("x")]) for r in data.create_tuple_iterator(output_numpy=True)]


def test_mind_dataset_takes_a_sampler(tmp_path):
    path = _write_mindrecord(tmp_path)
    data = ds.MindDataset(path, columns_list=["x"], sampler=ds.SequentialSampler(1, 4))
    assert sorted(_mind_rows(data)) == sorted(_mind_rows(ds.MindDataset(path, shuffle=False))[1:5])
    # padded rows are rows too: 6 rows + 2 padded over 4 shards
    shards = [
        _mind_rows(
            ds.MindDataset(
                path,
                columns_list=["x"],
                padded_sample={"x": -1},
                num_padded=2,
                sampler=ds.DistributedSampler(4, d, shuffle=False),
            )
        )  # fmt: skip
        for d in range(4)
    ]
    order = _mind_rows(ds.MindDataset(path, columns_list=["x"], shuffle=False))
    assert shards == [[order[0], order[4]], [order[1], order[5]], [order[2], -1], [order[3], -1]]
    ds.config.set_seed(9)
    for mode in (ds.Shuffle.FILES, ds.Shuffle.INFILE):  # the reader's own shuffle levels
        want = _epochs(ds.MindDataset(path, columns_list=["x"], shuffle=mode), 2)
        assert _epochs(ds.MindDataset(path, columns_list=["x"], sampler=ds.RandomSampler(shuffle=mode)), 2) == want
    data = ds.MindDataset(path, sampler=ds.PKSampler(2, class_column="label"))
    assert [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)] == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="needs a reader of files"):
        _data(sampler=ds.RandomSampler(shuffle=ds.Shuffle.FILES))
    with pytest.raises(ValueError, match="'class_column' 'kind' is not a field"):
        ds.MindDataset(path, sampler=ds.PKSampler(2, class_column="kind"))


# ---------------------------------------------------------------------------------------------
# PaddedDataset and a concatenation dealt among shards


def test_padded_dataset():
    data = ds.PaddedDataset([{"image": np.zeros(2, np.uint8), "label": 7}, {"image": np.ones(3, np.uint8), "label": 8}])
    assert data.get_col_names() == ["image", "label"] and data.get_dataset_size() == 2
    rows = list(data.create_tuple_iterator(output_numpy=True))
    assert rows[0][0].tolist() == [0, 0] and rows[1][0].tolist() == [1, 1, 1] and int(rows[1][1]) == 8
    assert rows[0][0].dtype == np.uint8
    with pytest.raises(TypeError, match="'padded_samples' must be a list of dicts, but got tuple"):
        ds.PaddedDataset(({"a": 1},))
    with pytest.raises(ValueError, match="'padded_samples' must not be empty"):
        ds.PaddedDataset([])
    with pytest.raises(TypeError, match=r"padded_samples\[1\] is int"):
        ds.PaddedDataset([{"a": 1}, 2])
    with pytest.raises(ValueError, match=r"the keys \['a'\], but padded_samples\[1\] has \['b'\]"):
        ds.PaddedDataset([{"a": 1}, {"b": 2}])


def test_concat_with_padding_deals_rows_round_robin():
    # 7 rows (shuffled by default: the sampler replaces that) + 1 padded row over 2 shards
    seven = _data(7)
    for shard, want in ((0, [0, 2, 4, 6]), (1, [1, 3, 5, -1])):
        data = seven + ds.PaddedDataset([{"x": np.array(-1, np.int64)}])
        data.use_sampler(ds.DistributedSampler(2, shard, shuffle=False))
        assert _epochs(data, 2) == [want, want] and data.get_dataset_size() == 4
    assert seven.get_dataset_size() == 7 and sorted(_rows(seven)) == list(range(7))  # the concatenation's copy
    # an iterable child (dealt as its rows come), a random-access one, the padding: row g to shard g % 3
    for shard in range(3):
        data = ds.GeneratorDataset(lambda: iter(_source(4)), ["x"]) + _data(3).map(lambda x: x + 10, "x")
        data = data + ds.PaddedDataset([{"x": -1}, {"x": -2}])
        data.use_sampler(ds.DistributedSampler(3, shard, shuffle=False))
        everything = [0, 1, 2, 3, 10, 11, 12, -1, -2]
        assert _rows(data) == everything[shard::3] and data.get_dataset_size() == 3
    data = _data(4) + _data(4)
    with pytest.raises(TypeError, match="must be a DistributedSampler, but got RandomSampler"):
        data.use_sampler(ds.RandomSampler())
    with pytest.raises(ValueError, match="'shuffle' must be False"):
        data.use_sampler(ds.DistributedSampler(2, 0))
    with pytest.raises(ValueError, match="'num_samples' is not supported"):
        data.use_sampler(ds.DistributedSampler(2, 0, False, num_samples=2))
    with pytest.raises(TypeError, match="must not be batched"):
        (_data(4).batch(2) + _data(4).batch(2)).use_sampler(ds.DistributedSampler(2, 0, False))


COLUMNS = ["input_ids", "input_mask", "segment_ids", "next_sentence_labels", "masked_lm_positions",
           "masked_lm_ids", "masked_lm_weights"]  # fmt: skip


def test_bert_create_eval_dataset_pads_and_shards(tmp_path):
    """The model zoo's BERT create_eval_dataset: 7 rows, batches of 2 on 2 devices pad 1 row of zeros, and
    each rank reads its half, disjoint but for the padding."""
    (tmp_path / "data").mkdir()
    rows = [{c: ("float" if c == "masked_lm_weights" else "int64", [i + 1] * 3) for c in COLUMNS} for i in range(7)]
    write_tfrecord(tmp_path / "data" / "eval.tfrecord", rows)
    ids = []
    for rank in range(2):
        eval_ds = bert_dataset.create_eval_dataset(2, 2, rank, str(tmp_path / "data"), "", "tfrecord")
        assert eval_ds.get_dataset_size() == 2
        batches = list(eval_ds.create_tuple_iterator(output_numpy=True))
        assert len(batches) == 2 and batches[0][0].shape == (2, 3) and batches[0][0].dtype == np.int32
        ids.append(np.concatenate([b[0][:, 0] for b in batches]).tolist())
    assert ids == [[1, 3, 5, 7], [2, 4, 6, 0]]


# ---------------------------------------------------------------------------------------------
# Errors


def test_sampler_argument_errors():
    with pytest.raises(TypeError, match="'DistributedSampler'.*'num_shards' must be an int.*str"):
        ds.DistributedSampler("2", 0)
    with pytest.raises(TypeError, match="'DistributedSampler'.*'shuffle' must be a bool"):
        ds.DistributedSampler(2, 0, shuffle=1)
    with pytest.raises(TypeError, match="'DistributedSampler'.*'offset' must be an int"):
        ds.DistributedSampler(2, 0, offset=None)
    for bad in (dict(num_shards=2, shard_id=2), dict(num_shards=2, shard_id=-1)):
        with pytest.raises(SamplerError, match=r"'shard_id' must be in \[0, 2\)") as info:
            ds.DistributedSampler(**bad)
        assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)
    with pytest.raises(RuntimeError, match="'num_shards' must be an int >= 1, but got 0"):
        ds.DistributedSampler(0, 0)
    with pytest.raises(ValueError, match=r"'offset' must be -1 or in \[0, 2\], but got 3"):
        ds.DistributedSampler(2, 0, offset=3)
    for make in (
        lambda n: ds.SequentialSampler(num_samples=n),
        lambda n: ds.RandomSampler(num_samples=n),
        lambda n: ds.DistributedSampler(2, 0, num_samples=n),
        lambda n: ds.SubsetSampler([1], num_samples=n),
        lambda n: ds.SubsetRandomSampler([1], num_samples=n),
        lambda n: ds.WeightedRandomSampler([1.0], num_samples=n),
        lambda n: ds.PKSampler(2, num_samples=n),
    ):
        with pytest.raises(ValueError, match="'num_samples' must be an int >= 0.*-1"):
            make(-1)
        with pytest.raises(TypeError, match="'num_samples' must be an int"):
            make(2.0)
    with pytest.raises(RuntimeError, match="'start_index' must be >= 0"):
        ds.SequentialSampler(-1)
    with pytest.raises(TypeError, match="'start_index' must be an int"):
        ds.SequentialSampler("1")
    with pytest.raises(ValueError, match=r"'start_index' \(10\) must be less than the 10 rows"):
        _rows(_data(sampler=ds.SequentialSampler(10)))
    with pytest.raises(TypeError, match="'replacement' must be a bool"):
        ds.RandomSampler(replacement="no")
    with pytest.raises(TypeError, match="'shuffle' must be a Shuffle level"):
        ds.RandomSampler(shuffle=True)
    with pytest.raises(TypeError, match=r"indices\[1\] is str"):
        ds.SubsetSampler([1, "2"])
    with pytest.raises(TypeError, match="'indices' must be an iterable of ints, but got str"):
        ds.SubsetRandomSampler("12")
    with pytest.raises(ValueError, match="the sampler gave the index 10, but the source has 10 rows"):
        _rows(_data(sampler=ds.SubsetSampler([1, 10])))
    with pytest.raises(TypeError, match=r"weights\[1\] is 'a'"):
        ds.WeightedRandomSampler([1.0, "a"])
    for weights in ([], [0, 0], [1.0, -1.0]):
        with pytest.raises(RuntimeError, match="'weights' must be finite, >= 0 and not all 0"):
            ds.WeightedRandomSampler(weights)
    with pytest.raises(NotImplementedError, match="'num_class'"):
        ds.PKSampler(2, num_class=3)
    with pytest.raises(RuntimeError, match="'num_val' must be an int >= 1"):
        ds.PKSampler(0)
    with pytest.raises(TypeError, match="'class_column' must be a str"):
        ds.PKSampler(2, class_column=1)
    with pytest.raises(TypeError, match="'RandomSampler.add_child'.*must be a sampler, but got list"):
        ds.RandomSampler().add_child([1, 2])


def test_sampler_with_shuffle_shards_or_num_samples_is_refused():
    with pytest.raises(RuntimeError, match="'GeneratorDataset'.*'sampler' and 'shuffle' cannot be specified"):
        _data(sampler=ds.SequentialSampler(), shuffle=False)
    with pytest.raises(ValueError, match="'NumpySlicesDataset'.*'sampler' and 'shuffle' cannot be specified"):
        ds.NumpySlicesDataset(np.arange(3), sampler=ds.RandomSampler(), shuffle=True)
    with pytest.raises(RuntimeError, match="'sampler' and sharding cannot be specified"):
        _data(sampler=ds.DistributedSampler(2, 0), num_shards=2, shard_id=0)
    with pytest.raises(RuntimeError, match="'sampler' and 'num_samples' cannot be specified"):
        _data(sampler=ds.SequentialSampler(), num_samples=3)
    with pytest.raises(TypeError, match="'GeneratorDataset'.*'sampler' must be an iterable of row indices"):
        _data(sampler=3)


def test_a_user_sampler_may_give_a_row_of_indices_per_row():
    """MindSpore hands each element a user Sampler gives to the source's __getitem__ as it is: NCF's sampler
    gives a whole batch's indices per row."""

    class Batches(ds.Sampler):
        def __iter__(self):
            return iter(np.arange(6).reshape(3, 2)[::-1])

    class Source:
        def __getitem__(self, rows):
            return (np.asarray(rows) * 10,)

        def __len__(self):
            return 6

    data = ds.GeneratorDataset(Source(), ["x"], sampler=Batches())
    got = [row[0].tolist() for row in data.create_tuple_iterator(output_numpy=True)]
    assert got == [[40, 50], [20, 30], [0, 10]]


def test_a_generator_function_cannot_be_sharded():
    """MindSpore refuses num_shards on a source without __getitem__: each shard would read every row."""

    def rows():
        yield from (np.array(i) for i in range(4))

    with pytest.raises(ValueError, match="'GeneratorDataset', 'num_shards' needs a random-access source"):
        ds.GeneratorDataset(rows, ["x"], num_shards=2, shard_id=0)
