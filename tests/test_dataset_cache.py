"""MindSpore's DatasetCache (opforge/dataset/cache_client.py) and MappableDataset.add_sampler
(opforge/dataset/samplers.py): a cached source or map produces each row once across epochs (counted), a
random function marked not_random is fixed after its first epoch, the size limit keeps or spills rows,
MindSpore's argument and tree checks, and add_sampler / add_child index sequences worked out by hand."""

import numpy as np
import pytest
from tfrecord_encoder import write as write_tfrecord

import opforge.dataset as ds
from opforge.dataset import transforms, vision
from opforge.mindrecord import FileWriter


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def _mnist(directory, n, prefix="train"):
    """n MNIST rows; row k's image is filled with k (its id), its label k % 10."""
    images = np.repeat(np.arange(n, dtype=np.uint8), 28 * 28).reshape(n, 28, 28)
    header = np.array([2051, n, 28, 28], ">u4").tobytes()
    (directory / f"{prefix}-images-idx3-ubyte").write_bytes(header + images.tobytes())
    labels = (np.arange(n) % 10).astype(np.uint8)
    (directory / f"{prefix}-labels-idx1-ubyte").write_bytes(np.array([2049, n], ">u4").tobytes() + labels.tobytes())
    return str(directory)


def _epochs(data, epochs):
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[tuple(np.asarray(v).copy() for v in row) for row in it] for _ in range(epochs)]


def _ids(rows):
    return [int(r[0].reshape(-1)[0]) for r in rows]


class Counter:
    """A map function counting its calls per row id (the image's fill value); not_random marks it as such."""

    def __init__(self, out=lambda img: img.astype(np.int32) * 2):
        self.calls, self.out = {}, out
        not_random(self)

    def __call__(self, image):
        k = int(image.reshape(-1)[0])
        self.calls[k] = self.calls.get(k, 0) + 1
        return self.out(image)


not_random = transforms.not_random


# ---------------------------------------------------------------------------------------------
# Caching a source, caching a map


def test_cached_source_reads_each_row_once_and_keeps_its_sampler_order(tmp_path):
    path = _mnist(tmp_path, 8)
    ds.config.set_seed(3)
    cache = ds.DatasetCache(session_id=1, size=0)
    data = ds.MnistDataset(path, usage="train", cache=cache)
    reads = []
    original = data._read
    data._read = lambda i: reads.append(i) or original(i)
    epochs = _epochs(data, 3)
    assert sorted(reads) == list(range(8))  # each row read from the files once, in the first epoch
    want = [np.random.default_rng([3, e]).permutation(8).tolist() for e in range(3)]  # the shuffle still runs
    assert [_ids(rows) for rows in epochs] == want and want[0] != want[1]
    for rows in epochs:
        for image, label in rows:
            assert image.shape == (28, 28, 1) and image.dtype == np.uint8 and label == image[0, 0, 0] % 10
    stat = cache.get_stat()
    assert (stat.num_mem_cached, stat.num_disk_cached, stat.avg_cache_sz) == (8, 0, 28 * 28 + 4)
    # the rows come from the cache: the files changed under it are not read again
    with open(tmp_path / "train-images-idx3-ubyte", "r+b") as f:
        f.seek(16)
        f.write(bytes(8 * 28 * 28))
    assert sorted(_ids(_epochs(data, 1)[0])) == list(range(8))
    assert _ids(_epochs(ds.MnistDataset(path, usage="train"), 1)[0]) == [0] * 8  # without the cache


