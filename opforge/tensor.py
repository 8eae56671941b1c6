"""Tensor and Parameter.

A Tensor holds a C-contiguous, native-byte-order array of a supported dtype (a NumPy array on
the CPU). Its meta, ``(dtype, shape, device)``, is computed once at construction: it is what
primitive calls are dispatched on.
"""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype

__all__ = ["Tensor", "Parameter", "from_dlpack"]

_NP_TO_TYPE = {t.np_dtype: t for t in mstype.all_types}
# Python data without an explicit dtype follows MindSpore: floats become float32.
_PY_DEFAULT = {np.dtype(np.float64): mstype.float32, np.dtype(np.complex128): mstype.complex64}


def _to_array(data, dtype) -> np.ndarray:
    """Convert user data to a contiguous array of a supported dtype."""
    if isinstance(data, Tensor):
        data = data._data
    from_python = not isinstance(data, (np.ndarray, np.generic))
    if dtype is not None:
        target = mstype.to_dtype(dtype)
        array = np.asarray(data)
        if array.dtype != target.np_dtype:
            array = array.astype(target.np_dtype)
    else:
        array = np.asarray(data)
        if array.dtype == object:
            raise TypeError(f"For 'Tensor', the 'input_data' must be numeric, but got {type(data).__name__}.")
        if from_python and array.dtype in _PY_DEFAULT:
            array = array.astype(_PY_DEFAULT[array.dtype].np_dtype)
        mstype.nptype_to_dtype(array.dtype)  # raises a clear TypeError for unsupported dtypes
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    # Not np.ascontiguousarray: it turns a 0-d array into shape (1,).
    return array if array.flags.c_contiguous else array.copy(order="C")


