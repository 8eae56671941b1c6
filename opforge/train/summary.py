"""MindSpore's summary files: ``SummaryRecord`` writes scalars, images and histograms to an event file in
MindSpore's format (what MindInsight reads), and the ``SummaryCollector`` callback records a training run's
loss, the first parameters' histograms and its input images into one.

The file, ``{prefix}.out.events.summary.{seconds}.{device id}.{hostname}{suffix}`` in ``log_dir``, is a
sequence of records framed as TFRecord's (a little-endian uint64 length, its masked CRC-32C, the data, the
data's masked CRC-32C). Each record is a protobuf ``Event`` (MindSpore's summary.proto): ``wall_time`` (1,
double), ``step`` (2, int64) and one of ``version`` (3, the first record: "MindSpore.Event:1") or ``summary``
(5): ``Summary.value`` (1) entries with a ``tag`` (1) and a ``scalar_value`` (3, float), an ``image`` (4:
height, width, colorspace, PNG bytes) or a ``histogram`` (9: buckets of left, width and count, NaN and infinity
counts, max, min, sum, count). Not written: the computational graph, the lineage records, the dataset graph,
the loss landscape and tensor values (``SummaryCollector`` accepts their options and records nothing for
them; ``add_value("tensor", ...)`` raises)."""

from __future__ import annotations

import io
import os
import platform
import re
import struct
import time
import warnings

import numpy as np

from opforge import context
from opforge.dataset.crc32c import masked_crc32c
from opforge.ops.summary_ops import take_summary_values
from opforge.tensor import Tensor
from opforge.train.callback_base import Callback
from opforge.utils.protobuf_schema import message_classes

__all__ = ["SummaryRecord", "SummaryCollector"]

_VERSION = "MindSpore.Event:1"
_PLUGINS = ("scalar", "image", "histogram")  # what this writer packs
_KNOWN_PLUGINS = _PLUGINS + (
    "tensor",
    "graph",
    "train_lineage",
    "eval_lineage",
    "dataset_graph",
    "custom_lineage_data",
    "LANDSCAPE",
)


# -- summary.proto's messages (the fields this writer fills) ----------------------------------------------------
_MESSAGES = message_classes(
    "opforge_mindspore_summary.proto",
    "mindspore.irpb",
    {
        "Event": [
            ("wall_time", 1, "required", "double"),
            ("step", 2, "optional", "int64"),
            ("version", 3, "optional", "string"),
            ("summary", 5, "optional", "Summary"),
        ],
        "Summary": [("value", 1, "repeated", "Summary.Value")],
        "Summary.Image": [
            ("height", 1, "required", "int32"),
            ("width", 2, "required", "int32"),
            ("colorspace", 3, "required", "int32"),
            ("encoded_image", 4, "required", "bytes"),
        ],
        "Summary.Histogram": [
            ("buckets", 1, "repeated", "Summary.Histogram.bucket"),
            ("nan_count", 2, "optional", "int64"),
            ("pos_inf_count", 3, "optional", "int64"),
            ("neg_inf_count", 4, "optional", "int64"),
            ("max", 5, "optional", "double"),
            ("min", 6, "optional", "double"),
            ("sum", 7, "optional", "double"),
            ("count", 8, "optional", "int64"),
        ],
        "Summary.Histogram.bucket": [
            ("left", 1, "required", "double"),
            ("width", 2, "required", "double"),
            ("count", 3, "required", "int64"),
        ],
        "Summary.Value": [
            ("tag", 1, "required", "string"),
            ("scalar_value", 3, "optional", "float"),
            ("image", 4, "optional", "Summary.Image"),
            ("histogram", 9, "optional", "Summary.Histogram"),
        ],
    },
)
Event = _MESSAGES["Event"]


# -- the values -------------------------------------------------------------------------------------------------
def _histogram_bins(count: int) -> int:
    """MindSpore's bin count: about 10 values a bin, from 2 bins for a few values up to 90."""
    if not count:
        return 1
    if count <= 5:
        return 2
    if count <= 10:
        return 3
    if count <= 880:
        return count // 10 + 1
    return 90


