"""opforge.dataset's file readers as MindSpore's: MnistDataset (idx files), Cifar10Dataset and Cifar100Dataset
(the binary versions) and ImageFolderDataset (class folders of images), on small files written here in the
real formats: values, dtypes, shapes, columns, usage, shuffling, sharding, num_samples, pipelines and
the errors of bad arguments and bad files."""

import io

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
from opforge import nn
from opforge.dataset import transforms, vision
from opforge.dataset.vision import c_transforms as old_vision
from opforge.train import Model

PIL_Image = pytest.importorskip("PIL.Image")


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def _rows(dataset, **kwargs):
    return list(dataset.create_tuple_iterator(output_numpy=True, **kwargs))


# ---------------------------------------------------------------------------------------------
# Writers of the real formats


def _write_idx(path, magic, array):
    """An idx file: big-endian int32 magic and dims, then the uint8 data."""
    header = np.array([magic, *array.shape], ">u4").tobytes()
    path.write_bytes(header + np.asarray(array, np.uint8).tobytes())


def _mnist_split(directory, prefix, n, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    _write_idx(directory / f"{prefix}-images-idx3-ubyte", 2051, images)
    _write_idx(directory / f"{prefix}-labels-idx1-ubyte", 2049, labels)
    return images, labels


@pytest.fixture
def mnist(tmp_path):
    """An MNIST folder: 5 train rows, 3 test rows."""
    train = _mnist_split(tmp_path, "train", 5, 0)
    test = _mnist_split(tmp_path, "t10k", 3, 1)
    return tmp_path, train, test


def _cifar_file(path, n, label_bytes, seed):
    """n CIFAR binary records: the label byte(s), then the red, green and blue 32x32 planes."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 100, (n, label_bytes)).astype(np.uint8)
    planes = rng.integers(0, 256, (n, 3, 32, 32)).astype(np.uint8)
    path.write_bytes(np.concatenate([labels, planes.reshape(n, -1)], axis=1).tobytes())
    return labels, planes


@pytest.fixture
def cifar10(tmp_path):
    """data_batch_1.bin (4 rows), data_batch_2.bin (3) and test_batch.bin (2), and the meta file."""
    files = {name: _cifar_file(tmp_path / name, n, 1, k) for k, (name, n) in
             enumerate([("data_batch_1.bin", 4), ("data_batch_2.bin", 3), ("test_batch.bin", 2)])}  # fmt: skip
    (tmp_path / "batches.meta.txt").write_text("airplane\nautomobile\n")
    return tmp_path, files


def _png(path, array):
    PIL_Image.fromarray(array).save(path)
    return array


@pytest.fixture
def image_folder(tmp_path):
    """Class folders a_cat (2 RGB PNGs and a text file), b_empty, c_dog (1 gray PNG)."""
    rng = np.random.default_rng(0)
    (tmp_path / "a_cat").mkdir()
    (tmp_path / "b_empty").mkdir()
    (tmp_path / "c_dog").mkdir()
    cat1 = _png(tmp_path / "a_cat" / "1.png", rng.integers(0, 256, (6, 5, 3)).astype(np.uint8))
    cat2 = _png(tmp_path / "a_cat" / "2.png", rng.integers(0, 256, (4, 7, 3)).astype(np.uint8))
    (tmp_path / "a_cat" / "notes.txt").write_text("not an image")
    dog = _png(tmp_path / "c_dog" / "0.png", rng.integers(0, 256, (3, 3)).astype(np.uint8))
    return tmp_path, {"cat1": cat1, "cat2": cat2, "dog": dog}


# ---------------------------------------------------------------------------------------------
# MNIST


def test_mnist_values_dtypes_shapes_and_columns(mnist):
    path, (images, labels), _ = mnist
    data = ds.MnistDataset(str(path), usage="train", shuffle=False)
    assert data.get_col_names() == ["image", "label"] and data.get_dataset_size() == 5
    rows = _rows(data)
    assert len(rows) == 5
    for (image, label), want_image, want_label in zip(rows, images, labels):
        assert image.dtype == np.uint8 and image.shape == (28, 28, 1)
        assert np.array_equal(image[:, :, 0], want_image)
        assert label.dtype == np.uint32 and label.shape == () and int(label) == int(want_label)
    assert data.output_shapes() == [[28, 28, 1], []] and data.output_types() == [np.uint8, np.uint32]
    tensors = next(iter(data))
    assert isinstance(tensors[0], opforge.Tensor) and tensors[1].dtype == opforge.uint32


def test_mnist_usage_selects_the_split_and_all_reads_t10k_first(mnist):
    path, (train_images, _), (test_images, _) = mnist
    test = _rows(ds.MnistDataset(path, usage="test", shuffle=False))
    assert [np.array_equal(r[0][:, :, 0], t) for r, t in zip(test, test_images)] == [True] * 3
    for usage in (None, "all"):
        rows = _rows(ds.MnistDataset(path, usage=usage, shuffle=False))
        want = list(test_images) + list(train_images)  # MindSpore reads the files in name order
        assert len(rows) == 8 and all(np.array_equal(r[0][:, :, 0], w) for r, w in zip(rows, want))


def test_mnist_reads_the_dotted_names_and_only_its_own_split(tmp_path):
    images = np.arange(2 * 28 * 28).reshape(2, 28, 28).astype(np.uint8)
    _write_idx(tmp_path / "train-images.idx3-ubyte", 2051, images)
    _write_idx(tmp_path / "train-labels.idx1-ubyte", 2049, np.array([3, 4]))
    data = ds.MnistDataset(tmp_path, shuffle=False)
    assert [int(r[1]) for r in _rows(data)] == [3, 4]
    with pytest.raises(RuntimeError, match=r"'MnistDataset'.*usage 'test'.*t10k-images-idx3-ubyte"):
        ds.MnistDataset(tmp_path, usage="test")


def test_mnist_lenet_input_pipeline_trains_a_model(mnist):
    """The model zoo's LeNet pipeline, as written for MindSpore."""
    path = mnist[0]
    ds.config.set_seed(1)
    mnist_ds = ds.MnistDataset(str(path), usage="train")
    resize_op = vision.Resize((32, 32), interpolation=vision.Inter.LINEAR)
    rescale_nml_op = vision.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081)
    rescale_op = vision.Rescale(1.0 / 255.0, 0.0)
    hwc2chw_op = vision.HWC2CHW()
    type_cast_op = transforms.TypeCast(opforge.int32)
    mnist_ds = mnist_ds.map(operations=type_cast_op, input_columns="label", num_parallel_workers=2)
    mnist_ds = mnist_ds.map(operations=[resize_op, rescale_op, rescale_nml_op, hwc2chw_op], input_columns="image")
    mnist_ds = mnist_ds.shuffle(buffer_size=10000).batch(2, drop_remainder=True)
    assert mnist_ds.get_dataset_size() == 2
    image, label = _rows(mnist_ds)[0]
    assert image.shape == (2, 1, 32, 32) and image.dtype == np.float32 and label.dtype == np.int32
    net = nn.SequentialCell([nn.Flatten(), nn.Dense(32 * 32, 10)])
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9), metrics={"acc"})
    model.train(1, mnist_ds)
    assert 0.0 <= model.eval(mnist_ds)["acc"] <= 1.0


