"""Plans: everything a primitive call needs that depends only on what it was called with (attrs,
input metas, constants by type and value), built once and cached (docs/architecture.md, "One call").

A plan is ``plan(args) -> outputs``: it gathers the kernel's arrays (casting promoted inputs,
turning weak scalars into arrays on the device), launches the selected kernel, and wraps the
outputs as Tensors, writing in-place results back into their Parameters. A plan whose every
argument is a Tensor and whose kernel is a bare C++ kernel is a ``_C.FastPlan``, run entirely in C.
"""

from __future__ import annotations

import inspect
import math
import struct
import warnings
from typing import NamedTuple

import numpy as np

from opforge import _C, context
from opforge import dtype as mstype
from opforge.device import get_device
from opforge.dispatch import binding
from opforge.errors import KernelNotFoundError
from opforge.kernels.launch import make_launcher
from opforge.kernels.selection import select_kernel
from opforge.tensor import PlaceholderError, Tensor

__all__ = [
    "CpuFallbackWarning",
    "KernelLabel",
    "build_plan",
    "call_metas",
    "check_no_placeholders",
    "plan_from_metas",
    "plan_key",
    "remember",
    "freeze",
    "freeze_attrs",
    "python_scalar",
    "MAX_PLANS",
]

_IO_ATTRS = ("input_names", "output_names")
MAX_PLANS = 4096


class KernelLabel(NamedTuple):
    """What a plan runs, as the profiler reports it."""

    op: str
    backend: str
    kernel_attr: str
    impl: str


def remember(cache: dict, key, plan) -> None:
    # Calls with ever-new shapes must not grow memory without bound: start over when full.
    if len(cache) >= MAX_PLANS:
        cache.clear()
    cache[key] = plan


# -- cache keys --------------------------------------------------------------------------------


def python_scalar(value):
    """NumPy scalars are accepted wherever Python ones are: the Python number of the same kind (in
    tuples and lists too)."""
    if isinstance(value, np.generic):
        return value.item() if value.dtype.kind in "biufc" else value
    if isinstance(value, (tuple, list)) and any(isinstance(v, (np.generic, tuple, list)) for v in value):
        return type(value)(python_scalar(v) for v in value)
    return value


def freeze(prim_name: str, arg_name: str, value):
    """A hashable key for a constant that tells apart everything the operator could: its type
    (``True``, ``1`` and ``1.0`` differ) and, for floats, its bits (``-0.0`` differs from ``0.0``;
    a NaN equals itself). Lists become tuples."""
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(freeze(prim_name, arg_name, v) for v in value))
    if isinstance(value, float):
        return (float, struct.pack("<d", value))
    if isinstance(value, complex):
        return (complex, struct.pack("<dd", value.real, value.imag))
    if isinstance(value, dict):
        return (dict, tuple(sorted((k, freeze(prim_name, arg_name, v)) for k, v in value.items())))
    if isinstance(value, np.ndarray):
        raise TypeError(f"For '{prim_name}', the '{arg_name}' must be a Tensor, but got numpy.ndarray.")
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"For '{prim_name}', the '{arg_name}' has unsupported type {type(value).__name__}.") from None
    return (type(value), value)


def freeze_attrs(prim_name: str, attrs: dict):
    """A hashable key of a primitive's attrs (in their order) that tells apart what ``freeze`` does.
    Computed in C (every new instance freezes its attrs on its first call): common values (str, int,
    bool, None, bytes, floats by their bits, lists and tuples of them) are encoded into one bytes
    object, the others keyed by ``freeze``."""
    return _C.freeze_attrs(prim_name, attrs)


def is_tensor_sequence(value) -> bool:
    """A variadic input: a non-empty tuple or list of Tensors (AddN's ``inputs``, Concat's ``x``)."""
    return value.__class__ in (tuple, list) and len(value) > 0 and all(isinstance(t, Tensor) for t in value)


