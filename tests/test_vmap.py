"""vmap (``opforge/dispatch/batching.py``), generated from the sweep records of ``tests/op_db.py``.

For every operator with a batching rule and a record: vmap over a stack of sample inputs equals
stacking the eager results of each element, with the batch on axis 0, on the last axis of an input
(the others unbatched: ``in_axes`` None) and with ``out_axes=-1``. The sequential fallback is checked
the same way on every operator with a record (rules switched off). Then nesting, gradients inside
and around vmap, the in_axes/out_axes rules and the errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from op_db import OP_DB

import opforge
from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.dispatch import batching
from opforge.dispatch.batching import VmapFallbackWarning, batching_rules
from opforge.kernels import all_kernels

B = 3
MAX_ELEMENTS = 2048  # per sample array: the large sweep shapes add time, not coverage
MAX_SAMPLES = 6


def _cpu_entry(name):
    """The op's CPU kernel to build samples for: float32 inputs when there is one."""
    entries = [e for e in all_kernels() if e.op_name == name and e.backend == "CPU"]
    if not entries:
        return None
    nin = OP_DB[name].nin
    for e in entries:
        if all(t is mstype.float32 for t in e.attr.input_dtypes_for(nin)):
            return e
    return entries[0]


RULED = sorted(n for n in batching_rules.names() if n in OP_DB and _cpu_entry(n) is not None)
RECORDED = sorted(n for n in OP_DB if _cpu_entry(n) is not None)


def _small(a) -> bool:
    if isinstance(a, np.ndarray):
        return a.size <= MAX_ELEMENTS
    if isinstance(a, (tuple, list)):
        return all(_small(x) for x in a)
    return True


def _cases(name, rng):
    """(variant, prim, sample) for the op's record, small samples only."""
    record = OP_DB[name]
    entry = _cpu_entry(name)
    ins = tuple(entry.attr.input_dtypes_for(record.nin))
    for variant, factory in record.variants.items():
        prim = factory()
        samples = [s for s in record.sample_inputs(record, prim, ins, entry.attr.outputs, rng) if _small(s.args)][
            :MAX_SAMPLES
        ]
        for sample in samples:
            yield variant, prim, sample


def _element(record, sample, k, rng):
    """Batch element ``k`` of a sample: element 0 is the sample, the others new inputs of the same
    shapes and dtypes from the record's argument specs."""
    if k == 0:
        return sample.args
    out, t = [], 0
    for a in sample.args:
        if isinstance(a, np.ndarray):
            out.append(_fresh(record, t, a, rng))
            t += 1
        elif isinstance(a, (tuple, list)) and a and all(isinstance(x, np.ndarray) for x in a):
            out.append(type(a)(_fresh(record, t, x, rng) for x in a))
            t += 1
        else:
            out.append(a)
    return tuple(out)


def _fresh(record, t, a, rng):
    """New values for a float input; integer and bool inputs (indices, labels, conditions) are
    kept unless the operator is elementwise, as their values are tied to the other inputs."""
    if t >= record.nin or (a.dtype.kind not in "fc" and not record.elementwise):
        return a
    try:
        return record.make_arg(t, a.shape, mstype.nptype_to_dtype(a.dtype), rng)
    except Exception:  # a spec tied to another input's values: reuse the sample's
        return a


def _tensors(args, params=()):
    def conv(i, a):
        if isinstance(a, np.ndarray):
            return Parameter(a.copy(), name=f"p{i}") if i in params else Tensor(a)
        if isinstance(a, (tuple, list)) and a and all(isinstance(x, np.ndarray) for x in a):
            return type(a)(Tensor(x) for x in a)
        return a

    return tuple(conv(i, a) for i, a in enumerate(args))


def _is_tensor_arg(a) -> bool:
    return isinstance(a, np.ndarray) or (
        isinstance(a, (tuple, list)) and a and all(isinstance(x, np.ndarray) for x in a)
    )


def _stack_arg(values, axis):
    if isinstance(values[0], np.ndarray):
        return Tensor(np.stack(values, axis=axis))
    return type(values[0])(Tensor(np.stack([v[j] for v in values], axis=axis)) for j in range(len(values[0])))