# ---------------------------------------------------------------------------------------------
# CIFAR


def test_cifar10_records_become_hwc_images_and_uint32_labels(cifar10):
    path, files = cifar10
    data = ds.Cifar10Dataset(path, usage="train", shuffle=False)
    assert data.get_col_names() == ["image", "label"] and data.get_dataset_size() == 7
    want = [(p, int(lab[0])) for name in ("data_batch_1.bin", "data_batch_2.bin") for lab, p in zip(*files[name])]
    for (image, label), (planes, want_label) in zip(_rows(data), want):
        assert image.shape == (32, 32, 3) and image.dtype == np.uint8 and image.flags.c_contiguous
        assert np.array_equal(image, planes.transpose(1, 2, 0))  # image[h, w, c] = plane c at (h, w)
        assert label.dtype == np.uint32 and label.shape == () and int(label) == want_label
    test = _rows(ds.Cifar10Dataset(path, usage="test", shuffle=False))
    assert [int(r[1]) for r in test] == [int(v) for v in files["test_batch.bin"][0][:, 0]]
    assert ds.Cifar10Dataset(path).get_dataset_size() == 9  # usage None: every *batch*.bin


def test_cifar100_columns_and_coarse_and_fine_labels(tmp_path):
    train = _cifar_file(tmp_path / "train.bin", 4, 2, 0)
    test = _cifar_file(tmp_path / "test.bin", 2, 2, 1)
    data = ds.Cifar100Dataset(tmp_path, usage="train", shuffle=False)
    assert data.get_col_names() == ["image", "coarse_label", "fine_label"]
    rows = _rows(data)
    assert len(rows) == 4
    for (image, coarse, fine), labels, planes in zip(rows, *train):
        assert np.array_equal(image, planes.transpose(1, 2, 0)) and image.dtype == np.uint8
        assert coarse.dtype == fine.dtype == np.uint32 and (int(coarse), int(fine)) == tuple(int(v) for v in labels)
    assert len(_rows(ds.Cifar100Dataset(tmp_path, usage="test"))) == 2
    every = _rows(ds.Cifar100Dataset(tmp_path, usage="all", shuffle=False))  # name order: test.bin first
    assert [int(r[2]) for r in every] == [int(v) for v in np.concatenate([test[0], train[0]])[:, 1]]


