"""Primitive: the base of every operator, and the eager call path (DESIGN.md, "One call").

Calling a primitive binds the arguments to its signature, promotes dtype groups, infers the
output meta, selects a kernel and launches it. Everything but the launch depends only on what
was seen before (attrs, input dtypes and shapes, constant inputs), so it is done once per
distinct call and kept as a *plan*; later calls with the same metas go straight to the kernel.
"""

from __future__ import annotations

import copy
import functools
import inspect
import time
import weakref
from typing import NamedTuple

import numpy as np

from opforge import _C, context
from opforge import dtype as mstype
from opforge.bprop.tape import record
from opforge.errors import KernelNotFoundError
from opforge.kernels import registry
from opforge.kernels.launch import make_launcher
from opforge.kernels.selection import select_kernel
from opforge.primitives import observers
from opforge.primitives import signature as sig
from opforge.primitives.observers import watching
from opforge.tensor import Parameter, Tensor

__all__ = [
    "Primitive",
    "PrimitiveWithInfer",
    "PrimitiveWithCheck",
    "prim_attr_register",
    "primitive_classes",
]

_IO_ATTRS = ("input_names", "output_names")
_live = weakref.WeakSet()  # every primitive instance, so new kernels can invalidate their plans
_classes: dict = {}  # every public operator class, by name
_shared_plans: dict = {}  # plans shared by primitive instances with equal attrs


