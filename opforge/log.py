"""MindSpore's ``mindspore.log`` (``from mindspore import log as logger``): ``debug``, ``info``, ``warning``,
``error``, ``critical`` and ``exception`` write to the Python logger named "opforge"; the level comes, as
MindSpore's, from the ``GLOG_v`` environment variable read at import: 0 DEBUG, 1 INFO, 2 WARNING (the default),
3 ERROR, 4 CRITICAL (MindSpore's EXCEPTION). ``get_level`` returns it as that string; ``get_log_config`` the
configuration as a dict of strings, as MindSpore's (only ``GLOG_v`` means something here)."""

from __future__ import annotations

import logging
import os

__all__ = ["debug", "info", "warning", "error", "critical", "exception", "get_level", "get_log_config"]

_LEVELS = {"0": logging.DEBUG, "1": logging.INFO, "2": logging.WARNING, "3": logging.ERROR, "4": logging.CRITICAL}
_NAMES = {v: k for k, v in _LEVELS.items()}


def _glog_v() -> str:
    value = os.environ.get("GLOG_v", "2")
    if value not in _LEVELS:
        raise ValueError(f"For 'log', the environment variable 'GLOG_v' must be one of 0-4, but got {value!r}.")
    return value


_logger = logging.getLogger("opforge")
_logger.setLevel(_LEVELS[_glog_v()])


def debug(msg, *args, **kwargs):
    """Logs ``msg % args`` at DEBUG level."""
    _logger.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    """Logs ``msg % args`` at INFO level."""
    _logger.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    """Logs ``msg % args`` at WARNING level."""
    _logger.warning(msg, *args, **kwargs)


def error(msg, *args, **kwargs):
    """Logs ``msg % args`` at ERROR level."""
    _logger.error(msg, *args, **kwargs)


def critical(msg, *args, **kwargs):
    """Logs ``msg % args`` at CRITICAL level (MindSpore's EXCEPTION, 4)."""
    _logger.critical(msg, *args, **kwargs)


def exception(msg, *args, **kwargs):
    """Logs ``msg % args`` at ERROR level with the exception being handled."""
    _logger.exception(msg, *args, **kwargs)


def get_level() -> str:
    """The level as MindSpore's ``GLOG_v`` string: '0' DEBUG ... '4' EXCEPTION (CRITICAL)."""
    return _NAMES.get(_logger.getEffectiveLevel(), "2")


def get_log_config() -> dict:
    """The logging configuration, MindSpore's keys with string values (``GLOG_v``; logs go to stderr)."""
    return {"GLOG_v": get_level(), "GLOG_logtostderr": "1"}