def constant_key(prim_name: str, arg_name: str, value):
    """The cache key of a constant argument: the C call path's (``_C.constant_key``: axes, shapes,
    flags, strings), so calls with constants are found there too; ``freeze`` for the rest."""
    key = _C.constant_key(value)
    return key if key is not None else ("const", freeze(prim_name, arg_name, value))


def plan_key(prim, args: tuple) -> tuple:
    """The cache key of a call: Tensors by meta, tuples of Tensors by their metas, weak scalars of
    dtype groups by type, other arguments (constants) by ``constant_key``."""
    groups = prim._group_positions()
    key = []
    for i, a in enumerate(args):
        meta = getattr(a, "_meta", None)
        if meta is not None:
            key.append(meta)
        elif i in groups and mstype.weak_category(a) is not None:
            key.append(("weak", type(a)))
        elif is_tensor_sequence(a):
            key.append(_C.sequence_key(a))  # the C call path's key
        else:
            key.append(constant_key(prim.name, prim._arg_name(i), a))
    return tuple(key)


# -- building a plan ---------------------------------------------------------------------------


# A kernel input ("slot") is an argument position, or (position, index) for an element of a tuple
# of Tensors: the kernel sees the elements as inputs of their own (a KernelAttr with all_same).


def _slot_arg(args, slot):
    return args[slot] if slot.__class__ is int else args[slot[0]][slot[1]]


def _slot_meta(metas, slot, key: str):
    return metas[slot][key] if slot.__class__ is int else metas[slot[0]][key][slot[1]]


def _slot_name(prim, slot) -> str:
    return prim._arg_name(slot) if slot.__class__ is int else f"{prim._arg_name(slot[0])}[{slot[1]}]"


def _backend(prim, args: tuple, tensor_pos: list) -> str:
    """The backend of a call: its Tensors' device (all must agree), else the primitive's or the context's."""
    name = first = None
    for slot in tensor_pos:
        t = _slot_arg(args, slot)
        if not isinstance(t, Tensor):
            continue
        here = t._meta[2].name
        if name is None:
            name, first = here, slot
        elif here != name:
            raise ValueError(
                f"For '{prim.name}', all tensor inputs must be on one device, but input '{_slot_name(prim, first)}' "
                f"is on {name} and input '{_slot_name(prim, slot)}' is on {here}. Move one with Tensor.to()."
            )
    if prim._device is not None:
        if name is not None and name != prim._device:
            raise ValueError(
                f"For '{prim.name}', the primitive is set to run on {prim._device}, but its inputs are on {name}."
            )
        return prim._device
    return name or context.get_context("device_target")


def _is_dim(d, unknown: bool) -> bool:
    return isinstance(d, (int, np.integer)) and not isinstance(d, bool) and (d >= 0 or (unknown and d == -1))


def _normalise_outputs(prim, inferred: dict, unknown: bool = False):
    """Check what ``__infer__`` returned and give (shapes, dtypes) tuples, one entry per output.
    With ``unknown`` (abstract evaluation) a dim may be -1 and a shape (-2,) (an unknown rank)."""
    shape, dtype = inferred["shape"], inferred["dtype"]
    multi = isinstance(dtype, (tuple, list))
    shapes = tuple(shape) if multi else (shape,)
    dtypes = tuple(dtype) if multi else (dtype,)
    if len(shapes) != len(dtypes):
        raise TypeError(f"For '{prim.name}', infer gave {len(shapes)} shapes but {len(dtypes)} dtypes.")
    out_shapes = []
    for s in shapes:
        if not isinstance(s, (list, tuple)) or not (
            all(_is_dim(d, unknown) for d in s) or (unknown and len(s) == 1 and s[0] == -2)
        ):
            raise TypeError(f"For '{prim.name}', infer_shape must give a list of non-negative ints, but gave {s!r}.")
        shape = tuple(int(d) for d in s)
        out_shapes.append(shape if unknown else _checked_shape(prim.name, shape))
    for d in dtypes:
        if not isinstance(d, mstype.Type):
            raise TypeError(f"For '{prim.name}', infer_dtype must give an opforge dtype, but gave {d!r}.")
    return tuple(out_shapes), dtypes


