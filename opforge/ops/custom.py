"""``ops.Custom``: an operator made from a Python function (``func_type="pyfunc"``) or from a C
function in a shared library or a C++ source compiled on demand (``func_type="aot"``), MindSpore's
unified custom operator (docs/custom.md).

Each instance is an operator of its own: it gets a unique name (``Custom_<function>_<n>``) and its
function is registered as that name's kernel, run by a launcher of its kind (``pyfunc``, ``aot``).
So a call goes through the normal plan cache: the first call with new input metas infers the
outputs (``out_shape``, ``out_dtype``) and selects the kernel, later ones find the plan from C.
Which KernelAttrs are registered: the rows of ``reg_info`` for the targets it names; for the other
targets, the dtypes of each call (registered on the first call with them).
"""

from __future__ import annotations

import ctypes
import itertools
import pathlib
import re
from typing import NamedTuple

import numpy as np

from opforge import dtype as mstype
from opforge.device import BACKENDS
from opforge.errors import KernelError
from opforge.kernels import registry
from opforge.kernels.kernel_attr import KernelAttr
from opforge.kernels.launch import register_launcher
from opforge.op_info.reg_op import OpInfo, RegOp
from opforge.primitives.primitive import PrimitiveWithInfer
from opforge.utils import cpp_extension

__all__ = ["Custom", "FUNC_TYPES"]

FUNC_TYPES = ("pyfunc", "aot")  # the func_types opforge runs, each also the kind of its kernels
# MindSpore's other func_types: named in the error, so a port knows it is not a typo.
_MINDSPORE_ONLY = ("hybrid", "akg", "tbe", "aicpu", "julia")
_TARGETS = {"pyfunc": BACKENDS, "aot": ("CPU",)}  # an aot function runs on host memory
_SOURCE_SUFFIXES = (".cc", ".cpp", ".cxx")
_counter = itertools.count(1)

# int func(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes, void* stream, void* extra)
_AOT_ARGTYPES = [
    ctypes.c_int,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_int),
    ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
    ctypes.POINTER(ctypes.c_char_p),
    ctypes.c_void_p,
    ctypes.c_void_p,
]


class _Kernel(NamedTuple):
    """What an instance registers for each KernelAttr: the launcher kind, the callable, where it is from."""

    kind: str
    impl: object
    source: str

    def __deepcopy__(self, memo):  # a clone shares the function (a ctypes function cannot be copied)
        return self


class _AotFunction(NamedTuple):
    """A C function of the aot ABI, loaded with ctypes (the library handle keeps it loaded)."""

    cfunc: object
    name: str
    library: str
    handle: object


