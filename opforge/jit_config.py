"""MindSpore's ``JitConfig`` (``mindspore.JitConfig``, ``mindspore.common.JitConfig``): the compile options a
Cell (``Cell.set_jit_config``), ``jit(jit_config=...)`` and ``data_sink(jit_config=...)`` take. opforge checks
and keeps them (``jit_config_dict``); its ``jit`` always traces by running the function and replays the trace,
so the optimization level, execution mode, syntax level and debug level change nothing in what runs."""

from __future__ import annotations

__all__ = ["JitConfig"]

_JIT_LEVELS = ("", "O0", "O1", "O2")
_EXC_MODES = ("auto", "sink", "no_sink")
_SYNTAX_LEVELS = ("STRICT", "COMPATIBLE", "LAX")
_DEBUG_LEVELS = ("RELEASE", "DEBUG")
_INFER_BOOSTS = ("on", "off")


class JitConfig:
    """``JitConfig(jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE", infer_boost="off",
    **kwargs)`` (MindSpore 2.3's signature; 2.2's default ``jit_level`` "O1" is one of the accepted values):

    * ``jit_level``: "O0", "O1", "O2" or "" (the framework's choice);
    * ``exc_mode``: "auto", "sink" or "no_sink";
    * ``jit_syntax_level``: "STRICT", "COMPATIBLE", "LAX" or "" (the context's);
    * ``debug_level``: "RELEASE" or "DEBUG";
    * ``infer_boost``: "on", "off" (or "").

    Any other value raises ValueError, as MindSpore's. ``jit_config_dict`` holds the keyword arguments and the
    five options, as MindSpore's."""

    def __init__(
        self, jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE", infer_boost="off", **kwargs
    ):
        if jit_level not in _JIT_LEVELS:
            raise ValueError(f"For 'jit_level' must be one of ['O0', 'O1', 'O2'], but got {jit_level!r}.")
        if exc_mode not in _EXC_MODES:
            raise ValueError(f"For 'exc_mode' must be one of {list(_EXC_MODES)}, but got {exc_mode!r}.")
        if jit_syntax_level != "" and jit_syntax_level not in _SYNTAX_LEVELS:
            raise ValueError(f"For 'jit_syntax_level' must be one of ['STRICT', 'LAX'], but got {jit_syntax_level!r}.")
        if debug_level not in _DEBUG_LEVELS:
            raise ValueError(f"For 'debug_level' must be one of {list(_DEBUG_LEVELS)}, but got {debug_level!r}.")
        if infer_boost != "" and infer_boost not in _INFER_BOOSTS:
            raise ValueError(f"For 'infer_boost' must be one of {list(_INFER_BOOSTS)}, but got {infer_boost!r}.")
        self.jit_config_dict = dict(kwargs)
        self.jit_config_dict.update(
            jit_level=jit_level,
            exc_mode=exc_mode,
            jit_syntax_level=jit_syntax_level,
            debug_level=debug_level,
            infer_boost=infer_boost,
        )

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.jit_config_dict.items())
        return f"JitConfig({options})"


def check_jit_config(where: str, jit_config) -> JitConfig | None:
    """``jit_config`` as a JitConfig (None stays None): a JitConfig itself, or a dict of its options checked
    as one (MindSpore's ``jit`` and ``data_sink`` take either); else a TypeError naming ``where``."""
    if jit_config is None or isinstance(jit_config, JitConfig):
        return jit_config
    if isinstance(jit_config, dict):
        return JitConfig(**jit_config)
    raise TypeError(
        f"For '{where}', the 'jit_config' must be a JitConfig or a dict, but got {type(jit_config).__name__}."
    )