_MAX_ELEMENTS = 2**62  # element counts (and byte sizes of up to 16-byte items) fit int64


def _checked_shape(prim_name: str, shape: tuple) -> tuple:
    if math.prod(shape) > _MAX_ELEMENTS:
        raise ValueError(
            f"For '{prim_name}', the output shape {list(shape)} has {math.prod(shape)} elements, more than any "
            f"device can hold (at most 2**62)."
        )
    return shape


def _check_fits(prim_name: str, device, shapes: tuple, dtypes: tuple) -> None:
    """Outputs larger than the device's memory are refused before any allocation (an allocator's
    MemoryError names nothing)."""
    need = sum(math.prod(s) * d.itemsize for s, d in zip(shapes, dtypes))
    limit = device.memory_bytes()
    if need > limit:
        shown = ", ".join(f"{d}{list(s)}" for s, d in zip(shapes, dtypes))
        raise ValueError(
            f"For '{prim_name}', the outputs ({shown}) need {need:,} bytes, more than the {device.name}'s "
            f"{limit:,} bytes of memory."
        )


def build_plan(prim, args: tuple):
    """Everything a call needs that depends only on metas, then the function that runs it."""
    check_no_placeholders(prim, args)
    call = call_metas(prim, args)
    if prim._has_infer_value():
        return _value_plan(prim, call.defaults, _try_kernel_plan(call))
    return _kernel_plan(call)


def plan_from_metas(prim, args: tuple):
    """The kernel plan of a call from its arguments' metas alone: Tensor arguments may be placeholders (a
    compiler pass building a step from the metas a trace recorded, whose values are gone)."""
    return _kernel_plan(call_metas(prim, args))


def check_no_placeholders(prim, args: tuple) -> None:
    """A PlaceholderError naming the input when a Tensor argument (or an element of a tuple of
    Tensors) has no data: a kernel cannot run on a placeholder."""
    for i, a in enumerate(args):
        for k, t in enumerate(a if is_tensor_sequence(a) else (a,)):
            if isinstance(t, Tensor) and not hasattr(t, "_data"):
                name = prim._arg_name(i) if a is t else f"{prim._arg_name(i)}[{k}]"
                raise PlaceholderError(
                    f"For '{prim.name}', the input '{name}' is a placeholder (shape {list(t.shape)}, dtype "
                    f"{t.dtype}): it has no data to run a kernel on. Give it data, or run the code under "
                    f"opforge.eval_shape to get the output shapes and dtypes."
                )


def call_metas(prim, args: tuple) -> _Call:
    """Bind and promote a call's arguments and give every input's meta as inference takes it
    (``{'shape', 'dtype', 'value'}``): what plans and abstract evaluation (dispatch/abstract.py) share."""
    signature = prim._signature()
    n_given = len(args)
    if signature:
        args = binding.bind_arguments(prim.name, signature, args, {})
        targets = binding.plan_promotion(prim.name, signature, args)
    else:
        if prim.input_names is not None and len(args) != len(prim.input_names):
            raise TypeError(
                f"For '{prim.name}', it takes {len(prim.input_names)} inputs ({', '.join(prim.input_names)}), "
                f"but got {len(args)}."
            )
        targets = {}
    defaults = args[n_given:]

    # What each argument becomes: a tensor (maybe cast, maybe a promoted scalar) or a constant.
    tensor_pos, metas, const_values = [], [], {}
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            tensor_pos.append(i)
            metas.append({"shape": list(a.shape), "dtype": targets.get(i, a.dtype), "value": None})
        elif i in targets:
            tensor_pos.append(i)
            metas.append({"shape": [], "dtype": targets[i], "value": None})
        elif is_tensor_sequence(a):  # inference sees a tuple of shapes and a tuple of dtypes
            tensor_pos.extend((i, k) for k in range(len(a)))
            metas.append({"shape": tuple(list(t.shape) for t in a), "dtype": tuple(t.dtype for t in a), "value": None})
        else:
            const_values[i] = a
            metas.append({"shape": a, "dtype": a, "value": a})

    backend = _backend(prim, args, tensor_pos)
    return _Call(prim, args, backend, tensor_pos, metas, const_values, targets, defaults)


