"""Tensor and Parameter.

A Tensor holds a kernel-ready array (C-contiguous, aligned, native byte order) of a supported
dtype on one device. Its meta, ``(dtype, shape, device)``, is computed once at construction: it is
what primitive calls are dispatched on. Arrays come from the tensor's ``Device``; nothing here
names a backend's array library except to read host data (lists, scalars, NumPy arrays).

Memory follows MindSpore: ``Tensor(array)`` copies, ``Tensor.from_numpy(array)`` shares;
``np.array(t)`` copies and ``np.asarray(t)`` gives a read-only view.
Operators and methods (``t + 1``, ``t.sum()``) are primitive calls, installed by
``opforge.ops.tensor_methods`` (the primitives are built on Tensor, so Tensor cannot import them).
"""

from __future__ import annotations

import threading

import numpy as np

from opforge import context
from opforge import dtype as mstype
from opforge.device import Device, get_device
from opforge.param_info import ParamInfo
from opforge.symbol import Symbol

__all__ = ["Tensor", "Parameter", "from_dlpack", "is_placeholder", "PlaceholderError", "UNKNOWN_DIM", "UNKNOWN_RANK"]

UNKNOWN_DIM = -1  # a dimension of unknown size (MindSpore's abstract::Shape::kShapeDimAny)
UNKNOWN_RANK = -2  # the one dim of the shape (-2,): the rank itself is unknown (kShapeRankAny)


class PlaceholderError(RuntimeError):
    """A placeholder Tensor (``Tensor(shape=[None, 3], dtype=...)``, or an output of ``eval_shape``)
    was asked for data it does not have."""


_NP_TO_TYPE = {t.np_dtype: t for t in mstype.all_types}
# Python data without an explicit dtype follows MindSpore: floats become float32.
_PY_DEFAULT = {np.dtype(np.float64): mstype.float32, np.dtype(np.complex128): mstype.complex64}


def _target_dtype(data, dtype) -> mstype.Type:
    """The dtype a new Tensor of ``data`` gets: ``dtype`` if given, else the data's (Python floats:
    float32)."""
    if dtype is not None:
        return mstype.to_dtype(dtype)
    if isinstance(data, Tensor):
        return data.dtype
    have = getattr(data, "dtype", None)
    from_python = have is None
    if from_python:
        have = np.asarray(data).dtype
        if have.kind == "O":
            raise TypeError(f"For 'Tensor', the 'input_data' must be numeric, but got {type(data).__name__}.")
        if have in _PY_DEFAULT:
            return _PY_DEFAULT[have]
    return mstype.nptype_to_dtype(np.dtype(have).newbyteorder("="))  # a clear TypeError if unsupported


def _device_of(device) -> Device:
    return get_device(device or context.get_context("device_target"))


# A trace (opforge.dispatch.trace) records operators only: while one runs on this thread it installs a
# check here that every method reading a Tensor's data into Python (or writing it outside an
# operator) calls first, so a value the replay would not recompute is refused where it is read.
_reads = threading.local()


def _set_read_check(check) -> None:
    _reads.check = check


def _check_read(t, what: str) -> None:
    check = getattr(_reads, "check", None)
    if check is not None:
        check(t, what)