# ---------------------------------------------------------------------------------------------
# Image folders


def test_image_folder_raw_bytes_labels_and_class_order(image_folder):
    path, images = image_folder
    data = ds.ImageFolderDataset(str(path), shuffle=False, extensions=[".png"])
    assert data.get_col_names() == ["image", "label"]
    rows = _rows(data)
    assert len(rows) == 3
    files = [path / "a_cat" / "1.png", path / "a_cat" / "2.png", path / "c_dog" / "0.png"]
    for (raw, label), file in zip(rows, files):
        assert raw.dtype == np.uint8 and raw.ndim == 1 and raw.tobytes() == file.read_bytes()
        assert label.dtype == np.int32 and label.shape == ()
    assert [int(r[1]) for r in rows] == [0, 0, 2]  # the sorted folders' positions, the empty one counted
    assert ds.ImageFolderDataset(path, shuffle=False).get_dataset_size() == 4  # no extensions: every file


def test_image_folder_decode_and_class_indexing(image_folder):
    path, images = image_folder
    data = ds.ImageFolderDataset(path, shuffle=False, extensions=[".png"], decode=True)
    (cat1, _), (cat2, _), (dog, _) = _rows(data)
    assert np.array_equal(cat1, images["cat1"]) and np.array_equal(cat2, images["cat2"])
    assert dog.shape == (3, 3, 3) and np.array_equal(dog, np.repeat(images["dog"][:, :, None], 3, axis=2))
    picked = ds.ImageFolderDataset(path, shuffle=False, class_indexing={"c_dog": 7, "z_absent": 1})
    assert [int(r[1]) for r in _rows(picked)] == [7]


def test_image_folder_map_decode_resize_batch(image_folder):
    path = image_folder[0]
    data = ds.ImageFolderDataset(path, extensions=[".png"], shuffle=False)
    data = data.map([vision.Decode(), vision.Resize((8, 8)), vision.HWC2CHW()], input_columns="image").batch(2)
    batches = _rows(data)
    assert [b[0].shape for b in batches] == [(2, 3, 8, 8), (1, 3, 8, 8)] and batches[0][1].dtype == np.int32