def _outputs(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def _compare(name, got, expected, dtype, where):
    got = np.asarray(got)
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, expected {expected.dtype}"
    assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
    if got.dtype.kind in "fc":
        rtol, atol = OP_DB[name].tol(dtype)
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-6)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def _check_vmap(name, prim, sample, rng, mode):
    """vmap over B elements of ``sample`` against the stacked eager results. ``mode``: "axis0" (every
    tensor argument batched on axis 0), "last" (the first tensor argument batched on its last axis,
    the others unbatched) or "out_last" (axis 0 in, out_axes=-1)."""
    record = OP_DB[name]
    elements = [_element(record, sample, k, rng) for k in range(B)]
    tpos = [i for i, a in enumerate(sample.args) if _is_tensor_arg(a)]
    if not tpos:
        pytest.skip("no tensor input")
    batched = tpos if mode != "last" else tpos[:1]
    if mode == "last" and not all(isinstance(sample.args[i], np.ndarray) for i in batched):
        batched = tpos
    in_axis = -1 if mode == "last" else 0
    if mode == "last":
        elements = [tuple(e[i] if i in batched else sample.args[i] for i in range(len(sample.args))) for e in elements]
    # The per-element eager results.
    expected = []
    for e in elements:
        expected.append([o.asnumpy() for o in _outputs(prim(*_tensors(e), **sample.kwargs))])

    def fn(*targs):
        args = list(sample.args)
        for i, a in zip(tpos, targs):
            args[i] = a
        return prim(*args, **sample.kwargs)

    call_args, in_axes = [], []
    for i in tpos:
        if i in batched:
            call_args.append(_stack_arg([e[i] for e in elements], in_axis))
            in_axes.append(in_axis)
        else:
            call_args.append(_tensors((sample.args[i],))[0])
            in_axes.append(None)
    out_axes = -1 if mode == "out_last" else 0
    batching._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VmapFallbackWarning)
        got = _outputs(opforge.vmap(fn, in_axes=tuple(in_axes), out_axes=out_axes)(*call_args))
    # These operators have rules (a rule may hand the cases it does not batch to the fallback, saying so).
    assert not [str(w.message) for w in caught if "has no batching rule" in str(w.message)]
    assert len(got) == len(expected[0])
    for j, g in enumerate(got):
        want = np.stack([e[j] for e in expected], axis=out_axes)
        _compare(name, g, want, g.dtype, f"vmap({name}) [{mode}] {sample.desc} output {j}")


def _run_cases(name, rng, mode):
    ran = 0
    for _variant, prim, sample in _cases(name, rng):
        if mode == "last" and not any(isinstance(a, np.ndarray) and a.ndim > 0 for a in sample.args):
            continue
        if mode == "last" and not isinstance(next(a for a in sample.args if _is_tensor_arg(a)), np.ndarray):
            continue
        if mode == "last" and next(a for a in sample.args if _is_tensor_arg(a)).ndim == 0:
            continue
        _check_vmap(name, prim, sample, rng, mode)
        ran += 1
    return ran


@pytest.mark.parametrize("name", RULED)
def test_rule_axis0(name, rng):
    assert _run_cases(name, rng, "axis0") > 0


@pytest.mark.parametrize("name", RULED)
def test_rule_last_axis_and_unbatched(name, rng):
    _run_cases(name, rng, "last")


@pytest.mark.parametrize("name", RULED)
def test_rule_out_axes_last(name, rng):
    _run_cases(name, rng, "out_last")


# ---------------------------------------------------------------------------------------------
# The sequential fallback, on every operator with a record

_RANDOM = {"Dropout"}  # a different mask per call: checked for shapes only


@pytest.fixture
def no_rules(monkeypatch):
    monkeypatch.setattr(batching_rules, "get", lambda prim: None)


@pytest.mark.parametrize("name", RECORDED)
def test_fallback(name, rng, no_rules):
    record = OP_DB[name]
    for _variant, prim, sample in _cases(name, rng):
        if name in _RANDOM:
            continue
        writes = bool(record.params) or any(
            s.rw == opforge.ops.sig.sig_rw.RW_WRITE for s in getattr(prim, "__mindspore_signature__", ())
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VmapFallbackWarning)
            if writes:
                with pytest.raises(NotImplementedError, match=f"For '{name}', vmap cannot batch an in-place"):
                    _check_fallback(name, prim, sample, rng)
            else:
                _check_fallback(name, prim, sample, rng)
        return  # one sample per operator: the fallback is the same code for all of them