def test_cached_map_runs_its_operations_once_per_row_across_epochs(tmp_path):
    path = _mnist(tmp_path, 6)
    counter = Counter()
    cache = ds.DatasetCache(session_id=2)
    data = ds.MnistDataset(path, usage="train", shuffle=False).map(counter, input_columns="image", cache=cache)
    data = data.map(lambda label: label + 100, input_columns="label")  # above the cache: runs every epoch
    epochs = _epochs(data, 3)
    assert counter.calls == {k: 1 for k in range(6)}
    for rows in epochs:
        assert [int(r[0][0, 0, 0]) for r in rows] == [2 * k for k in range(6)]
        assert [int(r[1]) for r in rows] == [100 + k % 10 for k in range(6)]
        assert rows[0][0].dtype == np.int32
    assert data.get_dataset_size() == 6
    # without the cache, the same map runs every epoch
    plain = Counter()
    _epochs(ds.MnistDataset(path, usage="train", shuffle=False).map(plain, input_columns="image"), 3)
    assert plain.calls == {k: 3 for k in range(6)}


def test_cached_map_with_worker_threads_and_a_partial_first_epoch(tmp_path):
    path = _mnist(tmp_path, 7)
    counter = Counter()
    source = ds.MnistDataset(path, usage="train", shuffle=False, num_parallel_workers=2)
    data = source.map(counter, input_columns="image", num_parallel_workers=2, cache=ds.DatasetCache(3))
    assert [_ids(rows) for rows in _epochs(data, 3)] == [[2 * k for k in range(7)]] * 3
    assert counter.calls == {k: 1 for k in range(7)}
    counter = Counter()
    data = ds.MnistDataset(path, usage="train", shuffle=False).map(counter, input_columns="image",
                                                                    cache=ds.DatasetCache(3))  # fmt: skip
    assert _ids(_epochs(data.take(3), 1)[0]) == [0, 2, 4]  # the rows read so far are kept
    assert counter.calls == {0: 1, 1: 1, 2: 1}
    assert _ids(_epochs(data, 2)[1]) == [2 * k for k in range(7)]
    assert counter.calls == {k: 1 for k in range(7)}


def test_readers_of_record_files_take_a_cache(tmp_path):
    write_tfrecord(tmp_path / "a.tfrecord", [{"id": ("int64", [k])} for k in range(5)])
    counter = Counter(out=lambda x: x * 3)
    tf = ds.TFRecordDataset(str(tmp_path / "a.tfrecord"), shuffle=False, cache=ds.DatasetCache(4))
    data = tf.map(counter, input_columns="id", cache=None)  # above the cached source: runs each epoch
    assert [_ids(rows) for rows in _epochs(data, 2)] == [[3 * k for k in range(5)]] * 2
    assert counter.calls == {k: 2 for k in range(5)} and tf._cache.get_stat().num_mem_cached == 5
    writer = FileWriter(str(tmp_path / "m.mindrecord"), shard_num=1, overwrite=True)
    writer.add_schema({"id": {"type": "int64"}}, "ids")
    writer.write_raw_data([{"id": k} for k in range(4)])
    writer.commit()
    counter = Counter(out=lambda x: x + 1)
    mind = ds.MindDataset(str(tmp_path / "m.mindrecord"), shuffle=False)
    data = mind.map(counter, input_columns="id", cache=ds.DatasetCache(5))
    assert [_ids(rows) for rows in _epochs(data, 3)] == [[1, 2, 3, 4]] * 3
    assert counter.calls == {k: 1 for k in range(4)}


# ---------------------------------------------------------------------------------------------
# Random operations


def test_a_random_function_marked_not_random_is_fixed_after_its_first_epoch(tmp_path):
    path = _mnist(tmp_path, 5)
    rng = np.random.default_rng(0)

    @not_random
    def jitter(image):
        return image.astype(np.float32) + rng.random(image.shape, dtype=np.float32)

    source = ds.MnistDataset(path, usage="train", shuffle=False)
    cached = _epochs(source.map(jitter, input_columns="image", cache=ds.DatasetCache(6)), 3)
    for rows in cached[1:]:
        for a, b in zip(rows, cached[0]):
            np.testing.assert_array_equal(a[0], b[0])
    plain = _epochs(source.map(jitter, input_columns="image"), 2)
    assert not np.array_equal(plain[0][0][0], plain[1][0][0])  # drawn again each epoch without the cache