def test_decode_on_bytes_and_arrays(image_folder):
    path, images = image_folder
    raw = (path / "a_cat" / "1.png").read_bytes()
    assert np.array_equal(vision.Decode()(raw), images["cat1"])
    decoded = vision.Decode()(np.frombuffer(raw, np.uint8))
    assert decoded.dtype == np.uint8 and np.array_equal(decoded, images["cat1"]) and decoded.flags.writeable
    assert vision.Decode(to_pil=True)(raw).size == (5, 6)
    buffer = io.BytesIO()
    PIL_Image.fromarray(images["cat2"]).save(buffer, format="JPEG")
    assert vision.Decode()(buffer.getvalue()).shape == (4, 7, 3)
    with pytest.raises(TypeError, match="'Decode'.*1-D uint8.*2-D"):
        vision.Decode()(images["cat1"][:, :, 0])
    with pytest.raises(ValueError, match="'Decode'.*not an image"):
        vision.Decode()(b"not an image")
    assert old_vision.Decode is vision.Decode and vision.Inter.LINEAR == vision.Inter.BILINEAR


# ---------------------------------------------------------------------------------------------
# Shuffling, sharding, num_samples, workers


def _labels_and_first_pixels(dataset):
    return [(int(r[1]), int(r[0].reshape(-1)[0])) for r in _rows(dataset)]


def test_shuffle_is_the_default_and_reproducible_with_a_seed(cifar10):
    path = cifar10[0]
    ordered = _labels_and_first_pixels(ds.Cifar10Dataset(path, shuffle=False))

    def epochs():
        ds.config.set_seed(5)
        data = ds.Cifar10Dataset(path)  # shuffle=None: shuffled, as MindSpore's readers
        return _labels_and_first_pixels(data), _labels_and_first_pixels(data)

    first, again = epochs(), epochs()
    assert first == again  # the same seed, the same epochs
    assert sorted(first[0]) == sorted(ordered) and first[0] != ordered
    assert first[0] != first[1]  # a new order each epoch


@pytest.mark.parametrize("seed", [None, 11])
@pytest.mark.parametrize("shuffle", [False, True])
def test_shards_are_disjoint_and_cover_every_row(cifar10, shuffle, seed):
    """Every shard takes every num_shards-th row of one order, shuffled or not, with or without a seed."""
    path = cifar10[0]
    if seed is not None:
        ds.config.set_seed(seed)
    every = sorted(_labels_and_first_pixels(ds.Cifar10Dataset(path, shuffle=False)))
    shards = [_labels_and_first_pixels(ds.Cifar10Dataset(path, shuffle=shuffle, num_shards=3, shard_id=k))
              for k in range(3)]  # fmt: skip
    assert [len(s) for s in shards] == [3, 3, 3]
    assert sorted(sum(shards, [])) == every  # 9 rows in 3 shards: disjoint, and together all of them
    if not shuffle:
        assert shards[1] == _labels_and_first_pixels(ds.Cifar10Dataset(path, shuffle=False))[1::3]


def test_uneven_shards_wrap_around_and_num_samples_caps_each(mnist):
    path = mnist[0]
    shards = [ds.MnistDataset(path, shuffle=False, num_shards=3, shard_id=k) for k in range(3)]
    got = [[int(r[1]) for r in _rows(s)] for s in shards]
    labels = [int(r[1]) for r in _rows(ds.MnistDataset(path, shuffle=False))]
    assert [len(g) for g in got] == [3, 3, 3] and sorted(sum(got, [])) == sorted(labels + labels[:1])  # 8 rows
    assert got[2] == labels[2::3] + labels[:1]
    capped = ds.MnistDataset(path, shuffle=False, num_samples=3)
    assert capped.get_dataset_size() == 3 and [int(r[1]) for r in _rows(capped)] == labels[:3]
    sharded = ds.MnistDataset(path, shuffle=False, num_samples=2, num_shards=3, shard_id=1)
    assert [int(r[1]) for r in _rows(sharded)] == labels[1::3][:2]