class Custom(PrimitiveWithInfer):
    r"""A user-defined operator from a function, MindSpore's ``ops.Custom``.

    Args:
        func: for ``"pyfunc"``, a Python function of the device's arrays (NumPy arrays on the CPU, the GPU
            runtime's arrays on the GPU) returning one array or a tuple of arrays. For ``"aot"``,
            ``"path/to/lib.so:func_name"`` or ``"path/to/source.cc:func_name"`` (compiled on first use and
            cached); the function has the C signature ``int func_name(int nparam, void** params, int* ndims,
            int64_t** shapes, const char** dtypes, void* stream, void* extra)``, inputs first, then outputs,
            and returns 0 on success.
        out_shape: the output's shape (a tuple of shapes for several outputs), or a function of the input
            shapes returning it.
        out_dtype: the output's dtype (a tuple for several outputs), or a function of the input dtypes.
        func_type: ``"pyfunc"`` (CPU and GPU) or ``"aot"`` (CPU).
        bprop: ``bprop(*inputs, out, dout)`` returning a tuple with the gradient of each input, for autodiff.
        reg_info: an op info from ``CustomRegOp`` (or a list of them, one per target): its dtype_format
            rows are the dtypes the operator accepts on its target. Without it, any input dtypes are
            accepted.

    Inputs are Tensors, all on one device. Create a Custom once and call it many times: each instance
    registers kernels of its own.
    """

    def __init__(self, func, out_shape=None, out_dtype=None, func_type="pyfunc", bprop=None, reg_info=None):
        _check_func_type(func_type)
        out_shape, out_dtype = _checked_out_shape(out_shape), _checked_out_dtype(out_dtype)
        if bprop is not None and not callable(bprop):
            raise TypeError(f"For 'Custom', the 'bprop' must be a function or None, but got {type(bprop).__name__}.")
        infos = _reg_infos(reg_info, func_type)
        # Last: an aot source is compiled here.
        kernel, func_name = _pyfunc_kernel(func) if func_type == "pyfunc" else _aot_kernel(func)
        super().__init__(f"Custom_{func_name}_{next(_counter)}")
        self.func, self.out_shape, self.out_dtype = func, out_shape, out_dtype
        self.bprop, self.reg_info = bprop, reg_info
        self._kernel = kernel
        self.add_prim_attr("func_type", func_type)
        self.add_prim_attr("func_name", func_name)
        declared = self._register_reg_info(infos)
        self._per_call_targets = tuple(t for t in _TARGETS[func_type] if t not in declared)

    # -- inference ----------------------------------------------------------------------------
    def infer_shape(self, *input_shapes):
        return self.out_shape(*input_shapes) if callable(self.out_shape) else self.out_shape

    def infer_dtype(self, *input_dtypes):
        return self.out_dtype(*input_dtypes) if callable(self.out_dtype) else self.out_dtype

    def __infer__(self, *args) -> dict:
        for i, a in enumerate(args):
            if a["value"] is not None or not isinstance(a["dtype"], mstype.Type):
                raise TypeError(
                    f"For '{self.name}', every input must be a Tensor, but input {i} is "
                    f"{type(a['value']).__name__} (pass constants to the function through a closure)."
                )
        inferred = super().__infer__(*args)
        shape, dtype = _checked_outputs(self.name, inferred["shape"], inferred["dtype"])
        self._register_call_dtypes(tuple(a["dtype"] for a in args), dtype if isinstance(dtype, tuple) else (dtype,))
        return {"shape": shape, "dtype": dtype, "value": None}

    # -- kernels ------------------------------------------------------------------------------
    def _register_reg_info(self, infos: list) -> set:
        """Register the KernelAttrs of each op info's rows on its target; the targets declared so. A target
        whose rows name no dtype (``DataType.None_None``) takes the dtypes of each call instead."""
        entries, declared = [], set()
        for info in infos:
            rows = info.dtype_signatures()
            if any(t is None for ins, outs in rows for t in ins + outs):
                continue
            if not callable(self.out_dtype):
                wanted = len(self.out_dtype) if isinstance(self.out_dtype, tuple) else 1
                for _, outs in rows:
                    if len(outs) != wanted:
                        raise ValueError(
                            f"For '{self.name}', each dtype_format row of the 'reg_info' for {info.backend} must "
                            f"give {wanted} outputs as 'out_dtype' does, but a row gives {len(outs)}."
                        )
            declared.add(info.backend)
            entries += [self._entry(info.backend, KernelAttr(ins, outs)) for ins, outs in rows]
        if entries:
            registry.register_entries(entries)
        return declared

    def _register_call_dtypes(self, in_dtypes: tuple, out_dtypes: tuple) -> None:
        """Without reg_info for a target, the first call with these dtypes registers its kernel there."""
        attr = KernelAttr(in_dtypes, out_dtypes)
        new = [
            self._entry(target, attr)
            for target in self._per_call_targets
            if not any(e.attr == attr for e in registry.kernels_for(self.name, target, include_disabled=True))
        ]
        if new:
            registry.register_entries(new)

    def _entry(self, backend: str, attr: KernelAttr) -> registry.KernelEntry:
        kernel = self._kernel
        return registry.KernelEntry(self.name, backend, attr, kernel.kind, kernel.impl, kernel.source)

    # -- autodiff -----------------------------------------------------------------------------
    def get_bprop(self):
        if self.bprop is None:
            raise TypeError(
                f"For '{self.name}', no bprop was given, so it cannot be differentiated: pass "
                f"bprop=fn(*inputs, out, dout) returning one gradient per input to ops.Custom."
            )
        return self.bprop


