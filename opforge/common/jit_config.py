"""MindSpore's ``common.jit_config``: ``JitConfig`` (opforge/jit_config.py)."""

from opforge.jit_config import JitConfig

__all__ = ["JitConfig"]