class Tensor:
    """An n-dimensional array on a device, the value primitives take and return.

    ``Tensor(input_data, dtype=None, shape=None, device=None)`` copies a list, scalar, NumPy array or
    Tensor. Without a dtype, Python floats become float32, ints int64 and bools bool; arrays keep
    their dtype. ``device`` defaults to a Tensor argument's device, else the context's ``device_target``.

    Placeholders (MindSpore's dynamic-shape inputs): ``Tensor(shape=[None, 3], dtype=mstype.float32)``
    has no data; a ``None`` (or ``-1``) dim is unknown and shows as ``-1``, and ``Tensor(shape=None,
    dtype=...)`` has an unknown rank, shape ``(-2,)``. They are the input specs of
    ``Cell.set_inputs`` and ``opforge.eval_shape``; reading their data raises ``PlaceholderError``.
    ``init`` (an Initializer, as MindSpore's) fills a Tensor of a known ``shape`` and ``dtype``.
    """

    __slots__ = ("_data", "_meta", "__weakref__")
    __array_priority__ = 1000  # NumPy defers mixed operators (ndarray + Tensor) to the Tensor

    def __init__(self, input_data=None, dtype=None, shape=None, device=None, init=None):
        if device is None and isinstance(input_data, Tensor):
            device = input_data.device
        dev = _device_of(device)
        if input_data is None:
            if shape is None and dtype is None:
                raise ValueError("For 'Tensor', give 'input_data', or 'shape' and 'dtype'.")
            target = mstype.to_dtype(dtype or mstype.float32)
            dims = _placeholder_shape(shape)
            if dims is not None:  # a placeholder: no data
                if init is not None:
                    raise ValueError(
                        f"For 'Tensor', the 'init' must be None when the shape is dynamic, but got shape "
                        f"{list(dims)} and init={init!r}."
                    )
                self._meta = (target, dims, dev)
                return
            if init is not None:
                array = dev.asarray(np.asarray(init(_shape_arg(shape))), target.np_dtype)
            else:
                array = dev.full(_shape_arg(shape), 0, target.np_dtype)
        else:
            target = _target_dtype(input_data, dtype)
            source = input_data
            if isinstance(input_data, Tensor):
                _check_read(input_data, "Tensor(Tensor)")
                src_device, src = input_data._meta[2], input_data._require_data("__init__")
                source = src if src_device is dev else src_device.to_host(src, copy=False)
            array = dev.asarray(source, target.np_dtype)
            if shape is not None and _shape_arg(shape) != array.shape:
                array = array.reshape(_shape_arg(shape))
        self._data = array
        self._meta = (target, array.shape, dev)

    @classmethod
    def _from_array(cls, array, dtype: mstype.Type, device: Device) -> Tensor:
        """Wrap a kernel-ready array without copying or checks (the dispatcher guarantees them)."""
        t = object.__new__(cls)
        t._data = array
        t._meta = (dtype, array.shape, device)
        return t

    @classmethod
    def _placeholder(cls, dtype: mstype.Type, shape: tuple, device: Device) -> Tensor:
        """A Tensor with a meta and no data (what abstract evaluation returns)."""
        t = object.__new__(cls)
        t._meta = (dtype, tuple(shape), device)
        return t

    def _require_data(self, what: str):
        """The data, or a PlaceholderError saying that ``what`` needs data this Tensor lacks."""
        try:
            return self._data
        except AttributeError:
            raise PlaceholderError(
                f"For 'Tensor.{what}', the Tensor is a placeholder (shape {list(self._meta[1])}, dtype "
                f"{self._meta[0]}): it has no data. Give it data (Tensor(array)), or run the code under "
                f"opforge.eval_shape, which needs only shapes and dtypes."
            ) from None

    def assign_value(self, value) -> Tensor:
        """MindSpore's ``Tensor.assign_value``: this Tensor's data replaced by ``value``'s, in place (every holder
        of the Tensor sees the new values); ``value`` a Tensor of this shape and dtype."""
        _check_read(self, "Tensor.assign_value")
        _check_read(value, "Tensor.assign_value")  # (a jit trace cannot replay a host-side write: it says so)
        if not isinstance(value, Tensor) or value.shape != self.shape or value.dtype != self.dtype:
            got = f"{value.dtype}{list(value.shape)}" if isinstance(value, Tensor) else type(value).__name__
            raise ValueError(
                f"For 'Tensor.assign_value', the 'value' must be a Tensor of {self.dtype}{list(self.shape)}, but "
                f"got {got}."
            )
        device = self._meta[2]
        device.write(self._data, device.asarray(value._require_data("assign_value"), self.dtype.np_dtype))
        return self

    def init_data(self) -> Tensor:
        """The Tensor with its data (MindSpore's lazy initialisation; opforge fills ``init`` at once).
        A placeholder has none: PlaceholderError."""
        self._require_data("init_data")
        return self

    @property
    def has_init(self) -> bool:
        return False

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> Tensor:
        """A CPU Tensor sharing ``array``'s memory (copied only when it is not C-contiguous, aligned
        and native-endian, which kernels need)."""
        if not isinstance(array, np.ndarray):
            raise TypeError(
                f"For 'Tensor.from_numpy', the 'array' must be numpy.ndarray, but got {type(array).__name__}."
            )
        dtype = mstype.nptype_to_dtype(array.dtype.newbyteorder("="))
        cpu = get_device("CPU")
        return cls._from_array(cpu.share(array), dtype, cpu)

    # -- meta ---------------------------------------------------------------------------------
    @property
    def dtype(self) -> mstype.Type:
        return self._meta[0]

    @property
    def shape(self) -> tuple:
        return self._meta[1]

    @property
    def device(self) -> str:
        """The backend holding the data: "CPU" or "GPU"."""
        return self._meta[2].name

    @property
    def ndim(self) -> int:
        return len(self._meta[1])

    @property
    def size(self) -> int:
        """The number of elements (-1 when a dim of a placeholder is unknown)."""
        try:
            return self._data.size
        except AttributeError:  # a placeholder
            shape = self._meta[1]
            return -1 if any(d < 0 for d in shape) else int(np.prod(shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self._meta[0].itemsize

    @property
    def nbytes(self) -> int:
        try:
            return self._data.nbytes
        except AttributeError:  # a placeholder
            size = self.size
            return -1 if size < 0 else size * self._meta[0].itemsize

    # -- conversion and devices -----------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A NumPy copy of the data."""
        _check_read(self, "Tensor.asnumpy")
        return self._meta[2].to_host(self._require_data("asnumpy"))

    def to(self, device: str) -> Tensor:
        """This tensor on ``device`` ("CPU" or "GPU"): itself if it is there, else a copy."""
        target = get_device(device)
        if target is self._meta[2]:
            return self
        host = self._host_view("to")  # the source device reads its own memory
        return Tensor._from_array(target.asarray(host, self._meta[0].np_dtype), self._meta[0], target)

    def __array__(self, dtype=None, copy=None):
        _check_read(self, "numpy.asarray(Tensor)")
        if copy is False and self._meta[2].name != "CPU":
            raise ValueError("A Tensor off the CPU cannot be viewed as a NumPy array without a copy.")
        data = self._require_data("__array__")
        host = self._meta[2].to_host(data, copy=copy is not False and copy is not None)
        if dtype is not None and host.dtype != dtype:
            if copy is False:
                raise ValueError(f"Converting a {self.dtype} Tensor to {dtype} needs a copy, but copy=False.")
            return host.astype(dtype)
        return host

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface of a GPU Tensor's data (CuPy, PyTorch, Numba read it without a copy)."""
        if self._meta[2].name != "GPU":
            raise AttributeError("A CPU Tensor has no __cuda_array_interface__; use __array_interface__ or DLPack.")
        return self._require_data("__cuda_array_interface__").__cuda_array_interface__

    def __dlpack__(self, *args, **kwargs):
        return self._require_data("__dlpack__").__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._require_data("__dlpack_device__").__dlpack_device__()

    def _host_view(self, what: str = "asnumpy"):
        """The data on the host, read through the tensor's device: a read-only view on the CPU, a
        copy from the GPU."""
        return self._meta[2].to_host(self._require_data(what), copy=False)

    def item(self):
        """The single element as a Python number (read from the device's memory through it)."""
        _check_read(self, "Tensor.item")
        return self._host_view("item").item()

    def tolist(self):
        _check_read(self, "Tensor.tolist")
        return self._host_view("tolist").tolist()

    def __len__(self) -> int:
        if not self._meta[1]:
            raise TypeError("len() of a 0-d Tensor")
        if self._meta[1][0] < 0:
            raise TypeError(f"len() of a Tensor whose first dim is unknown (shape {list(self._meta[1])})")
        return self._meta[1][0]

    def __bool__(self) -> bool:
        _check_read(self, "bool(Tensor)")
        return bool(self._host_view("__bool__"))

    def __float__(self) -> float:
        _check_read(self, "float(Tensor)")
        return float(self._host_view("__float__"))

    def __int__(self) -> int:
        _check_read(self, "int(Tensor)")
        return int(self._host_view("__int__"))

    def __index__(self) -> int:
        _check_read(self, "Tensor.__index__")
        if self._meta[0].kind not in "iub":
            raise TypeError(f"only integer Tensors can be used as an index, but got {self._meta[0]}")
        return int(self._host_view("__index__"))

    def __repr__(self) -> str:
        if not hasattr(self, "_data"):
            return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=<placeholder: no data>)"
        if hasattr(self._data, "shown_block"):  # split across ranks: this rank's block, as MindSpore prints
            return repr(self._data.shown_block())
        body = np.array2string(self._meta[2].to_host(self._data), separator=", ")  # printing is no trace read
        return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=\n{body})"

    def __str__(self) -> str:
        if not hasattr(self, "_data"):
            return repr(self)
        if hasattr(self._data, "shown_block"):
            return str(self._data.shown_block())
        return str(self._meta[2].to_host(self._data))


