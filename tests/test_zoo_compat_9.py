"""What the model zoo's TextCNN, DeepFM and NCF (tests/zoo/textcnn, tests/zoo/deepfm, tests/zoo/ncf;
tests/test_zoo_textcnn.py, tests/test_zoo_deepfm.py, tests/test_zoo_ncf.py) needed of opforge, one focused check
each: MindSpore's ``mindspore.nn.layer.activation`` module path (NCF's ``DenseLayer`` imports ``get_activation``
from it), which opforge did not register; and ``get_context`` of a recorded option not yet set (the DeepFM test
restores the ``enable_graph_kernel`` that train.py sets: read first, it gave None, which ``set_context``
refuses), now MindSpore's documented default."""

import importlib
import sys

import numpy as np
import pytest

import opforge
from opforge import Tensor, context, nn


def test_nn_layer_activation_module_path():
    from opforge.nn.layer.activation import get_activation

    assert get_activation is nn.get_activation
    module = importlib.import_module("opforge.nn.layer.activation")
    assert module is sys.modules["opforge.nn.layer.activation"] and nn.layer.activation is module
    assert module.ReLU is nn.ReLU and module.Sigmoid is nn.Sigmoid and module.Softmax is nn.Softmax
    relu = get_activation("relu")
    assert isinstance(relu, nn.ReLU) and get_activation(None) is None
    np.testing.assert_array_equal(relu(Tensor(np.array([-1.0, 2.0], np.float32))).asnumpy(), [0.0, 2.0])
    with pytest.raises(ValueError, match="unknown activation"):
        get_activation("no_such_activation")


def test_nn_layer_keeps_its_names_beside_the_activation_path():
    """``from mindspore.nn import layer as L``: the layer module still holds nn's cells (L.Dense, L.CellList)."""
    from opforge.nn import layer

    assert layer.Dense is nn.Dense and layer.CellList is nn.CellList and layer.get_activation is nn.get_activation


def test_get_context_gives_mindspores_defaults_of_recorded_options(monkeypatch):
    defaults = {"device_id": 0, "save_graphs_path": ".", "enable_graph_kernel": False,
                "enable_reduce_precision": True, "reserve_class_name_in_scope": True, "max_call_depth": 1000,
                "max_device_memory": "1024GB", "mempool_block_size": "1GB"}  # fmt: skip
    for key in defaults:
        monkeypatch.delitem(context._state, key, raising=False)  # as in a fresh process
    assert {key: context.get_context(key) for key in defaults} == defaults
    before = context.get_context("enable_graph_kernel")
    context.set_context(enable_graph_kernel=True)
    assert context.get_context("enable_graph_kernel") is True
    context.set_context(enable_graph_kernel=before)  # the round trip a script does to restore it
    assert context.get_context("enable_graph_kernel") is False
    monkeypatch.delitem(context._state, "graph_kernel_flags", raising=False)
    assert context.get_context("graph_kernel_flags") is None  # no documented default: None, as before
    with pytest.raises(TypeError, match="'enable_graph_kernel' must be a bool"):
        context.set_context(enable_graph_kernel=None)
    with pytest.raises(ValueError, match="unknown option 'no_such_option'"):
        context.get_context("no_such_option")


def test_memory_offload_options_are_checked_and_recorded(monkeypatch):
    """MindSpore's memory_offload sample: set_context(memory_offload="ON") and set_offload_context(...)."""
    monkeypatch.setitem(context._state, "memory_offload", "OFF")
    context.set_context(memory_offload="ON")
    assert context.get_context("memory_offload") == "ON"
    with pytest.raises(TypeError, match="'memory_offload' must be 'ON' or 'OFF'"):
        context.set_context(memory_offload="on")
    monkeypatch.setattr(context, "_offload", {})
    opforge.set_offload_context(offload_config={"offload_param": "cpu", "auto_offload": True, "enable_aio": False})
    assert opforge.get_offload_context() == {"offload_param": "cpu", "auto_offload": True, "enable_aio": False}
    with pytest.raises(ValueError, match="unknown key 'offload_size'"):
        opforge.set_offload_context({"offload_size": "1GB"})
    with pytest.raises(TypeError, match="'auto_offload' must be a bool"):
        opforge.set_offload_context({"auto_offload": 1})


def test_set_device_sets_the_device_target_and_records_the_id(monkeypatch):
    """MindSpore 2.5's ms.set_device(device_target, device_id=None) (its model_encrypt_protection sample)."""
    monkeypatch.setitem(context._state, "device_id", 0)
    opforge.set_device("CPU", 3)
    assert context.get_context("device_target") == "CPU" and context.get_context("device_id") == 3
    with pytest.raises(ValueError, match="'device_target' must be one of"):
        opforge.set_device("NPU")
