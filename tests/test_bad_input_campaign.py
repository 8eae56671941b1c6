"""The bad-input campaign (``tests/fuzz_campaign.py``) over every primitive and every dtype it registers.

``test_campaign[op]`` runs, for one operator, every per-dtype kind of bad input on one baseline of
each of its kernels, then ``CAMPAIGN_EXAMPLES`` hypothesis-drawn cases of every kind; any bad
outcome fails it, with the list of bad calls. The totals are printed at the end of the run (and by
``python -m tests.fuzz_campaign``).

Problems the campaign found in the call path (``fuzz_campaign.CALL_PATH_ISSUES``: NumPy scalar
constants, constants equal but not alike, huge outputs, unaligned arrays) are fixed; each keeps a
regression test below that runs its reproducer and its tagged campaign cases, and the campaign
itself tolerates none of them.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_campaign import (
    KINDS,
    RandomPicker,
    Tally,
    applicable_kinds,
    baselines,
    build,
    campaign_ops,
    hang_guard,
    kernels_of,
    on_device,
    run_case,
    run_operator,
    unaligned,
)
from op_db import OP_DB

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.kernels import KernelAttr, register_kernel
from opforge.primitives import PrimitiveWithInfer, prim_attr_register, primitive_classes

CAMPAIGN_EXAMPLES = 50  # hypothesis examples per operator, on top of the per-dtype cases
GPU_CAMPAIGN_EXAMPLES = 20
OPS = campaign_ops()
TOTAL = Tally()


@pytest.fixture(scope="module", autouse=True)
def _print_totals(request):
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if TOTAL.calls and reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # the totals go to the terminal, not the captured output
            reporter.write_line("")
            reporter.write_line(TOTAL.report(show_bad=0))


def test_the_campaign_covers_every_primitive_and_kernel():
    assert len(OPS) >= 48
    assert set(OPS) <= set(primitive_classes())
    for op in OPS:
        kernels = {str(bl.entry.attr) for bl in baselines(op)}
        assert kernels, f"{op}: no baseline (no small sample in tests/op_db.py)"
        assert kernels == {str(e.attr) for e in kernels_of(op)}, f"{op}: a kernel has no small baseline"


@pytest.mark.parametrize("op", OPS)
def test_campaign(op):
    tally = Tally()
    run_operator(op, CAMPAIGN_EXAMPLES, tally, tolerate_known=False)
    TOTAL.merge(tally)
    assert tally.counts["ok"] > 0, f"{op}: no call succeeded"
    assert not tally.bad, tally.report(show_bad=30)


with on_device("GPU"):
    GPU_OPS = [op for op in OPS if baselines(op)]


@pytest.mark.parametrize("op", GPU_OPS)
def test_campaign_on_the_gpu(op):
    """The same campaign on the GPU's kernels (the host emulation where there is no GPU): their launchers'
    checks, and the device-side ones, give the same clean errors as the CPU's."""
    tally = Tally()
    run_operator(op, GPU_CAMPAIGN_EXAMPLES, tally, tolerate_known=False, device="GPU")
    TOTAL.merge(tally)
    assert tally.counts["ok"] > 0, f"{op}: no call succeeded on the GPU"
    assert not tally.bad, tally.report(show_bad=30)


# ---------------------------------------------------------------------------------------------
# The campaign itself: its checks must be able to fail


def test_an_unclean_error_is_bad():
    bl = baselines("ReLU")[0]
    case = build(RandomPicker(0), bl, "valid")

    def raise_key_error():
        raise KeyError(0)

    case.run = raise_key_error
    case.must_succeed = False
    assert run_case(case).status == "bad"


def test_an_error_that_does_not_name_the_operator_is_bad():
    bl = baselines("ReLU")[0]
    case = build(RandomPicker(0), bl, "valid")
    case.must_succeed = False

    def raise_anonymous():
        raise TypeError("object of type 'int' has no len()")

    case.run = raise_anonymous
    assert run_case(case).status == "bad"

    def raise_named():
        raise TypeError("For 'ReLU', the 'input_x' must be a Tensor, but got int.")

    case.run = raise_named
    assert run_case(case).status == "clean"


def test_a_wrong_result_is_bad():
    bl = next(b for b in baselines("Neg") if any(isinstance(a, np.ndarray) and a.size > 1 for a in b.args))
    case = build(RandomPicker(0), bl, "valid")
    assert run_case(case).status == "ok"
    # The same call compared with a record whose reference is wrong.
    record = OP_DB["Neg"]
    saved = record.ref
    record.ref = lambda prim, x: x  # not -x
    try:
        assert run_case(build(RandomPicker(0), bl, "valid")).status == "bad"
    finally:
        record.ref = saved