class Primitive:
    """Base class of operators. Subclass it, register attrs with ``@prim_attr_register``.

    Without ``infer_shape``/``infer_dtype`` the output has the first tensor input's shape and dtype.
    """

    __mindspore_signature__ = ()
    # Output i is written into input j (in-place ops such as Assign): {i: j}.
    inplace_map: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_") and cls.__module__ != __name__:  # operators, not base classes
            _classes[cls.__name__] = cls

    def __init__(self, name: str | None = None):
        self.name = name or type(self).__name__
        self.attrs: dict = {}
        self.init_attrs: dict = {}
        self.input_names = None
        self.output_names = None
        self._device = None
        self._plans: dict = {}
        self._attrs_key = None
        _live.add(self)

    # -- attrs --------------------------------------------------------------------------------
    def add_prim_attr(self, name: str, value) -> Primitive:
        self.attrs[name] = value
        self._forget_plans()
        return self

    def del_prim_attr(self, name: str) -> Primitive:
        if name not in self.attrs:
            raise KeyError(f"For '{self.name}', there is no attr '{name}' to delete.")
        del self.attrs[name]
        self._forget_plans()
        return self

    def get_attr_dict(self) -> dict:
        return self.attrs

    def init_prim_io_names(self, inputs, outputs) -> None:
        """Name the inputs and outputs (constant inputs reach C++ kernels as attrs by these names)."""
        self.input_names = list(inputs)
        self.output_names = list(outputs)
        self.add_prim_attr("input_names", self.input_names)
        self.add_prim_attr("output_names", self.output_names)

    def set_device(self, device_target: str) -> Primitive:
        """Run this primitive on ``device_target``; its tensor inputs must live there."""
        if device_target not in ("CPU", "GPU"):
            raise ValueError(
                f"For '{self.name}', the 'device_target' must be 'CPU' or 'GPU', but got {device_target!r}."
            )
        self._device = device_target
        return self.add_prim_attr("primitive_target", device_target)

    def __getattr__(self, name):
        # Reached only when normal lookup fails: registered attrs read as fields (prim.alpha).
        attrs = self.__dict__.get("attrs")
        if attrs is not None and name in attrs:
            return attrs[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _forget_plans(self) -> None:
        self._plans = {}
        self._attrs_key = None

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.attrs.items() if k not in _IO_ATTRS)
        return f"Prim[{self.name}]<{shown}>" if shown else f"Prim[{self.name}]"

    # -- copies -------------------------------------------------------------------------------
    def __copy__(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.attrs = dict(self.attrs)
        new.init_attrs = dict(self.init_attrs)
        new._plans = {}
        _live.add(new)
        return new

    def __deepcopy__(self, memo):
        new = object.__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = {} if key == "_plans" else copy.deepcopy(value, memo)
        _live.add(new)
        return new

    def clone(self) -> Primitive:
        """A new primitive of the same class with the same attrs (no ``__init__`` re-run)."""
        return copy.deepcopy(self)

    # -- inference ----------------------------------------------------------------------------
    def __infer__(self, *args) -> dict:
        """Output meta from input metas: each arg is ``{'shape', 'dtype', 'value'}``."""
        for a in args:
            if isinstance(a["dtype"], mstype.Type):
                return {"shape": a["shape"], "dtype": a["dtype"], "value": None}
        raise TypeError(f"For '{self.name}', at least one input must be a Tensor.")

    # -- the call path ------------------------------------------------------------------------
    def _call(self, *args, **kwargs):
        """The call path in Python. ``Primitive.__call__`` is its C twin (``_C.make_primitive_call``),
        which serves cached all-Tensor calls itself and hands everything else to this method."""
        if kwargs:
            args = sig.bind_arguments(self.name, self._call_signature(), args, kwargs)
        try:
            key = tuple([a._meta for a in args])
        except AttributeError:
            key = self._mixed_key(args)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(args, key)
        if watching:
            return self._observed_call(args, plan)
        return plan(args)

    def _observed_call(self, args: tuple, plan):
        """A call while a tape or profiler is active: time it, record it for the backward pass."""
        if observers.profilers:
            start = time.perf_counter()
            out = plan(args)
            elapsed = time.perf_counter() - start
            for profiler in observers.profilers:
                profiler.add(plan.kernel, elapsed)
        else:
            out = plan(args)
        if observers.tapes:
            signature = self._signature()
            if len(args) < len(signature):  # bprops receive every input, defaults included
                args = sig.bind_arguments(self.name, signature, args, {})
            record(self, args, out)
        return out

    @classmethod
    @functools.cache
    def _signature(cls) -> tuple:
        return tuple(cls.__mindspore_signature__)

    def _call_signature(self) -> tuple:
        """The declared signature, else one built from the input names (for keyword calls)."""
        return self._signature() or tuple(sig.make_sig(n) for n in (self.input_names or ()))

    @classmethod
    @functools.cache
    def _group_positions(cls) -> frozenset:
        return frozenset(i for i, s in enumerate(cls._signature()) if s.dtype != sig.sig_dtype.T_EMPTY_DEFAULT_VALUE)

    def _mixed_key(self, args) -> tuple:
        """Cache key when some arguments are not tensors: weak scalars by type, constants by value."""
        groups = self._group_positions()
        key = []
        for i, a in enumerate(args):
            meta = getattr(a, "_meta", None)
            if meta is not None:
                key.append(meta)
            elif i in groups and mstype.weak_category(a) is not None:
                key.append(("weak", type(a)))
            else:
                key.append(("const", type(a), _freeze(self.name, self._arg_name(i), a)))
        return tuple(key)

    def _arg_name(self, i: int) -> str:
        signature = self._signature()
        if i < len(signature):
            return signature[i].name
        if self.input_names and i < len(self.input_names):
            return self.input_names[i]
        return f"input{i}"

    def _plan(self, args: tuple, key: tuple):
        shared_key = self._shared_key(key)
        plan = _shared_plans.get(shared_key) if shared_key is not None else None
        if plan is None:
            plan = _build_plan(self, args)
            if shared_key is not None:
                _remember(_shared_plans, shared_key, plan)
        _remember(self._plans, key, plan)
        return plan

    def _shared_key(self, key):
        if self._attrs_key is None:
            try:
                self._attrs_key = _freeze(self.name, "attrs", self.attrs)
                hash(self._attrs_key)
            except TypeError:
                self._attrs_key = False
        if self._attrs_key is False:
            return None
        return (type(self), self.name, self._attrs_key, self._device, key)


class PrimitiveWithInfer(Primitive):
    """A primitive whose output meta comes from ``infer_shape`` and ``infer_dtype``.

    Tensor arguments reach them as a shape (list) and a dtype; constant arguments as their value.
    ``infer_value`` may return the result outright (it receives tensors as Tensors).
    """

    def infer_shape(self, *args):
        return _first_tensor(self.name, args, "shape")

    def infer_dtype(self, *args):
        return _first_tensor(self.name, args, "dtype")

    def infer_value(self, *args):
        return None

    def __infer__(self, *args) -> dict:
        shapes = [a["shape"] for a in args]
        dtypes = [a["dtype"] for a in args]
        return {
            "shape": self.infer_shape(*shapes),
            "dtype": self.infer_dtype(*dtypes),
            "value": None,
        }


class PrimitiveWithCheck(Primitive):
    """A primitive that validates with ``check_shape`` and ``check_dtype``; the output meta is the
    first tensor input's unless ``infer_shape``/``infer_dtype`` are also defined."""

    def check_shape(self, *args) -> None:
        pass

    def check_dtype(self, *args) -> None:
        pass

    def __infer__(self, *args) -> dict:
        shapes = [a["shape"] for a in args]
        dtypes = [a["dtype"] for a in args]
        self.check_shape(*shapes)
        self.check_dtype(*dtypes)
        shape = self.infer_shape(*shapes) if hasattr(type(self), "infer_shape") else None
        dtype = self.infer_dtype(*dtypes) if hasattr(type(self), "infer_dtype") else None
        first = super().__infer__(*args)
        return {
            "shape": first["shape"] if shape is None else shape,
            "dtype": first["dtype"] if dtype is None else dtype,
            "value": None,
        }


def _forget_all_plans() -> None:
    """A kernel was registered: every plan may now select differently."""
    _shared_plans.clear()
    for prim in list(_live):
        prim._forget_plans()


registry.on_change(_forget_all_plans)


def primitive_classes() -> dict:
    """Every operator class defined so far (built-in and user-defined), by name."""
    return dict(_classes)


def _first_tensor(prim_name, values, what):
    for v in values:
        if what == "dtype" and isinstance(v, mstype.Type):
            return v
        if what == "shape" and isinstance(v, list):
            return v
    raise TypeError(f"For '{prim_name}', at least one input must be a Tensor.")


def prim_attr_register(fn):
    """Decorate ``__init__``: its arguments, defaults applied, become attrs before the body runs."""
    fn_sig = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self, /, *args, **kwargs):
        Primitive.__init__(self, type(self).__name__)
        bound = _bind_constructor(self.name, fn_sig, self, args, kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            self.attrs[name] = value
            self.init_attrs[name] = value
        fn(self, *args, **kwargs)

    return deco


def _bind_constructor(prim_name: str, fn_sig: inspect.Signature, self, args: tuple, kwargs: dict):
    """Bind constructor arguments; misuse is a TypeError that names the operator and its arguments
    (inspect's own message names neither)."""
    params = list(fn_sig.parameters.values())[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return _bind_or_explain(prim_name, fn_sig, self, args, kwargs, "")
    shown = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in params)
    its = f"its arguments are ({shown})" if params else "it takes none"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional):
        if not params:
            raise TypeError(f"For '{prim_name}', the constructor takes no arguments, but got {len(args)}.")
        raise TypeError(
            f"For '{prim_name}', the constructor takes {len(positional)} positional arguments, but got {len(args)}; "
            f"{its}."
        )
    by_position = {p.name for p in positional[: len(args)]}
    for key in kwargs:
        if key not in fn_sig.parameters or key == next(iter(fn_sig.parameters)):
            raise TypeError(f"For '{prim_name}', the constructor has no argument '{key}'; {its}.")
        if key in by_position:
            raise TypeError(f"For '{prim_name}', the constructor got the argument '{key}' by position and by keyword.")
    for p in params:
        if p.default is p.empty and p.name not in kwargs and p.name not in by_position:
            raise TypeError(f"For '{prim_name}', the constructor's argument '{p.name}' is missing; {its}.")
    return _bind_or_explain(prim_name, fn_sig, self, args, kwargs, its)


