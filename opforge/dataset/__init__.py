"""``opforge.dataset``: MindSpore's ``mindspore.dataset`` for the datasets training scripts build in Python.

Sources: ``GeneratorDataset`` (a generator function, an iterable, or a random-access object with
``__getitem__`` and ``__len__``), ``NumpySlicesDataset`` (slices of arrays, lists or a dict of columns) and
the file readers of ``opforge.dataset.readers``: ``MnistDataset``, ``Cifar10Dataset``, ``Cifar100Dataset``,
``ImageFolderDataset``; ``TFRecordDataset`` (``tf.train.Example`` records, with a ``Schema``) and
``MindDataset`` (MindRecord files, written by ``opforge.mindrecord.FileWriter``); ``TextFileDataset`` (a row a
line) and ``CLUEDataset`` (the CLUE benchmark's JSON lines) of ``opforge.dataset.text_datasets``.
Operations return new datasets: ``batch`` (with ``per_batch_map``, ``input_columns``, ``output_columns``
and a callable ``batch_size``, given a ``BatchInfo``; MindSpore 1.x's ``pad_info``), ``padded_batch`` (rows
padded to one shape per column: ``opforge.dataset.pad_info``), ``shuffle``, ``map``, ``repeat``, ``take``,
``skip``, ``project``, ``rename``, ``zip`` (also ``dataset.zip((a, b))``); ``split`` shares the rows out among
new datasets (``opforge.dataset.split``); ``save`` writes the rows as MindRecord
(``opforge.dataset.save``). ``opforge.dataset.text`` holds the NLP transforms (tokenizers, ``Vocab``,
``Lookup``). Iterate with ``create_tuple_iterator`` /
``create_dict_iterator`` (Tensors by default, NumPy arrays with ``output_numpy=True``) or ``for row in dataset``.
``GraphData`` (``opforge.dataset.graph_data``) reads the graph MindRecord files of the model zoo's graph
converter for the GNN programs: nodes, edges, neighbours, sampling, features, random walks.

Rows are tuples of NumPy arrays, one per column. A random-access source with ``shuffle=True`` (its
default) is read in a new random order each epoch, drawn from ``config.set_seed``'s seed when set;
``num_shards`` / ``shard_id`` give each rank of a data-parallel job its share (of one order that every
rank draws, from MindSpore's default seed 5489 when none is set). ``num_parallel_workers > 1``
reads a random-access source and runs ``map`` in worker processes (threads with
``python_multiprocessing=False``), keeping the order of the rows. An error in a user's source or map
function is raised as a ``RuntimeError`` naming the dataset operation and the columns, chained to the
original exception (its traceback follows).

Samplers (``opforge.dataset.samplers``): MindSpore's ``Sampler``, ``SequentialSampler``, ``RandomSampler``,
``DistributedSampler``, ``SubsetSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``, ``PKSampler``
as a source's ``sampler`` or by ``Dataset.use_sampler``; ``PaddedDataset`` pads a concatenation for a
``DistributedSampler``. ``source.add_sampler(sampler)`` makes the source's sampler the new one's child.

``DatasetCache`` (``opforge.dataset.cache_client``) as a file reader's or ``map``'s ``cache`` keeps the rows it
produces, so that later epochs read them instead (in this process: MindSpore's cache server is not needed).

Not here: the other formats' readers (CSV, COCO, VOC, ...), ``bucket_batch_by_length``, dataset sink mode.
"""

from opforge.dataset import config, engine, text, transforms, vision
from opforge.dataset.batch_map import BatchInfo
from opforge.dataset.cache_client import DatasetCache
from opforge.dataset.engine import Dataset, GeneratorDataset, NumpySlicesDataset
from opforge.dataset.engine import zip_datasets as zip  # noqa: A004 (MindSpore's dataset.zip)
from opforge.dataset.graph_data import GraphData, OutputFormat, SamplingStrategy
from opforge.dataset.mindrecord import MindDataset
from opforge.dataset.padded import PaddedDataset
from opforge.dataset.readers import Cifar10Dataset, Cifar100Dataset, ImageFolderDataset, MnistDataset
from opforge.dataset.samplers import (
    DistributedSampler,
    PKSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    SubsetSampler,
    WeightedRandomSampler,
)
from opforge.dataset.schema import Schema
from opforge.dataset.shuffle import Shuffle
from opforge.dataset.text_datasets import CLUEDataset, TextFileDataset
from opforge.dataset.tfrecord import TFRecordDataset

__all__ = [
    "Dataset",
    "BatchInfo",
    "DatasetCache",
    "GeneratorDataset",
    "NumpySlicesDataset",
    "MnistDataset",
    "Cifar10Dataset",
    "Cifar100Dataset",
    "ImageFolderDataset",
    "TFRecordDataset",
    "TextFileDataset",
    "CLUEDataset",
    "MindDataset",
    "GraphData",
    "SamplingStrategy",
    "OutputFormat",
    "PaddedDataset",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "DistributedSampler",
    "SubsetSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "PKSampler",
    "Schema",
    "Shuffle",
    "config",
    "text",
    "transforms",
    "vision",
    "zip",
]

# MindSpore's ``dataset.engine`` package holds every dataset, sampler and the Schema
# (``import mindspore.dataset.engine as de``; ``de.ImageFolderDataset``): opforge's engine module gets those
# names here, where the readers (which build on it) are loaded.
for _name in __all__:
    if _name not in ("config", "text", "transforms", "vision", "zip"):
        setattr(engine, _name, globals()[_name])
