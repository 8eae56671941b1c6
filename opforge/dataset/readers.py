"""``opforge.dataset``'s file readers: MindSpore's ``MnistDataset``, ``Cifar10Dataset``, ``Cifar100Dataset``
and ``ImageFolderDataset``, reading the datasets' files as MindSpore does (the same arguments, columns,
dtypes, shapes and row order).

Each reader checks the directory and the files' headers and sizes when it is made, then maps the files
(``np.memmap``) and reads a row only when an epoch asks for it. Shuffling (on by default), ``num_samples``,
``num_shards``/``shard_id`` and ``num_parallel_workers`` (threads) are those of every random-access
source (``opforge.dataset.engine._Source``); ``sampler`` takes MindSpore's samplers
(``opforge.dataset.samplers``); ``cache`` a ``DatasetCache`` (``opforge.dataset.cache_client``).
"""

from __future__ import annotations

import os

import numpy as np

from opforge.dataset import cache_client, config, samplers
from opforge.dataset.engine import _check_positive, _Source
from opforge.dataset.vision import Decode

__all__ = ["MnistDataset", "Cifar10Dataset", "Cifar100Dataset", "ImageFolderDataset"]

_USAGES = ("train", "test", "all")


# ---------------------------------------------------------------------------------------------
# Arguments and files


def _check_dir(where: str, dataset_dir) -> str:
    if not isinstance(dataset_dir, (str, os.PathLike)):
        raise TypeError(
            f"For '{where}', the 'dataset_dir' must be a str or a path, but got {type(dataset_dir).__name__}."
        )
    path = os.fspath(dataset_dir)
    if not os.path.isdir(path):
        found = "a file" if os.path.exists(path) else "missing"
        raise ValueError(f"For '{where}', the 'dataset_dir' must be an existing directory, but '{path}' is {found}.")
    return path


def _check_usage(where: str, usage) -> str:
    if usage is None:  # MindSpore's default: every split
        return "all"
    if not isinstance(usage, str) or usage not in _USAGES:
        raise ValueError(f"For '{where}', the 'usage' must be 'train', 'test', 'all' or None, but got {usage!r}.")
    return usage


def _file_names(directory: str) -> list:
    """The names of the directory's regular files, sorted (MindSpore reads matching files in name order)."""
    return sorted(entry.name for entry in os.scandir(directory) if entry.is_file())


def _map_rows(path: str, offset: int, shape: tuple) -> np.ndarray:
    """The file's bytes after ``offset`` as a read-only uint8 array of ``shape``, mapped, not read."""
    if 0 in shape:  # mmap cannot map zero bytes
        return np.zeros(shape, np.uint8)
    return np.memmap(path, np.uint8, "r", offset=offset, shape=shape)


class _Rows:
    """Several files' rows end to end: row ``i`` is row ``i - start`` of the file whose rows cover it."""

    def __init__(self, parts: list, lengths: list):
        self.parts = parts
        self.starts = np.cumsum([0] + [int(n) for n in lengths])

    def __len__(self) -> int:
        return int(self.starts[-1])

    def locate(self, i: int) -> tuple:
        k = int(np.searchsorted(self.starts, i, side="right")) - 1
        return self.parts[k], i - int(self.starts[k])


class _FileReader(_Source):
    """A source read from files: MindSpore's common arguments of the readers checked (``shuffle`` True when
    None, ``num_parallel_workers`` from ``config`` when None), the rows read by threads."""

    def __init__(self, columns, length, num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id,
                 cache):  # fmt: skip
        sampler = samplers.select(self.where, sampler, True, shuffle, num_shards, num_samples, int_ok=True)
        cache_client.check_cache(cache)
        if shuffle is not None and not isinstance(shuffle, (bool, np.bool_)):
            raise TypeError(f"For '{self.where}', the 'shuffle' must be a bool or None, but got {shuffle!r}.")
        if num_samples is not None:
            _check_positive(self.where, "num_samples", num_samples)
        if length == 0:
            raise RuntimeError(f"For '{self.where}', the files hold no rows.")
        workers = config.get_num_parallel_workers() if num_parallel_workers is None else num_parallel_workers
        shuffle = True if shuffle is None else bool(shuffle)
        num_samples = num_samples if sampler is None else None  # the sampler's
        super().__init__(columns, length, shuffle, num_samples, num_shards, shard_id, workers, False)
        if sampler is not None:
            samplers.check_source(self.where, sampler, self)
        self._sampler = sampler
        self._cache = cache


