"""The interpreter seam: per-thread stacks, gradients in many threads at once, profilers that see
their own thread, and saved Parameters changed in place before the backward pass."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, ops
from opforge.bprop.tape import Tape
from opforge.dispatch.interpreter import EVAL, Interpreter, current_interpreter

tanh, mul, reduce_sum = ops.Tanh(), ops.Mul(), ops.ReduceSum()


class _Counter(Interpreter):
    def __init__(self):
        self.names = []

    def process_primitive(self, prim, args):
        self.names.append(prim.name)
        return self.parent.process_primitive(prim, args)


def test_interpreters_nest_and_unwind():
    x = Tensor(np.ones(3, np.float32))
    assert current_interpreter() is None
    with _Counter() as outer:
        assert current_interpreter() is outer and outer.parent is EVAL
        with _Counter() as inner:
            assert inner.parent is outer
            tanh(x)
        assert current_interpreter() is outer
        mul(x, x)
    assert current_interpreter() is None
    assert inner.names == ["Tanh"] and outer.names == ["Tanh", "Mul"]


def test_an_interpreter_is_entered_once_and_exits_in_order():
    a, b = _Counter(), _Counter()
    with a:
        with pytest.raises(RuntimeError, match="already active"):
            a.__enter__()
        b.__enter__()
        with pytest.raises(RuntimeError, match="out of order"):
            a.__exit__(None, None, None)
        b.__exit__(None, None, None)
    assert current_interpreter() is None


def test_an_interpreter_sees_only_its_own_thread():
    x = Tensor(np.ones(3, np.float32))
    seen_in_thread = []

    def other():
        seen_in_thread.append(current_interpreter())
        for _ in range(50):
            tanh(x)

    with _Counter() as counter:
        t = threading.Thread(target=other)
        t.start()
        t.join()
        mul(x, x)
    assert seen_in_thread == [None]
    assert counter.names == ["Mul"]


def test_gradients_in_eight_threads_at_once_are_all_correct():
    """Each thread differentiates sum(tanh(x * w)) with its own data, with the GIL switching as
    often as it can; every gradient must be (1 - tanh(x w)^2) * w, and nothing may raise."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    n_threads, steps = 8, 3000  # 24,000 gradients, as in the report that found the races
    errors, wrong, done = [], [], []
    barrier = threading.Barrier(n_threads)

    def work(k: int):
        rng = np.random.default_rng(k)
        try:
            barrier.wait()
            for _ in range(steps):
                xv = rng.standard_normal(4).astype(np.float64)
                wv = rng.standard_normal(4).astype(np.float64)
                w = Tensor(wv)
                g = opforge.grad(lambda x, w=w: reduce_sum(tanh(mul(x, w))))(Tensor(xv))
                want = (1 - np.tanh(xv * wv) ** 2) * wv
                if not np.allclose(g.asnumpy(), want, rtol=1e-12, atol=1e-12):
                    wrong.append((k, g.asnumpy(), want))
                done.append(1)
        except Exception as e:  # noqa: BLE001 - every failure is reported below
            errors.append(repr(e))

    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == [] and wrong == []
    assert len(done) == n_threads * steps


def test_a_parameter_written_after_the_forward_pass_fails_the_backward_pass():
    w = Parameter(np.array([1.0, 2.0]), name="w")
    x = Tensor(np.array([3.0, 4.0]))
    tape = Tape()
    with tape:
        tape.watch(x)
        loss = reduce_sum(mul(x, w))
    ops.AssignSub()(w, Tensor(np.array([0.5, 0.5])))  # an optimizer step before backward
    from opforge.bprop.tape import backward

    with pytest.raises(RuntimeError, match=r"For 'Mul', the Parameter 'w' \(input 1\) was modified in place after"):
        backward(tape, (loss,), (Tensor(np.array(1.0)),))


def test_versions_count_every_in_place_write():
    w = Parameter(np.zeros(2, np.float32), name="w")
    assert w._version == 0
    ops.Assign()(w, Tensor(np.ones(2, np.float32)))
    w.set_data(np.zeros(2, np.float32))
    assert w._version == 2


def test_gradients_are_unaffected_by_writes_after_backward():
    w = Parameter(np.array([1.0, 2.0]), name="w")
    x = Tensor(np.array([3.0, 4.0]))
    g = opforge.grad(lambda x: reduce_sum(mul(x, w)))(x)
    ops.AssignSub()(w, Tensor(np.array([0.5, 0.5])))
    np.testing.assert_array_equal(g.asnumpy(), [1.0, 2.0])
