"""Forward-mode autodiff (``opforge.jvp``, ``jacfwd``, ``linearize``, ``hvp``) and the functional
reverse forms (``vjp``, ``jacrev``), generated from the bprop registry like tests/test_grad_sweep.py.

Forward mode has no rules of its own: it transposes the registered bprops (opforge/bprop/forward.py).
For every gradient record in tests/grad_db.py the jvp along a random tangent is compared with central
finite differences of the operator, and the vjp with the existing GradOperation; records whose bprop
is itself not differentiable with respect to dout are listed in ``NO_FORWARD_MODE`` with the reason,
and must raise the TypeError naming the operator. ``second_order`` records also check the
Hessian-vector product against finite differences of the gradient, and every record checks
``jacfwd == jacrev`` on its first sample.
"""

from __future__ import annotations

import numpy as np
import pytest
from grad_db import GRAD_DB

import opforge
from opforge import GradOperation, Tensor, nn, ops
from opforge.bprop import bprop_getters
from opforge.bprop.registry import get_bprop
from opforge.testing import _tensors, diff_positions

# Operators whose bprop applies to dout a grad primitive that has no bprop: their forward mode is not
# available (the jvp raises a TypeError naming the operator and the grad primitive).
NO_FORWARD_MODE = {  # operator -> the grad primitive its bprop applies to dout, which has no bprop
    "BatchNorm": "BatchNormGrad",
    "LayerNorm": "LayerNormGrad",
    "SmoothL1Loss": "SmoothL1LossGrad",
    "NLLLoss": "NLLLossGrad",
    "LSTMLayer": "LSTMLayerGrad",
    "GRULayer": "GRULayerGrad",
    "RNNLayer": "RNNLayerGrad",
}


def _is_library_bprop(name: str) -> bool:
    return getattr(bprop_getters.get(name), "__module__", "").startswith("opforge.")


RECORDED = [n for n in bprop_getters.names() if _is_library_bprop(n) and n in GRAD_DB]


def _params(select=lambda record: True, forward: bool = True) -> list:
    """(name, variant) of every selected record; with ``forward``, those in NO_FORWARD_MODE are skipped."""
    out = []
    for name in RECORDED:
        record = GRAD_DB[name]
        if not select(record):
            continue
        for variant in record.variants:
            marks = ()
            if forward and name in NO_FORWARD_MODE:
                reason = f"no forward mode: its bprop applies {NO_FORWARD_MODE[name]} to dout, which has no bprop"
                marks = pytest.mark.skip(reason=reason)
            out.append(pytest.param(name, variant, id=f"{name}-{variant}" if variant else name, marks=marks))
    return out