def test_worker_threads_keep_the_order(cifar10):
    path = cifar10[0]
    serial = _labels_and_first_pixels(ds.Cifar10Dataset(path, shuffle=False))
    threads = _labels_and_first_pixels(ds.Cifar10Dataset(path, shuffle=False, num_parallel_workers=3))
    assert threads == serial
    ds.config.set_num_parallel_workers(2)
    try:
        assert ds.Cifar10Dataset(path)._workers == 2  # num_parallel_workers=None: the config's
    finally:
        ds.config.set_num_parallel_workers(1)


def test_cifar_pipeline_with_vision_transforms(cifar10):
    path = cifar10[0]
    data = ds.Cifar10Dataset(path, usage="train", shuffle=False)
    data = data.map([vision.Rescale(1.0 / 255, 0.0), vision.Normalize([0.5] * 3, [0.25] * 3), vision.HWC2CHW()],
                    input_columns="image")  # fmt: skip
    data = data.map(transforms.TypeCast(opforge.int32), input_columns="label").batch(4)
    (image, label), (tail, _) = _rows(data)
    assert image.shape == (4, 3, 32, 32) and image.dtype == np.float32 and label.dtype == np.int32
    assert tail.shape == (3, 3, 32, 32) and data.get_dataset_size() == 2


# ---------------------------------------------------------------------------------------------
# Errors


def test_argument_errors_name_the_dataset_and_the_argument(tmp_path, mnist, image_folder):
    path = mnist[0]
    with pytest.raises(ValueError, match=r"'MnistDataset'.*'dataset_dir'.*existing directory.*missing"):
        ds.MnistDataset(tmp_path / "nowhere")
    with pytest.raises(ValueError, match=r"'Cifar10Dataset'.*'dataset_dir'.*is a file"):
        ds.Cifar10Dataset(path / "train-images-idx3-ubyte")
    with pytest.raises(ValueError, match=r"'MnistDataset'.*'usage'.*'train', 'test', 'all' or None.*'valid'"):
        ds.MnistDataset(path, usage="valid")
    with pytest.raises(ValueError, match=r"'Cifar100Dataset'.*'usage'.*'eval'"):
        ds.Cifar100Dataset(path, usage="eval")
    with pytest.raises(ValueError, match=r"'MnistDataset'.*'num_samples'.*0"):
        ds.MnistDataset(path, num_samples=0)
    with pytest.raises(ValueError, match=r"'MnistDataset'.*'shard_id'"):
        ds.MnistDataset(path, num_shards=2, shard_id=2)
    with pytest.raises(TypeError, match=r"'MnistDataset'.*'sampler' must be an iterable of row indices or a sampler"):
        ds.MnistDataset(path, sampler=object())
    folder = image_folder[0]
    with pytest.raises(TypeError, match=r"'ImageFolderDataset'.*'extensions'"):
        ds.ImageFolderDataset(folder, extensions=".png")
    with pytest.raises(TypeError, match=r"'ImageFolderDataset'.*'class_indexing'"):
        ds.ImageFolderDataset(folder, class_indexing={"a_cat": "0"})
    with pytest.raises(TypeError, match=r"'ImageFolderDataset'.*'decode'"):
        ds.ImageFolderDataset(folder, decode="yes")