# ---------------------------------------------------------------------------------------------
# Arguments


def _check_func_type(func_type) -> None:
    if func_type in FUNC_TYPES:
        return
    if func_type in _MINDSPORE_ONLY:
        raise NotImplementedError(
            f"For 'Custom', the func_type {func_type!r} is not supported; supported: {', '.join(FUNC_TYPES)}."
        )
    raise ValueError(f"For 'Custom', the 'func_type' must be one of {FUNC_TYPES}, but got {func_type!r}.")


def _label(name: str) -> str:
    """A function's name as a part of an operator name: letters, digits and '_'."""
    return re.sub(r"\W+", "_", name).strip("_") or "func"


def _pyfunc_kernel(func) -> tuple:
    if not callable(func):
        raise TypeError(
            f"For 'Custom', the 'func' of func_type 'pyfunc' must be a Python function, but got {type(func).__name__}."
        )
    name = getattr(func, "__name__", type(func).__name__)
    source = f"pyfunc:{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', name)}"
    return _Kernel("pyfunc", func, source), _label(name)


def _aot_kernel(func) -> tuple:
    expected = "'path/to/lib.so:func_name' or 'path/to/source.cc:func_name'"
    if not isinstance(func, str):
        raise TypeError(f"For 'Custom', the 'func' of func_type 'aot' must be a str {expected}, but got {func!r}.")
    path, _, name = func.rpartition(":")
    if not path or not name.isidentifier():
        raise ValueError(f"For 'Custom', the 'func' of func_type 'aot' must be {expected}, but got {func!r}.")
    file = pathlib.Path(path).expanduser()
    if not file.is_file():
        raise FileNotFoundError(f"For 'Custom', the file '{path}' of the aot function '{name}' does not exist.")
    if file.suffix == ".cu":
        raise NotImplementedError(
            f"For 'Custom', aot CUDA sources ('{path}') are not supported: aot functions run on the CPU."
        )
    library = _compiled(file) if file.suffix in _SOURCE_SUFFIXES else file.resolve()
    try:
        handle = ctypes.CDLL(str(library))
    except OSError as e:
        raise ValueError(f"For 'Custom', the aot library '{library}' cannot be loaded: {e}.") from None
    try:
        cfunc = handle[name]
    except AttributeError:
        raise ValueError(
            f"For 'Custom', the aot library '{library}' has no function '{name}': define it with "
            f'extern "C" (and visible, if the library is built with -fvisibility=hidden).'
        ) from None
    cfunc.argtypes = _AOT_ARGTYPES
    cfunc.restype = ctypes.c_int
    aot = _AotFunction(cfunc, name, str(library), handle)
    return _Kernel("aot", aot, f"aot:{library}:{name}"), _label(name)


def _compiled(source: pathlib.Path) -> pathlib.Path:
    """The shared library of an aot source, from the extension cache (built on a miss)."""
    # Exported: the aot function needs no opforge header, so no macro marks it visible.
    flags = ["-fvisibility=default"]
    return cpp_extension.build_library(f"custom_aot_{_label(source.stem)}", [source], extra_cflags=flags).path


def _is_shape(value) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in value
    )


def _checked_out_shape(out_shape):
    if out_shape is None:
        raise ValueError(
            "For 'Custom', the 'out_shape' must be given: a shape, a tuple of shapes for several outputs, or a "
            "function of the input shapes."
        )
    if (isinstance(out_shape, type) or not callable(out_shape)) and not (
        _is_shape(out_shape) or (isinstance(out_shape, (list, tuple)) and all(map(_is_shape, out_shape)))
    ):
        raise TypeError(
            f"For 'Custom', the 'out_shape' must be a shape (a list or tuple of non-negative ints), a tuple of "
            f"shapes, or a function, but got {out_shape!r}."
        )
    return out_shape