def test_a_cached_map_with_a_random_operation_is_refused_when_read(tmp_path):
    path = _mnist(tmp_path, 3)
    source = ds.MnistDataset(path, usage="train", shuffle=False)
    message = "MapNode containing random operation is not supported as a descendant of cache"
    composed = transforms.Compose([vision.Rescale(1.0, 0.0), vision.CutOut(4)])
    for op in (lambda x: x, vision.RandomHorizontalFlip(), composed):
        data = source.map(op, input_columns="image", cache=ds.DatasetCache(7))  # made: the check runs when read
        with pytest.raises(RuntimeError, match=message):
            _epochs(data, 1)
    # a random map below the cached one is refused too; deterministic transforms are accepted
    below = source.map(vision.RandomCrop(20), input_columns="image")
    with pytest.raises(RuntimeError, match=message):
        _epochs(below.map(vision.HWC2CHW(), input_columns="image", cache=ds.DatasetCache(8)), 1)
    ops = transforms.Compose([vision.Rescale(1 / 255, 0.0), vision.HWC2CHW(), transforms.TypeCast(np.float16)])
    rows = _epochs(source.map(ops, input_columns="image", cache=ds.DatasetCache(9)), 1)[0]
    assert rows[2][0].shape == (1, 28, 28) and rows[2][0].dtype == np.float16


# ---------------------------------------------------------------------------------------------
# The size limit


@pytest.mark.parametrize("spilling", [False, True])
def test_size_limit_keeps_what_fits_and_spills_or_reproduces_the_rest(tmp_path, spilling):
    path = _mnist(tmp_path, 6)
    counter = Counter(out=lambda img: np.full(75_000, img[0, 0, 0], np.float32))  # 300 KB a row: 3 fit in 1 MB
    cache = ds.DatasetCache(10, size=1, spilling=spilling)
    data = ds.MnistDataset(path, usage="train", shuffle=False).map(counter, input_columns="image", cache=cache)
    epochs = _epochs(data, 3)
    for rows in epochs:
        assert [float(r[0][0]) for r in rows] == [float(k) for k in range(6)]
        assert all(r[0].shape == (75_000,) for r in rows)
    stat = cache.get_stat()
    if spilling:  # the rest written to a temporary file and read back
        assert counter.calls == {k: 1 for k in range(6)}
        assert (stat.num_mem_cached, stat.num_disk_cached) == (3, 3)
    else:  # the rest not kept (MindSpore's full cache): produced again each epoch
        assert counter.calls == {0: 1, 1: 1, 2: 1, 3: 3, 4: 3, 5: 3}
        assert (stat.num_mem_cached, stat.num_disk_cached) == (3, 0)
    assert stat.avg_cache_sz == 300_004


# ---------------------------------------------------------------------------------------------
# Arguments and trees


