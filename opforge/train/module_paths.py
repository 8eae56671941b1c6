"""MindSpore's deeper ``mindspore.train`` module paths that model-zoo scripts import from
(``from mindspore.train.callback._callback import Callback``, ``from mindspore.train.callback._loss_monitor import
LossMonitor``, ``from mindspore.train.summary.summary_record import SummaryRecord``, ...). ``opforge.train.callback``
and ``opforge.train.summary`` are modules, not packages, so each such path is registered in ``sys.modules`` as the
opforge module that holds its names (the import system returns a registered name before it looks for a package),
as opforge/nn/__init__.py does for ``mindspore.nn.loss.loss`` and the like."""

from __future__ import annotations

import sys

from opforge.train import callback, summary

__all__ = ["PATHS"]

# (the module a path is an attribute of, the attribute, the opforge module holding its names)
PATHS = (
    (callback, "_callback", callback),  # Callback, RunContext, _InternalCallbackParam, _CallbackManager
    (callback, "_loss_monitor", callback),
    (callback, "_time_monitor", callback),
    (callback, "_lr_scheduler_callback", callback),
    (callback, "_checkpoint", callback),  # ModelCheckpoint, CheckpointConfig
    (summary, "summary_record", summary),  # SummaryRecord
)

for _parent, _name, _module in PATHS:
    sys.modules.setdefault(f"{_parent.__name__}.{_name}", _module)
    setattr(_parent, _name, sys.modules[f"{_parent.__name__}.{_name}"])
