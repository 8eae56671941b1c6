"""Run-time kernel selection (docs/architecture.md, "One call", step 4).

For (operator, backend, input dtypes, inferred output dtypes): an exact KernelAttr match first,
else the cheapest set of lossless widening casts (int8 -> int32, float16 -> float32) whose
outputs are the inferred dtypes or hold them losslessly (the result is cast back); never a lossy
cast, never another backend, never a disabled kernel. Results are cached per registry version, so
no change to the registry (a kernel registered, replaced, disabled or enabled) leaves one stale.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from opforge import dtype as mstype
from opforge.errors import KernelNotFoundError
from opforge.kernels import registry
from opforge.op_info import get_op_info

__all__ = ["Selection", "select_kernel"]


class Selection(NamedTuple):
    entry: registry.KernelEntry
    input_dtypes: tuple  # what the kernel takes: the inputs are cast to these where they differ


# Leaving a dtype's category (int to float) is lossless for the inputs but not for the arithmetic:
# an int8 MatMul must wrap like int8, not round like float16. So any same-category kernel wins.
_CATEGORY_CHANGE_COST = 1000


def _widening_cost(have: tuple, want: tuple):
    """The cost of the casts (extra bytes, and a large charge for changing category), or None if
    any cast would lose information."""
    cost = 0
    for src, dst in zip(have, want):
        if src is dst:
            continue
        if not mstype.can_cast_losslessly(src, dst):
            return None
        cost += 1 + dst.itemsize - src.itemsize
        if src.kind != "b" and src.category != dst.category:
            cost += _CATEGORY_CHANGE_COST
    return cost


def _outputs_fit(attr, wanted) -> bool:
    if wanted is None:
        return True
    kernel_outs = attr.output_dtypes_for(len(wanted))
    return kernel_outs is not None and all(
        k is w or mstype.can_cast_losslessly(w, k) for k, w in zip(kernel_outs, wanted)
    )


def select_kernel(op_name: str, backend: str, input_dtypes: tuple, output_dtypes=None) -> Selection:
    """Choose the kernel for these input dtypes (and inferred output dtypes, when given: Cast's
    kernels differ only by their output), or raise KernelNotFoundError."""
    return _select(op_name, backend, input_dtypes, output_dtypes, registry.version())


@functools.cache
def _select(op_name: str, backend: str, input_dtypes: tuple, output_dtypes, version: int) -> Selection:
    # ``version`` is in the key so a selection made before a change is never served after it, even one
    # stored while another thread changed the registry; clearing on change only frees the memory.
    candidates = registry.kernels_for(op_name, backend)
    if not candidates:
        raise KernelNotFoundError(_nothing_message(op_name, backend, input_dtypes, output_dtypes))
    best, best_cost = None, None
    for entry in candidates:
        want = entry.attr.input_dtypes_for(len(input_dtypes))
        if want is None or not _outputs_fit(entry.attr, output_dtypes):
            continue
        if want == input_dtypes and (
            output_dtypes is None or entry.attr.output_dtypes_for(len(output_dtypes)) == output_dtypes
        ):
            return Selection(entry, want)
        cost = _widening_cost(input_dtypes, want)
        if cost is not None and (best_cost is None or cost < best_cost):
            best, best_cost = Selection(entry, want), cost
    if best is None:
        raise KernelNotFoundError(_miss_message(op_name, backend, input_dtypes, output_dtypes, candidates))
    return best


select_kernel.cache_clear = _select.cache_clear
registry.on_change(_select.cache_clear)


def _closeness(have: tuple, entry) -> tuple:
    want = entry.attr.input_dtypes_for(len(have)) or entry.attr.inputs
    matches = sum(a is b for a, b in zip(have, want))
    return (-matches, abs(len(want) - len(have)))


def _received(input_dtypes, output_dtypes) -> str:
    got = ", ".join(map(str, input_dtypes)) or "no tensors"
    if output_dtypes is not None:
        got += " -> " + ", ".join(map(str, output_dtypes))
    return got


def _nothing_message(op_name, backend, input_dtypes, output_dtypes) -> str:
    """No enabled kernel: say whether there is op info, or kernels that are all disabled."""
    n_disabled = len(registry.kernels_for(op_name, backend, include_disabled=True))
    if n_disabled:
        return (
            f"For '{op_name}', every {backend} kernel is disabled ({n_disabled} registered; "
            f"received inputs: {_received(input_dtypes, output_dtypes)})."
        )
    if get_op_info(op_name, backend) is None:
        registered = {e.op_name for e in registry.all_kernels(include_disabled=True) if e.backend == backend}
        close = registry.closest_names(op_name, registered)
        hint = (
            f" Kernels are registered under {' and '.join(repr(n) for n in close)}: a misspelt name?" if close else ""
        )
        return f"For '{op_name}', nothing is registered for the {backend} backend: no op info and no kernel.{hint}"
    got = _received(input_dtypes, output_dtypes)
    return f"For '{op_name}', no {backend} kernel is registered (received inputs: {got})."


def _miss_message(op_name, backend, input_dtypes, output_dtypes, candidates) -> str:
    got = _received(input_dtypes, output_dtypes)
    listed = "\n  ".join(e.attr.short() for e in candidates)
    closest = min(candidates, key=lambda e: _closeness(input_dtypes, e))
    off = [e.attr.short() for e in registry.kernels_for(op_name, backend, include_disabled=True) if e not in candidates]
    return (
        f"For '{op_name}', no {backend} kernel accepts inputs ({got}), even after a lossless widening cast.\n"
        f"Registered {backend} kernels:\n  {listed}\n"
        f"Closest: {closest.attr.short()}" + (f"\nDisabled: {', '.join(off)}" if off else "")
    )
