"""The operator sweep, generated from the kernel registry.

One test per (op, backend, KernelAttr) that opforge registers, on the CPU and on the GPU (a real one
when CuPy finds it, else the host emulation of the same CUDA sources: tests/emulation/): it builds inputs of
exactly that kernel's input dtypes from the op's record in ``tests/op_db.py``, checks that
selection picks exactly that kernel, calls the primitive through the public API and compares
the output's dtype, shape and values with the NumPy reference. Around it: NaN/Inf propagation for
every float kernel of the elementwise ops, non-contiguous inputs, broadcasting shapes drawn by
hypothesis, and each record's error inputs.

A kernel whose op has no record fails (so a new kernel cannot go untested), and so does a record
whose op has no kernel.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_db import OP_DB, Sample

from opforge import Tensor
from opforge.kernels import all_kernels, select_kernel
from opforge.primitives import Primitive, primitive_classes
from opforge.testing import check_error_input, check_forward, kernel_id, shapes_desc

BACKEND = "CPU"  # the backend every record must have kernels on


def _is_library_kernel(entry) -> bool:
    """Kernels opforge itself registers: its C++ library, its CUDA sources and Python kernels in its
    own modules. (Kernels that other tests or users register at run time are theirs to test.)"""
    if entry.kind == "cpp":
        return entry.source == "builtin"
    if entry.kind == "cuda":
        return entry.source.startswith("cuda:")
    return entry.source.startswith("python:opforge.")


KERNELS = sorted((e for e in all_kernels() if _is_library_kernel(e)), key=lambda e: (e.op_name, e.backend != "CPU"))


def _with_record(kind=None) -> list:
    out = []
    for e in KERNELS:
        record = OP_DB.get(e.op_name)
        if record is None or (kind is not None and record.kind not in kind):
            continue
        out.append(e)
    return out


# ---------------------------------------------------------------------------------------------
# Running one sample


def _record_for(entry):
    record = OP_DB.get(entry.op_name)
    if record is None:
        pytest.fail(f"no sweep record for op {entry.op_name}: add one to tests/op_db.py", pytrace=False)
    return record


def _input_dtypes(entry, record) -> tuple:
    return tuple(entry.attr.input_dtypes_for(record.nin))


def _samples(record, entry, prim, rng):
    return list(record.sample_inputs(record, prim, _input_dtypes(entry, record), entry.attr.outputs, rng))


def _check_selection(entry, in_dtypes) -> None:
    chosen = select_kernel(entry.op_name, entry.backend, tuple(in_dtypes), entry.attr.outputs).entry
    assert chosen.attr == entry.attr, (
        f"select_kernel({entry.op_name!r}, {entry.backend!r}, {tuple(in_dtypes)}) chose {chosen.attr}, not {entry.attr}"
    )


def _non_contiguous(a: np.ndarray) -> np.ndarray:
    """The same values in a strided (non C-contiguous) view."""
    holder = np.zeros(a.shape + (2,), a.dtype)
    holder[..., 0] = a
    return holder[..., 0]


def run_sample(record, entry, prim, variant, sample, noncontig: bool = False) -> None:
    """Call ``prim`` on the sample through the public API and compare with the NumPy reference
    (``opforge.testing.check_forward``, what ``opcheck`` runs on a user's operator)."""
    where = f"{kernel_id(entry)} [{variant}] {sample.desc or shapes_desc(sample.args)}"
    wrapped = not isinstance(prim, Primitive)  # op_db_nn's wrappers return one output of several
    index = getattr(prim, "index", 0)  # the output a wrapper gives (its dtype may differ from output 0's)
    index = index if isinstance(index, int) else 0
    check_forward(
        prim,
        sample,
        functools.partial(record.ref, prim),
        entry.backend,
        entry.attr.outputs[index : index + 1] if wrapped else entry.attr.outputs,
        params=record.params,
        tols=record.tols,
        mag_tols=record.mag_tols,
        magnitude=functools.partial(record.magnitude, prim) if record.magnitude is not None else None,
        exact=record.exact,
        check_infer=not wrapped,
        transform=_non_contiguous if noncontig else None,
        where=where,
        variadic_outputs=entry.attr.all_same,
    )


# ---------------------------------------------------------------------------------------------
# The sweep: one test per registered kernel


@pytest.mark.parametrize("entry", KERNELS, ids=kernel_id)
def test_kernel(entry, rng):
    record = _record_for(entry)
    in_dtypes = _input_dtypes(entry, record)
    _check_selection(entry, in_dtypes)
    count = 0
    for variant, factory in record.variants.items():
        prim = factory()
        for sample in _samples(record, entry, prim, rng):
            run_sample(record, entry, prim, variant, sample)
            count += 1
    assert count > 0, f"the record for {entry.op_name} gave no samples for {entry.attr}"


@pytest.mark.parametrize(
    "entry", [e for e in _with_record() if OP_DB[e.op_name].nin and OP_DB[e.op_name].views], ids=kernel_id
)
def test_kernel_non_contiguous_inputs(entry, rng):
    """Transposed and strided NumPy views wrapped in Tensors give the same results."""
    record = _record_for(entry)
    count = 0
    for variant, factory in record.variants.items():
        prim = factory()
        for sample in _samples(record, entry, prim, rng):
            if not any(
                isinstance(e, np.ndarray) and e.size > 1
                for a in sample.args
                for e in (a if isinstance(a, tuple) else (a,))
            ):
                continue
            count += 1
            run_sample(record, entry, prim, variant, sample, noncontig=True)
    assert count > 0, f"the record for {entry.op_name} gave no sample with a non-contiguous view"


SPECIAL_VALUES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -0.5, 1e-3, 7.0]


