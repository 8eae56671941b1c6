"""opforge.dataset as MindSpore's mindspore.dataset: sources, operations, worker processes, seeds, the
errors of a user's functions, and the vision/transforms on arrays."""

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
from opforge.dataset import transforms, vision
from opforge.dataset.transforms import c_transforms as old_transforms
from opforge.dataset.vision import c_transforms as old_vision


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


class Squares:
    """A random-access source: (i, i*i)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.array(i, np.int32), np.array([i * i, -i], np.float32)

    def __len__(self):
        return self.n


def _column(dataset, k=0):
    return [row[k] for row in dataset.create_tuple_iterator(output_numpy=True)]


def test_generator_sources_random_access_function_and_iterable():
    def gen():
        for i in range(5):
            yield np.array(i), np.array(2 * i)

    for source in (Squares(5), gen, [(np.array(i), np.array(2 * i)) for i in range(5)]):
        data = ds.GeneratorDataset(source, ["a", "b"], shuffle=False)
        assert data.get_col_names() == ["a", "b"] and data.get_dataset_size() == 5
        assert [int(v) for v in _column(data)] == [0, 1, 2, 3, 4]


def test_iterators_give_tensors_by_default_numpy_on_request_and_dicts():
    data = ds.NumpySlicesDataset({"x": np.arange(6, dtype=np.float32).reshape(3, 2), "y": [0, 1, 2]}, shuffle=False)
    row = next(iter(data))
    assert isinstance(row[0], opforge.Tensor) and row[0].shape == (2,)
    row = next(data.create_tuple_iterator(output_numpy=True))
    assert isinstance(row[0], np.ndarray)
    rows = list(data.create_dict_iterator(output_numpy=True))
    assert [int(r["y"]) for r in rows] == [0, 1, 2] and rows[2]["x"].tolist() == [4.0, 5.0]


def test_numpy_slices_column_names_and_tuple_of_columns():
    data = ds.NumpySlicesDataset((np.zeros((4, 3)), np.arange(4)), column_names=["image", "label"], shuffle=False)
    assert data.get_col_names() == ["image", "label"]
    assert [int(v) for v in _column(data, 1)] == [0, 1, 2, 3]
    assert ds.NumpySlicesDataset(np.arange(3)).get_col_names() == ["column_0"]


def test_batch_and_drop_remainder():
    data = ds.GeneratorDataset(Squares(10), ["i", "sq"], shuffle=False)
    batched = data.batch(4)
    sizes = [row[1].shape for row in batched.create_tuple_iterator(output_numpy=True)]
    assert sizes == [(4, 2), (4, 2), (2, 2)] and batched.get_dataset_size() == 3
    dropped = data.batch(4, drop_remainder=True)
    assert dropped.get_dataset_size() == 2
    assert _column(dropped)[1].tolist() == [4, 5, 6, 7]


def test_shuffle_is_reproducible_with_a_seed_and_a_permutation():
    def order(op):
        ds.config.set_seed(7)
        data = op(ds.GeneratorDataset(Squares(20), ["i", "sq"], shuffle=False))
        return [int(v) for v in _column(data)], [int(v) for v in _column(data)]  # two epochs

    for op in (lambda d: d.shuffle(buffer_size=8), lambda d: ds.GeneratorDataset(Squares(20), ["i", "sq"])):
        first, again = order(op), order(op)
        assert first == again  # the same seed: the same epochs
        assert sorted(first[0]) == list(range(20)) and first[0] != list(range(20))
        assert first[0] != first[1]  # every epoch is shuffled anew
    assert ds.config.get_seed() == 7


def test_map_with_worker_processes_equals_map_without():
    def op(i, sq):
        return i * 3, sq.sum(keepdims=True) + 0.5

    base = ds.GeneratorDataset(Squares(23), ["i", "sq"], shuffle=False)
    serial = base.map(op, input_columns=["i", "sq"], output_columns=["a", "b"])
    parallel = base.map(op, ["i", "sq"], ["a", "b"], num_parallel_workers=3, python_multiprocessing=True)
    threads = base.map(op, ["i", "sq"], ["a", "b"], num_parallel_workers=2, python_multiprocessing=False)
    want = list(serial.create_tuple_iterator(output_numpy=True))
    assert serial.get_col_names() == ["a", "b"]
    for other in (parallel, threads):
        got = list(other.create_tuple_iterator(output_numpy=True))
        assert len(got) == 23 and all(np.array_equal(x, y) for w, g in zip(want, got) for x, y in zip(w, g))
    # a source read by workers keeps its order too
    workers = ds.GeneratorDataset(Squares(23), ["i", "sq"], shuffle=False, num_parallel_workers=3)
    assert [int(v) for v in _column(workers)] == list(range(23))


def test_map_one_column_keeps_the_others():
    data = ds.GeneratorDataset(Squares(3), ["i", "sq"], shuffle=False).map(lambda sq: sq * 2, input_columns="sq")
    rows = list(data.create_tuple_iterator(output_numpy=True))
    assert data.get_col_names() == ["i", "sq"] and rows[2][1].tolist() == [8.0, -4.0] and int(rows[2][0]) == 2


def test_repeat_take_skip_project_rename():
    data = ds.NumpySlicesDataset({"a": np.arange(4), "b": np.arange(4) * 10}, shuffle=False)
    assert [int(v) for v in _column(data.repeat(3))] == [0, 1, 2, 3] * 3
    assert data.repeat(2).get_dataset_size() == 8
    assert [int(v) for v in _column(data.skip(1).take(2))] == [1, 2]
    projected = data.project(["b"])
    assert projected.get_col_names() == ["b"] and [int(v) for v in _column(projected)] == [0, 10, 20, 30]
    renamed = data.rename(["a"], ["z"])
    assert renamed.get_col_names() == ["z", "b"]
    assert list(next(renamed.create_dict_iterator(output_numpy=True))) == ["z", "b"]


def test_shards_split_the_rows():
    shards = [ds.NumpySlicesDataset(np.arange(7), shuffle=False, num_shards=2, shard_id=k) for k in range(2)]
    got = [[int(v) for v in _column(s)] for s in shards]
    assert got == [[0, 2, 4, 6], [1, 3, 5, 0]]  # every shard the same size, wrapped around


def test_errors_of_a_user_source_and_map_name_the_op_and_columns():
    def bad_gen():
        yield (np.array(1),)
        raise KeyError("boom")

    with pytest.raises(RuntimeError, match=r"GeneratorDataset.*KeyError.*\['x'\]") as info:
        list(ds.GeneratorDataset(bad_gen, ["x"]))
    assert isinstance(info.value.__cause__, KeyError)

    def bad_op(x):
        raise ZeroDivisionError("no")

    data = ds.GeneratorDataset(Squares(4), ["i", "sq"], shuffle=False).map(bad_op, input_columns=["sq"])
    with pytest.raises(RuntimeError, match=r"'map'.*bad_op.*ZeroDivisionError.*\['sq'\]") as info:
        list(data)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    parallel = ds.GeneratorDataset(Squares(4), ["i", "sq"], shuffle=False).map(bad_op, ["sq"], num_parallel_workers=2)
    with pytest.raises(RuntimeError, match=r"'map'.*bad_op.*ZeroDivisionError"):
        list(parallel)
    with pytest.raises(ValueError, match="'batch'.*'batch_size'"):
        ds.NumpySlicesDataset(np.arange(3)).batch(0)
    with pytest.raises(ValueError, match="'map'.*'nope'"):
        ds.NumpySlicesDataset(np.arange(3)).map(abs, input_columns="nope")


def test_vision_transforms_on_arrays():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (8, 6, 3)).astype(np.uint8)
    resized = vision.Resize((4, 3))(img)
    assert resized.shape == (4, 3, 3) and resized.dtype == np.uint8
    assert vision.Resize(3)(img).shape == (4, 3, 3)  # the shorter side to 3, keeping the aspect
    flat = np.full((4, 4, 3), 7, np.uint8)
    assert np.all(vision.Resize((2, 2))(flat) == 7)
    scaled = vision.Rescale(1.0 / 255, -0.5)(img)
    np.testing.assert_allclose(scaled, img / 255.0 - 0.5, rtol=1e-6, atol=1e-6)
    mean, std = [1.0, 2.0, 3.0], [2.0, 4.0, 8.0]
    normed = vision.Normalize(mean, std)(img)
    np.testing.assert_allclose(normed, (img - np.array(mean)) / np.array(std), rtol=1e-5)
    chw = vision.HWC2CHW()(img)
    assert chw.shape == (3, 8, 6) and np.array_equal(chw[1], img[:, :, 1])
    assert np.array_equal(vision.CenterCrop(4)(img), img[2:6, 1:5])
    assert vision.RandomCrop((5, 5))(img).shape == (5, 5, 3)
    flipped = vision.RandomHorizontalFlip(prob=1.0)(img)
    assert np.array_equal(flipped, img[:, ::-1])
    assert old_vision.Resize is vision.Resize and old_transforms.TypeCast is transforms.TypeCast


def test_transforms_typecast_onehot_compose_in_map():
    cast = transforms.TypeCast(opforge.int32)
    assert cast(np.array([1.7, 2.0])).dtype == np.int32
    assert transforms.OneHot(4)(np.array(2)).tolist() == [0, 0, 1, 0]
    pipeline = transforms.Compose([vision.Rescale(0.5, 0.0), vision.HWC2CHW()])
    data = (
        ds.NumpySlicesDataset({"image": np.ones((3, 4, 4, 3), np.uint8), "label": np.arange(3)}, shuffle=False)
        .map(pipeline, "image")
        .map(cast, "label")
    )
    image, label = next(data.create_tuple_iterator(output_numpy=True))
    assert image.shape == (3, 4, 4) and image.dtype == np.float32 and float(image[0, 0, 0]) == 0.5
    assert label.dtype == np.int32


def test_dataset_size_is_counted_without_reading_rows():
    calls = []

    def op(x):
        calls.append(1)
        return x

    base = ds.GeneratorDataset(Squares(23), ["i", "sq"]).map(op, "sq").shuffle(4)
    shard = ds.NumpySlicesDataset(np.arange(9), num_shards=2, shard_id=1)
    pipelines = [base.batch(5), base.batch(5, drop_remainder=True), base.repeat(3).batch(4), base.skip(20).take(9),
                 base.take(7).project("i").rename("i", "j"), shard]  # fmt: skip
    sizes = [p.get_dataset_size() for p in pipelines]
    assert sizes == [5, 4, 18, 3, 7, 5] and not calls
    assert sizes == [sum(1 for _ in p.create_tuple_iterator(output_numpy=True)) for p in pipelines]
    with pytest.raises(RuntimeError, match="repeat"):
        base.repeat().get_dataset_size()


def test_map_workers_stream_the_rows_and_nest_with_source_workers():
    def endless():  # an error after 40 rows: reading the epoch whole first would meet it
        for i in range(40):
            yield (np.array(i),)
        raise OSError("end of the stream")

    data = ds.GeneratorDataset(endless, ["x"]).map(
        lambda x: x * 2, "x", num_parallel_workers=2, python_multiprocessing=True
    )
    assert [int(v) for v in _column(data.take(5))] == [0, 2, 4, 6, 8]
    nested = ds.GeneratorDataset(Squares(30), ["i", "sq"], shuffle=False, num_parallel_workers=2)
    nested = nested.map(lambda i: i + 100, "i", num_parallel_workers=3, python_multiprocessing=True)
    assert [int(v) for v in _column(nested)] == list(range(100, 130))


def test_output_shapes_and_types_describe_the_first_row():
    data = ds.NumpySlicesDataset({"x": np.zeros((10, 3), np.float32), "y": np.arange(10)}, shuffle=False)
    assert data.output_shapes() == [[3], []] and data.output_types() == [np.float32, np.int64]
    assert data.batch(4).output_shapes() == [[4, 3], [4]]
    with pytest.raises(RuntimeError, match="no rows"):
        data.take(0).output_shapes()


def test_slice_patches_cuts_an_image_into_output_columns():
    """MindSpore's SlicePatches: num_height x num_width patches row by row, padded (bottom, right) or dropped."""
    from opforge.dataset.vision import SliceMode, SlicePatches

    img = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
    padded = np.pad(img, [(0, 1), (0, 1), (0, 0)], constant_values=9)
    patches = SlicePatches(2, 4, fill_value=9)(img)
    assert len(patches) == 8 and all(p.shape == (3, 2, 3) for p in patches)
    np.testing.assert_array_equal(patches[5], padded[3:6, 2:4])  # row 1, column 1
    dropped = SlicePatches(2, 4, SliceMode.DROP)(img[..., 0])
    assert all(p.shape == (2, 1) for p in dropped)
    np.testing.assert_array_equal(dropped[7], img[2:4, 3:4, 0])
    cols = [f"img{i}" for i in range(4)]
    data = ds.NumpySlicesDataset({"image": img[None]}, shuffle=False).map(SlicePatches(1, 4), "image", cols)
    row = next(data.create_dict_iterator(output_numpy=True))
    np.testing.assert_array_equal(row["img3"], np.pad(img, [(0, 0), (0, 1), (0, 0)])[:, 6:8])
    with pytest.raises(ValueError, match="'SlicePatches', the 'num_width' must be positive"):
        SlicePatches(1, 0)
    with pytest.raises(ValueError, match="'fill_value' must be in \\[0, 255\\]"):
        SlicePatches(fill_value=300)