# ---------------------------------------------------------------------------------------------
# MNIST


_IDX_IMAGES_MAGIC, _IDX_LABELS_MAGIC = 2051, 2049  # 0x0803 / 0x0801: unsigned bytes, 3 / 1 dims
_MNIST_PREFIX = {"train": "train", "test": "t10k", "all": ""}


def _read_idx(where: str, path: str, magic: int, what: str) -> np.ndarray:
    """An idx file (big-endian int32 magic, then one int32 per dim, then the uint8 data), mapped."""
    ndim = magic & 0xFF
    header = 4 * (1 + ndim)
    size = os.path.getsize(path)
    if size < header:
        raise RuntimeError(
            f"For '{where}', the file '{path}' is truncated: an MNIST {what} file starts with a {header}-byte "
            f"header, but the file has {size} bytes."
        )
    words = np.fromfile(path, ">u4", count=1 + ndim)
    if int(words[0]) != magic:
        hint = " (a gzip file: decompress it first)" if int(words[0]) >> 16 == 0x1F8B else ""
        raise RuntimeError(
            f"For '{where}', the file '{path}' is not an MNIST {what} file: its magic number should be {magic}, "
            f"but got {int(words[0])}{hint}."
        )
    shape = tuple(int(d) for d in words[1:])
    expected = header + int(np.prod(shape))
    if size != expected:
        state = "truncated" if size < expected else "longer than its header says"
        raise RuntimeError(
            f"For '{where}', the file '{path}' is {state}: its header gives {what}s of shape {shape}, "
            f"{expected} bytes with the header, but the file has {size} bytes."
        )
    return _map_rows(path, header, shape)


def _mnist_files(where: str, directory: str, usage: str) -> list:
    """(images, labels) paths of the usage, paired in name order: MindSpore takes every file whose name
    holds '<prefix>-images' and 'idx3-ubyte' (labels: 'idx1-ubyte'), so 'all' reads t10k before train."""
    prefix = _MNIST_PREFIX[usage]
    names = [n for n in _file_names(directory) if not n.endswith(".gz")]  # the compressed downloads
    images = [n for n in names if f"{prefix}-images" in n and "idx3-ubyte" in n]
    labels = [n for n in names if f"{prefix}-labels" in n and "idx1-ubyte" in n]
    if not images or len(images) != len(labels):
        splits = ("train", "t10k") if usage == "all" else (prefix,)
        expected = " and ".join(f"{p}-images-idx3-ubyte with {p}-labels-idx1-ubyte" for p in splits)
        gz = " (decompress the .gz files first)" if any(n.endswith(".gz") for n in os.listdir(directory)) else ""
        raise RuntimeError(
            f"For '{where}', the 'dataset_dir' '{directory}' must hold the MNIST files of usage '{usage}' "
            f"({expected}), but it has the image files {images} and the label files {labels}{gz}."
        )
    return [(os.path.join(directory, i), os.path.join(directory, j)) for i, j in zip(images, labels)]


def _mnist_part(where: str, image_path: str, label_path: str) -> tuple:
    images = _read_idx(where, image_path, _IDX_IMAGES_MAGIC, "image")
    labels = _read_idx(where, label_path, _IDX_LABELS_MAGIC, "label")
    if len(images) != len(labels):
        raise RuntimeError(
            f"For '{where}', the image file '{image_path}' has {len(images)} images, but the label file "
            f"'{label_path}' has {len(labels)} labels."
        )
    return images, labels