def _checked_out_dtype(out_dtype):
    if out_dtype is None:
        raise ValueError(
            "For 'Custom', the 'out_dtype' must be given: a dtype, a tuple of dtypes for several outputs, or a "
            "function of the input dtypes."
        )
    if isinstance(out_dtype, list):
        out_dtype = tuple(out_dtype)
    if not _is_dtypes(out_dtype) and (isinstance(out_dtype, type) or not callable(out_dtype)):  # np.float32 is not one
        raise TypeError(
            f"For 'Custom', the 'out_dtype' must be an opforge dtype, a non-empty tuple of them, or a function, "
            f"but got {out_dtype!r}."
        )
    return out_dtype


def _is_dtypes(value) -> bool:
    if isinstance(value, mstype.Type):
        return True
    return isinstance(value, tuple) and len(value) > 0 and all(isinstance(t, mstype.Type) for t in value)


def _checked_outputs(name: str, shape, dtype) -> tuple:
    """(shape, dtype) as the plan takes them: a list and a dtype, or a list of lists and a tuple of dtypes."""
    if isinstance(dtype, list):
        dtype = tuple(dtype)
    if not _is_dtypes(dtype):
        raise TypeError(
            f"For '{name}', the 'out_dtype' must give an opforge dtype or a non-empty tuple of them, "
            f"but gave {dtype!r}."
        )
    if isinstance(dtype, mstype.Type):
        if not _is_shape(shape):
            raise TypeError(
                f"For '{name}', the 'out_shape' must give a shape (a list or tuple of non-negative ints) for the one "
                f"output, but gave {shape!r}."
            )
        return [int(d) for d in shape], dtype
    if not (isinstance(shape, (list, tuple)) and len(shape) == len(dtype) and all(map(_is_shape, shape))):
        raise TypeError(
            f"For '{name}', the 'out_shape' must give {len(dtype)} shapes, one per output dtype, but gave {shape!r}."
        )
    return [[int(d) for d in s] for s in shape], dtype


def _reg_infos(reg_info, func_type: str) -> list:
    """The op infos of ``reg_info`` (one per target), checked."""
    if reg_info is None:
        return []
    items = list(reg_info) if isinstance(reg_info, (list, tuple)) else [reg_info]
    infos = []
    for item in items:
        if isinstance(item, RegOp):
            item = item.get_op_info()
        if not isinstance(item, OpInfo):
            raise TypeError(
                f"For 'Custom', the 'reg_info' must be an op info (CustomRegOp(...).get_op_info()) or a list of "
                f"them, one per target, but got {type(item).__name__}."
            )
        targets = _TARGETS[func_type]
        if item.backend not in targets:
            raise ValueError(
                f"For 'Custom', the target of a 'reg_info' of func_type '{func_type}' must be one of {targets}, "
                f"but got {item.backend!r}."
            )
        if any(info.backend == item.backend for info in infos):
            raise ValueError(f"For 'Custom', the 'reg_info' names the target {item.backend!r} twice.")
        infos.append(item)
    return infos


# ---------------------------------------------------------------------------------------------
# Launchers


def _ready_check(device, np_dtype):
    """``ready(array)``: whether a result can be an output as it is. The CPU device's check reads the data
    address through ctypes (about 2.5 us); where NumPy aligns the dtype as kernels need (every dtype but
    complex64), NumPy's ALIGNED flag says the same for a fraction of that."""
    if device.array_type is np.ndarray and np_dtype.alignment >= min(np_dtype.itemsize, 8):

        def ready(array) -> bool:
            return array.flags.carray  # C-contiguous, aligned and writeable (a read-only one takes the slow check)

        return ready
    return device.is_kernel_ready


def _dtype_name(np_dtype) -> str:
    try:
        return str(mstype.nptype_to_dtype(np_dtype))
    except TypeError:
        return str(np_dtype)