def _outputs(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _where(name, variant, sample) -> str:
    return f"{name}[{variant}] {sample.desc}" if variant else f"{name} {sample.desc}"


def _partial(prim, args: tuple, positions: tuple):
    """``fn(*tensors)``: ``prim`` with the tensors at ``positions`` and the other arguments fixed."""
    fixed = _tensors(args)

    def fn(*xs):
        call = list(fixed)
        for p, x in zip(positions, xs):
            call[p] = x
        return prim(*call)

    return fn


def _numpy_outputs(prim, args) -> list:
    return [o.asnumpy().astype(np.float64) if o.dtype.kind == "f" else None for o in _outputs(prim(*_tensors(args)))]


def _directional_fd(prim, args, positions, tangents, eps) -> list:
    """Central differences of every float output along ``tangents`` (arrays, one per position)."""
    plus, minus = list(args), list(args)
    for p, v in zip(positions, tangents):
        plus[p] = np.asarray(args[p] + eps * v)
        minus[p] = np.asarray(args[p] - eps * v)
    hi, lo = _numpy_outputs(prim, tuple(plus)), _numpy_outputs(prim, tuple(minus))
    return [None if h is None else (h - low) / (2 * eps) for h, low in zip(hi, lo)]


# ---------------------------------------------------------------------------------------------
# jvp and vjp over the registry


def test_the_no_forward_mode_list_names_recorded_operators():
    assert set(NO_FORWARD_MODE) <= set(RECORDED)


@pytest.mark.parametrize("name,variant", _params(lambda r: not r.zero))
def test_jvp_matches_finite_differences(name, variant, rng):
    record = GRAD_DB[name]
    prim = record.variants[variant]()
    for sample in record.sample_list(prim, rng):
        where = _where(name, variant, sample)
        positions = diff_positions(sample.args, sample.diff)
        if not positions:
            continue
        rtol, atol = sample.tols or (record.rtol, record.atol)
        tangents = [rng.standard_normal(sample.args[p].shape).astype(sample.args[p].dtype) for p in positions]
        fn = _partial(prim, sample.args, positions)
        xs = tuple(Tensor(sample.args[p]) for p in positions)
        vs = tuple(Tensor(v) for v in tangents)
        out, tangent_out = opforge.jvp(fn, xs, vs)
        expected = _directional_fd(prim, sample.args, positions, tangents, sample.eps)
        outs, jvps = _outputs(out), _outputs(tangent_out)
        assert len(jvps) == len(outs), f"{where}: one tangent per output"
        for i, (o, t, e) in enumerate(zip(outs, jvps, expected)):
            assert t.shape == o.shape and t.dtype is o.dtype, f"{where}: tangent {i} is {t.dtype}{t.shape}"
            if e is None:  # an integer output: a zero tangent
                assert not np.any(t.asnumpy()), f"{where}: integer output {i} got a nonzero tangent"
                continue
            np.testing.assert_allclose(
                t.asnumpy(), e, rtol=rtol, atol=atol * 10, err_msg=f"{where}: jvp of output {i} differs from FD"
            )


@pytest.mark.parametrize("name,variant", _params(lambda r: r.zero))
def test_jvp_of_zero_gradient_operators_is_zero(name, variant, rng):
    record = GRAD_DB[name]
    prim = record.variants[variant]()
    for sample in record.sample_list(prim, rng):
        positions = tuple(i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray))
        if not positions:
            continue
        xs = tuple(Tensor(sample.args[p]) for p in positions)
        vs = tuple(Tensor(np.ones(x.shape, x.dtype.np_dtype)) for x in xs)
        out, tangent_out = opforge.jvp(_partial(prim, sample.args, positions), xs, vs)
        for o, t in zip(_outputs(out), _outputs(tangent_out)):
            assert t.shape == o.shape and t.dtype is o.dtype and not np.any(t.asnumpy()), _where(name, variant, sample)


@pytest.mark.parametrize("name,variant", _params(lambda r: not r.zero, forward=False))
def test_vjp_matches_grad_operation(name, variant, rng):
    record = GRAD_DB[name]
    prim = record.variants[variant]()
    for sample in record.sample_list(prim, rng):
        where = _where(name, variant, sample)
        positions = diff_positions(sample.args, sample.diff)
        if not positions:
            continue
        fn = _partial(prim, sample.args, positions)
        xs = tuple(Tensor(sample.args[p]) for p in positions)
        out, vjp_fn = opforge.vjp(fn, *xs)
        senses = tuple(Tensor(rng.standard_normal(o.shape).astype(o.dtype.np_dtype)) for o in _outputs(out))
        senses = tuple(
            s if o.dtype.kind == "f" else Tensor(np.zeros(o.shape, o.dtype.np_dtype))
            for s, o in zip(senses, _outputs(out))
        )
        got = vjp_fn(*senses)
        sens = senses[0] if len(senses) == 1 else senses
        expected = GradOperation(get_all=True, sens_param=True)(fn)(*xs, sens)
        assert len(got) == len(xs), where
        for i, (g, e) in enumerate(zip(got, expected)):
            np.testing.assert_allclose(g.asnumpy(), e.asnumpy(), rtol=1e-12, atol=1e-12, err_msg=f"{where}: vjp {i}")
        again = vjp_fn(*senses)  # the tape is kept: vjp_fn may be called again
        np.testing.assert_array_equal(again[0].asnumpy(), got[0].asnumpy())