class MnistDataset(_FileReader):
    """MindSpore's ``MnistDataset(dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
    shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None)``: the MNIST idx files
    ``train-images-idx3-ubyte``/``train-labels-idx1-ubyte`` (usage "train") and ``t10k-images-idx3-ubyte``/
    ``t10k-labels-idx1-ubyte`` (usage "test"; None or "all" reads both, t10k first as MindSpore). An idx
    file is a big-endian int32 magic number (2051 images, 2049 labels), one big-endian int32 per dim
    (count, rows, cols for images; count for labels), then the uint8 data. Columns ``image`` (uint8,
    rows x cols x 1) and ``label`` (uint32 scalar); shuffled unless ``shuffle=False``."""

    where = "MnistDataset"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):  # fmt: skip
        directory = _check_dir(self.where, dataset_dir)
        usage = _check_usage(self.where, usage)
        files = _mnist_files(self.where, directory, usage)
        parts = [_mnist_part(self.where, i, j) for i, j in files]
        self._rows_of = _Rows(parts, [len(labels) for _, labels in parts])
        super().__init__(["image", "label"], len(self._rows_of), num_samples, num_parallel_workers, shuffle,
                         sampler, num_shards, shard_id, cache)  # fmt: skip

    def _read(self, i: int):
        (images, labels), j = self._rows_of.locate(i)
        return np.array(images[j])[:, :, None], np.uint32(labels[j])


# ---------------------------------------------------------------------------------------------
# CIFAR


_CIFAR_IMAGE = (3, 32, 32)  # each record's image: the red, green and blue planes, rows first
_CIFAR_IMAGE_BYTES = 3 * 32 * 32


