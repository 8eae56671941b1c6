"""``Tensor.__setitem__`` inside a trace (``opforge.jit``, GRAPH_MODE Cells): the assigned Tensor takes the slot of
its updated value, so a replay computes what the eager call did, as MindSpore's graph mode turns ``x[i] = v`` into
a functional update. The zoo's PointNet++ builds its farthest-point-sampling indices this way
(``centroids[i] = farthest`` in a loop; tests/test_zoo_pointnet2.py)."""

import numpy as np
import pytest

import opforge
from opforge import GRAPH_MODE, PYNATIVE_MODE, Tensor, context, nn, ops


@pytest.fixture(autouse=True)
def _mode():
    yield
    context.set_context(mode=PYNATIVE_MODE)


def test_rows_assigned_in_a_loop_replay(rng):
    @opforge.jit
    def fill(x):
        out = ops.zeros((3, 4), opforge.float32)  # made by an operator: a slot of the trace
        for i in range(3):
            out[i] = x[2 - i] * float(i + 1)
        return out

    for _ in range(3):
        x = rng.normal(size=(3, 4)).astype(np.float32)
        want = x[::-1] * np.float32([1, 2, 3])[:, None]
        np.testing.assert_allclose(fill(Tensor(x)).asnumpy(), want, rtol=1e-6)
    assert fill.traced == 1


def test_a_constant_read_before_its_assignment_keeps_its_old_value(rng):
    @opforge.jit
    def f(x):
        c = Tensor(np.arange(4, dtype=np.float32))  # made outside an operator: a constant of the steps
        before = c + x  # reads c as it is now
        c[1] = x[0]
        return before, c * 2.0

    for _ in range(2):
        x = rng.normal(size=4).astype(np.float32)
        before, after = f(Tensor(x))
        np.testing.assert_allclose(before.asnumpy(), np.arange(4) + x, rtol=1e-6)
        np.testing.assert_allclose(after.asnumpy(), 2 * np.float32([0, x[0], 2, 3]), rtol=1e-6)
    assert f.traced == 1


def test_assigning_into_an_input_of_the_trace_is_refused():
    @opforge.jit
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(opforge.TraceError, match="input of .*Assign into a copy"):
        f(Tensor(np.zeros(3, np.float32)))


class _Overwrite(nn.Cell):
    def construct(self, x):
        out = x * 2.0
        out[0] = x[1] * 3.0
        return out.sum()


def test_graph_mode_cell_and_its_gradient(rng):
    context.set_context(mode=GRAPH_MODE)
    net = _Overwrite()
    grad = ops.GradOperation()(net)
    for _ in range(2):
        x = rng.normal(size=(3, 2)).astype(np.float32)
        np.testing.assert_allclose(net(Tensor(x)).asnumpy(), 2 * x[1:].sum() + 3 * x[1].sum(), rtol=1e-5)
        # row 0 overwritten: no gradient; row 1 read twice: 2 + 3; row 2: 2
        np.testing.assert_allclose(grad(Tensor(x)).asnumpy(), np.float32([[0, 0], [5, 5], [2, 2]]), rtol=1e-6)
