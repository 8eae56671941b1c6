"""``opforge.profiler``: opforge's kernel profiler (``profile``, ``Profile``, ``KernelStats`` of
``opforge.tools.profiler``), and MindSpore's ``mindspore.profiler.Profiler`` over it (the model zoo's moxing
adapters import it): it records every primitive call between ``start`` (at construction by default) and
``stop``, and ``analyse`` writes the per-kernel table (operator, backend, KernelAttr, calls, total time) to
``<output_path>/profiler/kernel_stats.txt``."""

from __future__ import annotations

import io
import os
import sys

from rich.console import Console

from opforge.tools.profiler import KernelStats, Profile, profile

__all__ = ["Profiler", "profile", "Profile", "KernelStats"]


class Profiler:
    """``Profiler(output_path="./data", start_profile=True, **kwargs)``: MindSpore's other keyword options
    (``profile_memory``, ``profile_communication``, ...) are accepted and not used."""

    def __init__(self, output_path: str = "./data", start_profile: bool = True, **kwargs):
        if not isinstance(output_path, str):
            raise TypeError(f"For 'Profiler', 'output_path' must be a str, but got {type(output_path).__name__}.")
        if not isinstance(start_profile, bool):
            raise TypeError(f"For 'Profiler', 'start_profile' must be a bool, but got {type(start_profile).__name__}.")
        self.output_path = output_path
        self._profile = Profile()
        self._running = False
        if start_profile:
            self.start()

    def start(self) -> None:
        if self._running:
            raise RuntimeError("For 'Profiler.start', the profiler is already started.")
        self._profile.__enter__()
        self._running = True

    def stop(self) -> None:
        if not self._running:
            raise RuntimeError("For 'Profiler.stop', the profiler is not started.")
        self._profile.__exit__(None, None, None)
        self._running = False

    def analyse(self) -> str:
        """Stops a running profiler and writes the table; returns the file's path."""
        if self._running:
            self.stop()
        buffer = io.StringIO()
        self._profile.print(console=Console(file=buffer, width=160))
        folder = os.path.join(self.output_path, "profiler")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "kernel_stats.txt")
        with open(path, "w") as f:
            f.write(buffer.getvalue())
        return path


# ``from mindspore.profiler.profiling import Profiler`` (the model zoo's training scripts): MindSpore's
# profiler is a package whose ``profiling`` module defines the class; this module holds it, so that path is
# registered as this module (as opforge/nn/__init__.py registers ``nn.loss.loss`` and the like).
sys.modules.setdefault(f"{__name__}.profiling", sys.modules[__name__])
profiling = sys.modules[f"{__name__}.profiling"]