@pytest.mark.parametrize("name", sorted(NO_FORWARD_MODE))
def test_operators_without_forward_mode_raise_naming_them(name, rng):
    record = GRAD_DB[name]
    variant = next(iter(record.variants))
    prim = record.variants[variant]()
    sample = record.sample_list(prim, rng)[0]
    positions = diff_positions(sample.args, sample.diff)
    xs = tuple(Tensor(sample.args[p]) for p in positions)
    vs = tuple(Tensor(rng.standard_normal(x.shape)) for x in xs)
    grad_name = NO_FORWARD_MODE[name]
    assert grad_name not in bprop_getters
    message = rf"For 'jvp', forward-mode differentiation of '{name}' is not available: its bprop applies '{grad_name}'"
    with pytest.raises(TypeError, match=message):
        opforge.jvp(_partial(prim, sample.args, positions), xs, vs)


# ---------------------------------------------------------------------------------------------
# Hessian-vector products over the registry (second-order records)


def _projected_loss(prim, args, positions, senses):
    fn = _partial(prim, args, positions)

    def loss(*xs):
        total = None
        for o, r in zip(_outputs(fn(*xs)), senses):
            if o.dtype.kind != "f":
                continue
            term = ops.ReduceSum()(ops.Mul()(o, r))
            total = term if total is None else ops.Add()(total, term)
        return total

    return loss


@pytest.mark.parametrize("name,variant", _params(lambda r: r.second_order and not r.zero))
def test_hvp_matches_finite_differences_of_the_gradient(name, variant, rng):
    record = GRAD_DB[name]
    prim = record.variants[variant]()
    for sample in record.sample_list(prim, rng):
        where = _where(name, variant, sample) + " (hvp)"
        positions = diff_positions(sample.args, sample.diff)
        if not positions:
            continue
        rtol, atol = sample.tols or (record.rtol, record.atol)
        outs = _outputs(prim(*_tensors(sample.args)))
        if not any(o.dtype.kind == "f" for o in outs):
            continue  # an integer output (Cast to int32): no loss to take the Hessian of
        senses = tuple(Tensor(rng.standard_normal(o.shape).astype(o.dtype.np_dtype)) for o in outs)
        loss = _projected_loss(prim, sample.args, positions, senses)
        tangents = [rng.standard_normal(sample.args[p].shape).astype(sample.args[p].dtype) for p in positions]
        xs = tuple(Tensor(sample.args[p]) for p in positions)
        _, hv = opforge.hvp(loss, xs, tuple(Tensor(v) for v in tangents))
        grad_fn = opforge.grad(loss, tuple(range(len(positions))))
        hi, lo = (
            [
                g.asnumpy()
                for g in grad_fn(*(Tensor(sample.args[p] + sign * sample.eps * v) for p, v in zip(positions, tangents)))
            ]
            for sign in (1.0, -1.0)
        )
        for i, h in enumerate(hv):
            np.testing.assert_allclose(
                h.asnumpy(),
                (hi[i] - lo[i]) / (2 * sample.eps),
                rtol=rtol,
                atol=atol * 10,
                err_msg=f"{where}: input {i}",
            )


# ---------------------------------------------------------------------------------------------
# jacfwd == jacrev over the registry (first sample of each record)


def _flat(value) -> list:
    if isinstance(value, tuple):
        return [t for v in value for t in _flat(v)]
    return [value]


@pytest.mark.parametrize("name,variant", _params(lambda r: not r.zero))
def test_jacfwd_equals_jacrev(name, variant, rng):
    record = GRAD_DB[name]
    prim = record.variants[variant]()
    sample = record.sample_list(prim, rng)[0]
    positions = diff_positions(sample.args, sample.diff)
    if not positions:
        pytest.skip("no float input")
    fn = _partial(prim, sample.args, positions)
    xs = tuple(Tensor(sample.args[p]) for p in positions)
    grad_position = tuple(range(len(xs)))
    fwd = _flat(opforge.jacfwd(fn, grad_position)(*xs))
    rev = _flat(opforge.jacrev(fn, grad_position)(*xs))
    outs = _outputs(fn(*xs))
    assert len(fwd) == len(rev) == len(outs) * len(xs)
    for k, (a, b) in enumerate(zip(fwd, rev)):
        o, x = outs[k // len(xs)], xs[k % len(xs)]
        assert a.shape == b.shape == o.shape + x.shape, f"{name}: jacobian {k} is {a.shape}, {b.shape}"
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-10, atol=1e-12, err_msg=f"{name}: jacobian {k}")


