"""Primitive: the base of every operator (DESIGN, "One call").

A primitive holds its attrs and its inference; calling it hands the call to the current
interpreter (``opforge.dispatch.interpreter``), which by default runs the call's *plan*
(``opforge.dispatch.plan``): binding, inference and kernel selection done once per distinct call,
so later calls with the same metas go straight to the kernel.
"""

from __future__ import annotations

import copy
import functools
import inspect
import weakref

from opforge import _C
from opforge import dtype as mstype
from opforge.device import BACKENDS
from opforge.dispatch import binding, plan
from opforge.dispatch.interpreter import current_interpreter
from opforge.dispatch.signature import make_sig, sig_dtype
from opforge.kernels import registry
from opforge.tensor import Tensor

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


class _PrimitiveType(type):
    """The type of operator classes: their docstrings end with the kernels the registry holds for
    them, per backend, read when the docstring is asked for. The registrations are the one record
    of which dtypes a backend runs; a docstring says what the operator means."""

    @property
    def __doc__(cls):
        own = cls.__dict__.get("__doc__") or ""
        table = _kernel_table(cls.__name__)
        return f"{own.rstrip()}\n\n{table}" if table else own


def _kernel_table(op_name: str) -> str:
    lines = []
    for backend in BACKENDS:
        entries = registry.kernels_for(op_name, backend)
        if entries:
            lines.append(f"    {backend}: " + "; ".join(e.attr.short() for e in entries))
    if not lines:
        return ""
    return (
        "Kernels (from the registry; a dtype without its own runs on a wider one when that is lossless):\n"
        + "\n".join(lines)
    )


class Primitive(metaclass=_PrimitiveType):
    """Base class of operators. Subclass it, register attrs with ``@prim_attr_register``.

    Without ``infer_shape``/``infer_dtype`` the output has the first tensor input's shape and dtype.
    """

    __mindspore_signature__ = ()

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
        if device_target not in BACKENDS:
            raise ValueError(
                f"For '{self.name}', the 'device_target' must be one of {BACKENDS}, but got {device_target!r}."
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
        which serves cached all-Tensor calls itself when no interpreter is installed on the thread
        and hands everything else to this method."""
        if kwargs:
            args = binding.bind_arguments(self.name, self._call_signature(), args, kwargs)
        args = tuple([plan.python_scalar(a) for a in args])
        interpreter = current_interpreter()
        if interpreter is None:
            return self._plan_for(args)(args)
        return interpreter.process_primitive(self, args)

    def _plan_for(self, args: tuple):
        """The plan for a call with these arguments: cached per metas, else built."""
        try:
            key = tuple([a._meta for a in args])
        except AttributeError:
            key = plan.plan_key(self, args)
        found = self._plans.get(key)
        return found if found is not None else self._new_plan(args, key)

    def _new_plan(self, args: tuple, key: tuple):
        shared_key = self._shared_key(key)
        found = _shared_plans.get(shared_key) if shared_key is not None else None
        if found is None:
            found = plan.build_plan(self, args)
            if shared_key is not None:
                plan.remember(_shared_plans, shared_key, found)
        plan.remember(self._plans, key, found)
        return found

    def _bound_inputs(self, args: tuple) -> tuple:
        """Every input of a call, defaults included (what bprops receive)."""
        signature = self._signature()
        if len(args) < len(signature):
            return binding.bind_arguments(self.name, signature, args, {})
        return args

    @classmethod
    @functools.cache
    def _signature(cls) -> tuple:
        return tuple(cls.__mindspore_signature__)

    def _call_signature(self) -> tuple:
        """The declared signature, else one built from the input names (for keyword calls)."""
        return self._signature() or tuple(make_sig(n) for n in (self.input_names or ()))

    @classmethod
    @functools.cache
    def _group_positions(cls) -> frozenset:
        return frozenset(i for i, s in enumerate(cls._signature()) if s.dtype != sig_dtype.T_EMPTY_DEFAULT_VALUE)

    def _arg_name(self, i: int) -> str:
        signature = self._signature()
        if i < len(signature):
            return signature[i].name
        if self.input_names and i < len(self.input_names):
            return self.input_names[i]
        return f"input{i}"

    def _shared_key(self, key):
        if self._attrs_key is None:
            try:
                self._attrs_key = plan.freeze(self.name, "attrs", self.attrs)
                hash(self._attrs_key)
            except TypeError:
                self._attrs_key = False
        if self._attrs_key is False:
            return None
        return (type(self), self.name, self._attrs_key, self._device, key)

    def _has_infer_value(self) -> bool:
        return False


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

    def _has_infer_value(self) -> bool:
        return type(self).infer_value is not PrimitiveWithInfer.infer_value

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


# The C call path: cached all-Tensor calls with no interpreter never enter Python; the rest reach
# Primitive._call.
Primitive.__call__ = _C.make_primitive_call(Tensor, Primitive._call)
