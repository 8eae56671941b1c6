"""MindSpore's ``DatasetHelper`` and ``connect_network_with_dataset``: the dataset iterator of a hand-written training
loop (``for inputs in DatasetHelper(ds, dataset_sink_mode=False): loss = train_net(*inputs)``).

Without sink mode each pass over the helper yields the dataset's next epoch, one tuple of Tensors per batch. In
sink mode MindSpore feeds a device queue that the network connected to it reads: here each pass yields ``()``
``sink_size()`` times, and the network ``connect_network_with_dataset`` returns takes the next batch itself, so
the same loop runs either way.
"""

from __future__ import annotations

from opforge.dataset.engine import Dataset
from opforge.nn.cell import Cell

__all__ = ["DatasetHelper", "connect_network_with_dataset"]


class DatasetHelper:
    """``DatasetHelper(dataset, dataset_sink_mode=True, sink_size=-1, epoch_num=1)``: iterate it once per epoch
    (``epoch_num`` epochs in all); ``sink_size`` (-1: the dataset's size) is the number of steps a pass gives in
    sink mode."""

    def __init__(self, dataset, dataset_sink_mode=True, sink_size=-1, epoch_num=1):
        where = "DatasetHelper"
        if not isinstance(dataset, Dataset):
            raise TypeError(f"For '{where}', the 'dataset' must be a Dataset, but got {type(dataset).__name__}.")
        if not isinstance(dataset_sink_mode, bool):
            raise TypeError(f"For '{where}', the 'dataset_sink_mode' must be a bool, but got {dataset_sink_mode!r}.")
        for name, value, low in (("sink_size", sink_size, -1), ("epoch_num", epoch_num, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low or value == 0:
                raise ValueError(f"For '{where}', the '{name}' must be an int >= {max(low, 1)} (or -1), got {value!r}.")
        self.dataset, self.dataset_sink_mode = dataset, dataset_sink_mode
        self._sink_size, self.epoch_num = sink_size, epoch_num
        self._rows = dataset.create_tuple_iterator(num_epochs=epoch_num)  # one stream over every epoch

    def sink_size(self) -> int:
        """The steps one pass gives in sink mode: ``sink_size``, or the dataset's size for -1."""
        return self.dataset.get_dataset_size() if self._sink_size == -1 else self._sink_size

    def next_batch(self) -> tuple:
        """The next batch of the stream, as a tuple of Tensors (past an epoch's end, the next epoch's first)."""
        try:
            return tuple(next(self._rows))
        except StopIteration:  # the end of an epoch: the iterator's next call starts the next one
            return tuple(next(self._rows))

    def __iter__(self):
        if self.dataset_sink_mode:  # the connected network takes each batch itself
            return iter([()] * self.sink_size())
        return _Epoch(self)

    def __len__(self) -> int:
        return self.sink_size() if self.dataset_sink_mode else self.dataset.get_dataset_size()

    def types_shapes(self) -> tuple:
        return self.dataset.output_types(), self.dataset.output_shapes()

    def get_data_info(self) -> tuple:
        return self.types_shapes()

    def release(self) -> None:
        """MindSpore frees its device queue; opforge's stream needs nothing."""

    def stop_send(self) -> None:
        """MindSpore pauses its device queue; opforge's stream needs nothing."""

    def continue_send(self) -> None:
        """MindSpore resumes its device queue; opforge's stream needs nothing."""


class _Epoch:
    """One epoch's batches from the helper's stream."""

    def __init__(self, helper: DatasetHelper):
        self._helper, self._left = helper, helper.dataset.get_dataset_size()

    def __iter__(self):
        return self

    def __next__(self) -> tuple:
        if self._left <= 0:
            raise StopIteration
        self._left -= 1
        return self._helper.next_batch()


class _DataSinkCell(Cell):
    """``network`` reading its inputs from a sink-mode helper: each call takes the next batch."""

    def __init__(self, network, helper: DatasetHelper):
        super().__init__(auto_prefix=False)
        self.network, self._helper = network, helper

    def construct(self, *inputs):
        return self.network(*(inputs or self._helper.next_batch()))


def connect_network_with_dataset(network, dataset_helper):
    """MindSpore's: in sink mode, a network that takes each step's batch from ``dataset_helper`` (called with no
    inputs, as the sink-mode loop calls it); without sink mode, ``network`` itself."""
    if not isinstance(network, Cell):
        raise TypeError(
            f"For 'connect_network_with_dataset', the 'network' must be a Cell, got {type(network).__name__}."
        )
    if not isinstance(dataset_helper, DatasetHelper):
        raise TypeError(
            "For 'connect_network_with_dataset', the 'dataset_helper' must be a DatasetHelper, but got "
            f"{type(dataset_helper).__name__}."
        )
    return _DataSinkCell(network, dataset_helper) if dataset_helper.dataset_sink_mode else network