def _bind_or_explain(prim_name, fn_sig, self, args, kwargs, its):
    try:
        return fn_sig.bind(self, *args, **kwargs)
    except TypeError as exc:
        raise TypeError(
            f"For '{prim_name}', the constructor's arguments do not bind: {exc}{'; ' + its if its else ''}."
        ) from None


# ---------------------------------------------------------------------------------------------
# Plans


_MAX_PLANS = 4096


def _remember(cache: dict, key, plan) -> None:
    # Calls with ever-new shapes must not grow memory without bound: start over when full.
    if len(cache) >= _MAX_PLANS:
        cache.clear()
    cache[key] = plan


def _freeze(prim_name, arg_name, value):
    """A hashable stand-in for a constant argument (lists become tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(prim_name, arg_name, v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(prim_name, arg_name, v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        raise TypeError(f"For '{prim_name}', the '{arg_name}' must be a Tensor, but got numpy.ndarray.")
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"For '{prim_name}', the '{arg_name}' has unsupported type {type(value).__name__}.") from None
    return value


def _tensor_meta(t: Tensor) -> dict:
    return {"shape": list(t.shape), "dtype": t.dtype, "value": None}


def _normalise_outputs(prim, inferred: dict):
    """Check what ``__infer__`` returned and give (shapes, dtypes) tuples, one entry per output."""
    shape, dtype = inferred["shape"], inferred["dtype"]
    multi = isinstance(dtype, (tuple, list))
    shapes = tuple(shape) if multi else (shape,)
    dtypes = tuple(dtype) if multi else (dtype,)
    if len(shapes) != len(dtypes):
        raise TypeError(f"For '{prim.name}', infer gave {len(shapes)} shapes but {len(dtypes)} dtypes.")
    out_shapes = []
    for s in shapes:
        if not isinstance(s, (list, tuple)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in s
        ):
            raise TypeError(f"For '{prim.name}', infer_shape must give a list of non-negative ints, but gave {s!r}.")
        out_shapes.append(tuple(int(d) for d in s))
    for d in dtypes:
        if not isinstance(d, mstype.Type):
            raise TypeError(f"For '{prim.name}', infer_dtype must give an opforge dtype, but gave {d!r}.")
    return tuple(out_shapes), dtypes


def _backend(prim, tensors: list) -> str:
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise ValueError(f"For '{prim.name}', all tensor inputs must be on one device, but got {sorted(devices)}.")
    device = devices.pop() if devices else None
    if prim._device is not None:
        if device is not None and device != prim._device:
            raise ValueError(
                f"For '{prim.name}', the primitive is set to run on {prim._device}, but its inputs are on {device}."
            )
        return prim._device
    return device or context.get_context("device_target")


def _build_plan(prim: Primitive, args: tuple):
    """Everything a call needs that depends only on metas, then the function that runs it."""
    signature = prim._signature()
    n_given = len(args)
    if signature:
        args = sig.bind_arguments(prim.name, signature, args, {})
        targets = sig.plan_promotion(prim.name, signature, args)
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
            dtype = targets.get(i, a.dtype)
            tensor_pos.append(i)
            metas.append({"shape": list(a.shape), "dtype": dtype, "value": None})
        elif i in targets:
            tensor_pos.append(i)
            metas.append({"shape": [], "dtype": targets[i], "value": None})
        else:
            const_values[i] = a
            metas.append({"shape": a, "dtype": a, "value": a})

    tensors = [args[i] for i in tensor_pos if isinstance(args[i], Tensor)]
    backend = _backend(prim, tensors)
    if _has_infer_value(prim):
        return _value_plan(
            prim,
            defaults,
            _try_kernel_plan(prim, args, backend, tensor_pos, metas, const_values, targets, defaults),
        )
    return _kernel_plan(prim, args, backend, tensor_pos, metas, const_values, targets, defaults)


def _kernel_plan(prim, args, backend, tensor_pos, metas, const_values, targets, defaults):
    signature = prim._signature()
    out_shapes, out_dtypes = _normalise_outputs(prim, prim.__infer__(*metas))
    in_dtypes = tuple(metas[i]["dtype"] for i in tensor_pos)
    selection = select_kernel(prim.name, backend, in_dtypes, out_dtypes)

    attrs = {k: v for k, v in prim.attrs.items() if k not in _IO_ATTRS}
    attrs.update({prim._arg_name(i): v for i, v in const_values.items()})
    inplace = tuple(prim.inplace_map.get(o, -1) for o in range(len(out_shapes)))
    kernel_inplace = tuple(tensor_pos.index(j) if j >= 0 else -1 for j in inplace)
    launch = make_launcher(
        prim.name,
        selection,
        in_dtypes,
        tuple(tuple(metas[i]["shape"]) for i in tensor_pos),
        out_shapes,
        out_dtypes,
        attrs,
        _python_caller(len(args), tensor_pos, const_values, attrs, prim.input_names),
        kernel_inplace if any(j >= 0 for j in inplace) else (),
    )
    gather = _gatherer(prim, signature, args, tensor_pos, targets, defaults)
    wrap = _wrapper(out_dtypes, inplace)
    label = KernelLabel(prim.name, backend, selection.entry.attr.short(), selection.entry.kind)
    if gather is _GATHER_TENSORS and all(j < 0 for j in inplace):
        fast = _fast_plan(launch, out_dtypes, out_shapes, backend, label)
        if fast is not None:
            return fast
    run = lambda call_args: wrap(launch(gather(call_args)), call_args)  # noqa: E731
    run.kernel = label
    return run


def _fast_plan(launch, out_dtypes, out_shapes, device, label):
    """A plan run entirely in C++, when the launcher is a bare C++ kernel (no casts around it)."""
    instance = getattr(launch, "__self__", None)
    if not isinstance(instance, _C.KernelInstance):
        return None
    metas = [(dtype, tuple(shape), device) for dtype, shape in zip(out_dtypes, out_shapes)]
    plan = _C.FastPlan(instance, metas)
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
        for i, a in zip(tensor_pos, arrays):
            full[i] = a
        for i, v in const_values.items():
            full[i] = v
        return fn(*full, **keywords(fn))

    return call


def _GATHER_TENSORS(call_args) -> tuple:  # every argument is a Tensor: the kernel takes their arrays
    return tuple([t._data for t in call_args])


def _gatherer(prim, signature, args, tensor_pos, targets, defaults):
    """``gather(call_args) -> arrays``: the kernel's input arrays for a call with these metas."""
    writes = [i for i, s in enumerate(signature) if s.rw == sig.sig_rw.RW_WRITE]
    simple = not targets and not defaults and not writes and len(tensor_pos) == len(args)
    if simple:
        return _GATHER_TENSORS

    steps = []
    for i in tensor_pos:
        target = targets.get(i)
        if isinstance(args[i], Tensor):
            steps.append((i, None if target is None else target.np_dtype, None))
        else:
            steps.append((i, None, target))  # a weak scalar, converted every call
    names = [prim._arg_name(i) for i in range(len(args))]

    def gather(call_args):
        full = tuple(call_args) + defaults if defaults else call_args
        for i in writes:
            if not isinstance(full[i], Parameter):
                raise TypeError(
                    f"For '{prim.name}', the '{names[i]}' is written in place, so it must be a Parameter, "
                    f"but got {type(full[i]).__name__}."
                )
        arrays = []
        for i, np_dtype, scalar_target in steps:
            if scalar_target is not None:
                arrays.append(sig.scalar_to_array(prim.name, names[i], full[i], scalar_target))
            elif np_dtype is not None:
                arrays.append(full[i]._data.astype(np_dtype))
            else:
                arrays.append(full[i]._data)
        return tuple(arrays)

    return gather