class Tensor:
    """An n-dimensional array on a device, the value primitives take and return.

    ``Tensor(input_data, dtype=None)`` accepts a list, scalar, NumPy array or Tensor. Without a
    dtype, Python floats become float32, ints int64 and bools bool; arrays keep their dtype.
    """

    __slots__ = ("_data", "_meta", "__weakref__")
    __array_priority__ = 1000  # NumPy defers mixed operators (ndarray + Tensor) to the Tensor

    def __init__(self, input_data=None, dtype=None, shape=None):
        if input_data is None:
            if shape is None:
                raise ValueError("For 'Tensor', give 'input_data', or 'shape' and 'dtype'.")
            input_data = np.zeros(tuple(shape), mstype.to_dtype(dtype or mstype.float32).np_dtype)
        array = _to_array(input_data, dtype)
        if shape is not None and tuple(shape) != array.shape:
            array = array.reshape(tuple(shape))
        self._data = array
        self._meta = (_NP_TO_TYPE[array.dtype], array.shape, "CPU")

    @classmethod
    def _from_array(cls, array: np.ndarray, dtype: mstype.Type) -> Tensor:
        """Wrap a kernel's output without copying or checks (the dispatcher guarantees them)."""
        t = object.__new__(cls)
        t._data = array
        t._meta = (dtype, array.shape, "CPU")
        return t

    # -- meta ---------------------------------------------------------------------------------
    @property
    def dtype(self) -> mstype.Type:
        return self._meta[0]

    @property
    def shape(self) -> tuple:
        return self._meta[1]

    @property
    def device(self) -> str:
        return self._meta[2]

    @property
    def ndim(self) -> int:
        return len(self._meta[1])

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def itemsize(self) -> int:
        return self._meta[0].itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    # -- conversion ---------------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A NumPy copy of the data."""
        return self._data.copy()

    def __array__(self, dtype=None, copy=None):
        if dtype is None:
            return self._data
        return self._data.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def item(self):
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __len__(self) -> int:
        if not self._meta[1]:
            raise TypeError("len() of a 0-d Tensor")
        return self._meta[1][0]

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        return float(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __index__(self) -> int:
        if self._meta[0].kind not in "iub":
            raise TypeError(f"only integer Tensors can be used as an index, but got {self._meta[0]}")
        return int(self._data)

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ")
        return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=\n{body})"

    def __str__(self) -> str:
        return str(self._data)

    # -- operators (each calls a primitive) ------------------------------------------------------
    def __add__(self, other):
        return _F.add(self, _operand(other))

    def __radd__(self, other):
        return _F.add(_operand(other), self)

    def __sub__(self, other):
        return _F.sub(self, _operand(other))

    def __rsub__(self, other):
        return _F.sub(_operand(other), self)

    def __mul__(self, other):
        return _F.mul(self, _operand(other))

    def __rmul__(self, other):
        return _F.mul(_operand(other), self)

    def __truediv__(self, other):
        return _F.div(self, _operand(other))

    def __rtruediv__(self, other):
        return _F.div(_operand(other), self)

    def __matmul__(self, other):
        return _F.matmul(self, _operand(other))

    def __rmatmul__(self, other):
        return _F.matmul(_operand(other), self)

    def __neg__(self):
        return _F.neg(self)

    def __pos__(self):
        return self

    def astype(self, dtype) -> Tensor:
        """Cast to ``dtype`` (the Cast primitive)."""
        return _F.cast(self, mstype.to_dtype(dtype))

    def reshape(self, *shape) -> Tensor:
        """Reshape (the Reshape primitive); accepts ``reshape(2, 3)`` or ``reshape((2, 3))``."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _F.reshape(self, tuple(shape))

    def sum(self, axis=(), keepdims=False) -> Tensor:
        """ReduceSum over ``axis`` (all axes by default)."""
        return _F.reduce_sum(keepdims)(self, axis)

    def mean(self, axis=(), keepdims=False) -> Tensor:
        """ReduceMean over ``axis`` (all axes by default)."""
        return _F.reduce_mean(keepdims)(self, axis)


class Parameter(Tensor):
    """A Tensor that is a trainable weight: it has a ``name`` and ``requires_grad``.

    Operators with RW_WRITE inputs (Assign, AssignSub, optimizer updates) write into it in place.
    """

    __slots__ = ("name", "requires_grad")

    def __init__(self, default_input, name: str | None = None, requires_grad: bool = True, dtype=None):
        super().__init__(default_input, dtype=dtype)
        # A Parameter is written in place, so it owns its data rather than aliasing the caller's array.
        if isinstance(default_input, (np.ndarray, Tensor)) and np.shares_memory(self._data, np.asarray(default_input)):
            self._data = self._data.copy()
        if name is not None and not isinstance(name, str):
            raise TypeError(f"For 'Parameter', the 'name' must be str, but got {type(name).__name__}.")
        if not isinstance(requires_grad, bool):
            raise TypeError(
                f"For 'Parameter', the 'requires_grad' must be bool, but got {type(requires_grad).__name__}."
            )
        self.name = name or "Parameter"
        self.requires_grad = requires_grad

    def set_data(self, data) -> Parameter:
        """Replace the value (same shape and dtype), in place."""
        array = _to_array(data, self.dtype)
        if array.shape != self.shape:
            raise ValueError(
                f"For 'Parameter.set_data', the shape must be {list(self.shape)}, but got {list(array.shape)}."
            )
        self._data[...] = array
        return self

    def __repr__(self) -> str:
        return (
            f"Parameter(name={self.name}, shape={list(self.shape)}, dtype={self.dtype}, "
            f"requires_grad={self.requires_grad})"
        )


def from_dlpack(obj) -> Tensor:
    """Import a tensor from any DLPack producer (zero-copy where the producer allows)."""
    return Tensor(np.from_dlpack(obj))


def _operand(other):
    """The other operand of a Python operator: NumPy arrays join as Tensors."""
    return Tensor(other) if isinstance(other, np.ndarray) else other


# opforge.ops.functional sets this once it is built: its ops are primitives, which need Tensor first.
_F = None