def test_every_kind_applies_somewhere():
    seen = {kind for op in OPS for bl in baselines(op) for kind in applicable_kinds(bl)}
    assert set(KINDS) <= seen, set(KINDS) - seen


# ---------------------------------------------------------------------------------------------
# Known call-path issues: one strict xfail test each (see the module docstring)


# The kinds of bad input that can meet each issue.
ISSUE_KINDS = {
    "numpy-scalar-constant": ("numpy_scalar_constant",),
    "constant-alias": ("constant_alias", "attr_alias"),
    "huge": ("huge",),
}


def _issue_cases(issue: str) -> list:
    """Seeded cases of the kinds that meet ``issue``, on a spread of every operator's baselines."""
    out = []
    for op in OPS:
        pool = baselines(op)
        for n, bl in enumerate(pool[:: max(1, len(pool) // 8)]):
            for kind in applicable_kinds(bl):
                if kind in ISSUE_KINDS[issue]:
                    out.append(build(RandomPicker(f"{op}/{n}/{kind}"), bl, kind))
    return [c for c in out if c.issue == issue]


def _assert_no_bad(issue: str) -> None:
    cases = _issue_cases(issue)
    assert cases, f"the campaign makes no case for the issue {issue}"
    tally = Tally()
    with hang_guard():
        for case in cases:
            tally.add(case, run_case(case, tolerate_known=False))
    assert not tally.bad, tally.report(show_bad=10)


def test_call_path_numpy_scalar_constants_are_taken_like_python_numbers():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(ops.ReduceSum()(x, np.int64(1)).asnumpy(), ops.ReduceSum()(x, 1).asnumpy())
    np.testing.assert_array_equal(
        ops.Transpose()(x, (np.int64(1), np.int64(0))).asnumpy(), ops.Transpose()(x, (1, 0)).asnumpy()
    )
    indices = Tensor(np.array([0, 2], np.int32))
    np.testing.assert_array_equal(
        ops.OneHot()(indices, np.int64(3), 1.0, 0.0).asnumpy(), ops.OneHot()(indices, 3, 1.0, 0.0).asnumpy()
    )
    np.testing.assert_array_equal(ops.Fill()(mstype.float32, (2,), np.float32(1.5)).asnumpy(), [1.5, 1.5])
    _assert_no_bad("numpy-scalar-constant")


def test_call_path_plans_tell_equal_but_different_constants_apart():
    fill = ops.Fill()
    fill(mstype.float32, (2,), 0.0)
    assert np.signbit(fill(mstype.float32, (2,), -0.0).asnumpy()).all(), "-0.0 filled as 0.0"
    x = Tensor(np.ones((2, 3), np.float32))
    reduce_sum = ops.ReduceSum()
    reduce_sum(x, (0, 1))
    with pytest.raises(TypeError, match="For 'ReduceSum'"):
        reduce_sum(x, (False, 1))
    elu_input = Tensor(np.array([-1.0], np.float32))
    ops.Elu(alpha=0.0)(elu_input)
    assert not np.signbit(ops.Elu(alpha=-0.0)(elu_input).asnumpy()).any(), "Elu(alpha=-0.0) ran as alpha=0.0"
    _assert_no_bad("constant-alias")


def test_call_path_huge_outputs_are_refused_with_the_operator_named():
    with pytest.raises((ValueError, RuntimeError, OverflowError), match="For 'Fill'"):
        ops.Fill()(mstype.float32, (2**57,), 1.0)
    with pytest.raises((ValueError, RuntimeError, OverflowError), match="For 'OneHot'"):
        ops.OneHot()(Tensor(np.array([1], np.int32)), 2**57, 1.0, 0.0)
    _assert_no_bad("huge")


@pytest.mark.usefixtures("isolated_registries")
def test_call_path_kernels_receive_aligned_arrays():
    seen = []

    class UserAlignmentProbe(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            self.init_prim_io_names(inputs=["x"], outputs=["y"])

    attr = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)

    @register_kernel("UserAlignmentProbe", "CPU", attr)
    def probe(x):
        seen.append(x.flags.aligned)
        return x.copy()

    view = unaligned(np.arange(4, dtype=np.float32))
    out = UserAlignmentProbe()(Tensor(view))
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 1.0, 2.0, 3.0])
    assert seen == [True], "the kernel received an unaligned array"
