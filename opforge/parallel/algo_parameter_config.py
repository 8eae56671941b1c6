"""MindSpore's ``set_algo_parameters`` / ``get_algo_parameters`` / ``reset_algo_parameters``: the parameters
of AUTO_PARALLEL's strategy search (``opforge/parallel/strategy_search.py``), checked as MindSpore checks
them, with MindSpore's defaults: ``fully_use_devices`` (only strategies using every rank),
``elementwise_op_strategy_follow`` (an elementwise operator's output read in the layout it has),
``enable_algo_approxi`` / ``algo_approxi_epsilon`` (at most ``1/epsilon`` candidates per operator) and
``tensor_slice_align_enable`` / ``tensor_slice_align_size`` (MatMul blocks whose last dims are multiples of the
size). Sharding propagation (``search_mode="sharding_propagation"``) reads none of them.
"""

from __future__ import annotations

__all__ = ["set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"]

_DEFAULTS = {
    "fully_use_devices": True,
    "elementwise_op_strategy_follow": False,
    "enable_algo_approxi": False,
    "algo_approxi_epsilon": 0.1,
    "tensor_slice_align_enable": False,
    "tensor_slice_align_size": 16,
}
_state = dict(_DEFAULTS)


def _check(name: str, value):
    if name not in _DEFAULTS:
        raise ValueError(f"For 'set_algo_parameters', unknown parameter '{name}'; parameters: {sorted(_DEFAULTS)}.")
    where = f"For 'set_algo_parameters', the '{name}'"
    if isinstance(_DEFAULTS[name], bool):
        if not isinstance(value, bool):
            raise TypeError(f"{where} must be a bool, but got {type(value).__name__}.")
    elif name == "algo_approxi_epsilon":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise ValueError(f"{where} must be a float in (0, 1], but got {value!r}.")
        value = float(value)
    elif isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
        raise ValueError(f"{where} must be an int in [1, 1024], but got {value!r}.")
    return value


def set_algo_parameters(**kwargs) -> None:
    """Set strategy-search parameters by name (all or nothing: a bad one leaves every value as it was)."""
    checked = {name: _check(name, value) for name, value in kwargs.items()}
    _state.update(checked)


def get_algo_parameters(attr_key: str):
    """One strategy-search parameter's value."""
    if attr_key not in _DEFAULTS:
        raise ValueError(f"For 'get_algo_parameters', unknown parameter '{attr_key}'; parameters: {sorted(_DEFAULTS)}.")
    return _state[attr_key]


def reset_algo_parameters() -> None:
    """Every strategy-search parameter back to its default."""
    _state.clear()
    _state.update(_DEFAULTS)