def _param_info_field(field: str, doc: str) -> property:
    """A Parameter attribute kept in its ParamInfo (shared with a Parameter given the same one)."""

    def get(self):
        return getattr(self._param_info, field)

    def set_(self, value) -> None:
        setattr(self._param_info, field, value)

    return property(get, set_, doc=doc)


class Parameter(Tensor):
    """A Tensor that is a trainable weight: it has a ``name`` and ``requires_grad``.

    Operators with RW_WRITE inputs (Assign, AssignSub, optimizer updates) write into it in place;
    every write bumps its version, so the autodiff tape can tell a value it saved was overwritten.
    """

    __slots__ = ("_param_info", "_version", "_server_init", "_pipeline_stage_list", "is_init")

    def __init__(
        self,
        default_input,
        name: str | None = None,
        requires_grad: bool = True,
        layerwise_parallel: bool = False,
        parallel_optimizer: bool = True,
        storage_format: str = "",
        device=None,
        *,
        dtype=None,
    ):
        """MindSpore's arguments in its order; ``layerwise_parallel`` and ``parallel_optimizer`` (whether the
        weight is split across model-parallel ranks / the parallel optimizer, both bool) are kept as attributes
        and do not change a single process's run; ``storage_format`` and ``device`` (Ascend-only) are accepted."""
        super().__init__(default_input, dtype=dtype)  # a copy: a Parameter owns its data
        self._own_pooled()
        if name is not None and not isinstance(name, str):
            raise TypeError(f"For 'Parameter', the 'name' must be str, but got {type(name).__name__}.")
        if not isinstance(requires_grad, bool):
            raise TypeError(
                f"For 'Parameter', the 'requires_grad' must be bool, but got {type(requires_grad).__name__}."
            )
        for arg, value in (("layerwise_parallel", layerwise_parallel), ("parallel_optimizer", parallel_optimizer)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'Parameter', the '{arg}' must be bool, but got {type(value).__name__}.")
        self._param_info = ParamInfo()
        self.name = name or "Parameter"
        self.requires_grad = requires_grad
        self.layerwise_parallel = layerwise_parallel
        self.parallel_optimizer = parallel_optimizer
        self._version = 0
        self.is_init = False  # MindSpore's flag (whether its graph initialized the value); kept, opforge reads none

    # name, requires_grad, the parallel flags and comm_fusion live in the ParamInfo (opforge/param_info.py)
    @property
    def param_info(self) -> ParamInfo:
        """The ParamInfo holding this parameter's settings; assigning another (``weight.param_info.clone()``)
        gives this parameter its settings."""
        return self._param_info

    @param_info.setter
    def param_info(self, info) -> None:
        if not isinstance(info, ParamInfo):
            raise TypeError(
                f"For 'Parameter.param_info', the value must be a ParamInfo, but got {type(info).__name__}."
            )
        self._param_info = info

    name = _param_info_field("name", "The parameter's name (its ParamInfo's).")
    requires_grad = _param_info_field("requires_grad", "Whether gradients are taken for it (its ParamInfo's).")
    layerwise_parallel = _param_info_field("layerwise_parallel", "MindSpore's layerwise-parallel flag.")
    parallel_optimizer = _param_info_field("parallel_optimizer", "Whether optimizer parallel splits it.")

    def _own_pooled(self) -> None:
        """Hold the value in memory from the device's allocator (the caching pool on the CPU), as kernel
        outputs are, so ``opforge.memory.stats()`` counts the weights and optimizer states a process keeps
        (a sharded weight: its block only, docs/parallel.md)."""
        data = getattr(self, "_data", None)
        if data is None:
            return  # a placeholder
        device = self._meta[2]
        own = device.empty(self._meta[1], data.dtype)
        device.write(own, data)
        self._data = own

    @property
    def data(self) -> Parameter:
        """The Parameter itself (MindSpore's ``Parameter.data``: ``p.data.shape``, ``p.data.asnumpy()``)."""
        return self

    def set_param_ps(self, init_in_server=False) -> None:
        """MindSpore's parameter-server placement: recorded (``is_param_ps``, ``init_in_server``); opforge trains
        the parameter where the network runs (opforge/ps_context.py)."""
        if not isinstance(init_in_server, bool):
            raise TypeError(
                f"For 'Parameter.set_param_ps', the 'init_in_server' must be a bool, but got {init_in_server!r}."
            )
        self._server_init = init_in_server

    @property
    def comm_fusion(self) -> int:
        """MindSpore's fusion index (int, 1 until set) of the communication operators that aggregate this
        parameter or its gradient under (semi-)auto parallel: those of one index are fused, 0 fuses none. Kept;
        opforge's gradient reduction buckets by size (opforge/parallel_context.py)."""
        return self._param_info.comm_fusion

    @comm_fusion.setter
    def comm_fusion(self, value) -> None:
        parallel_mode = context.get_auto_parallel_context("parallel_mode")
        if context.get_context("mode") == context.PYNATIVE_MODE and "auto_parallel" in parallel_mode:
            raise RuntimeError(
                "`comm_fusion` does not support PYNATIVE_MODE in AUTO_PARALLEL and SEMI_AUTO_PARALLEL mode."
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"For 'comm_fusion', the value must be an int, but got {type(value).__name__}.")
        if value < 0:
            raise ValueError(f"For 'comm_fusion', the value must be >= 0, but got {value}.")
        self._param_info.comm_fusion = value

    def add_pipeline_stage(self, stage) -> None:
        """MindSpore's: records ``stage`` (an int >= 0) as a further pipeline stage that reads this parameter (a
        word-embedding table the last stage's head shares with the first stage's embedding), in
        ``_pipeline_stage_list``. A single process (one stage) reads every parameter; opforge's ``PipelineCell``
        keeps each parameter on the stage that owns it (opforge/nn/pipeline.py) and does not read this list."""
        if not isinstance(stage, int) or stage < 0:
            raise TypeError("`stage` must be a positive number of int type")
        if getattr(self, "_pipeline_stage_list", None) is None:
            self._pipeline_stage_list = []
        self._pipeline_stage_list.append(stage)

    @property
    def is_param_ps(self) -> bool:
        return getattr(self, "_server_init", None) is not None

    @property
    def init_in_server(self) -> bool:
        return bool(getattr(self, "_server_init", False))

    def set_data(self, data) -> Parameter:
        """Replace the value (same shape and dtype), in place; a parameter split across ranks by a sharding
        strategy takes the whole value and keeps its own block of it."""
        _check_read(self, "Parameter.set_data")
        device = self._meta[2]
        source = data._require_data("set_data") if isinstance(data, Tensor) else data
        array = device.asarray(source, self.dtype.np_dtype)
        if array.shape != self.shape:
            raise ValueError(
                f"For 'Parameter.set_data', the shape must be {list(self.shape)}, but got {list(array.shape)}."
            )
        take_whole = getattr(self._data, "set_whole", None)  # split across ranks (dispatch/sharding.py)
        if take_whole is not None:
            take_whole(Tensor._from_array(array, self.dtype, device))
        else:
            device.write(self._data, array)
        self._version += 1
        return self

    def __repr__(self) -> str:
        return (
            f"Parameter(name={self.name}, shape={list(self.shape)}, dtype={self.dtype}, "
            f"requires_grad={self.requires_grad})"
        )


_DLPACK_CUDA = (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged


def from_dlpack(obj) -> Tensor:
    """A Tensor sharing the memory of any DLPack producer (a NumPy array, a CuPy array, a PyTorch
    tensor on the CPU or a CUDA GPU) or of an object with ``__cuda_array_interface__``; CUDA data
    becomes a GPU Tensor. Copied only where kernels need it (not C-contiguous)."""
    on_gpu = hasattr(obj, "__cuda_array_interface__")
    if not on_gpu and hasattr(obj, "__dlpack_device__"):
        on_gpu = obj.__dlpack_device__()[0] in _DLPACK_CUDA
    if not on_gpu:
        return Tensor.from_numpy(np.from_dlpack(obj))
    gpu = get_device("GPU")
    array = gpu.share(gpu.runtime.from_foreign(obj))
    return Tensor._from_array(array, mstype.nptype_to_dtype(array.dtype), gpu)


def is_placeholder(t) -> bool:
    """Whether ``t`` is a Tensor without data (a placeholder, or an output of abstract evaluation)."""
    return isinstance(t, Tensor) and not hasattr(t, "_data")


def _placeholder_shape(shape):
    """The shape of a placeholder, MindSpore's way (``None``, -1 or a ``Symbol``: an unknown dim, shown as -1; the
    shape ``None`` or ``(-2,)``: an unknown rank), or None when ``shape`` is fully known."""
    if shape is None:
        return (UNKNOWN_RANK,)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"For 'Tensor', the 'shape' must be a tuple or list of int, but got {type(shape).__name__}.")
    dims = []
    for d in shape:
        if d is None or isinstance(d, Symbol):
            dims.append(UNKNOWN_DIM)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            dims.append(int(d))
        else:
            raise TypeError(f"For 'Tensor', each dim of the 'shape' must be int, None or a Symbol, but got {d!r}.")
    if dims == [UNKNOWN_RANK]:
        return (UNKNOWN_RANK,)
    bad = [d for d in dims if d < UNKNOWN_DIM]
    if bad:
        raise ValueError(
            f"For 'Tensor', the dims of the 'shape' must be non-negative, None or -1 (the shape [-2]: an unknown "
            f"rank), but got {list(shape)}."
        )
    return tuple(dims) if UNKNOWN_DIM in dims else None


def _shape_arg(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)