def _write_back(param, result):
    # The kernel wrote into a widened copy (no kernel for the Parameter's own dtype): copy it back.
    if result is not param._data:
        param._data[...] = result
    return param


def _wrapper(out_dtypes, inplace):
    """``wrap(result, call_args)``: kernel output arrays to Tensors (in-place outputs: the Parameter)."""
    from_array = Tensor._from_array
    if len(out_dtypes) == 1:
        dtype, src = out_dtypes[0], inplace[0]
        if src >= 0:
            return lambda result, call_args: _write_back(call_args[src], result)
        return lambda result, call_args: from_array(result, dtype)

    def wrap(result, call_args):
        return tuple(
            _write_back(call_args[src], r) if src >= 0 else from_array(r, d)
            for r, d, src in zip(result, out_dtypes, inplace)
        )

    return wrap


class KernelLabel(NamedTuple):
    """What a plan runs, as the profiler reports it."""

    op: str
    backend: str
    kernel_attr: str
    impl: str


def _has_infer_value(prim) -> bool:
    return isinstance(prim, PrimitiveWithInfer) and type(prim).infer_value is not PrimitiveWithInfer.infer_value


def _try_kernel_plan(prim, *plan_args):
    try:
        return _kernel_plan(prim, *plan_args)
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


# The C call path: cached all-Tensor calls never enter Python; everything else reaches Primitive._call.
Primitive.__call__ = _C.make_primitive_call(Tensor, watching, Primitive._call)