def _histogram(values: np.ndarray, out) -> None:
    """Fill ``out`` (a ``Summary.Histogram``) with MindSpore's histogram of ``values``."""
    values = np.asarray(values)
    finite = values[np.isfinite(values)] if values.dtype.kind in "fc" else values.reshape(-1)
    is_float = values.dtype.kind == "f"
    out.nan_count, out.pos_inf_count, out.neg_inf_count = (
        int(np.count_nonzero(f(values))) if is_float else 0 for f in (np.isnan, np.isposinf, np.isneginf)
    )
    if finite.size:
        low, high = float(finite.min()), float(finite.max())
        first, last = (low, high) if low < high else (low - 0.5, high + 0.5)
        edges = np.linspace(first, last, _histogram_bins(finite.size) + 1)
        hist, edges = np.histogram(finite.astype(np.float64), bins=edges)
        for count, left, right in zip(hist, edges, edges[1:]):
            out.buckets.add(left=float(left), width=float(right - left), count=int(count))
        out.max, out.min, out.sum = float(finite.max()), float(finite.min()), float(finite.sum(dtype=np.float64))
    out.count = int(values.size)


def _image(values: np.ndarray, where: str, out=None) -> None:
    """An NCHW batch (1 or 3 channels) as one PNG in ``out`` (a ``Summary.Image``; None: only checked): up to 8
    images a row, scaled to uint8 as MindSpore's."""
    from PIL import Image  # Pillow: matplotlib's dependency, installed with the demo and test extras

    if values.ndim != 4 or values.shape[1] not in (1, 3) or 0 in values.shape:
        raise ValueError(
            f"For '{where}', an image value must be NCHW with 1 or 3 channels, but has shape {values.shape}."
        )
    if values.shape[1] == 1:
        values = np.concatenate([values] * 3, 1)
    n, _, h, w = values.shape
    cols = min(n, 8)
    rows = -(-n // cols)
    canvas = np.zeros((3, h * rows, w * cols), np.float64)
    for i in range(n):
        y, x = divmod(i, cols)
        canvas[:, y * h : (y + 1) * h, x * w : (x + 1) * w] = values[i]
    low, high = canvas.min(), canvas.max()
    if values.dtype == np.uint8:
        scale, shift = 1.0, 0.0
    elif low >= 0 and high <= 1:
        scale, shift = 255.0, 0.0
    else:
        scale, shift = (255.0 / (high - low + 1) if high != low else 1.0), low
    pixels = ((canvas - shift) * scale).astype(np.uint8).transpose(1, 2, 0)
    if out is None:
        return
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    out.height, out.width, out.colorspace, out.encoded_image = pixels.shape[0], pixels.shape[1], 3, buffer.getvalue()


class SummaryRecord:
    """MindSpore's ``SummaryRecord(log_dir, file_prefix="events", file_suffix="_MS", num_process=32,
    network=None, max_file_size=None, raise_exception=False, export_options=None)``: ``add_value(plugin, name,
    value)`` keeps a Tensor under ``name`` ("scalar": one element; "image": NCHW; "histogram": any shape) and
    ``record(step)`` writes what was added as one event of that step (the module docstring gives the format).
    A context manager; ``close()`` ends the file. ``max_file_size`` bounds the file's bytes (a record past it
    is not written and warned of, or raised with ``raise_exception``)."""

    def __init__(
        self,
        log_dir,
        file_prefix="events",
        file_suffix="_MS",
        num_process=32,
        network=None,
        max_file_size=None,
        raise_exception=False,
        export_options=None,
    ):
        where = "SummaryRecord"
        if not isinstance(log_dir, str) or not log_dir:
            raise TypeError(f"For '{where}', 'log_dir' must be a non-empty str, but got {log_dir!r}.")
        for name, value in (("file_prefix", file_prefix), ("file_suffix", file_suffix)):
            if not isinstance(value, str) or not re.fullmatch(r"[\w\-.]*", value):
                raise ValueError(
                    f"For '{where}', '{name}' must be a str of letters, digits, '_', '-' and '.', but got {value!r}."
                )
        if max_file_size is not None and (
            isinstance(max_file_size, bool) or not isinstance(max_file_size, int) or max_file_size <= 0
        ):
            raise ValueError(
                f"For '{where}', 'max_file_size' must be a positive int or None, but got {max_file_size!r}."
            )
        if not isinstance(raise_exception, bool):
            raise TypeError(f"For '{where}', 'raise_exception' must be a bool, but got {raise_exception!r}.")
        os.makedirs(log_dir, exist_ok=True)
        self._log_dir = os.path.realpath(log_dir)
        device_id = context.get_context("device_id") or 0  # it names the file, as MindSpore's
        name = f"{file_prefix}.out.events.summary.{int(time.time())}.{device_id}.{platform.node()}{file_suffix}"
        self.file_path = os.path.join(self._log_dir, name)
        self._left = max_file_size
        self._raise = raise_exception
        self._pool: list = []  # (plugin, name, numpy value) added since the last record
        self._mode = "train"
        take_summary_values()  # values kept before this record began are not its own (as MindSpore's)
        self._file = open(self.file_path, "wb")
        self._write(Event(wall_time=time.time(), step=0, version=_VERSION).SerializeToString())

    @property
    def log_dir(self) -> str:
        return self._log_dir

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def set_mode(self, mode):
        """``"train"`` or ``"eval"`` (in eval mode, the summary operators' values are not recorded, as in MindSpore)."""
        if mode not in ("train", "eval"):
            raise ValueError(f"For 'SummaryRecord.set_mode', the mode must be 'train' or 'eval', but got {mode!r}.")
        self._mode = mode

    def add_value(self, plugin, name, value):
        where = "SummaryRecord.add_value"
        if plugin not in _KNOWN_PLUGINS:
            raise ValueError(f"For '{where}', the plugin must be one of {list(_KNOWN_PLUGINS)}, but got {plugin!r}.")
        if plugin not in _PLUGINS:
            raise ValueError(f"For '{where}', opforge does not write the plugin {plugin!r} (only {list(_PLUGINS)}).")
        if not isinstance(name, str) or not name:
            raise ValueError(f"For '{where}', the name should be a non-empty string, but got {name!r}.")
        if not isinstance(value, Tensor):
            raise TypeError(f"For '{where}', the value should be a Tensor, but got {type(value).__name__}.")
        array = value.asnumpy()
        if plugin == "scalar" and array.size != 1:
            raise ValueError(f"For '{where}', a scalar must have one element, but the value has shape {array.shape}.")
        if plugin == "image":
            _image(array, where)  # checks the shape now, as MindSpore's
        self._pool.append((plugin, name, array))

    def record(self, step, train_network=None, plugin_filter=None) -> bool:
        """Write the values added since the last record as the event of ``step`` (those ``plugin_filter``
        keeps, when given); False when the file is closed."""
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise TypeError(f"For 'SummaryRecord.record', 'step' must be an int, but got {type(step).__name__}.")
        if self._file is None:
            warnings.warn("SummaryRecord.record: the summary file is closed; nothing recorded.", stacklevel=2)
            return False
        if self._mode == "train":
            self._add_summary_operator_values()
        values = [v for v in self._pool if plugin_filter is None or plugin_filter(v[0])]
        self._pool = []
        event = Event(wall_time=time.time(), step=int(step))
        for plugin, name, array in values:
            entry = event.summary.value.add(tag=name)
            if plugin == "scalar":
                entry.scalar_value = float(array.reshape(-1)[0])
            elif plugin == "image":
                _image(array, "SummaryRecord.record", entry.image)
            else:
                _histogram(array, entry.histogram)
        if values:
            self._write(event.SerializeToString())
        return True

    def _add_summary_operator_values(self) -> None:
        """What the summary operators (opforge/ops/summary_ops.py) kept since the last record, as MindSpore's
        SummaryRecord takes them in train mode; a TensorSummary's value is not written (opforge writes no
        tensor plugin), with a warning."""
        for key, value in take_summary_values().items():
            name, kind = key[: key.rindex("[:")], key[key.rindex("[:") + 2 : -1].lower()
            if kind == "tensor":
                warnings.warn(f"SummaryRecord: TensorSummary {name!r} is not written (no tensor plugin).", stacklevel=3)
                continue
            self.add_value(kind, name, value)

    def _write(self, data: bytes) -> None:
        length = struct.pack("<Q", len(data))
        record = length + struct.pack("<I", masked_crc32c(length)) + data + struct.pack("<I", masked_crc32c(data))
        if self._left is not None:
            if len(record) > self._left:
                message = (
                    f"SummaryRecord: 'max_file_size' reached: {self._left} bytes remain, but the record needs "
                    f"{len(record)}; it is not written."
                )
                if self._raise:
                    raise RuntimeError(message)
                warnings.warn(message, stacklevel=3)
                return
            self._left -= len(record)
        self._file.write(record)

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None


class SummaryCollector(Callback):
    """MindSpore's ``SummaryCollector(summary_dir, collect_freq=10, num_process=32, collect_specified_data=None,
    keep_default_action=True, custom_lineage_data=None, collect_tensor_freq=None, max_file_size=None,
    export_options=None)``: a training callback writing a ``SummaryRecord`` in ``summary_dir``. At the first
    step and every ``collect_freq`` steps (epochs in dataset sink mode) it records the loss ("loss/auto": the
    mean of the network's first output), with ``histogram_regular`` the histograms of the optimizer's parameters
    whose names match it (None: the first five; "<name>/auto") and, with ``collect_input_data``, the step's
    first input column as images ("input_data/auto", when the run gives it as ``train_dataset_element``).
    ``collect_specified_data`` takes MindSpore's keys (``collect_metric``, ``collect_graph``,
    ``collect_train_lineage``, ``collect_eval_lineage``, ``collect_input_data``, ``collect_dataset_graph``,
    ``histogram_regular``, ``collect_landscape``); the graph, lineage, dataset graph and landscape are not
    written. The file is opened at the run's start (or on ``with``) and closed at its end."""

    _DEFAULTS = {
        "collect_metric": True,
        "collect_graph": True,
        "collect_train_lineage": True,
        "collect_eval_lineage": True,
        "collect_input_data": True,
        "collect_dataset_graph": True,
        "histogram_regular": None,
        "collect_landscape": None,
    }

    def __init__(
        self,
        summary_dir,
        collect_freq=10,
        num_process=32,
        collect_specified_data=None,
        keep_default_action=True,
        custom_lineage_data=None,
        collect_tensor_freq=None,
        max_file_size=None,
        export_options=None,
    ):
        super().__init__()
        where = "SummaryCollector"
        if not isinstance(summary_dir, str) or not summary_dir:
            raise TypeError(f"For '{where}', 'summary_dir' must be a non-empty str, but got {summary_dir!r}.")
        for name, value, none_ok in (
            ("collect_freq", collect_freq, False),
            ("num_process", num_process, False),
            ("collect_tensor_freq", collect_tensor_freq, True),
            ("max_file_size", max_file_size, True),
        ):
            if none_ok and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"For '{where}', '{name}' must be an int, but got {type(value).__name__}.")
            if value <= 0:
                raise ValueError(f"For '{where}', the value of `{name}` should be greater than 0, but got `{value}`.")
        if not isinstance(keep_default_action, bool):
            raise TypeError(f"For '{where}', 'keep_default_action' must be a bool, but got {keep_default_action!r}.")
        if custom_lineage_data is not None and not isinstance(custom_lineage_data, dict):
            raise TypeError(
                f"For '{where}', 'custom_lineage_data' must be a dict or None, but got "
                f"{type(custom_lineage_data).__name__}."
            )
        self._summary_dir, self._collect_freq, self._max_file_size = summary_dir, collect_freq, max_file_size
        self._specified = self._process_specified(collect_specified_data, keep_default_action)
        self._record = None
        self._run_scoped = True  # opened by a run (closed at its end), not by ``with``
        self._first_step = True
        self._sink = False

    def _process_specified(self, specified, keep_default):
        where = "SummaryCollector"
        if specified is None:
            return dict(self._DEFAULTS) if keep_default else {}
        if not isinstance(specified, dict):
            raise TypeError(
                f"For '{where}', 'collect_specified_data' must be a dict or None, but got {type(specified).__name__}."
            )
        unexpected = set(specified) - set(self._DEFAULTS)
        if unexpected:
            raise ValueError(
                f"For '{where}', the keys {sorted(unexpected)} of `collect_specified_data` are unsupported, "
                f"expect the follow keys: {list(self._DEFAULTS)}."
            )
        regular = specified.get("histogram_regular")
        if regular is not None:
            if not isinstance(regular, str):
                raise TypeError(f"For '{where}', 'histogram_regular' must be a str or None, but got {regular!r}.")
            try:
                re.compile(regular)
            except re.error as e:
                raise ValueError(
                    f"For '{where}', the value of `histogram_regular` is not a valid regular expression: {e}."
                ) from e
        for key, value in specified.items():
            if key not in ("histogram_regular", "collect_landscape") and not isinstance(value, bool):
                raise TypeError(f"For '{where}', '{key}' must be a bool, but got {value!r}.")
        return {**self._DEFAULTS, **specified} if keep_default else dict(specified)

    # -- the record's life -----------------------------------------------------------------------------------
    def __enter__(self):  # the file stays open across the runs inside the ``with``
        self._open(run_scoped=False)
        return self

    def __exit__(self, *exc_info):
        self._close(force=True)

    def _open(self, run_scoped=True):
        if self._record is None:
            self._record = SummaryRecord(self._summary_dir, max_file_size=self._max_file_size)
            self._run_scoped = run_scoped
        self._first_step = True

    def _close(self, force=False):
        if self._record is not None and (force or self._run_scoped):
            self._record.close()
            self._record = None

    # -- the hooks -------------------------------------------------------------------------------------------
    def begin(self, run_context):
        cb = run_context.original_args()
        found = [c for c in cb.get("list_callback", []) if type(c).__name__ == type(self).__name__]
        if len(found) > 1:
            raise ValueError(
                f"There are more than one {type(self).__name__} instance in callback list, but "
                f"expected only one {type(self).__name__} instance."
            )
        self._open()
        self._sink = bool(cb.get("dataset_sink_mode", False))

    def step_end(self, run_context):
        cb = run_context.original_args()
        if cb.get("mode", "train") != "train" or self._sink:
            return
        if self._first_step or cb.cur_step_num % self._collect_freq == 0:
            self._collect(cb, cb.cur_step_num)
        self._first_step = False

    def epoch_end(self, run_context):
        cb = run_context.original_args()
        if self._sink and (self._first_step or cb.cur_epoch_num % self._collect_freq == 0):
            self._collect(cb, cb.cur_step_num)
            self._first_step = False
        if self._record is not None:
            self._record.flush()

    def end(self, run_context):
        self._close()

    def _collect(self, cb, step):
        self._collect_input_data(cb)
        self._collect_metric(cb)
        self._collect_histogram(cb)
        self._record.record(int(step))

    def _collect_input_data(self, cb):
        if not self._specified.get("collect_input_data"):
            return
        data = cb.get("train_dataset_element")
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if not isinstance(data, Tensor):  # the run does not give its inputs: not collected (MindSpore warns)
            warnings.warn("SummaryCollector: the run gives no input data Tensor, so it is not collected.", stacklevel=3)
            self._specified["collect_input_data"] = False
            return
        try:
            self._record.add_value("image", "input_data/auto", data)
        except (TypeError, ValueError):
            warnings.warn("SummaryCollector: the input data are not images, so they are not collected.", stacklevel=3)
            self._specified["collect_input_data"] = False

    def _collect_metric(self, cb):
        if not self._specified.get("collect_metric"):
            return
        out = cb.get("net_outputs")
        if isinstance(out, (list, tuple)):
            out = out[0] if out else None
        if out is None:
            return
        value = out.asnumpy() if isinstance(out, Tensor) else np.asarray(out)
        self._record.add_value("scalar", "loss/auto", Tensor(np.asarray(np.mean(value), np.float32)))

    def _collect_histogram(self, cb):
        if "histogram_regular" not in self._specified:
            return
        optimizer = cb.get("optimizer")
        if optimizer is None or not hasattr(optimizer, "parameters"):
            return
        parameters = list(optimizer.parameters)
        regular = self._specified.get("histogram_regular")
        chosen = [p for p in parameters if re.match(regular, p.name)] if regular is not None else parameters[:5]
        for p in chosen:
            self._record.add_value("histogram", p.name + "/auto", Tensor(p.asnumpy()))
