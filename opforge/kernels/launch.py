"""Launchers: a selected kernel bound to fixed metas and attrs, ready to run many times.

A launcher takes the arrays of a call (already promoted by the signature) and returns the
output array(s). It inserts the selection's widening casts and casts results back to the
inferred dtypes; an input the kernel writes in place that had to be widened is written back.
One launcher per kernel kind: ``cpp`` (the C++ factory, CPU arrays) and ``python``.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from opforge import _C
from opforge import dtype as mstype
from opforge.errors import KernelError

__all__ = ["LaunchSpec", "make_launcher", "register_launcher"]


class LaunchSpec(NamedTuple):
    """What a launcher factory gets: one selected kernel with fixed metas and attrs."""

    op_name: str
    entry: object  # the registry's KernelEntry
    device: object
    in_dtypes: tuple  # the kernel's input dtypes (after the selection's widening)
    in_shapes: tuple
    out_shapes: tuple
    attrs: dict
    call_python: Callable  # call_python(fn, arrays): a Python kernel with constants and attrs added
    inplace: tuple  # inplace[i]: the input output i is written into, or -1; () when none


_LAUNCHERS: dict = {}  # kernel kind -> factory(LaunchSpec) -> run(arrays)


def register_launcher(kind: str, factory: Callable) -> None:
    """How kernels of ``kind`` are launched: ``factory(spec: LaunchSpec)`` returns ``run(arrays)``.
    A backend adds its kernel kinds here (``cpp`` and ``python`` are built in)."""
    _LAUNCHERS[kind] = factory


def make_launcher(
    op_name: str,
    selection,
    device,
    arg_dtypes: tuple,
    in_shapes: tuple,
    out_shapes: tuple,
    out_dtypes: tuple,
    attrs: dict,
    call_python: Callable,
    inplace: tuple = (),
    written: tuple = (),
) -> Callable:
    """Build ``launch(arrays) -> array or tuple`` for this selection on ``device``.

    ``arg_dtypes`` are the dtypes the arrays will have; ``call_python(fn, arrays)`` calls a Python
    kernel with the constants and attrs added; ``inplace[i]`` is the input index output ``i`` is
    written into, or -1; ``written`` lists every input the kernel writes in place.
    """
    entry = selection.entry
    kernel_outs = entry.attr.output_dtypes_for(len(out_dtypes))
    if kernel_outs is None:
        raise KernelError(
            f"For '{op_name}', the kernel {entry.attr} has {len(kernel_outs)} outputs, "
            f"but the primitive infers {len(out_dtypes)}."
        )
    factory = _LAUNCHERS.get(entry.kind)
    if factory is None:
        raise KernelError(f"For '{op_name}', no launcher is registered for {entry.kind!r} kernels ({entry.source}).")
    spec = LaunchSpec(
        op_name, entry, device, selection.input_dtypes, in_shapes, out_shapes, attrs, call_python, inplace
    )
    run = factory(spec)
    return _with_casts(run, device, arg_dtypes, selection.input_dtypes, kernel_outs, out_dtypes, written)


def _cpp_launcher(spec: LaunchSpec) -> Callable:
    """C++ kernels of the factory, on CPU arrays."""
    outs = spec.entry.attr.output_dtypes_for(len(spec.out_shapes))
    instance = _C.KernelInstance(
        spec.entry.impl,
        spec.op_name,
        [list(s) for s in spec.in_shapes],
        [t.type_id for t in spec.in_dtypes],
        [t.np_dtype for t in spec.in_dtypes],
        [list(s) for s in spec.out_shapes],
        [t.type_id for t in outs],
        [t.np_dtype for t in outs],
        _cpp_attrs(spec.attrs),
        list(spec.inplace),
    )
    return instance.launch  # the bound method keeps the instance alive


def _cpp_attrs(attrs: dict) -> dict:
    """Keep the attrs a C++ kernel can receive; dtypes travel as their type ids, a tuple of int tuples as
    its ints row by row."""
    out = {}
    for name, value in attrs.items():
        if isinstance(value, mstype.Type):
            out[name] = value.type_id
        elif isinstance(value, (bool, int, float, str)):
            out[name] = value
        elif isinstance(value, (tuple, list)) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            out[name] = tuple(value)
        elif isinstance(value, (tuple, list)) and value and all(_is_int_tuple(v) for v in value):
            out[name] = tuple(int(x) for row in value for x in row)  # Pad's ((b0, a0), ...) flattened by rows
    return out


def _is_int_tuple(v) -> bool:
    return isinstance(v, (tuple, list)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)


def _python_launcher(spec: LaunchSpec) -> Callable:
    """Python functions, on the device's arrays; an in-place output returned as a new array is
    copied into the input it belongs to."""
    op_name, device, out_shapes, call_python, inplace = (
        spec.op_name, spec.device, spec.out_shapes, spec.call_python, spec.inplace
    )  # fmt: skip
    fn = spec.entry.impl
    out_dtypes = spec.entry.attr.output_dtypes_for(len(out_shapes))
    single = len(out_dtypes) == 1

    def run(arrays):
        result = call_python(fn, arrays)
        results = (result,) if single else tuple(result)
        if len(results) != len(out_dtypes):
            raise KernelError(
                f"For '{op_name}', the kernel returned {len(results)} outputs, expected {len(out_dtypes)}."
            )
        checked = tuple(
            _check_output(op_name, i, device, r, shape, dtype)
            for i, (r, shape, dtype) in enumerate(zip(results, out_shapes, out_dtypes))
        )
        for i, src in enumerate(inplace or ()):
            if src >= 0 and checked[i] is not arrays[src]:  # a new array instead of a write: copy it in
                device.write(arrays[src], checked[i])
        return checked[0] if single else checked

    return run


def _dtype_name(np_dtype) -> str:
    try:
        return str(mstype.nptype_to_dtype(np_dtype))
    except TypeError:
        return str(np_dtype)


def _check_output(op_name, i, device, array, shape, dtype):
    if not isinstance(array, device.array_type):  # a NumPy scalar from a reduction, a list...
        array = device.asarray(array, None)
    if array.shape != tuple(shape) or array.dtype != dtype.np_dtype:
        raise KernelError(
            f"For '{op_name}', the kernel's output {i} must be {dtype}{list(shape)} as inferred, "
            f"but got {_dtype_name(array.dtype)}{list(array.shape)}."
        )
    return array if device.is_kernel_ready(array) else device.share(array)


def _with_casts(run, device, arg_dtypes, kernel_ins, kernel_outs, out_dtypes, written=()) -> Callable:
    """Wrap ``run`` with the selection's widening casts; free when there are none. A written input
    that was widened is written back into the caller's array after the kernel ran."""
    in_casts = tuple((i, k.np_dtype) for i, (a, k) in enumerate(zip(arg_dtypes, kernel_ins)) if a is not k)
    out_casts = tuple(None if k is o else o.np_dtype for k, o in zip(kernel_outs, out_dtypes))
    if all(c is None for c in out_casts):
        out_casts = ()
    write_back = tuple(i for i, _ in in_casts if i in written)

    def cast_inputs(arrays):
        arrays = list(arrays)
        for i, dtype in in_casts:
            arrays[i] = device.cast(arrays[i], dtype)
        return arrays

    def cast_outputs(result):
        if len(out_casts) == 1:
            return device.cast(result, out_casts[0])
        return tuple(r if c is None else device.cast(r, c) for r, c in zip(result, out_casts))

    def run_cast(arrays):
        widened = cast_inputs(arrays)
        result = run(tuple(widened))
        for i in write_back:
            device.write(arrays[i], widened[i])
        return result

    if not in_casts and not out_casts:
        return run
    if not out_casts:
        return run_cast
    return lambda arrays: cast_outputs(run_cast(arrays))


register_launcher("cpp", _cpp_launcher)
register_launcher("python", _python_launcher)