class _Call(NamedTuple):
    """What ``build_plan`` learnt about a call, for the plan makers."""

    prim: object
    args: tuple
    backend: str
    tensor_pos: list
    metas: list
    const_values: dict
    targets: dict
    defaults: tuple


def _kernel_plan(call: _Call):
    prim, args, tensor_pos, metas = call.prim, call.args, call.tensor_pos, call.metas
    inferred = prim.__infer__(*metas)
    out_shapes, out_dtypes = _normalise_outputs(prim, inferred)
    # One output inferred as a tuple (Split into 1): the call returns a tuple of one Tensor, as MindSpore's.
    one_tuple = isinstance(inferred["dtype"], (tuple, list)) and len(out_dtypes) == 1
    in_dtypes = tuple(_slot_meta(metas, slot, "dtype") for slot in tensor_pos)
    device = get_device(call.backend)
    selection, run_on = _select(prim.name, call.backend, in_dtypes, out_dtypes)
    _check_fits(prim.name, device, out_shapes, out_dtypes)

    attrs = {k: v for k, v in prim.attrs.items() if k not in _IO_ATTRS}
    attrs.update({prim._arg_name(i): v for i, v in call.const_values.items()})
    _check_int64_attrs(prim.name, attrs)
    writes = binding.written_positions(prim._signature())
    aliases = tuple(writes[o] if o < len(writes) else -1 for o in range(len(out_shapes)))
    launch = make_launcher(
        prim.name,
        selection,
        run_on,
        in_dtypes,
        tuple(tuple(_slot_meta(metas, slot, "shape")) for slot in tensor_pos),
        out_shapes,
        out_dtypes,
        attrs,
        _python_caller(len(args), tensor_pos, call.const_values, attrs, prim.input_names),
        tuple(tensor_pos.index(j) if j >= 0 else -1 for j in aliases) if writes else (),
        tuple(tensor_pos.index(j) for j in writes),
    )
    if run_on is not device:
        launch = _through_host(launch, device, tuple(tensor_pos.index(j) for j in writes))
    label = KernelLabel(prim.name, selection.entry.backend, selection.entry.attr.short(), selection.entry.kind)
    scalars = None if writes or run_on is not device or one_tuple else _fast_scalars(call)
    if scalars is not None:
        fast = _fast_plan(launch, out_dtypes, out_shapes, device, label, scalars, _scalar_converter(prim, call))
        if fast is not None:
            _allow_view(prim, launch, tensor_pos)  # (the FastPlan gives a view where it may)
            return fast
    # The kernel of the Tensor arguments alone, the others being constants it never sees (a shape, an
    # axis): a FastPlan reading them (``take``) is the plan itself; one writing Parameters in place runs
    # in a trace's Program only (``run.tensors_only``), moving the versions of every Parameter it writes,
    # returned or not (ApplyMomentum's accumulation: ``also_written``).
    tensors_only = None
    if run_on is device and not one_tuple and _tensors_only(call, bool(writes)):
        written = [tensor_pos.index(j) if j >= 0 else -1 for j in aliases] if writes else []
        also_written = [tensor_pos.index(j) for j in writes if j not in aliases]
        tensors_only = _fast_plan(
            launch, out_dtypes, out_shapes, device, label, written=written, take=_operands(tensor_pos),
            also_written=also_written,
        )  # fmt: skip
        if tensors_only is not None and not writes:
            _allow_view(prim, launch, tensor_pos)
            return tensors_only
    gather = _gatherer(prim, args, device, tensor_pos, call.targets, call.defaults)
    wrap = _wrapper(out_dtypes, device, aliases, writes)
    if not writes and _allow_view(prim, launch, tensor_pos):
        launch = _view_or_launch(launch)
        run = lambda call_args: wrap(launch(gather(call_args), call_args[0]), call_args)  # noqa: E731
    elif one_tuple:
        run = lambda call_args: (wrap(launch(gather(call_args)), call_args),)  # noqa: E731
    else:
        run = lambda call_args: wrap(launch(gather(call_args)), call_args)  # noqa: E731
    run.kernel = label
    run.tensors_only = tensors_only
    return run


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _check_int64_attrs(prim_name: str, attrs: dict) -> None:
    """Kernels take integer attrs and constants as int64: a larger one is the caller's error, named."""
    for name, value in attrs.items():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(v, int) and not isinstance(v, bool) and not _INT64_MIN <= v <= _INT64_MAX:
                raise ValueError(
                    f"For '{prim_name}', the '{name}' must hold 64-bit integers (within [-2**63, 2**63 - 1]), "
                    f"but got {value!r}."
                )