def _check_fallback(name, prim, sample, rng):
    record = OP_DB[name]
    elements = [_element(record, sample, k, rng) for k in range(B)]
    tpos = [i for i, a in enumerate(sample.args) if _is_tensor_arg(a)]
    if not tpos:
        return
    params = tuple(record.params) + tuple(getattr(prim, "__dict__", {}).get("writes", ()))  # op_db_nn's _InPlace
    if not params:
        expected = [[o.asnumpy() for o in _outputs(prim(*_tensors(e), **sample.kwargs))] for e in elements]
    batched = [i for i in tpos if i not in params]
    fixed = _tensors(sample.args, params)

    def fn(*targs):
        args = list(fixed)
        for i, a in zip(batched, targs):
            args[i] = a
        return prim(*args, **sample.kwargs)

    got = _outputs(opforge.vmap(fn)(*[_stack_arg([e[i] for e in elements], 0) for i in batched]))
    for j, g in enumerate(got):
        _compare(name, g, np.stack([e[j] for e in expected]), g.dtype, f"fallback {name} {sample.desc}")


_PICKS = np.array([[2], [0], [5]], np.int32)


def _gather_nd(v):  # GatherNd has no batching rule
    return ops.GatherNd()(v, Tensor(_PICKS))


def test_fallback_warns_once_and_is_reported():
    x = np.random.default_rng(0).random((4, 6)).astype(np.float32)
    batching._warned.discard("GatherNd")
    with pytest.warns(VmapFallbackWarning, match="'GatherNd' has no batching rule"):
        out = opforge.vmap(_gather_nd)(Tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", VmapFallbackWarning)
        opforge.vmap(_gather_nd)(Tensor(x))  # warned once
    np.testing.assert_array_equal(out.asnumpy(), x[:, _PICKS[:, 0]])
    report = opforge.vmap_report()
    assert report["fallback_calls"]["GatherNd"] >= 2
    assert "GatherNd" in report["without_rule"] and "Add" in report["with_rule"]


def test_rule_delegating_part_of_its_cases():
    # Gather batches params or indices itself; both batched run sequentially, with a warning saying so.
    params = _f32(3, 5, 4)
    indices = np.array([[0, 4], [1, 1], [3, 2]], np.int32)
    batching._warned.discard("Gather")
    with pytest.warns(VmapFallbackWarning, match="'Gather' batches 'input_params' or 'input_indices', not both"):
        out = opforge.vmap(lambda p, i: ops.Gather()(p, i, 0))(Tensor(params), Tensor(indices))
    np.testing.assert_array_equal(out.asnumpy(), np.stack([params[b][indices[b]] for b in range(3)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", VmapFallbackWarning)
        by_index = opforge.vmap(lambda i: ops.Gather()(Tensor(params), i, 1))(Tensor(indices))
        by_params = opforge.vmap(lambda p: ops.Gather()(p, Tensor(indices % 4), -1), in_axes=1)(Tensor(params))
    np.testing.assert_array_equal(by_index.asnumpy(), np.stack([params[:, indices[b]] for b in range(3)]))
    np.testing.assert_array_equal(by_params.asnumpy(), np.stack([params[:, b][:, indices % 4] for b in range(5)]))


def test_every_rule_is_swept():
    # A rule without a sweep record (and a CPU kernel) would go untested.
    assert sorted(batching_rules.names()) == RULED


def test_report_lists():
    report = opforge.vmap_report()
    assert set(report["with_rule"]).isdisjoint(report["without_rule"])
    for name in ("Add", "ReduceSum", "MatMul", "BatchMatMul", "Softmax", "Reshape", "ReluGrad", "CumSum"):
        assert name in report["with_rule"], name
    assert report["with_rule"] == sorted(report["with_rule"])


# ---------------------------------------------------------------------------------------------
# Composition: nesting and gradients


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_nested_vmap_outer_product():
    a, b = _f32(3), _f32(4, seed=1)
    f = opforge.vmap(opforge.vmap(lambda x, y: x * y, in_axes=(0, None)), in_axes=(None, 0))
    out = f(Tensor(a), Tensor(b))
    np.testing.assert_allclose(out.asnumpy(), np.outer(b, a), rtol=1e-6)


def test_nested_vmap_matmul_rows():
    x, w = _f32(2, 3, 4), _f32(4, 5, seed=1)
    inner = opforge.vmap(lambda row, m: ops.MatMul()(ops.ExpandDims()(row, 0), m), in_axes=(0, None))
    out = opforge.vmap(inner, in_axes=(0, None))(Tensor(x), Tensor(w))
    np.testing.assert_allclose(out.asnumpy(), (x @ w)[:, :, None, :], rtol=1e-5, atol=1e-6)


def test_nested_vmap_fallback():
    x = _f32(2, 3, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VmapFallbackWarning)
        out = opforge.vmap(opforge.vmap(_gather_nd))(Tensor(x))
    np.testing.assert_array_equal(out.asnumpy(), x[..., _PICKS[:, 0]])


def _loss(w, x, y):
    pred = ops.Tanh()(ops.MatMul()(ops.ExpandDims()(x, 0), w))
    return ((pred - y) ** 2).mean()


def test_per_example_gradients():
    w, x, y = _f32(4, 2), _f32(5, 4, seed=1), _f32(5, 2, seed=2)
    grads = opforge.vmap(opforge.grad(_loss), in_axes=(None, 0, 0))(Tensor(w), Tensor(x), Tensor(y))
    assert grads.shape == (5, 4, 2)
    for i in range(5):
        one = opforge.grad(_loss)(Tensor(w), Tensor(x[i]), Tensor(y[i]))
        np.testing.assert_allclose(grads.asnumpy()[i], one.asnumpy(), rtol=1e-5, atol=1e-6)


def test_grad_of_vmap():
    w, x, y = _f32(4, 2), _f32(5, 4, seed=1), _f32(5, 2, seed=2)

    def total(w):
        return opforge.vmap(_loss, in_axes=(None, 0, 0))(w, Tensor(x), Tensor(y)).sum()

    g = opforge.grad(total)(Tensor(w))
    want = sum(opforge.grad(_loss)(Tensor(w), Tensor(x[i]), Tensor(y[i])).asnumpy() for i in range(5))
    np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_grad_inside_vmap_with_fallback_ops():
    x = _f32(3, 6)

    def f(v):
        return (_gather_nd(v) ** 2).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VmapFallbackWarning)
        g = opforge.vmap(opforge.grad(f))(Tensor(x))
    for i in range(3):
        np.testing.assert_allclose(g.asnumpy()[i], opforge.grad(f)(Tensor(x[i])).asnumpy())


# ---------------------------------------------------------------------------------------------
# in_axes / out_axes


def test_in_axes_negative_and_nested_tuples():
    xs, ys = _f32(3, 2), _f32(2, 3, seed=1)
    f = opforge.vmap(lambda pair, s: pair[0] + pair[1] * s, in_axes=((0, -1), None))
    out = f((Tensor(xs), Tensor(ys)), 2.0)  # element i: xs[i] + ys[:, i] * 2
    np.testing.assert_allclose(out.asnumpy(), xs + ys.T * 2, rtol=1e-6)
    with pytest.raises(ValueError, match="must match the structure"):
        f((Tensor(xs), Tensor(ys), Tensor(ys)), 2.0)


def test_out_axes_per_output_and_broadcast_of_unbatched():
    x = _f32(4, 3)
    const = Tensor(np.arange(3, dtype=np.float32))
    a, b, c = opforge.vmap(lambda v: (v * 2, v.sum(), const), out_axes=(1, 0, -1))(Tensor(x))
    np.testing.assert_allclose(a.asnumpy(), (x * 2).T)
    np.testing.assert_allclose(b.asnumpy(), x.sum(1), rtol=1e-6)
    np.testing.assert_allclose(c.asnumpy(), np.broadcast_to(np.arange(3, dtype=np.float32)[:, None], (3, 4)))
    d = opforge.vmap(lambda v: const, in_axes=0, out_axes=None)(Tensor(x))
    assert d is const


def test_python_scalars_pass_through_int_in_axes():
    x = _f32(4, 3)
    out = opforge.vmap(lambda v, s: v * s)(Tensor(x), 2.0)
    np.testing.assert_allclose(out.asnumpy(), x * 2)


def test_batched_tensor_looks_like_one_element():
    seen = {}

    def f(v):
        seen["shape"], seen["dtype"], seen["size"] = v.shape, v.dtype, v.size
        return v

    opforge.vmap(f, in_axes=1)(Tensor(_f32(2, 5, 3)))
    assert seen == {"shape": (2, 3), "dtype": opforge.float32, "size": 6}


# ---------------------------------------------------------------------------------------------
# Errors


def test_mismatched_sizes_name_the_arguments():
    with pytest.raises(ValueError, match=r"argument 0 \(axis 0\) has size 2, argument 1 \(axis 0\) has size 3"):
        opforge.vmap(lambda a, b: a + b)(Tensor(_f32(2, 3)), Tensor(_f32(3, 3)))


@pytest.mark.parametrize(
    "in_axes, exc, match",
    [
        (2, ValueError, r"'in_axes' of argument 0 must be in \[-2, 2\)"),
        (-3, ValueError, r"must be in \[-2, 2\)"),
        ((None,), RuntimeError, "at least one element of 'in_axes' must be an int"),
        ("0", RuntimeError, "must be None or int"),
        ((0, 0), ValueError, r"one entry per positional argument \(1\)"),
        (1.0, RuntimeError, "must be None or int"),
    ],
)
def test_bad_in_axes(in_axes, exc, match):
    with pytest.raises(exc, match=match):
        opforge.vmap(lambda a: a * 2, in_axes=in_axes)(Tensor(_f32(2, 3)))


def test_bad_out_axes():
    x = Tensor(_f32(2, 3))
    with pytest.raises(ValueError, match="'out_axes' entry must be an int, not None"):
        opforge.vmap(lambda a: a * 2, out_axes=None)(x)
    with pytest.raises(ValueError, match=r"'out_axes' of output must be in \[-2, 2\)"):
        opforge.vmap(lambda a: a * 2, out_axes=2)(x)
    with pytest.raises(ValueError, match="must match the structure"):
        opforge.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(x)


def test_non_tensor_mapped_and_reading_values():
    with pytest.raises(ValueError, match="is mapped over axis 0 but is a float"):
        opforge.vmap(lambda a, s: a * s, in_axes=(0, 0))(Tensor(_f32(2, 3)), 2.0)
    with pytest.raises(RuntimeError, match="has no single value"):
        opforge.vmap(lambda a: Tensor(a.asnumpy()))(Tensor(_f32(2, 3)))
    with pytest.raises(TypeError, match="'fn' must be callable"):
        opforge.vmap(3)


def test_rule_errors_name_the_operator():
    with pytest.raises(ValueError, match="ReduceSum"):
        opforge.vmap(lambda a: ops.ReduceSum()(a, 2))(Tensor(_f32(2, 3)))
    with pytest.raises(ValueError, match="MatMul"):
        opforge.vmap(lambda a: ops.MatMul()(a, a))(Tensor(_f32(2, 3)))


def test_in_place_operator_is_refused():
    p = Parameter(np.zeros(3, np.float32), name="p")
    with pytest.raises(NotImplementedError, match="Assign"):
        opforge.vmap(lambda v: ops.Assign()(p, v))(Tensor(_f32(2, 3)))
    np.testing.assert_array_equal(p.asnumpy(), 0)


def test_grad_of_vmap_of_grad():
    # Higher order through vmap: the gradient of a sum of squared per-example gradients.
    w_all, x = _f32(4, 3), _f32(4, 3, seed=1)

    def loss(w, v):
        return ops.Tanh()(v * w).sum()

    def batched(w_all):
        return (opforge.vmap(opforge.grad(loss))(w_all, Tensor(x)) ** 2).sum()

    def looped(w_all):
        total = None
        for i in range(4):
            term = (opforge.grad(loss)(w_all[i], Tensor(x[i])) ** 2).sum()
            total = term if total is None else total + term
        return total

    got = opforge.grad(batched)(Tensor(w_all))
    want = opforge.grad(looped)(Tensor(w_all))
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_vmap_of_a_cell():
    net = opforge.nn.Dense(4, 2)
    x = _f32(5, 3, 4)
    out = opforge.vmap(net)(Tensor(x))  # each element: a (3, 4) batch through the Dense layer
    want = np.stack([net(Tensor(x[i])).asnumpy() for i in range(5)])
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_profiler_inside_and_outside_vmap():
    x = Tensor(_f32(4, 3))
    with opforge.profiler.profile() as p:
        out = opforge.vmap(lambda v: ops.Exp()(v).sum())(x)
    np.testing.assert_allclose(out.asnumpy(), np.exp(x.asnumpy()).sum(1), rtol=1e-6)
    assert {s.op for s in p.stats()} >= {"Exp", "ReduceSum"}