def test_dataset_cache_arguments_are_checked_as_mindspore_checks_them(tmp_path):
    cache = ds.DatasetCache(session_id=1, size=4, spilling=True, hostname="127.0.0.1", port=50052,
                            num_connections=12, prefetch_size=20)  # fmt: skip
    assert (cache.session_id, cache.size, cache.spilling, cache.port) == (1, 4, True, 50052)
    cases = [
        (ValueError, "Input is not within the required interval", dict(session_id=-1)),
        (ValueError, "Input is not within the required interval", dict(session_id=0)),
        (TypeError, "Argument session_id with value 1 is not of type", dict(session_id="1")),
        (TypeError, "Argument session_id with value None is not of type", dict(session_id=None)),
        (TypeError, "Argument session_id with value True is not of type", dict(session_id=True)),
        (ValueError, "Input size must be greater than 0", dict(session_id=1, size=-1)),
        (TypeError, "Argument size with value 1 is not of type", dict(session_id=1, size="1")),
        (TypeError, "Argument size with value None is not of type", dict(session_id=1, size=None)),
        (TypeError, "Argument spilling with value illegal is not of type", dict(session_id=1, spilling="illegal")),
        (TypeError, "Argument hostname with value 50052 is not of type", dict(session_id=1, hostname=50052)),
        (RuntimeError, "cache client has to be on the same host", dict(session_id=1, hostname="127.0.0.2")),
        (TypeError, "Argument port with value 50052 is not of type", dict(session_id=1, port="50052")),
        (ValueError, "Input is not within the required interval", dict(session_id=1, num_connections=0)),
        (TypeError, "Argument prefetch_size with value x is not of type", dict(session_id=1, prefetch_size="x")),
    ]  # fmt: skip
    port_range = r"Input port is not within the required interval of \[1025, 65535\]"
    cases += [
        (ValueError, port_range, dict(session_id=1, port=0)),
        (ValueError, port_range, dict(session_id=1, port=65536)),
    ]
    for error, message, kwargs in cases:
        with pytest.raises(error, match=message):
            ds.DatasetCache(**kwargs)
    path = _mnist(tmp_path, 2)
    with pytest.raises(TypeError, match="Argument cache with value True is not of type"):
        ds.MnistDataset(path, cache=True)
    with pytest.raises(TypeError, match="Argument cache with value 1 is not of type"):
        ds.MnistDataset(path).map(vision.HWC2CHW(), input_columns="image", cache=1)


def test_trees_mindspore_cannot_cache_are_refused_when_read(tmp_path):
    path = _mnist(tmp_path, 4)

    def source(**kwargs):
        return ds.MnistDataset(path, usage="train", shuffle=False, **kwargs)

    def cached_map(data):
        return data.map(vision.HWC2CHW(), input_columns="image", cache=ds.DatasetCache(11))

    cases = [
        (source().batch(2), "BatchNode is not supported as a descendant operator under a cache"),
        (source().repeat(2), "A cache over a RepeatNode of a mappable dataset is not supported"),
        (source().take(2), r"TakeNode \(possibly from Split\) is not supported"),
        (source().skip(1), "SkipNode is not supported as a descendant operator under a cache"),
        (source().shuffle(4), "ShuffleNode is not supported as a descendant operator under a cache"),
        (source() + source(), "ConcatNode is not supported as a descendant operator under a cache"),
        (source(cache=ds.DatasetCache(12)), "Nested cache operations over MnistDataset is not supported"),
        (ds.NumpySlicesDataset({"image": np.zeros((2, 4, 4, 1))}), "no support for GeneratorOp under cache"),
    ]
    for data, message in cases:
        with pytest.raises(RuntimeError, match=message):
            _epochs(cached_map(data), 1)
    # one cache, one tree: the same operations over another source of the same files may share it
    cache = ds.DatasetCache(13)
    first = source().map(vision.HWC2CHW(), input_columns="image", cache=cache)
    again = source().map(vision.HWC2CHW(), input_columns="image", cache=cache)
    assert _ids(_epochs(first, 1)[0]) == _ids(_epochs(again, 1)[0]) == [0, 1, 2, 3]
    other = source().map(vision.Rescale(2.0, 0.0), input_columns="image", cache=cache)
    with pytest.raises(RuntimeError, match="Cannot re-use a cache for a different tree!"):
        _epochs(other, 1)


# ---------------------------------------------------------------------------------------------
# add_sampler and add_child


def _slices(n, **kwargs):
    return ds.NumpySlicesDataset({"x": np.arange(n)}, **kwargs)


def _xs(data, epochs=1):
    return [[int(r[0]) for r in rows] for rows in _epochs(data, epochs)]


