"""Dataset sink mode: ``Model.train(..., dataset_sink_mode=True, sink_size=...)`` and ``data_sink`` as a
MindSpore program observes them, without a device queue.

MindSpore's sink mode sends the dataset's batches to the device, where the step network reads them
(``GetNext``). Here each batch of a sink goes through the same step network as ``dataset_sink_mode=False``
(traced and replayed in GRAPH_MODE), every batch trained on; what changes is what MindSpore's
``Model._train_dataset_sink_process`` changes:

- an epoch is one sink: ``sink_size`` steps (the whole dataset for -1), ``cb_params.batch_num`` the sink's
  size; the batches are read as one stream that goes on across epochs and starts a new pass over the
  dataset (a new epoch of it: a new shuffle) only when one ends;
- in GRAPH_MODE a sink is one device call: ``on_train_step_begin``/``on_train_step_end`` run once around its
  steps, ``cur_step_num`` advanced by the sink's size and ``net_outputs`` the last step's; in PYNATIVE_MODE
  MindSpore feeds the steps one at a time, so the step callbacks run each step (``cur_step_num`` + 1);
- a stop request (``run_context.request_stop()``) ends training after the epoch, not within a sink.

``data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None)`` (``mindspore.data_sink``)
returns a function that runs ``fn`` on the next ``sink_size`` batches at each call and returns the last
output, the dataset read as the same endless stream."""

from __future__ import annotations

import functools
import itertools

from opforge.context import graph_mode
from opforge.dataset.engine import Dataset
from opforge.jit import jit
from opforge.jit_config import check_jit_config
from opforge.tensor import Tensor

__all__ = ["data_sink"]


def check_sink_size(where: str, sink_size, dataset) -> int:
    """MindSpore's checks of ``train``/``fit``'s ``sink_size`` (made whether or not the mode sinks); the
    dataset's size, which must not be 0."""
    if isinstance(sink_size, bool) or not isinstance(sink_size, int):
        raise TypeError(f"For '{where}', the 'sink_size' must be an int, but got {type(sink_size).__name__}.")
    size = dataset.get_dataset_size()
    if size == 0:
        raise ValueError(f"For '{where}', the 'train_dataset' has no data (its dataset size is 0).")
    if sink_size < -1 or sink_size == 0:
        raise ValueError(f"For '{where}', the 'sink_size' must be -1 or positive, but got {sink_size}.")
    return size


class _Stream:
    """A dataset's batches as one stream: ``take(n)`` gives the next n, a new pass over the dataset (the
    dataset's next epoch) started whenever one ends; ``rest_of_pass()`` the current pass to its end."""

    def __init__(self, dataset, where: str):
        self._iterator = dataset.create_tuple_iterator()  # (each pass over it is the dataset's next epoch)
        self._where = where
        self._pending: list = []  # rows read ahead (peek)

    def next_row(self):
        if self._pending:
            return self._pending.pop()
        try:
            return next(self._iterator)
        except StopIteration:  # a pass ended: the next one
            row = next(self._iterator, None)
            if row is None:
                raise ValueError(f"For '{self._where}', the dataset gave no rows.") from None
            return row

    def peek(self):
        row = self.next_row()
        self._pending.append(row)
        return row

    def take(self, n: int):
        for _ in range(n):
            yield self.next_row()

    def rest_of_pass(self):
        while self._pending:
            yield self._pending.pop()
        yield from self._iterator  # (ends at the pass's end)