def test_mnist_file_errors(tmp_path):
    with pytest.raises(RuntimeError, match=r"'MnistDataset'.*usage 'all'.*train-images-idx3-ubyte.*t10k"):
        ds.MnistDataset(tmp_path)
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(b"\x1f\x8b\x08\x00")
    with pytest.raises(RuntimeError, match=r"decompress the \.gz files"):
        ds.MnistDataset(tmp_path, usage="train")
    images, labels = tmp_path / "train-images-idx3-ubyte", tmp_path / "train-labels-idx1-ubyte"
    _write_idx(images, 2049, np.zeros((2, 28, 28)))
    _write_idx(labels, 2049, np.zeros(2))
    with pytest.raises(RuntimeError, match=r"'MnistDataset'.*not an MNIST image file.*should be 2051.*2049"):
        ds.MnistDataset(tmp_path)
    _write_idx(images, 2051, np.zeros((2, 28, 28)))
    _write_idx(labels, 2051, np.zeros((2, 28, 28)))
    with pytest.raises(RuntimeError, match=r"not an MNIST label file.*should be 2049.*2051"):
        ds.MnistDataset(tmp_path)
    _write_idx(labels, 2049, np.zeros(3))
    with pytest.raises(RuntimeError, match=r"'MnistDataset'.*2 images.*3 labels"):
        ds.MnistDataset(tmp_path)
    _write_idx(images, 2051, np.zeros((3, 28, 28)))
    images.write_bytes(images.read_bytes()[:-10])
    with pytest.raises(RuntimeError, match=r"'MnistDataset'.*truncated.*\(3, 28, 28\).*2368 bytes.*2358"):
        ds.MnistDataset(tmp_path)
    images.write_bytes(b"\x00\x00\x08\x03\x00")
    with pytest.raises(RuntimeError, match=r"truncated.*16-byte header.*5 bytes"):
        ds.MnistDataset(tmp_path)


def test_cifar_file_errors(tmp_path):
    with pytest.raises(RuntimeError, match=r"'Cifar10Dataset'.*usage 'train'.*data_batch_1\.bin.*\[\]"):
        ds.Cifar10Dataset(tmp_path, usage="train")
    _cifar_file(tmp_path / "test_batch.bin", 2, 1, 0)
    with pytest.raises(RuntimeError, match=r"'Cifar10Dataset'.*usage 'train'.*\['test_batch\.bin'\]"):
        ds.Cifar10Dataset(tmp_path, usage="train")
    path = tmp_path / "data_batch_1.bin"
    path.write_bytes(b"\x00" * (3073 * 2 - 1))
    with pytest.raises(RuntimeError, match=r"'Cifar10Dataset'.*data_batch_1\.bin.*6145 bytes.*3073-byte.*binary"):
        ds.Cifar10Dataset(tmp_path)
    _cifar_file(tmp_path / "data_batch_1.bin", 1, 1, 0)
    with pytest.raises(RuntimeError, match=r"'Cifar100Dataset'.*3074-byte CIFAR-100"):
        ds.Cifar100Dataset(tmp_path, usage="test")  # CIFAR-10 records are one byte short
    _cifar_file(tmp_path / "test_batch.bin", 2, 2, 0)
    with pytest.raises(RuntimeError, match=r"'Cifar100Dataset'.*data_batch_1\.bin.*neither a CIFAR-100 train nor test"):
        ds.Cifar100Dataset(tmp_path)


def test_image_folder_errors(tmp_path, image_folder):
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "empty_class").mkdir()
    with pytest.raises(RuntimeError, match=r"'ImageFolderDataset'.*class subfolders.*none.*\['empty_class'\]"):
        ds.ImageFolderDataset(tmp_path / "nothing")
    with pytest.raises(RuntimeError, match=r"'ImageFolderDataset'.*extensions \['\.PNG'\]"):
        ds.ImageFolderDataset(image_folder[0], extensions=[".PNG"])  # case-sensitive, as MindSpore's
    data = ds.ImageFolderDataset(image_folder[0], decode=True, shuffle=False)  # notes.txt is no image
    with pytest.raises(RuntimeError, match=r"'ImageFolderDataset'.*ValueError.*notes\.txt' cannot be decoded") as info:
        _rows(data)
    assert isinstance(info.value.__cause__, ValueError)
