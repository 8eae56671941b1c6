"""Placeholders, unknown dims and the shape-only dry run (docs/dynamic_shape.md).

The sweep part is generated from the operator records (tests/op_db*.py): for every sample of every
record, each input dim in turn (and each input's rank) is made unknown, the call is evaluated
abstractly (``eval_shape``: inference only) and the result must agree with the concrete inference:
every known output dim equal to the concrete one, and equal to the concrete output of the same call
with that input dim changed (so a known dim never depends on the unknown one), and a dim left
unknown only where some other size of the input dim changes it. An operator that cannot take the
unknown dim must say so: a ValueError or TypeError naming it and the word "unknown".
"""

from __future__ import annotations

import numpy as np
import pytest
from op_db import OP_DB
from test_op_sweep import KERNELS, _samples

import opforge
from opforge import Parameter, PlaceholderError, Tensor, eval_shape, nn, ops
from opforge import dtype as mstype
from opforge.device import get_device
from opforge.dispatch.abstract import AbstractInterpreter
from opforge.tensor import is_placeholder
from opforge.tools import demo

CPU = get_device("CPU")

# ---------------------------------------------------------------------------------------------
# The generated sweep


def _slots(sample, params) -> list:
    """The replaceable tensor inputs: (position, None) for an array, (position, k) for the k-th
    array of a tuple; Parameters (written in place) stay concrete."""
    out = []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray) and i not in params:
            out.append((i, None))
        elif isinstance(a, (tuple, list)) and a and all(isinstance(e, np.ndarray) for e in a):
            out.extend((i, k) for k in range(len(a)))
    return out


def _placeholder(a: np.ndarray, shape) -> Tensor:
    return Tensor._placeholder(mstype.nptype_to_dtype(a.dtype), tuple(shape), CPU)


def _args(sample, params, shapes: dict) -> tuple:
    out = []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray):
            out.append(Parameter(Tensor(a), name=f"p{i}") if i in params else _placeholder(a, shapes[(i, None)]))
        elif isinstance(a, (tuple, list)) and a and all(isinstance(e, np.ndarray) for e in a):
            out.append(type(a)(_placeholder(e, shapes[(i, k)]) for k, e in enumerate(a)))
        else:
            out.append(a)
    return tuple(out)


