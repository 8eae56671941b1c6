"""MindSpore's strategy-search parameters: checked as MindSpore checks them and read back."""

import pytest

import opforge as ms
from opforge.parallel import get_algo_parameters, reset_algo_parameters, set_algo_parameters


def test_set_get_reset():
    try:
        assert get_algo_parameters("elementwise_op_strategy_follow") is False
        set_algo_parameters(elementwise_op_strategy_follow=True, tensor_slice_align_size=32, algo_approxi_epsilon=0.5)
        assert ms.get_algo_parameters("elementwise_op_strategy_follow") is True
        assert get_algo_parameters("tensor_slice_align_size") == 32
        assert get_algo_parameters("algo_approxi_epsilon") == 0.5
    finally:
        reset_algo_parameters()
    assert get_algo_parameters("tensor_slice_align_size") == 16
    assert ms.set_algo_parameters is set_algo_parameters


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"no_such": True}, ValueError, "unknown parameter 'no_such'"),
        ({"fully_use_devices": 1}, TypeError, "'fully_use_devices' must be a bool"),
        ({"algo_approxi_epsilon": 0.0}, ValueError, r"'algo_approxi_epsilon' must be a float in \(0, 1\]"),
        ({"tensor_slice_align_size": 2048}, ValueError, r"'tensor_slice_align_size' must be an int in \[1, 1024\]"),
    ],
)
def test_bad_values_change_nothing(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        set_algo_parameters(enable_algo_approxi=True, **kwargs)
    assert get_algo_parameters("enable_algo_approxi") is False  # all or nothing
    with pytest.raises(ValueError, match="unknown parameter"):
        get_algo_parameters("no_such")