class CpuFallbackWarning(UserWarning):
    """An operator without a kernel on the call's device ran on the CPU (``set_context(cpu_fallback=True)``)."""


_warned_fallback: set = set()


def _select(op_name: str, backend: str, in_dtypes: tuple, out_dtypes: tuple):
    """(selection, device to run on): the backend's kernel; with ``cpu_fallback`` set and none on the
    backend, the CPU's, with a warning once per operator."""
    try:
        return select_kernel(op_name, backend, in_dtypes, out_dtypes), get_device(backend)
    except KernelNotFoundError as missing:
        if backend == "CPU":
            raise
        try:
            selection = select_kernel(op_name, "CPU", in_dtypes, out_dtypes)
        except KernelNotFoundError:
            raise missing from None
        if not context.get_context("cpu_fallback"):
            hint = " The CPU has one: set_context(cpu_fallback=True) runs it there, through copies."
            raise KernelNotFoundError(str(missing) + hint) from None
    if op_name not in _warned_fallback:
        _warned_fallback.add(op_name)
        warnings.warn(
            f"For '{op_name}', no {backend} kernel takes {tuple(map(str, in_dtypes))}: it runs on the CPU, "
            f"copying its inputs from the {backend} and its outputs back (set_context(cpu_fallback=True)).",
            CpuFallbackWarning,
            stacklevel=6,
        )
    return selection, get_device("CPU")


def _through_host(launch, device, written: tuple):
    """Run a CPU launcher on ``device``'s arrays: inputs copied to the host, outputs (and inputs the
    kernel wrote) copied back."""
    cpu = get_device("CPU")

    def run(arrays):
        host = [device.to_host(a) for a in arrays]
        result = launch(tuple(host))
        for i in written:
            device.write(arrays[i], host[i])
        back = {id(host[i]): arrays[i] for i in written}  # an in-place output is its input

        def to_device(r):
            written_input = back.get(id(r))
            return device.asarray(cpu.share(r), None) if written_input is None else written_input

        return tuple(map(to_device, result)) if isinstance(result, tuple) else to_device(result)

    return run


def _fast_scalars(call: _Call):
    """For a call a ``FastPlan`` can run, ``[(position, NumPy dtype)]`` of its weak scalars (every
    other given argument a Tensor needing no cast); else None. Defaults must be constants."""
    n_given = len(call.args) - len(call.defaults)
    if call.tensor_pos != list(range(n_given)):
        return None
    scalars = []
    for i in call.tensor_pos:
        target = call.targets.get(i)
        if isinstance(call.args[i], Tensor):
            if target is not None:
                return None  # a cast: the Python plan does it
        else:
            scalars.append((i, target.np_dtype))
    return scalars


