"""MatMul epilogues, a pass of the trace compiler: an ``ApplyGradientDescent(var, alpha, g)`` whose ``g``
is a ``MatMul`` that nothing else reads becomes one ``FusedMatMulApplyGradientDescent(var, alpha, x1, x2)``,
a GEMM accumulating into ``var`` (``beta = 1``, ``alpha = -alpha``): the gradient is never written out and
read back, and the separate pass over ``var`` is gone. It is what SGD's update of a Dense layer's weight
records. The fused call runs where the update ran, so it applies only when no call in between writes
what the MatMul read, and only where the fused operator has a kernel for the device and dtype (the CPU's).
The result agrees with the pair's to within one rounding of the update (the product is not rounded
before it is scaled).
"""

from __future__ import annotations

from opforge.dispatch import binding
from opforge.dispatch.cse import readers
from opforge.dispatch.plan import plan_from_metas
from opforge.kernels import registry
from opforge.primitives.math_ops import MatMul
from opforge.primitives.nn_ops import ApplyGradientDescent, FusedMatMulApplyGradientDescent
from opforge.tensor import Tensor

__all__ = ["fuse_updates", "fused_pairs"]


def _pays(dtype, device) -> bool:
    """On the CPU, with a kernel for ``dtype`` (the GPU's runs the pair's two launches: nothing gained)."""
    if device.name != "CPU":
        return False
    kernels = registry.kernels_for(FusedMatMulApplyGradientDescent.__name__, device.name)
    return any(entry.attr.input_dtypes_for(4) == (dtype,) * 4 for entry in kernels)


def _same_source(a, b) -> bool:
    if a[0] != b[0]:
        return False
    return a[1] == b[1] if a[0] == "slot" else a[1] is b[1]


def _written_between(steps, start: int, stop: int, sources) -> bool:
    """Whether a step of steps[start:stop] writes one of ``sources`` in place."""
    for step in steps[start:stop]:
        if step.prim is None:
            continue
        written = [step.sources[i] for i in binding.written_positions(step.prim._signature()) if i < len(step.sources)]
        if any(_same_source(w, s) for w in written for s in sources):
            return True
    return False


def _fused(update, product, value_of):
    """The fused step replacing ``update`` (ApplyGradientDescent) and ``product`` (its MatMul), or None."""
    var, alpha, x1, x2 = (*update.sources[:2], *product.sources)
    if any(s[0] not in ("slot", "const") for s in (var, alpha, x1, x2)):
        return None
    if _same_source(var, x1) or _same_source(var, x2):  # the GEMM would read what it accumulates into
        return None
    args = tuple(value_of(s[1]) if s[0] == "slot" else s[1] for s in (var, alpha, x1, x2))
    tensors = [a for a in (args[0], args[2], args[3]) if isinstance(a, Tensor)]
    if len(tensors) != 3 or not _pays(tensors[0].dtype, tensors[0]._meta[2]):
        return None
    if any(t.dtype is not tensors[0].dtype or t._meta[2] is not tensors[0]._meta[2] for t in tensors):
        return None
    prim = FusedMatMulApplyGradientDescent(transpose_a=product.prim.transpose_a, transpose_b=product.prim.transpose_b)
    return update._replace(prim=prim, plan=plan_from_metas(prim, args), sources=(var, alpha, x1, x2))


def fuse_updates(steps: list, outputs_spec, value_of) -> list:
    """``steps`` with each MatMul whose only reader is an ApplyGradientDescent's ``delta`` fused into it.
    ``value_of(slot)``: a Tensor with the meta a slot had when the trace was recorded (a placeholder once
    the value is gone)."""
    reads = readers(steps, outputs_spec)
    producer = {s.outputs: i for i, s in enumerate(steps) if s.outputs.__class__ is int}
    replaced, dropped = {}, set()
    for i, step in enumerate(steps):
        if type(step.prim) is not ApplyGradientDescent or step.sources[2][0] != "slot":
            continue
        slot = step.sources[2][1]
        j = producer.get(slot)
        if j is None or type(steps[j].prim) is not MatMul or reads.get(slot) != {i}:
            continue
        if _written_between(steps, j + 1, i, steps[j].sources):
            continue
        fused = _fused(step, steps[j], value_of)
        if fused is not None:
            replaced[i] = fused
            dropped.add(j)
    return [replaced.get(i, s) for i, s in enumerate(steps) if i not in dropped]


def fused_pairs(program) -> int:
    """How many MatMul and update pairs a compiled program runs fused."""
    return sum(type(step.prim) is FusedMatMulApplyGradientDescent for step in program)