# ---------------------------------------------------------------------------------------------
# MindSpore's documented examples


class _Cube(nn.Cell):
    def construct(self, x, y):
        return x**3 + y


_X = np.array([[1, 2], [3, 4]], np.float32)
_ONES = np.ones((2, 2), np.float32)


def test_mindspore_jvp_example():
    x, y, v = Tensor(_X), Tensor(_X), Tensor(_ONES)
    out, jv = ops.jvp(_Cube(), (x, y), (v, v))
    np.testing.assert_array_equal(out.asnumpy(), [[2, 10], [30, 68]])
    np.testing.assert_array_equal(jv.asnumpy(), [[4, 13], [28, 49]])
    out, jv, aux = opforge.jvp(lambda a, b: (a**3 + b, b), (x, y), [v, v], has_aux=True)
    np.testing.assert_array_equal(jv.asnumpy(), [[4, 13], [28, 49]])
    np.testing.assert_array_equal(aux.asnumpy(), _X)


def test_mindspore_vjp_example():
    x, y, v = Tensor(_X), Tensor(_X), Tensor(_ONES)
    out, vjp_fn = ops.vjp(_Cube(), x, y)
    np.testing.assert_array_equal(out.asnumpy(), [[2, 10], [30, 68]])
    gx, gy = vjp_fn(v)
    np.testing.assert_array_equal(gx.asnumpy(), [[3, 12], [27, 48]])
    np.testing.assert_array_equal(gy.asnumpy(), _ONES)
    out, vjp_fn, aux = opforge.vjp(lambda a, b: (2 * a + b, b**3), x, y, has_aux=True)
    gx, gy = vjp_fn(v)
    np.testing.assert_array_equal(out.asnumpy(), [[3, 6], [9, 12]])
    np.testing.assert_array_equal(aux.asnumpy(), [[1, 8], [27, 64]])
    np.testing.assert_array_equal(gx.asnumpy(), 2 * _ONES)
    np.testing.assert_array_equal(gy.asnumpy(), _ONES)


def test_mindspore_1x_cells():
    x, y, v = Tensor(_X), Tensor(_X), Tensor(_ONES)
    out, jv = ops.Jvp(_Cube())(x, y, (v, v))
    np.testing.assert_array_equal(jv.asnumpy(), [[4, 13], [28, 49]])
    out, (gx, gy) = ops.Vjp(_Cube())(x, y, v)
    np.testing.assert_array_equal(out.asnumpy(), [[2, 10], [30, 68]])
    np.testing.assert_array_equal(gx.asnumpy(), [[3, 12], [27, 48]])


class _MultipleInputsMultipleOutputs(nn.Cell):
    def construct(self, x, y, z):
        return x**2 + y**2 + z**2, x * y * z


@pytest.mark.parametrize("jac", [ops.jacfwd, ops.jacrev], ids=["jacfwd", "jacrev"])
def test_mindspore_jacobian_example(jac):
    x, y, z = Tensor(_X), Tensor(_X), Tensor(_ONES)
    j, aux = jac(_MultipleInputsMultipleOutputs(), grad_position=0, has_aux=True)(x, y, z)
    expected = np.zeros((2, 2, 2, 2), np.float32)
    for i in range(2):
        for k in range(2):
            expected[i, k, i, k] = 2 * _X[i, k]
    np.testing.assert_array_equal(j.asnumpy(), expected)
    np.testing.assert_array_equal(aux.asnumpy(), _X * _X)
    # Two outputs, two inputs: a tuple over outputs of tuples over inputs.
    both = jac(_MultipleInputsMultipleOutputs(), grad_position=(0, 1))(x, y, z)
    assert len(both) == 2 and all(len(row) == 2 for row in both)
    np.testing.assert_array_equal(both[1][1].asnumpy(), np.einsum("ik,ij,kl->ikjl", _X * 1, np.eye(2), np.eye(2)))