def _tensors_only(call: _Call, writes: bool) -> bool:
    """Whether the kernel's inputs are exactly the call's given Tensor arguments, uncast, the other
    arguments being constants folded into the plan (a shape, a filter size), or the call writes
    Parameters in place, or takes a tuple of Tensors: then a FastPlan taking those Tensors runs it."""
    n_given = len(call.args) - len(call.defaults)
    if not call.tensor_pos or (not writes and call.tensor_pos == list(range(n_given))):
        return False  # no Tensor, or nothing to leave out (the FastPlan proper, when it applies)
    return all(
        _slot_position(slot) < n_given
        and isinstance(_slot_arg(call.args, slot), Tensor)
        and call.targets.get(_slot_position(slot)) is None
        for slot in call.tensor_pos
    )


def _slot_position(slot) -> int:
    return slot if slot.__class__ is int else slot[0]


def _operands(tensor_pos) -> list:
    """A FastPlan's ``take``: (position, -1) for an argument, (position, index) for a tuple's element."""
    return [(slot, -1) if slot.__class__ is int else slot for slot in tensor_pos]


def _scalar_converter(prim, call: _Call):
    """``convert(position, value) -> array``: a weak scalar as the kernel's 0-d input (the FastPlan
    converts the common ones itself; this one raises the operator's errors)."""
    device, targets = get_device(call.backend), call.targets  # not the call: the cached plan would keep its args

    def convert(i, value):
        target = targets[i]
        binding.check_scalar_fits(prim.name, prim._arg_name(i), value, target)
        return device.scalar(value, target.np_dtype)

    return convert


_FAST_MAX_OPERANDS = 16  # kMaxStackTensors of csrc/python/module.cc (Split into more: the Python plan)


def _allow_view(prim, launch, tensor_pos) -> bool:
    """For an operator whose output is a view of its first input (``Primitive.output_is_view``) run by
    a bare C++ kernel: mark the kernel so (``view_of``); whether it was."""
    instance = getattr(launch, "__self__", None)
    if not prim.output_is_view or not isinstance(instance, _C.KernelInstance) or list(tensor_pos[:1]) != [0]:
        return False
    instance.view_of = 0
    return True


def _view_or_launch(launch):
    """``run(arrays, first_argument)``: a view of the first array when the first argument is a plain
    Tensor (never written in place), else the kernel's copy (a Parameter's data changes under a view)."""
    view = launch.__self__.view

    def run(arrays, first):
        return view(arrays[0]) if first.__class__ is Tensor else launch(arrays)

    return run


def _fast_plan(
    launch, out_dtypes, out_shapes, device, label, scalars=(), convert=None, written=(), take=(), also_written=()
):
    """A plan run entirely in C++, when the launcher is a bare C++ kernel or device launch (no casts around it);
    ``written``: per output, the operand it is written into or -1 (a trace's in-place step), ``also_written``
    the operands it writes without returning them;
    ``take``: the operands the kernel reads, (position, -1) or (position, index) (empty: all arguments)."""
    instance = getattr(launch, "__self__", None)
    if not isinstance(instance, _C.Launchable) or max(len(out_dtypes), len(take)) > _FAST_MAX_OPERANDS:
        return None
    metas = [(dtype, tuple(shape), device) for dtype, shape in zip(out_dtypes, out_shapes)]
    plan = _C.FastPlan(instance, metas, list(scalars), convert, list(written), list(take), list(also_written))
    plan.kernel = label
    return plan


def _python_caller(n_args, tensor_pos, const_values, attrs, input_names):
    """``call(fn, arrays)``: a Python kernel gets every argument in order and the current attrs it
    accepts as keywords (all of them if it takes ``**kwargs``)."""
    names = set(input_names or ())
    kernel_attrs = {k: v for k, v in attrs.items() if k not in names and k != "primitive_target"}
    accepted: dict = {}

    def keywords(fn) -> dict:
        if fn not in accepted:
            try:
                params = inspect.signature(fn).parameters.values()
            except (TypeError, ValueError):
                params = ()
            if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
                accepted[fn] = kernel_attrs
            else:
                allowed = {p.name for p in params}
                accepted[fn] = {k: v for k, v in kernel_attrs.items() if k in allowed}
        return accepted[fn]

    def call(fn, arrays):
        full = [None] * n_args
        for slot, a in zip(tensor_pos, arrays):
            if slot.__class__ is int:
                full[slot] = a
            else:  # an element of a tuple of Tensors: the kernel gets the tuple of arrays
                full[slot[0]] = (*(full[slot[0]] or ()), a)
        for i, v in const_values.items():
            full[i] = v
        return fn(*full, **keywords(fn))

    return call