def _infer(prim, sample, params, shapes: dict) -> tuple:
    out = eval_shape(prim, *_args(sample, params, shapes), **sample.kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    assert all(is_placeholder(o) for o in outs)
    return tuple((o.dtype, tuple(o.shape)) for o in outs)


def _with_dim(shape: tuple, k: int, value: int) -> tuple:
    return shape[:k] + (value,) + shape[k + 1 :]


def _check_refusal(exc: Exception, where: str) -> None:
    msg = str(exc)
    assert isinstance(exc, (ValueError, TypeError)) and msg.startswith("For '") and "unknown" in msg, (
        f"{where}: an unknown dim must propagate or be refused with a clear error naming the operator and "
        f"'unknown', but got {type(exc).__name__}: {msg}"
    )


def _check_unknown_dim(prim, sample, params, base: dict, concrete: tuple, slot, k: int, where: str) -> str:
    shape = base[slot]
    dyn = dict(base)
    dyn[slot] = _with_dim(shape, k, -1)
    try:
        got = _infer(prim, sample, params, dyn)
    except (ValueError, TypeError) as exc:
        _check_refusal(exc, where)
        return "refused"
    assert len(got) == len(concrete), where
    for o, ((gd, gs), (cd, cs)) in enumerate(zip(got, concrete)):
        assert gd == cd, f"{where}: output {o} dtype {gd} != {cd}"
        assert gs == (-2,) or (len(gs) == len(cs) and all(g in (c, -1) for g, c in zip(gs, cs))), (
            f"{where}: output {o} shape {list(gs)} disagrees with the concrete {list(cs)}"
        )  # (-2,): the rank depends on the dim (Squeeze of a dim that may be 1)
    # Other sizes of the same dim: a known output dim must not change; an unknown one must, for some.
    varies = [set() for _ in got]
    tried = 0
    v = shape[k]
    for alt in sorted({0, 1, max(v - 1, 0), v + 1, v + 2, v + 3, 2 * v + 1} - {v}):
        other = dict(base)
        other[slot] = _with_dim(shape, k, alt)
        try:
            res = _infer(prim, sample, params, other)
        except (ValueError, TypeError, IndexError):  # a size the operator refuses
            continue
        tried += 1
        for o, ((_, gs), (_, cs), (_, rs)) in enumerate(zip(got, concrete, res)):
            if gs == (-2,):
                continue
            assert len(rs) == len(gs), where
            for d, (g, r) in enumerate(zip(gs, rs)):
                assert g < 0 or g == r, (
                    f"{where}: output {o} dim {d} was inferred as {g}, but with the input dim {alt} it is {r}"
                )
                if r != cs[d]:
                    varies[o].add(d)
    if tried:
        for o, (_, gs) in enumerate(got):
            fixed = [d for d, g in enumerate(gs) if g < 0 and d not in varies[o] and gs != (-2,)]
            assert not fixed, (
                f"{where}: output {o} {list(gs)} leaves dims {fixed} unknown, but they do not depend on the input dim"
            )
    return "propagated"


def _check_unknown_rank(prim, sample, params, base: dict, concrete: tuple, slot, where: str) -> str:
    dyn = dict(base)
    dyn[slot] = (-2,)
    try:
        got = _infer(prim, sample, params, dyn)
    except (ValueError, TypeError) as exc:
        _check_refusal(exc, where)
        return "refused"
    for o, ((gd, gs), (cd, cs)) in enumerate(zip(got, concrete)):
        assert gd == cd, f"{where}: output {o} dtype {gd} != {cd}"
        assert gs == (-2,) or (len(gs) == len(cs) and all(g in (c, -1) for g, c in zip(gs, cs))), (
            f"{where}: output {o} shape {list(gs)} disagrees with the concrete {list(cs)}"
        )
    return "propagated"


def _cpu_kernel(name):
    return next((e for e in KERNELS if e.op_name == name and e.backend == "CPU"), None)


@pytest.mark.parametrize("name", sorted(OP_DB))
def test_unknown_dims_propagate_or_are_refused(name, rng):
    record = OP_DB[name]
    entry = _cpu_kernel(name)
    if entry is None:
        pytest.skip(f"{name} has no CPU kernel")
    outcomes = {"propagated": 0, "refused": 0}
    for variant, factory in record.variants.items():
        prim = factory()
        # Inputs written in place stay concrete: op_db_nn's _InPlace wrapper and op_db_norm's _Training
        # (BatchNorm's moving statistics) make Parameters of them.
        writes = vars(prim).get("writes") or ((3, 4) if "_prim" in vars(prim) else ())
        params = tuple(record.params) + tuple(writes)
        for sample in _samples(record, entry, prim, rng):
            slots = _slots(sample, params)
            base = {}
            for i, k in slots:
                a = sample.args[i] if k is None else sample.args[i][k]
                base[(i, k)] = tuple(a.shape)
            where0 = f"{name} [{variant}] {sample.desc or base}"
            concrete = _infer(prim, sample, params, base)
            for slot in slots:
                for k in range(len(base[slot])):
                    where = f"{where0}: input {slot} dim {k} unknown"
                    outcomes[_check_unknown_dim(prim, sample, params, base, concrete, slot, k, where)] += 1
                where = f"{where0}: input {slot} of unknown rank"
                outcomes[_check_unknown_rank(prim, sample, params, base, concrete, slot, where)] += 1
    assert sum(outcomes.values()) > 0 or not record.nin, f"{name}: no input dim was tried"


# ---------------------------------------------------------------------------------------------
# Placeholders


def test_placeholder_shapes_follow_mindspore():
    x = Tensor(shape=[None, 3], dtype=mstype.float32)
    assert x.shape == (-1, 3) and x.dtype == mstype.float32 and x.ndim == 2 and is_placeholder(x)
    assert Tensor(shape=(-1, 3), dtype=mstype.int32).shape == (-1, 3)
    assert Tensor(shape=None, dtype=mstype.float16).shape == (-2,)
    assert Tensor(shape=[-2], dtype=mstype.float16).shape == (-2,)
    assert x.size == -1 and x.nbytes == -1
    assert "placeholder" in repr(x) and "[-1, 3]" in repr(x) and "placeholder" in str(x)
    concrete = Tensor(shape=(2, 3), dtype=mstype.float32)  # every dim known: an ordinary Tensor
    assert not is_placeholder(concrete) and concrete.asnumpy().sum() == 0
    filled = Tensor(shape=(2, 3), dtype=mstype.float32, init=nn.init.One())
    assert filled.asnumpy().tolist() == [[1.0] * 3] * 2 and filled.init_data() is filled


def test_placeholder_bad_shapes():
    with pytest.raises(ValueError, match="For 'Tensor', the dims of the 'shape' must be non-negative"):
        Tensor(shape=[-3, 2], dtype=mstype.float32)
    with pytest.raises(TypeError, match="For 'Tensor', each dim of the 'shape' must be int, None or a Symbol"):
        Tensor(shape=[1.5, 2], dtype=mstype.float32)
    with pytest.raises(ValueError, match="the 'init' must be None when the shape is dynamic"):
        Tensor(shape=[None, 2], dtype=mstype.float32, init=nn.init.One())
    with pytest.raises(ValueError, match="give 'input_data', or 'shape' and 'dtype'"):
        Tensor()


@pytest.mark.parametrize(
    "read",
    [
        lambda t: t.asnumpy(),
        lambda t: np.asarray(t),
        lambda t: t.item(),
        lambda t: t.tolist(),
        lambda t: float(t),
        lambda t: bool(t),
        lambda t: t.to("CPU") if False else Tensor(t),
        lambda t: Parameter(t),
        lambda t: t.init_data(),
    ],
)
def test_reading_a_placeholder_raises(read):
    with pytest.raises(PlaceholderError, match=r"is a placeholder \(shape \[-1, 3\], dtype Float32\): it has no data"):
        read(Tensor(shape=[None, 3], dtype=mstype.float32))


def test_len_of_an_unknown_dim():
    with pytest.raises(TypeError, match="unknown"):
        len(Tensor(shape=[None, 3], dtype=mstype.float32))
    assert len(Tensor(shape=[4, None], dtype=mstype.float32)) == 4


def test_a_kernel_never_runs_on_a_placeholder():
    x = Tensor(shape=[None, 3], dtype=mstype.float32)
    with pytest.raises(PlaceholderError, match="For 'ReLU', the input 'input_x' is a placeholder"):
        ops.ReLU()(x)
    with pytest.raises(PlaceholderError, match=r"For 'Concat', the input 'x\[1\]' is a placeholder"):
        ops.Concat(0)((Tensor(np.ones((2, 3), np.float32)), x))
    # A placeholder of concrete shape (an output of eval_shape) has a cached plan's meta: still refused.
    relu, real = ops.ReLU(), Tensor(np.ones((2, 3), np.float32))
    relu(real)
    ghost = eval_shape(relu, real)
    assert ghost.shape == (2, 3) and is_placeholder(ghost)
    with pytest.raises(PlaceholderError, match="placeholder"):
        relu(ghost)  # the C fast path
    with pytest.raises(PlaceholderError, match="placeholder"):
        ops.Add()(ghost, 1.0)  # the Python path
    with pytest.raises(PlaceholderError, match="placeholder"):
        opforge.grad(lambda t: relu(t).sum())(ghost)  # under an interpreter


# ---------------------------------------------------------------------------------------------
# Abstract evaluation


def _no_kernels(monkeypatch):
    """Fail on any plan being built or run: abstract evaluation must not reach the eager path."""
    from opforge.dispatch import interpreter, plan

    def refuse(*args):
        raise AssertionError("a kernel plan was built or run during abstract evaluation")

    monkeypatch.setattr(plan, "_kernel_plan", refuse)
    monkeypatch.setattr(interpreter.EvalInterpreter, "process_primitive", lambda self, prim, args: refuse())


def test_eval_shape_runs_no_kernel(monkeypatch):
    net = demo.LeNet5()
    _no_kernels(monkeypatch)
    from opforge.tools.profiler import Profile

    with Profile() as prof:
        out = eval_shape(net, Tensor(shape=[None, 64], dtype=mstype.float32))
    assert out.shape == (-1, 10) and out.dtype == mstype.float32 and is_placeholder(out)
    assert prof.stats() == []


def test_eval_shape_of_functions_mixes_concrete_and_placeholders():
    w = Tensor(np.ones((3, 4), np.float32))

    def f(x, w, scale=2.0):
        y = ops.MatMul()(x, w) * scale
        return {"sum": ops.ReduceSum(keep_dims=True)(y, 1), "pair": (y, ops.Cast()(y, mstype.float16))}

    out = eval_shape(f, Tensor(shape=[None, 3], dtype=mstype.float32), w, scale=3.0)
    assert out["sum"].shape == (-1, 1)
    assert out["pair"][0].shape == (-1, 4) and out["pair"][1].dtype == mstype.float16
    concrete = eval_shape(f, Tensor(np.ones((5, 3), np.float32)), w)  # concrete inputs: concrete shapes, no data
    assert concrete["sum"].shape == (5, 1) and is_placeholder(concrete["sum"])
    assert eval_shape(lambda x: x, w).shape == (3, 4) and is_placeholder(eval_shape(lambda x: x, w))


def test_eval_shape_broadcasting_and_rank():
    f32 = mstype.float32
    add = ops.Add()
    assert eval_shape(add, Tensor(shape=[None, 1], dtype=f32), Tensor(shape=[1, 5], dtype=f32)).shape == (-1, 5)
    assert eval_shape(add, Tensor(shape=[None, 3], dtype=f32), Tensor(shape=[1], dtype=f32)).shape == (-1, 3)
    assert eval_shape(add, Tensor(shape=[None], dtype=f32), Tensor(shape=[1], dtype=f32)).shape == (-1,)
    assert eval_shape(add, Tensor(shape=[None], dtype=f32), Tensor(shape=[4], dtype=f32)).shape == (4,)
    assert eval_shape(add, Tensor(shape=None, dtype=f32), Tensor(shape=[4], dtype=f32)).shape == (-2,)
    assert eval_shape(ops.ReLU(), Tensor(shape=None, dtype=f32)).shape == (-2,)
    with pytest.raises(ValueError, match="For 'MatMul', the 'x1' has an unknown rank"):
        eval_shape(ops.MatMul(), Tensor(shape=None, dtype=f32), Tensor(shape=[3, 4], dtype=f32))
    with pytest.raises(ValueError, match="For 'MatMul', the inner dimensions must match"):
        eval_shape(ops.MatMul(), Tensor(shape=[None, 3], dtype=f32), Tensor(shape=[4, 4], dtype=f32))
    with pytest.raises(ValueError, match="For 'Unstack', the 'x' must have known dims at axes \\[0\\]"):
        eval_shape(ops.Unstack(0), Tensor(shape=[None, 3], dtype=f32))
    assert len(eval_shape(ops.Unstack(0, num=2), Tensor(shape=[None, 3], dtype=f32))) == 2


def test_abstract_interpreter_records_the_calls():
    net = demo.MLP(num_features=8, hidden=4, num_classes=3)
    with AbstractInterpreter() as interp:
        out = net(Tensor(shape=[None, 8], dtype=mstype.float32))
    assert out.shape == (-1, 3)
    assert [c.prim.name for c in interp.calls] == ["MatMul", "BiasAdd", "ReLU", "MatMul", "BiasAdd"]
    assert interp.calls[0].out_metas[0][1] == (-1, 4)
    assert "MatMul(Float32[-1, 8], Float32[4, 8]) -> Float32[-1, 4]" == repr(interp.calls[0])


def test_abstract_interpreter_can_select_kernels(monkeypatch):
    from opforge.dispatch import abstract

    seen = []
    monkeypatch.setattr(abstract, "select_kernel", lambda op, backend, ins, outs: seen.append((op, backend, ins)))
    x = Tensor(shape=[None], dtype=mstype.float32)
    eval_shape(ops.ReLU(), x)
    assert seen == []  # by default: inference only
    with AbstractInterpreter(select_kernels=True):
        ops.ReLU()(x)
    assert seen == [("ReLU", "CPU", (mstype.float32,))]


CELLS = {
    "Dense": (lambda: nn.Dense(6, 4), [None, 6], (-1, 4)),
    "Dense-3d": (lambda: nn.Dense(6, 4), [2, None, 6], None),
    "Conv2d": (lambda: nn.Conv2d(3, 8, 3, pad_mode="same"), [None, 3, 10, 12], (-1, 8, 10, 12)),
    "Conv2d-hw": (lambda: nn.Conv2d(3, 8, 3, stride=2, pad_mode="valid"), [2, 3, None, 9], (2, 8, -1, 4)),
    "MaxPool2d": (lambda: nn.MaxPool2d(2, 2), [None, 3, 8, None], (-1, 3, 4, -1)),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(3), [None, 3, 5, 5], (-1, 3, 5, 5)),
    "BatchNorm1d-train": (lambda: nn.BatchNorm1d(3).set_train(), [None, 3], (-1, 3)),
    "LayerNorm": (lambda: nn.LayerNorm((5,)), [None, 5], (-1, 5)),
    "Flatten": (lambda: nn.Flatten(), [None, 3, 4], (-1, 12)),
    "MLP": (lambda: demo.MLP(), [None, 64], (-1, 10)),
    "LeNet5": (lambda: demo.LeNet5(), [None, 64], (-1, 10)),
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_eval_shape_through_cells(name):
    make, shape, want = CELLS[name]
    net = make()
    x = Tensor(shape=shape, dtype=mstype.float32)
    out = eval_shape(net, x)
    if want is None:  # Dense on a 3-D input with an unknown dim reshapes twice: refused, clearly
        return
    assert out.shape == want and out.dtype == mstype.float32
    known = tuple(4 if d is None else d for d in shape)  # the same Cell on data agrees
    real = net(Tensor(np.random.default_rng(0).standard_normal(known).astype(np.float32)))
    assert all(w in (-1, r) for w, r in zip(want, real.shape))


LOSSES = {
    "MSELoss": (lambda: nn.MSELoss(), mstype.float32, ()),
    "L1Loss-none": (lambda: nn.L1Loss(reduction="none"), mstype.float32, (-1, 5)),
    "SmoothL1Loss": (lambda: nn.SmoothL1Loss(reduction="mean"), mstype.float32, ()),
    "BCEWithLogitsLoss": (lambda: nn.BCEWithLogitsLoss(), mstype.float32, ()),
    "SoftmaxCE-sparse": (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), mstype.int32, ()),
    "SoftmaxCE-dense": (lambda: nn.SoftmaxCrossEntropyWithLogits(reduction="none"), mstype.float32, (-1,)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_eval_shape_through_losses(name):
    make, label_dtype, want = LOSSES[name]
    logits = Tensor(shape=[None, 5], dtype=mstype.float32)
    labels = Tensor(shape=[None] if label_dtype is mstype.int32 else [None, 5], dtype=label_dtype)
    out = eval_shape(make(), logits, labels)
    assert out.shape == want and out.dtype == mstype.float32


def test_eval_shape_through_gradients(monkeypatch):
    net = demo.LeNet5()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    params = net.trainable_params()
    grad_fn = opforge.GradOperation(get_all=True, get_by_list=True)(loss, params)
    _no_kernels(monkeypatch)
    x, y = Tensor(shape=[None, 64], dtype=mstype.float32), Tensor(shape=[None], dtype=mstype.int32)
    (dx, dy), dparams = eval_shape(grad_fn, x, y)
    assert dx.shape == (-1, 64) and dx.dtype == mstype.float32
    assert [g.shape for g in dparams] == [p.shape for p in params]
    assert all(g.dtype == p.dtype for g, p in zip(dparams, params))
    assert eval_shape(opforge.grad(lambda t: (ops.Tanh()(t) * 2.0).sum()), x).shape == (-1, 64)


def test_eval_shape_leaves_parameters_alone():
    p = Parameter(np.ones(3, np.float32), name="p")
    out = eval_shape(lambda v: ops.AssignSub()(p, v), Tensor(shape=[3], dtype=mstype.float32))
    assert out.shape == (3,) and p.asnumpy().tolist() == [1.0, 1.0, 1.0] and p._version == 0


# ---------------------------------------------------------------------------------------------
# Cell.set_inputs


def test_set_inputs_and_get_inputs():
    net = demo.MLP(num_features=8, hidden=4, num_classes=3)
    assert net.get_inputs() is None
    spec = Tensor(shape=[None, 8], dtype=mstype.float32)
    net.set_inputs(spec)
    assert net.get_inputs() == (spec,) and net._dynamic_shape_inputs == (spec,)
    assert eval_shape(net).shape == (-1, 3)
    for n in (1, 5):
        assert net(Tensor(np.zeros((n, 8), np.float32))).shape == (n, 3)
    assert eval_shape(net, Tensor(shape=[None, None], dtype=mstype.float32)).shape == (-1, 3)


@pytest.mark.parametrize(
    "args,exc,match",
    [
        (
            (np.zeros((2, 7), np.float32),),
            ValueError,
            r"input 0 must have shape \[-1, 8\] \(-1: any size\), but got \[2, 7\]",
        ),
        ((np.zeros((2, 8, 1), np.float32),), ValueError, r"input 0 must have shape \[-1, 8\]"),
        ((np.zeros((2, 8), np.float64),), TypeError, "input 0 must have dtype Float32, but got Float64"),
        ((np.zeros((2, 8), np.float32), np.zeros(2, np.float32)), TypeError, "to 1 inputs, but the call got 2"),
        ((3.0,), TypeError, "input 0 must be a Tensor, but got float"),
    ],
)
def test_set_inputs_checks_calls(args, exc, match):
    net = demo.MLP(num_features=8, hidden=4, num_classes=3)
    net.set_inputs(Tensor(shape=[None, 8], dtype=mstype.float32))
    call = tuple(Tensor(a) if isinstance(a, np.ndarray) else a for a in args)
    with pytest.raises(exc, match=f"For 'MLP', the inputs were set by set_inputs.*{match}"):
        net(*call)


def test_set_inputs_unknown_rank_accepts_any_rank():
    net = nn.ReLU()
    net.set_inputs(Tensor(shape=None, dtype=mstype.float32))
    assert net(Tensor(np.ones((2, 3, 4), np.float32))).shape == (2, 3, 4)
    assert eval_shape(net).shape == (-2,)


@pytest.mark.parametrize("optimizer", ["SGD", "Momentum", "Adam"])
def test_eval_shape_of_a_training_step_writes_nothing(optimizer, monkeypatch):
    net = demo.MLP(num_features=8, hidden=4, num_classes=3)
    params = net.trainable_params()
    opt = {"SGD": lambda: nn.SGD(params, 0.1), "Momentum": lambda: nn.Momentum(params, 0.1, 0.9)}.get(
        optimizer, lambda: nn.Adam(params)
    )()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = nn.TrainOneStepCell(loss, opt)
    before = [(p.asnumpy().copy(), p._version) for p in opt.parameters]
    _no_kernels(monkeypatch)
    out = eval_shape(step, Tensor(shape=[None, 8], dtype=mstype.float32), Tensor(shape=[None], dtype=mstype.int32))
    assert out.shape == () and out.dtype == mstype.float32
    for p, (value, version) in zip(opt.parameters, before):
        assert np.array_equal(p.asnumpy(), value) and p._version == version


def test_set_inputs_binds_the_cells_own_call_not_its_calls_inside_another():
    """MindSpore's dynamic-shape parallel sample sets a loss cell's inputs to the image specs and calls it inside a
    gradient: MindSpore compiles only the outermost graph with set_inputs, so the inner call is not checked."""
    loss_fn = opforge.nn.MSELoss()
    loss_fn.set_inputs(
        Tensor(shape=[None, 1, 28, 28], dtype=mstype.float32), Tensor(shape=[None, 10], dtype=mstype.float32)
    )
    x, y = Tensor(np.ones((4, 10), np.float32)), Tensor(np.zeros((4, 10), np.float32))
    with pytest.raises(ValueError, match="'MSELoss', the inputs were set by set_inputs: input 0"):
        loss_fn(x, y)  # its own call: checked
    value, grad = opforge.value_and_grad(lambda a, b: loss_fn(a, b))(x, y)  # inside a gradient: not checked
    assert float(value.asnumpy()) == 1.0 and grad.shape == (4, 10)


def test_a_symbol_is_an_unknown_dim_of_an_input_spec():
    """MindSpore's Symbol in Tensor(shape=...): opforge reads it as -1; its values are checked."""
    spec = Tensor(shape=[opforge.Symbol(divisor=8, max=64), 3], dtype=mstype.float32)
    assert spec.shape == (-1, 3)
    net = nn.Dense(3, 2)
    net.set_inputs(spec)
    assert net(Tensor(np.ones((5, 3), np.float32))).shape == (5, 2)
    with pytest.raises(ValueError, match="'Symbol', the 'remainder' \\(8\\) must be < the 'divisor' \\(8\\)"):
        opforge.Symbol(divisor=8, remainder=8)
    with pytest.raises(TypeError, match="'Symbol', the 'divisor' must be an int"):
        opforge.Symbol(divisor=2.0)