def _cifar_records(where: str, path: str, label_bytes: int, version: str) -> np.ndarray:
    """A CIFAR binary file's records (label byte(s), then 3072 image bytes), mapped; any number of them."""
    record = label_bytes + _CIFAR_IMAGE_BYTES
    size = os.path.getsize(path)
    if size == 0 or size % record:
        raise RuntimeError(
            f"For '{where}', the file '{path}' has {size} bytes, not a whole number of {record}-byte {version} "
            f"records ({label_bytes} label byte(s) and a 32x32x3 image): the file is truncated or not the "
            f"{version} binary version."
        )
    return _map_rows(path, 0, (size // record, record))


def _cifar_image(record: np.ndarray, label_bytes: int) -> np.ndarray:
    planes = record[label_bytes:].reshape(_CIFAR_IMAGE)
    return np.ascontiguousarray(planes.transpose(1, 2, 0))  # CHW planes to MindSpore's HWC


def _cifar_files(where: str, directory: str, usage: str, keep, version: str, expected: str) -> list:
    """The directory's .bin files that ``keep(name)`` selects, in name order (as MindSpore)."""
    bins = [n for n in _file_names(directory) if n.endswith(".bin")]
    chosen = [n for n in bins if keep(n)]
    if not chosen:
        raise RuntimeError(
            f"For '{where}', the 'dataset_dir' '{directory}' must hold the {version} binary files of usage "
            f"'{usage}' ({expected}), but its .bin files are {bins}."
        )
    return [os.path.join(directory, n) for n in chosen]


_CIFAR10_KEEP = {
    "train": lambda name: "data_batch" in name,
    "test": lambda name: "test_batch" in name,
    "all": lambda name: "batch" in name,
}
_CIFAR10_EXPECTED = {
    "train": "data_batch_1.bin ... data_batch_5.bin",
    "test": "test_batch.bin",
    "all": "data_batch_1.bin ... data_batch_5.bin and test_batch.bin",
}


class Cifar10Dataset(_FileReader):
    """MindSpore's ``Cifar10Dataset(dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
    shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None)``: CIFAR-10's binary version,
    ``data_batch_1.bin`` ... ``data_batch_5.bin`` (usage "train") and ``test_batch.bin`` ("test"; None or
    "all" reads every ``*batch*.bin`` in name order). Each file is records of 3073 bytes: the label byte,
    then the 32x32 red, green and blue planes. Columns ``image`` (uint8 32x32x3, HWC) and ``label``
    (uint32 scalar); shuffled unless ``shuffle=False``."""

    where = "Cifar10Dataset"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):  # fmt: skip
        directory = _check_dir(self.where, dataset_dir)
        usage = _check_usage(self.where, usage)
        keep, expected = _CIFAR10_KEEP[usage], _CIFAR10_EXPECTED[usage]
        files = _cifar_files(self.where, directory, usage, keep, "CIFAR-10", expected)
        parts = [_cifar_records(self.where, f, 1, "CIFAR-10") for f in files]
        self._rows_of = _Rows(parts, [len(p) for p in parts])
        super().__init__(["image", "label"], len(self._rows_of), num_samples, num_parallel_workers, shuffle,
                         sampler, num_shards, shard_id, cache)  # fmt: skip

    def _read(self, i: int):
        records, j = self._rows_of.locate(i)
        record = records[j]
        return _cifar_image(record, 1), np.uint32(record[0])


def _cifar100_split(where: str, path: str) -> None:
    """MindSpore reads a CIFAR-100 .bin file only when its name says its split."""
    name = os.path.basename(path)
    if "train" not in name and "test" not in name:
        raise RuntimeError(
            f"For '{where}', the file '{path}' is neither a CIFAR-100 train nor test file: its name must hold "
            "'train' or 'test' (train.bin, test.bin)."
        )


class Cifar100Dataset(_FileReader):
    """MindSpore's ``Cifar100Dataset(dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
    shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None)``: CIFAR-100's binary version,
    ``train.bin`` (usage "train") and ``test.bin`` ("test"; None or "all" reads every ``.bin`` file in name
    order). Each file is records of 3074 bytes: the coarse label byte, the fine label byte, then the 32x32
    red, green and blue planes. Columns ``image`` (uint8 32x32x3, HWC), ``coarse_label`` and ``fine_label``
    (uint32 scalars); shuffled unless ``shuffle=False``."""

    where = "Cifar100Dataset"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):  # fmt: skip
        directory = _check_dir(self.where, dataset_dir)
        usage = _check_usage(self.where, usage)
        keep = (lambda name: True) if usage == "all" else (lambda name: usage in name)
        expected = {"train": "train.bin", "test": "test.bin", "all": "train.bin and test.bin"}[usage]
        files = _cifar_files(self.where, directory, usage, keep, "CIFAR-100", expected)
        for f in files:
            _cifar100_split(self.where, f)
        parts = [_cifar_records(self.where, f, 2, "CIFAR-100") for f in files]
        self._rows_of = _Rows(parts, [len(p) for p in parts])
        super().__init__(["image", "coarse_label", "fine_label"], len(self._rows_of), num_samples,
                         num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)  # fmt: skip

    def _read(self, i: int):
        records, j = self._rows_of.locate(i)
        record = records[j]
        return _cifar_image(record, 2), np.uint32(record[0]), np.uint32(record[1])


# ---------------------------------------------------------------------------------------------
# Image folders


def _check_extensions(where: str, extensions):
    if extensions is None:
        return None
    if isinstance(extensions, str) or not all(isinstance(e, str) for e in extensions):
        raise TypeError(
            f"For '{where}', the 'extensions' must be a list of str (such as ['.JPEG']), got {extensions!r}."
        )
    return set(extensions)