def _float_elementwise() -> list:
    return [e for e in _with_record(("unary", "binary", "same_shape")) if all(t.kind == "f" for t in e.attr.inputs)]


def _special_sample(record, in_dtypes) -> Sample:
    vals = np.array(SPECIAL_VALUES)
    if record.kind == "unary":
        args = (vals,)
    elif record.kind == "binary":
        args = (vals[:, None], vals[None, :])  # every pair, by broadcasting
    else:
        args = tuple(np.meshgrid(vals, vals, indexing="ij"))
    return Sample(tuple(a.astype(t.np_dtype) for a, t in zip(args, in_dtypes)), desc="NaN/Inf/zero values")


@pytest.mark.parametrize("entry", _float_elementwise(), ids=kernel_id)
def test_kernel_nan_inf(entry):
    """NaN and infinities propagate as the NumPy reference (IEEE arithmetic) says."""
    record = _record_for(entry)
    for variant, factory in record.variants.items():
        sample = _special_sample(record, _input_dtypes(entry, record))
        run_sample(record, entry, factory(), variant, sample)


_BROADCAST_SHAPES = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=4)


@pytest.mark.parametrize("entry", _with_record(("binary",)), ids=kernel_id)
@settings(max_examples=6, deadline=None, database=None, derandomize=True)
@given(shapes=_BROADCAST_SHAPES, seed=st.integers(0, 2**32 - 1))
def test_kernel_broadcasting(entry, shapes, seed):
    record = _record_for(entry)
    rng = np.random.default_rng(seed)
    ins = _input_dtypes(entry, record)
    args = tuple(record.make_arg(i, s, ins[i], rng) for i, s in enumerate(shapes.input_shapes))
    sample = Sample(args, desc=f"hypothesis shapes {shapes.input_shapes}")
    prim = next(iter(record.variants.values()))()
    run_sample(record, entry, prim, "", sample)
    assert tuple(prim(*(Tensor(a, device=entry.backend) for a in args)).shape) == tuple(shapes.result_shape)


# ---------------------------------------------------------------------------------------------
# Records and errors


@pytest.mark.parametrize("name", sorted(OP_DB))
def test_record_has_kernels(name):
    assert name in primitive_classes(), f"the sweep record {name} names no primitive"
    if not any(e.op_name == name and e.backend == BACKEND for e in KERNELS):
        pytest.fail(
            f"tests/op_db.py has a sweep record for op {name}, but no {BACKEND} kernel is registered for it",
            pytrace=False,
        )


def _error_param(record, err):
    return pytest.param(record, err, id=f"{record.name}-{err.desc}")


ERROR_CASES = [_error_param(record, err) for record in OP_DB.values() for err in record.error_inputs()]


@pytest.mark.parametrize("record,err", ERROR_CASES)
def test_error_input(record, err):
    check_error_input(record.name, err)
