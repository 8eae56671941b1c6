"""Cell.register_forward_pre_hook and register_forward_hook (MindSpore's, PyNative mode): hooks see and may replace
the inputs and the output, run in registration order, are removed by their handle, and do not run in GRAPH_MODE."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn


def test_forward_hooks_see_and_replace_inputs_and_output():
    net = nn.Dense(2, 2, weight_init="ones", bias_init="zeros")
    seen = []
    pre = net.register_forward_pre_hook(lambda cell, inputs: (inputs[0] * 2.0,))
    post = net.register_forward_hook(lambda cell, inputs, output: seen.append((cell, inputs, output)))
    x = Tensor(np.array([[1.0, 2.0]], np.float32))
    out = net(x)
    np.testing.assert_allclose(out.asnumpy(), [[6.0, 6.0]])  # (2 + 4) per output: the doubled input
    ((cell, inputs, output),) = seen
    assert cell is net and output is out
    np.testing.assert_allclose(inputs[0].asnumpy(), [[2.0, 4.0]])
    replace = net.register_forward_hook(lambda cell, inputs, output: output + 1.0)
    np.testing.assert_allclose(net(x).asnumpy(), [[7.0, 7.0]])
    for handle in (pre, post, replace):
        handle.remove()
    np.testing.assert_allclose(net(x).asnumpy(), [[3.0, 3.0]])


def test_hooks_run_in_order_and_gradients_flow_through_them():
    net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
    order = []
    net.register_forward_pre_hook(lambda cell, inputs: order.append("a"))
    net.register_forward_pre_hook(lambda cell, inputs: order.append("b"))
    net.register_forward_hook(lambda cell, inputs, output: output * 3.0)
    g = opforge.grad(lambda t: net(t).sum())(Tensor(np.array([[1.0, 2.0]], np.float32)))
    assert order == ["a", "b"]
    np.testing.assert_allclose(g.asnumpy(), [[3.0, 3.0]])


def test_graph_mode_does_not_run_them_and_bad_hooks_raise():
    net = nn.Dense(2, 2)
    calls = []
    net.register_forward_hook(lambda cell, inputs, output: calls.append(1))
    opforge.set_context(mode=opforge.GRAPH_MODE)
    try:
        net(Tensor(np.ones((1, 2), np.float32)))
    finally:
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
    assert calls == []
    with pytest.raises(TypeError, match="For 'register_forward_hook', the 'hook_fn' must be a function"):
        net.register_forward_hook(3)