def _check_class_indexing(where: str, class_indexing):
    if class_indexing is None:
        return None
    ok = isinstance(class_indexing, dict) and all(
        isinstance(k, str) and isinstance(v, (int, np.integer)) and not isinstance(v, bool)
        for k, v in class_indexing.items()
    )
    if not ok:
        raise TypeError(
            f"For '{where}', the 'class_indexing' must be a dict of folder name to int, got {class_indexing!r}."
        )
    return class_indexing


def _scan_image_folder(where: str, root: str, extensions, class_indexing) -> tuple:
    """(paths, labels) of the images: one class per subfolder of ``root`` (sorted by name, labelled by
    position unless ``class_indexing`` names the folders to read and their labels), the files of each
    folder sorted by name and kept when their extension (with its dot, case-sensitive, as MindSpore's) is
    one of ``extensions``."""
    folders = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
    if class_indexing is not None:
        folders = [f for f in folders if f in class_indexing]
    paths, labels = [], []
    for position, folder in enumerate(folders):
        label = position if class_indexing is None else int(class_indexing[folder])
        for name in _file_names(os.path.join(root, folder)):
            if extensions is None or os.path.splitext(name)[1] in extensions:
                paths.append(os.path.join(root, folder, name))
                labels.append(label)
    if not paths:
        raise RuntimeError(
            f"For '{where}', the 'dataset_dir' '{root}' must hold images in class subfolders, but found none "
            f"(subfolders {folders}, extensions {sorted(extensions) if extensions else 'any'})."
        )
    return paths, np.asarray(labels, np.int32)


class ImageFolderDataset(_FileReader):
    """MindSpore's ``ImageFolderDataset(dataset_dir, num_samples=None, num_parallel_workers=None,
    shuffle=None, sampler=None, extensions=None, class_indexing=None, decode=False, num_shards=None,
    shard_id=None, cache=None, decrypt=None)``: a folder of class subfolders of image files
    (``dataset_dir/<class>/<image>``). Classes are the subfolders sorted by name, labelled 0, 1, ... unless
    ``class_indexing`` ({folder: label}) picks the folders and their labels; ``extensions`` (such as
    ``[".JPEG", ".png"]``) keeps the files whose extension is one of them. Columns ``image`` (the file's
    bytes as a 1-D uint8 array, or with ``decode=True`` the RGB image, uint8 HWC, decoded by Pillow as
    ``vision.Decode``) and ``label`` (int32 scalar, as MindSpore's reader gives); ``decrypt(path)`` returns
    an encrypted file's bytes. Shuffled unless ``shuffle=False``."""

    where = "ImageFolderDataset"

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 extensions=None, class_indexing=None, decode=False, num_shards=None, shard_id=None, cache=None,
                 decrypt=None):  # fmt: skip
        root = _check_dir(self.where, dataset_dir)
        extensions = _check_extensions(self.where, extensions)
        class_indexing = _check_class_indexing(self.where, class_indexing)
        if not isinstance(decode, (bool, np.bool_)):
            raise TypeError(f"For '{self.where}', the 'decode' must be a bool, but got {decode!r}.")
        if decrypt is not None and not callable(decrypt):
            raise TypeError(f"For '{self.where}', the 'decrypt' must be a callable or None, but got {decrypt!r}.")
        self._paths, self._labels = _scan_image_folder(self.where, root, extensions, class_indexing)
        self._decode = Decode() if decode else None
        self._decrypt = decrypt
        super().__init__(["image", "label"], len(self._paths), num_samples, num_parallel_workers, shuffle, sampler,
                         num_shards, shard_id, cache)  # fmt: skip

    def _read(self, i: int):
        path = self._paths[i]
        data = np.fromfile(path, np.uint8) if self._decrypt is None else np.frombuffer(self._decrypt(path), np.uint8)
        if self._decode is not None:
            try:
                data = self._decode(data)
            except ValueError as e:
                raise ValueError(f"the file '{path}' cannot be decoded: {e}") from e
        return data, self._labels[i]