class TrainSink:
    """The sinks of one ``Model.train``/``fit`` run; ``run_epoch`` runs one (an epoch)."""

    def __init__(self, dataset, sink_size: int, where: str):
        self.sink_size = sink_size  # -1: the whole dataset each epoch
        self._stream = _Stream(dataset, where)
        self._graph = graph_mode()

    def _rows(self):
        return self._stream.rest_of_pass() if self.sink_size == -1 else self._stream.take(self.sink_size)

    def run_epoch(self, run_step, cb, hook) -> None:
        """``run_step(row)`` trains on one batch and returns the step's outputs; ``hook(name)`` calls the
        callbacks' hook ``name``; ``cb`` is the run's CallbackParam."""
        if not self._graph:  # PYNATIVE_MODE: MindSpore feeds a sink's steps one at a time
            for row in self._rows():
                cb.cur_step_num += 1
                cb.train_dataset_element = row  # the step's inputs, as MindSpore gives them to callbacks
                hook("on_train_step_begin")
                cb.net_outputs = run_step(row)
                hook("on_train_step_end")
            return
        cb.cur_step_num += cb.batch_num  # GRAPH_MODE: the sink is one call of batch_num steps
        rows = iter(self._rows())
        first = next(rows, None)
        cb.train_dataset_element = first  # (MindSpore gives the sink's first batch)
        hook("on_train_step_begin")
        for row in () if first is None else itertools.chain((first,), rows):
            cb.net_outputs = run_step(row)
        hook("on_train_step_end")


def _check_signature(signature: tuple, row) -> None:
    """MindSpore's check of ``input_signature`` against the dataset's columns: dtype (TypeError), rank
    and known dims (ValueError)."""
    if len(signature) != len(row):
        raise ValueError(
            f"For 'data_sink', the 'input_signature' has {len(signature)} Tensor(s), but the dataset has "
            f"{len(row)} column(s)."
        )
    for k, (spec, value) in enumerate(zip(signature, row)):
        if not isinstance(spec, Tensor):
            raise TypeError(
                f"For 'data_sink', each 'input_signature' element must be a Tensor, but got {type(spec).__name__}."
            )
        if spec.dtype != value.dtype:
            raise TypeError(
                f"For 'data_sink', input {k + 1}'s dtype in 'input_signature' is {spec.dtype}, but the dataset's "
                f"column is {value.dtype}."
            )
        shape, want = tuple(value.shape), tuple(spec.shape)
        if len(want) != len(shape) or any(d is not None and d >= 0 and d != s for d, s in zip(want, shape)):
            raise ValueError(
                f"For 'data_sink', input {k + 1}'s shape in 'input_signature' is {list(want)}, but the dataset's "
                f"column has shape {list(shape)}."
            )


def data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None):
    """A function that, each call, runs ``fn(*batch)`` on the next ``sink_size`` batches of ``dataset`` and
    returns the last one's output (MindSpore's ``mindspore.data_sink``): the dataset is read as one stream,
    a new pass (the dataset's next epoch) started when one ends, so ``epochs * dataset_size / sink_size``
    calls train ``epochs`` epochs. The returned function ignores its arguments. With ``jit_config`` (a
    ``JitConfig`` or a dict of its options, checked) ``fn`` is traced once and replayed (``opforge.jit``);
    ``input_signature`` (a Tensor or Tensors, dims None for unknown) is checked against the dataset's first
    batch (dtype: TypeError; rank and known dims: ValueError) and given to the trace."""
    if not callable(fn):
        raise TypeError(f"For 'data_sink', the 'fn' must be callable, but got {type(fn).__name__}.")
    if not isinstance(dataset, Dataset):
        raise TypeError(f"For 'data_sink', the 'dataset' must be a Dataset, but got {type(dataset).__name__}.")
    if isinstance(sink_size, bool) or not isinstance(sink_size, int):
        raise TypeError(f"For 'data_sink', the 'sink_size' must be an int, but got {type(sink_size).__name__}.")
    if sink_size <= 0:
        raise ValueError(f"For 'data_sink', the 'sink_size' must be positive, but got {sink_size}.")
    jit_config = check_jit_config("data_sink", jit_config)
    if isinstance(input_signature, Tensor):
        input_signature = (input_signature,)
    elif input_signature is not None and not isinstance(input_signature, (tuple, list)):
        raise TypeError(
            "For 'data_sink', the 'input_signature' must be a Tensor or a tuple/list of Tensors, but got "
            f"{type(input_signature).__name__}."
        )
    stream = _Stream(dataset, "data_sink")
    if input_signature is not None:
        _check_signature(tuple(input_signature), stream.peek())
    step = fn if jit_config is None else jit(fn, input_signature=input_signature, jit_config=jit_config)

    @functools.wraps(fn)
    def sink_process(*args, **kwargs):
        out = None
        for row in stream.take(sink_size):
            out = step(*row)
        return out

    return sink_process