def _GATHER_TENSORS(call_args) -> tuple:  # every argument is a Tensor: the kernel takes their arrays
    return tuple([t._data for t in call_args])


def _gatherer(prim, args, device, tensor_pos, targets, defaults):
    """``gather(call_args) -> arrays``: the kernel's input arrays for a call with these metas."""
    signature = prim._signature()
    writes = binding.written_positions(signature)
    if not targets and not defaults and not writes and tensor_pos == list(range(len(args))):
        return _GATHER_TENSORS

    steps = []
    for i in tensor_pos:
        if i.__class__ is not int:
            steps.append((i, None, None))  # an element of a tuple of Tensors
            continue
        target = targets.get(i)
        if isinstance(args[i], Tensor):
            steps.append((i, None if target is None else target.np_dtype, None))
        else:
            steps.append((i, None, target))  # a weak scalar: its value may differ on every call
    names = [prim._arg_name(i) for i in range(len(args))]  # by position: slots of tuples never need one

    def gather(call_args):
        full = tuple(call_args) + defaults if defaults else call_args
        if writes:
            binding.check_written(prim.name, signature, full)
        arrays = []
        for i, cast_to, scalar_dtype in steps:
            if i.__class__ is not int:
                arrays.append(full[i[0]][i[1]]._data)
            elif scalar_dtype is not None:
                binding.check_scalar_fits(prim.name, names[i], full[i], scalar_dtype)
                arrays.append(device.scalar(full[i], scalar_dtype.np_dtype))
            elif cast_to is not None:
                arrays.append(device.cast(full[i]._data, cast_to))
            else:
                arrays.append(full[i]._data)
        return tuple(arrays)

    return gather


def _wrapper(out_dtypes, device, aliases, writes):
    """``wrap(result, call_args)``: kernel output arrays to Tensors; an output that is a written
    argument is that Parameter (MindSpore's in-place convention). Every written Parameter's version
    is bumped, so saved values overwritten later are caught by the backward pass."""
    from_array = Tensor._from_array

    def bump(call_args):
        for j in writes:
            call_args[j]._version += 1

    def out(r, dtype, src, call_args):
        if src < 0:
            return from_array(r, dtype, device)
        param = call_args[src]
        if r is not param._data:  # the kernel wrote into a widened copy: write it back
            device.write(param._data, r)
        return param

    if len(out_dtypes) == 1:
        dtype, src = out_dtypes[0], aliases[0]
        if not writes:
            return lambda result, call_args: from_array(result, dtype, device)

        def wrap_one(result, call_args):
            bump(call_args)
            return out(result, dtype, src, call_args)

        return wrap_one

    def wrap(result, call_args):
        bump(call_args)
        return tuple(out(r, d, src, call_args) for r, d, src in zip(result, out_dtypes, aliases))

    return wrap


def _try_kernel_plan(call: _Call):
    try:
        return _kernel_plan(call)
    except KernelNotFoundError:
        return None


def _value_plan(prim, defaults, kernel_plan):
    """For primitives with ``infer_value``: the value when it gives one, else the kernel."""

    def run(call_args):
        full = tuple(call_args) + defaults if defaults else call_args
        value = prim.infer_value(*full)
        if value is not None:
            return value if isinstance(value, Tensor) else Tensor(value)
        if kernel_plan is None:
            raise KernelNotFoundError(f"For '{prim.name}', infer_value gave no value and no kernel is registered.")
        return kernel_plan(call_args)

    run.kernel = KernelLabel(prim.name, "-", "infer_value", "python")
    return run
