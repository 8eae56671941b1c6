"""MindSpore's ``mindspore.runtime`` (opforge/runtime.py): the memory counters read the pooled allocator,
the settings are checked as MindSpore checks them."""

import numpy as np
import pytest

import opforge
from opforge import ops, runtime


@pytest.fixture
def fresh_settings(monkeypatch):
    monkeypatch.setattr(runtime, "_settings", {})


def test_memory_counters_follow_the_pool():
    runtime.empty_cache()
    before = runtime.memory_allocated()
    y = ops.Exp()(opforge.Tensor(np.ones((512, 512), np.float32)))  # 1 MiB from the pool
    assert runtime.memory_allocated() >= before + y.nbytes
    assert runtime.max_memory_allocated() >= runtime.memory_allocated()
    stats = runtime.memory_stats()
    assert stats["total_allocated_memory"] == runtime.memory_allocated()
    assert stats["total_reserved_memory"] == stats["total_allocated_memory"] + stats["total_idle_memory"]
    del y
    assert runtime.memory_allocated() == before and runtime.memory_reserved() >= 1 << 20  # cached
    runtime.empty_cache()
    assert runtime.memory_stats()["total_idle_memory"] == 0
    runtime.reset_peak_memory_stats()
    assert runtime.max_memory_allocated() == runtime.memory_allocated()
    assert "total_allocated_memory" in runtime.memory_summary()


def test_set_memory_is_checked_and_set_once(fresh_settings):
    with pytest.raises(ValueError, match="'max_size' must be a size such as '2GB'"):
        runtime.set_memory(max_size="60G")
    with pytest.raises(ValueError, match="'init_size' must be a size"):
        runtime.set_memory(init_size="0GB")
    with pytest.raises(ValueError, match="optimize_level must be one of"):
        runtime.set_memory(optimize_level="O2")
    runtime.set_memory("10GB", "2GB", "60GB", "O1", "0GB")  # MindSpore's docstring example
    assert runtime.settings()["memory"]["max_size"] == 60.0
    with pytest.raises(RuntimeError, match="can not be set repeatedly"):
        runtime.set_memory()


def test_execution_settings_are_checked(fresh_settings):
    runtime.synchronize()
    runtime.launch_blocking()
    runtime.dispatch_threads_num(4)
    runtime.set_cpu_affinity(True, [0, 1])
    assert runtime.settings() == {
        "launch_blocking": True,
        "dispatch_threads_num": 4,
        "cpu_affinity": (True, [0, 1], None),
    }
    with pytest.raises(ValueError, match="'threads_num' must be an int in \\[1, 128\\]"):
        runtime.dispatch_threads_num(0)
    with pytest.raises(TypeError, match="'enable_affinity' must be bool"):
        runtime.set_cpu_affinity(1)
    with pytest.raises(TypeError, match="'module_to_cpu_dict' must be dict"):
        runtime.set_cpu_affinity(True, module_to_cpu_dict=[1])
