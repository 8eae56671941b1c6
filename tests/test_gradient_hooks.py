"""ops.HookBackward and ops.InsertGradientOf (opforge/bprop/gradient_hooks.py): MindSpore's documented example, a
hook replacing the gradient, several inputs, a clipped gradient, grad of grad through the hook, jit, no gradient
being taken, and bad hooks."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops


def test_mindspore_documented_example():
    seen = []
    hook = ops.HookBackward(seen.append)

    def hook_test(x, y):
        z = hook(x * y)
        return z * y

    dx, dy = ops.GradOperation(get_all=True)(hook_test)(Tensor(1, opforge.float32), Tensor(2, opforge.float32))
    assert float(dx.asnumpy()) == 4.0 and float(dy.asnumpy()) == 4.0
    (grads,) = seen
    assert isinstance(grads, tuple) and len(grads) == 1 and float(grads[0].asnumpy()) == 2.0


def test_a_hook_may_replace_the_gradients_of_several_inputs():
    hook = ops.HookBackward(lambda grads: (grads[0] * 10.0, grads[1] * 0.0))

    def f(x, y):
        a, b = hook(x * 2.0, y * 3.0)
        return (a * b).sum()

    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    gx, gy = opforge.grad(f, grad_position=(0, 1))(Tensor(x), Tensor(y))
    np.testing.assert_allclose(gx.asnumpy(), 10.0 * 2.0 * (3.0 * y))  # d/da = b, scaled by 10, times da/dx = 2
    assert not gy.asnumpy().any()


def test_insert_gradient_of_clips_and_is_differentiated_again():
    clip = ops.InsertGradientOf(lambda d: ops.clip_by_value(d, -1.0, 1.0))
    x = np.array([0.2, 3.0, -4.0])
    g = opforge.grad(lambda t: (clip(t) ** 2).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, np.clip(2 * x, -1.0, 1.0))
    square = ops.InsertGradientOf(lambda d: d * d)  # the backward pass is recorded: grad of grad sees the hook
    first = lambda t: opforge.grad(lambda u: (square(u) ** 2).sum())(t)  # noqa: E731  (2u, squared: 4u^2)
    np.testing.assert_allclose(first(Tensor(x)).asnumpy(), 4 * x * x)
    second = opforge.grad(lambda t: first(t).sum())(Tensor(x))
    # d/dt sum(4 t^2) = 8t, and the outer gradient passes the hook too on its way back to t: (8t)^2
    np.testing.assert_allclose(second.asnumpy(), 64 * x * x)


def test_without_a_gradient_the_inputs_pass_as_they_are_and_jit_matches():
    hook = ops.HookBackward(lambda grads: None)
    x = Tensor(np.ones(3))
    assert hook(x) is x
    clip = ops.InsertGradientOf(lambda d: d * 0.5)

    def g(t):
        return opforge.grad(lambda u: (clip(u) * u).sum())(t)

    np.testing.assert_allclose(opforge.jit(g)(x).asnumpy(), g(x).asnumpy())
    np.testing.assert_allclose(g(x).asnumpy(), 0.5 * np.ones(3) + np.ones(3))


def test_bad_hooks_raise_naming_the_operator():
    with pytest.raises(TypeError, match="For 'HookBackward', the 'hook_fn' must be callable"):
        ops.HookBackward(3)
    with pytest.raises(TypeError, match="For 'InsertGradientOf', the 'f' must be callable"):
        ops.InsertGradientOf("f")
    bad = ops.HookBackward(lambda grads: "no")
    with pytest.raises(TypeError, match="must return None or a tuple of 1 gradient"):
        opforge.grad(lambda t: bad(t * 1.0).sum())(Tensor(np.ones(2)))
    with pytest.raises(TypeError, match="For 'HookBackward', every input must be a Tensor"):
        opforge.grad(lambda t: ops.HookBackward(print)(t, 3)[0].sum())(Tensor(np.ones(2)))