def test_mindspore_linearize_example():
    x = Tensor(np.array([[1, 2, 3], [3, 4, 5]], np.float32))
    y = Tensor(np.array([[1, 2], [3, 4], [5, 6]], np.float32))
    out, jvp_fn = ops.linearize(lambda a, b: ops.MatMul()(a, b), (x, y))
    np.testing.assert_array_equal(out.asnumpy(), [[22, 28], [40, 52]])
    v = (Tensor(np.ones((2, 3), np.float32)), Tensor(np.array([[1, 1], [1, 1], [0, 0]], np.float32)))
    np.testing.assert_array_equal(jvp_fn(v).asnumpy(), [[12, 15], [16, 19]])
    np.testing.assert_array_equal(jvp_fn(v).asnumpy(), [[12, 15], [16, 19]])  # again: the tape is kept


# ---------------------------------------------------------------------------------------------
# Composition


def _mlp_loss(w1, w2, x):
    h = ops.Tanh()(ops.MatMul()(x, w1))
    return ops.ReduceSum()(ops.Square()(ops.MatMul()(h, w2)))


def test_hessian_of_an_mlp_loss_jacfwd_of_jacrev_is_symmetric_and_matches_hvp(rng):
    w1 = Tensor(rng.standard_normal((3, 4)))
    w2 = Tensor(rng.standard_normal((4, 2)))
    x = Tensor(rng.standard_normal((5, 3)))
    hess = opforge.jacfwd(opforge.jacrev(_mlp_loss, 0), 0)(w1, w2, x)  # forward over reverse
    assert hess.shape == (3, 4, 3, 4)
    h = hess.asnumpy().reshape(12, 12)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-10)
    v = rng.standard_normal((3, 4))
    _, hv = opforge.hvp(lambda a: _mlp_loss(a, w2, x), w1, Tensor(v))
    np.testing.assert_allclose(hv.asnumpy().reshape(-1), h @ v.reshape(-1), rtol=1e-10, atol=1e-10)
    rev = opforge.jacrev(opforge.jacrev(_mlp_loss, 0), 0)(w1, w2, x)  # reverse over reverse
    np.testing.assert_allclose(rev.asnumpy().reshape(12, 12), h, rtol=1e-10, atol=1e-10)


def test_hvp_as_vjp_of_grad_agrees_with_jvp_of_grad(rng):
    x = Tensor(rng.standard_normal((4,)))
    v = Tensor(rng.standard_normal((4,)))

    def f(a):
        return ops.ReduceSum()(ops.Mul()(ops.Sin()(a), ops.Exp()(a)))

    _, forward_over_reverse = opforge.jvp(opforge.grad(f), x, v)
    _, vjp_fn = opforge.vjp(opforge.grad(f), x)
    (reverse_over_reverse,) = vjp_fn(v)
    _, hv = opforge.hvp(f, x, v)
    a = x.asnumpy()
    expected = (2 * np.cos(a) * np.exp(a)) * v.asnumpy()  # d2/dx2 sin(x) e^x = 2 cos(x) e^x
    for got in (forward_over_reverse, reverse_over_reverse, hv):
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-12)


def test_grad_of_jvp_and_jvp_of_jvp(rng):
    x = rng.uniform(0.5, 1.5, (3,))

    def f(a):
        return ops.Log()(ops.Mul()(a, a))  # 2 log a: f' = 2/a, f'' = -2/a^2, f''' = 4/a^3

    v = np.ones(3)
    g = opforge.grad(lambda a: ops.ReduceSum()(opforge.jvp(f, a, Tensor(v))[1]))(Tensor(x))
    np.testing.assert_allclose(g.asnumpy(), -2 / x**2, rtol=1e-12)
    _, second = opforge.jvp(lambda a: opforge.jvp(f, a, Tensor(v))[1], Tensor(x), Tensor(v))
    np.testing.assert_allclose(second.asnumpy(), -2 / x**2, rtol=1e-12)


