"""``opforge.mindrecord``: MindSpore's ``mindspore.mindrecord`` for writing and reading MindRecord files:
``FileWriter`` (schema, index fields, rows, commit, ``open_for_append``) and ``FileReader``; read them in a
pipeline with ``opforge.dataset.MindDataset``. The files are in MindSpore's own format (version 3.0: the
shard files with their JSON headers, blob and raw pages, and the SQLite ``.db`` index files), described in
``opforge.mindrecord.shard_format``, so that files written by either MindSpore or opforge read in both
(the layout follows MindSpore's source; it has not been checked against a MindSpore installation).

Not here: ``MindPage``, the dataset converters (``Cifar10ToMR``, ``TFRecordToMR``, ...), statistics.
"""

from opforge.mindrecord.filereader import FileReader
from opforge.mindrecord.filewriter import FileWriter
from opforge.mindrecord.shard_format import MindRecordError

__all__ = ["FileWriter", "FileReader", "MindRecordError"]