def _output(op_name: str, label: str, device, i: int, result, shape: tuple, np_dtype):
    """A function's result as output ``i``: checked against the inferred meta; a host array or a NumPy
    scalar is moved to the device, a non-contiguous one copied."""
    if isinstance(result, (tuple, list)):
        raise KernelError(
            f"For '{op_name}', the {label} must return an array for output {i}, but got a {type(result).__name__}."
        )
    if not isinstance(result, device.array_type):
        try:
            result = device.asarray(result, None)
        except (TypeError, ValueError) as e:
            raise KernelError(
                f"For '{op_name}', the {label} must return arrays, but output {i} is {type(result).__name__} ({e})."
            ) from None
    if result.shape != shape or result.dtype != np_dtype:
        raise KernelError(
            f"For '{op_name}', output {i} of the {label} must be {_dtype_name(np_dtype)}{list(shape)} as "
            f"out_shape and out_dtype say, but got {_dtype_name(result.dtype)}{list(result.shape)}."
        )
    return result if device.is_kernel_ready(result) else device.share(result)


def _pyfunc_launcher(spec):
    """The function on the device's arrays; results checked cheaply and taken as they are."""
    fn, device, op_name = spec.entry.impl, spec.device, spec.op_name
    label = f"pyfunc '{getattr(fn, '__name__', fn)}'"
    array_type = device.array_type
    outs = tuple(
        (tuple(shape), t.np_dtype, _ready_check(device, t.np_dtype))
        for shape, t in zip(spec.out_shapes, spec.entry.attr.outputs)
    )

    if len(outs) == 1:
        ((shape, np_dtype, ready),) = outs

        def run_one(arrays):
            result = fn(*arrays)
            if result.__class__ is array_type and result.shape == shape and result.dtype == np_dtype and ready(result):
                return result
            return _output(op_name, label, device, 0, result, shape, np_dtype)

        return run_one

    def run(arrays):
        results = fn(*arrays)
        if not isinstance(results, (tuple, list)) or len(results) != len(outs):
            got = f"{len(results)} results" if isinstance(results, (tuple, list)) else type(results).__name__
            raise KernelError(f"For '{op_name}', the {label} must return {len(outs)} arrays, but returned {got}.")
        return tuple(
            r
            if r.__class__ is array_type and r.shape == shape and r.dtype == np_dtype and ready(r)
            else _output(op_name, label, device, i, r, shape, np_dtype)
            for i, (r, (shape, np_dtype, ready)) in enumerate(zip(results, outs))
        )

    return run


def _c_array(ctype, values):
    values = list(values)
    return (ctype * max(len(values), 1))(*values)


def _aot_launcher(spec):
    """The C function on host arrays: the dims and dtype names are fixed per plan, built once; each call
    allocates the outputs and passes the data pointers."""
    aot, device, op_name = spec.entry.impl, spec.device, spec.op_name
    outs = spec.entry.attr.outputs
    shapes = [tuple(s) for s in spec.in_shapes] + [tuple(s) for s in spec.out_shapes]
    n = len(shapes)
    ndims = _c_array(ctypes.c_int, map(len, shapes))
    dims = [_c_array(ctypes.c_int64, s) for s in shapes]
    int64_p = ctypes.POINTER(ctypes.c_int64)
    shape_ptrs = _c_array(int64_p, (ctypes.cast(d, int64_p) for d in dims))
    names = _c_array(ctypes.c_char_p, (t.np_dtype.name.encode() for t in (*spec.in_dtypes, *outs)))
    out_metas = tuple((tuple(s), t.np_dtype) for s, t in zip(spec.out_shapes, outs))
    params_type = ctypes.c_void_p * max(n, 1)
    cfunc = aot.cfunc

    def run(arrays):
        results = [device.empty(shape, np_dtype) for shape, np_dtype in out_metas]
        params = params_type(*[a.ctypes.data for a in (*arrays, *results)])
        status = cfunc(n, params, ndims, shape_ptrs, names, None, None)
        if status != 0:
            raise KernelError(
                f"For '{op_name}', the aot function '{aot.name}' of '{aot.library}' returned {status} "
                f"(0 means success)."
            )
        return results[0] if len(results) == 1 else tuple(results)

    run.keep_alive = dims  # the shapes the pointers point into
    return run


register_launcher("pyfunc", _pyfunc_launcher)
register_launcher("aot", _aot_launcher)