def test_jvp_of_a_cell_with_parameters_treats_them_as_constants(rng):
    net = nn.Dense(3, 2)
    x = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
    v = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
    out, jv = opforge.jvp(net, x, v)
    w = net.weight.asnumpy()
    np.testing.assert_allclose(jv.asnumpy(), v.asnumpy() @ w.T, rtol=1e-5, atol=1e-6)
    out, vjp_fn = opforge.vjp(net, x, weights=net.trainable_params())
    (gx,), (gw, gb) = vjp_fn(Tensor(np.ones((4, 2), np.float32)))
    np.testing.assert_allclose(gb.asnumpy(), [4, 4])
    np.testing.assert_allclose(gw.asnumpy(), np.ones((2, 4)) @ x.asnumpy(), rtol=1e-5)


def test_outputs_that_do_not_depend_on_the_inputs_get_zero_tangents():
    x = Tensor(np.array([1.0, 2.0]))
    c = Tensor(np.array([3.0, 4.0]))
    out, (tx, tc, ti) = opforge.jvp(lambda a: (a * 2, c, ops.Cast()(a, opforge.int32)), x, Tensor(np.ones(2)))
    np.testing.assert_array_equal(tx.asnumpy(), [2, 2])
    np.testing.assert_array_equal(tc.asnumpy(), [0, 0])
    assert ti.dtype is opforge.int32 and not np.any(ti.asnumpy())
    # The same tensor returned twice, and the identity.
    _, (t1, t2) = opforge.jvp(lambda a: (a, a), x, Tensor(np.array([5.0, 6.0])))
    np.testing.assert_array_equal(t1.asnumpy(), [5, 6])
    np.testing.assert_array_equal(t2.asnumpy(), [5, 6])


# ---------------------------------------------------------------------------------------------
# Errors


def test_bad_tangents_name_the_argument():
    x = Tensor(np.ones((2, 2), np.float32))
    f = lambda a, b: a * b  # noqa: E731
    with pytest.raises(ValueError, match=r"For 'jvp', the 'v' must have one Tensor per input \(2\), but got 1"):
        opforge.jvp(f, (x, x), x)
    with pytest.raises(
        ValueError,
        match=r"For 'jvp', v\[1\] must have the shape and dtype of input 1 \(Float32\[2, 2\]\), but got Float32\[3\]",
    ):
        opforge.jvp(f, (x, x), (x, Tensor(np.ones(3, np.float32))))
    with pytest.raises(
        ValueError,
        match=r"v\[0\] must have the shape and dtype of input 0 \(Float32\[2, 2\]\), but got Float64\[2, 2\]",
    ):
        opforge.jvp(f, (x, x), (Tensor(np.ones((2, 2))), x))
    with pytest.raises(
        TypeError, match=r"For 'jvp', the 'v' must be a Tensor or a tuple or list of Tensors, but v\[1\] is ndarray"
    ):
        opforge.jvp(f, (x, x), (x, np.ones((2, 2))))
    with pytest.raises(
        TypeError, match=r"For 'jvp', the 'inputs' must be a Tensor or a tuple or list of Tensors, but got float"
    ):
        opforge.jvp(f, 1.0, x)
    with pytest.raises(TypeError, match=r"For 'jvp', the 'has_aux' must be bool"):
        opforge.jvp(f, (x, x), (x, x), has_aux=1)
    with pytest.raises(ValueError, match=r"For 'jvp', has_aux=True needs 'fn' to return more than one output"):
        opforge.jvp(f, (x, x), (x, x), has_aux=True)
    with pytest.raises(TypeError, match=r"For 'jvp', the 'fn' must be a function or a Cell"):
        opforge.jvp(3, x, x)


def test_bad_cotangents_name_the_argument():
    x = Tensor(np.ones((2, 2), np.float32))
    _, vjp_fn = opforge.vjp(lambda a: (a * 2, a.sum()), x)
    with pytest.raises(ValueError, match=r"For 'vjp', the 'v' must have one Tensor per output \(2\), but got 1"):
        vjp_fn(x)
    with pytest.raises(
        ValueError,
        match=r"For 'vjp', v\[1\] must have the shape and dtype of output 1 \(Float32\[\]\), but got Float32\[2, 2\]",
    ):
        vjp_fn(x, x)
    with pytest.raises(TypeError, match=r"For 'vjp', the 'inputs' must be Tensors, but inputs\[1\] is list"):
        opforge.vjp(lambda a, b: a, x, [1, 2])