def test_add_sampler_samples_the_rows_the_sources_order_gives():
    data = _slices(10, shuffle=False)
    data.add_sampler(ds.DistributedSampler(3, 1, shuffle=False))  # positions 1, 4, 7, 10 % 10 of 0..9
    assert _xs(data) == [[1, 4, 7, 0]] and data.get_dataset_size() == 4
    # num_samples and shards of the source stay in its order, now the child's
    data = _slices(12, shuffle=False, num_samples=8)  # 0..7
    data.add_sampler(ds.DistributedSampler(2, 1, shuffle=False))  # positions 1, 3, 5, 7
    assert _xs(data) == [[1, 3, 5, 7]]
    data.add_sampler(ds.SubsetSampler([3, 0]))  # three deep: positions 3 and 0 of [1, 3, 5, 7]
    assert _xs(data) == [[7, 1]] and data.get_dataset_size() == 2
    top = data._sampler
    assert isinstance(top.get_child(), ds.DistributedSampler) and top.get_child().get_child().get_num_samples() == 8
    data = _slices(7, shuffle=False, num_shards=2, shard_id=1)  # [1, 3, 5, 0]: 7 rows wrapped to 8
    data.add_sampler(ds.SequentialSampler(start_index=1))
    assert _xs(data) == [[3, 5, 0]]
    # a given sampler becomes the child
    data = _slices(10, sampler=ds.SubsetSampler([9, 7, 5, 3, 1, 0]))
    data.add_sampler(ds.SequentialSampler(start_index=2, num_samples=3))
    assert _xs(data) == [[5, 3, 1]] and data.get_dataset_size() == 3


def test_add_sampler_over_a_shuffled_source_keeps_its_draw():
    ds.config.set_seed(5)
    data = _slices(6)
    data.add_sampler(ds.SequentialSampler(num_samples=4))
    want = [np.random.default_rng([5, e]).permutation(6)[:4].tolist() for e in range(2)]
    assert _xs(data, 2) == want and want[0] != want[1]
    assert data._sampler.is_shuffled() and data._sampler.get_num_samples() == 4


class EveryOther(ds.Sampler):
    def __iter__(self):
        return iter(range(0, self.dataset_size, 2))


def test_add_child_feeds_the_childs_rows_to_a_user_sampler_and_use_sampler_keeps_the_chain(tmp_path):
    parent = EveryOther()
    parent.add_child(ds.SubsetSampler([4, 8, 1, 6, 3]))
    data = _slices(10, sampler=parent)
    assert _xs(data) == [[4, 1, 3]] and parent.dataset_size == 5
    # add_sampler on a file reader, then use_sampler replaces the top and keeps the child
    reader = ds.MnistDataset(_mnist(tmp_path, 9), usage="train", shuffle=False, num_samples=6)  # rows 0..5
    reader.add_sampler(ds.DistributedSampler(2, 0, shuffle=False))
    assert _ids(_epochs(reader, 1)[0]) == [0, 2, 4]
    reader.use_sampler(ds.SubsetSampler([5, 1]))
    assert _ids(_epochs(reader, 1)[0]) == [5, 1]


def test_add_sampler_errors():
    data = _slices(4, shuffle=False)
    with pytest.raises(TypeError, match="'new_sampler' must be a sampler.*NoneType"):
        data.add_sampler(None)
    chained = ds.SequentialSampler()
    chained.add_child(ds.SequentialSampler())
    with pytest.raises(RuntimeError, match="already has a child"):
        data.add_sampler(chained)
    with pytest.raises(ValueError, match="needs a random-access source"):
        ds.GeneratorDataset(lambda: iter([np.array(1)]), ["x"]).add_sampler(ds.SequentialSampler())
    pk = ds.PKSampler(2)
    with pytest.raises(ValueError, match="PKSampler needs a reader of labelled rows"):
        data.add_sampler(pk)
    assert pk.get_child() is None and _xs(data) == [[0, 1, 2, 3]]  # left as they were
    with pytest.raises(AttributeError):
        data.map(lambda x: x, input_columns="x").add_sampler(ds.SequentialSampler())  # a source's method
