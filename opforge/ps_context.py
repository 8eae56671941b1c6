"""MindSpore's parameter-server context (``set_ps_context``, ``get_ps_context``, ``reset_ps_context``) and
``Parameter.set_param_ps``: checked and kept. opforge has no parameter server: every parameter is trained where
the network runs, which is the same arithmetic (a server holds and updates the weights the workers would), so a
program that sets ``enable_ps=True`` trains as it would on one worker, with a warning once.
"""

from __future__ import annotations

import warnings

__all__ = ["set_ps_context", "get_ps_context", "reset_ps_context"]

_DEFAULTS = {
    "enable_ps": False,
    "config_file_path": "",
    "scheduler_manage_port": 11202,
    "enable_ssl": False,
    "client_password": "",
    "server_password": "",
}
_TYPES = {"enable_ps": bool, "enable_ssl": bool, "scheduler_manage_port": int}
_state = dict(_DEFAULTS)


def set_ps_context(**kwargs) -> None:
    """MindSpore's options, checked as it types them: ``enable_ps``, ``config_file_path``,
    ``scheduler_manage_port``, ``enable_ssl``, ``client_password``, ``server_password``."""
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise ValueError(f"For 'set_ps_context', unknown option '{key}'; options: {sorted(_DEFAULTS)}.")
        kind = _TYPES.get(key, str)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"For 'set_ps_context', the '{key}' must be {kind.__name__}, but got {value!r}.")
    if kwargs.get("enable_ps") and not _state["enable_ps"]:
        warnings.warn(
            "set_ps_context(enable_ps=True): opforge has no parameter server; the parameters are trained where the "
            "network runs (the same updates, on one worker).",
            stacklevel=2,
        )
    _state.update(kwargs)


def get_ps_context(attr_key: str):
    if attr_key not in _DEFAULTS:
        raise ValueError(f"For 'get_ps_context', unknown option '{attr_key}'; options: {sorted(_DEFAULTS)}.")
    return _state[attr_key]


def reset_ps_context() -> None:
    _state.clear()
    _state.update(_DEFAULTS)