def test_bad_jacobian_arguments():
    x = Tensor(np.ones(3, np.float32))
    with pytest.raises(
        ValueError, match=r"For 'jacfwd', each 'grad_position' must be in \[0, 1\) for 1 inputs, but got 2"
    ):
        opforge.jacfwd(lambda a: a, 2)(x)
    with pytest.raises(ValueError, match=r"For 'jacrev', the 'grad_position' \(0, 0\) has duplicate positions"):
        opforge.jacrev(lambda a: a, (0, 0))(x)
    with pytest.raises(
        TypeError,
        match=r"For 'jacfwd', the input at grad_position 0 must be a floating-point Tensor, but got Int32\[3\]",
    ):
        opforge.jacfwd(lambda a: a)(Tensor(np.ones(3, np.int32)))
    with pytest.raises(TypeError, match=r"For 'jacrev', the 'grad_position' must be an int, a tuple of ints or None"):
        opforge.jacrev(lambda a: a, "0")
    with pytest.raises(ValueError, match=r"For 'hvp', 'fn' must return a Tensor with one element"):
        opforge.hvp(lambda a: a * a, x, x)


def test_a_bprop_that_is_not_differentiable_names_both_operators():
    """The tape of the reverse pass records the grad primitive that has no bprop, and the jvp raises
    only when a tangent reaches it, naming the operator and the grad primitive."""
    ln = ops.LayerNorm(begin_norm_axis=-1, begin_params_axis=-1)
    x = Tensor(np.arange(6, dtype=np.float64).reshape(2, 3))
    gamma, beta = Tensor(np.ones(3)), Tensor(np.zeros(3))
    with pytest.raises(
        TypeError,
        match=r"differentiation of 'LayerNorm' is not available: its bprop applies 'LayerNormGrad' to dout",
    ):
        opforge.jvp(lambda a: ln(a, gamma, beta)[0], x, Tensor(np.ones((2, 3))))
    with pytest.raises(TypeError, match=r"For 'jacfwd', forward-mode differentiation of 'LayerNorm' is not available"):
        opforge.jacfwd(lambda a: ln(a, gamma, beta)[0])(x)
    # Reverse mode still works; it needs no bprop of LayerNormGrad.
    assert opforge.jacrev(lambda a: ln(a, gamma, beta)[0])(x).shape == (2, 3, 2, 3)
    assert opforge.grad(lambda a: ln(a, gamma, beta)[0].sum())(x).shape == (2, 3)
    assert get_bprop(ln) is not None


def test_forward_mode_on_the_gpu(rng):
    """The same transposition on the GPU device (a real GPU, or the host emulation of the CUDA kernels)."""
    a = rng.standard_normal((3, 2)).astype(np.float32)
    v = rng.standard_normal((3, 2)).astype(np.float32)
    x, t = Tensor(a, device="GPU"), Tensor(v, device="GPU")
    out, jv = opforge.jvp(lambda z: ops.Tanh()(z) * z, x, t)
    assert jv.device == "GPU"
    th = np.tanh(a)
    np.testing.assert_allclose(jv.to("CPU").asnumpy(), ((1 - th**2) * a + th) * v, rtol=1e-5, atol=1e-6)
    jac = opforge.jacfwd(lambda z: ops.Tanh()(z))(x)
    assert jac.device == "GPU" and jac.shape == (3, 2, 3, 2)
    np.testing.assert_allclose(
        jac.to("CPU").asnumpy().reshape(6, 6), np.diag(1 - th.reshape(-1) ** 2), rtol=1e-5, atol=1e-6
    )
    with pytest.raises(ValueError, match=r"For 'jvp', v\[0\] must be on the device of input 0 \(GPU\), but is on CPU"):
        opforge.jvp(ops.Tanh(), x, Tensor(v))
