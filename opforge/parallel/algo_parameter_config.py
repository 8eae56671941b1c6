"""MindSpore's ``set_algo_parameters`` / ``get_algo_parameters`` / ``reset_algo_parameters``: the parameters
of MindSpore's strategy search in AUTO_PARALLEL (which candidate strategies its dynamic-programming and
recursive-programming searches consider).

opforge's AUTO_PARALLEL lays out the operators without a strategy by sharding propagation only
(``search_mode="sharding_propagation"``; the searches are refused by ``set_auto_parallel_context``), and
there every operator without a strategy follows the layouts it reads, elementwise operators included: what
``elementwise_op_strategy_follow=True`` asks of MindSpore's search. The parameters are checked as MindSpore
checks them and kept (``get_algo_parameters`` reads them back), so the model zoo's parallel setup runs, but
no search reads them: see docs/parallel.md.
"""

from __future__ import annotations

__all__ = ["set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"]

_DEFAULTS = {
    "fully_use_devices": False,
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
