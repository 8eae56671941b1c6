"""``export`` / ``load`` / ``nn.GraphCell``: MINDIR files read back equal, ONNX files run by ONNX Runtime.

Every operator with an ONNX rule is exported on its sweep record's samples (tests/op_db.py) and run by
ONNX Runtime against opforge's own output, so a new rule is covered by adding it; whole networks of the
model zoo go through both formats.
"""

import os
import sys

import numpy as np
import pytest
from op_db import OP_DB

import opforge as ms
from opforge import Parameter, Tensor, TraceError, nn, ops
from opforge import dtype as mstype
from opforge.ir import ExportError, to_onnx
from opforge.ir import record as record_graph
from opforge.ir.onnx import rules as onnx_rules
from opforge.kernels import all_kernels

ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, os.path.dirname(__file__))
from zoo.mobilenetv2 import mobilenet_v2  # noqa: E402
from zoo.resnet import resnet18  # noqa: E402
from zoo.vit import ViT  # noqa: E402

from opforge.tools.demo import LeNet5  # noqa: E402


def _onnx_run(model, inputs) -> list:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {f"input_{i}": x.asnumpy() for i, x in enumerate(inputs)})


def _as_list(value) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


# -- every ONNX rule, on its operator's sweep samples ---------------------------------------------


def _entry(op: str):
    """The CPU kernel to export with: float32 wherever it takes floats (what ONNX Runtime runs for
    every operator), else the first one (the logical operators' bool)."""
    entries = [e for e in all_kernels() if e.op_name == op and e.backend == "CPU" and e.kind == "cpp"]
    record = OP_DB[op]
    for e in entries:
        ins = e.attr.input_dtypes_for(record.nin) or ()
        floats = [t for t in ins if t.kind == "f"]
        if floats and all(t == mstype.float32 for t in floats):
            return e
    return entries[0] if entries else None


# ONNX Runtime's max/min kernels skip NaN where opforge's (as NumPy's) give it (or its index); its TopK
# does not rank NaN the largest
NAN_BLIND = {"MaxPool", "ReduceMax", "ReduceMin", "Argmax", "Argmin", "TopK"}

RULE_OPS = sorted(op for op in onnx_rules() if op in OP_DB and _entry(op) is not None)


def test_every_rule_has_a_sweep_record():
    missing = sorted(set(onnx_rules()) - set(RULE_OPS))
    assert not missing, f"ONNX rules without a sweep record or a CPU kernel to test them with: {missing}"


def _tensors(args):
    out, inputs = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(Tensor(a))
            inputs.append(out[-1])
        elif isinstance(a, (tuple, list)) and a and all(isinstance(e, np.ndarray) for e in a):
            out.append(type(a)(Tensor(e) for e in a))
            inputs.extend(out[-1])
        else:
            out.append(a)
    return out, inputs


def _call(prim, args, kwargs, inputs):
    """A function of the sample's Tensors only (its other arguments fixed), for export."""

    def fn(*tensors):
        it = iter(tensors)
        call = []
        for a in args:
            if isinstance(a, Tensor):
                call.append(next(it))
            elif isinstance(a, (tuple, list)) and a and all(isinstance(e, Tensor) for e in a):
                call.append(type(a)(next(it) for _ in a))
            else:
                call.append(a)
        return prim(*call, **kwargs)

    return fn


@pytest.mark.parametrize("op", RULE_OPS)
def test_onnx_rule_matches_opforge(op, rng):
    record = OP_DB[op]
    entry = _entry(op)
    in_dtypes = tuple(entry.attr.input_dtypes_for(record.nin))
    exported = 0
    for variant, factory in record.variants.items():
        prim = factory()
        for sample in record.sample_inputs(record, prim, in_dtypes, entry.attr.outputs, rng):
            args, inputs = _tensors(sample.args)
            if any(0 in x.shape for x in inputs):
                continue  # zero-size tensors: ONNX Runtime's kernels differ in what they accept
            if op in NAN_BLIND and any(np.isnan(x.asnumpy()).any() for x in inputs if x.dtype.kind == "f"):
                continue
            fn = _call(prim, args, sample.kwargs, inputs)
            try:
                graph = record_graph(fn, *inputs)
            except TraceError:
                continue  # the record's wrapper reads data outside operators (training BatchNorm's statistics)
            try:
                model = to_onnx(graph)
            except ExportError as e:
                assert op in str(e), f"{op} [{variant}]: a refusal must name the operator: {e}"
                continue
            want = [o.asnumpy() for o in _as_list(fn(*inputs))]
            got = _onnx_run(model, inputs)
            where = f"{op} [{variant}] {sample.desc or [x.shape for x in inputs]}"
            assert len(got) == len(want), where
            for g, w in zip(got, want):
                assert g.shape == w.shape, f"{where}: shape {g.shape}, opforge {w.shape}"
                if w.dtype.kind == "f":
                    np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=where)
                else:
                    np.testing.assert_array_equal(g, w, err_msg=where)
            exported += 1
    assert exported, f"no sample of {op} was exported to ONNX"


# -- whole networks ----------------------------------------------------------------------------------


NETS = {
    "lenet": (lambda: LeNet5(), (2, 1, 8, 8)),
    "resnet18": (lambda: resnet18(10, 8), (2, 3, 32, 32)),
    "mobilenetv2": (lambda: mobilenet_v2(10, 0.25), (2, 3, 32, 32)),
    "vit": (
        lambda: ViT(image_size=16, patch_size=8, embed_dim=32, num_layers=1, num_heads=4, mlp_dim=64),
        (2, 3, 16, 16),
    ),
}


@pytest.mark.parametrize("name", sorted(NETS))
def test_network_through_mindir_and_onnx(name, tmp_path):
    ms.set_seed(0)
    make, shape = NETS[name]
    net = make()
    net.set_train(False)
    x = Tensor(np.random.default_rng(0).random(shape, np.float32))
    want = net(x).asnumpy()

    ms.export(net, x, file_name=str(tmp_path / name), file_format="MINDIR")
    cell = nn.GraphCell(ms.load(str(tmp_path / f"{name}.mindir")))
    np.testing.assert_array_equal(cell(x).asnumpy(), want)  # the same kernels on the same inputs
    assert sorted(n for n, _ in cell.parameters_and_names()) == sorted(p.name for p in net.get_parameters())

    ms.export(net, x, file_name=str(tmp_path / f"{name}.onnx"), file_format="ONNX")
    session = ort.InferenceSession(str(tmp_path / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"input_0": x.asnumpy()})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_graph_cell_params_init_and_checkpoint(tmp_path):
    net = nn.Dense(3, 2)
    x = Tensor(np.ones((4, 3), np.float32))
    tmp_path = tmp_path / "new"  # a folder export makes, as MindSpore's does
    ms.export(net, x, file_name=str(tmp_path / "dense"), file_format="MINDIR")
    graph = ms.load(str(tmp_path / "dense.mindir"))
    weight = Tensor(np.full((2, 3), 2.0, np.float32))
    cell = nn.GraphCell(graph, params_init={"weight": weight})
    np.testing.assert_allclose(cell(x).asnumpy(), np.broadcast_to(6.0 + net.bias.asnumpy(), (4, 2)))
    with pytest.raises(ValueError, match="'params_init'.*'nope'"):
        nn.GraphCell(ms.load(str(tmp_path / "dense.mindir")), params_init={"nope": weight})
    with pytest.raises(ValueError, match=r"shape \(2, 3\).*shape \(3,\)"):
        nn.GraphCell(ms.load(str(tmp_path / "dense.mindir")), params_init={"weight": Tensor(np.ones(3, np.float32))})
    # the loaded weights are the cell's parameters: a checkpoint of the original loads into it
    ms.save_checkpoint(net, str(tmp_path / "dense.ckpt"))
    ms.load_param_into_net(cell, ms.load_checkpoint(str(tmp_path / "dense.ckpt")))
    np.testing.assert_allclose(cell(x).asnumpy(), net(x).asnumpy())


def test_mindir_keeps_dtypes_attributes_and_python_values(tmp_path):
    """bfloat16 weights, tuple and dtype attributes, non-finite constants and several outputs."""

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)).astype(mstype.bfloat16), name="w")
            self.cast = ops.Cast()
            self.split = ops.Split(axis=1, output_num=3)
            self.reduce = ops.ReduceMax(keep_dims=True)

        def construct(self, x):
            y = self.cast(x, mstype.bfloat16) * self.w
            a, b, c = self.split(self.cast(y, mstype.float32))
            m = ops.maximum(a, float("-inf"))
            return self.reduce(m + b, (0,)), c

    net = Net()
    x = Tensor(np.random.default_rng(1).random((2, 3), np.float32))
    want = [o.asnumpy() for o in net(x)]
    ms.export(net, x, file_name=str(tmp_path / "net.mindir"), file_format="MINDIR")
    cell = nn.GraphCell(ms.load(str(tmp_path / "net.mindir")))
    got = cell(x)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w)
    assert cell.w.dtype == mstype.bfloat16


def test_export_a_function_and_keyword_suffix(tmp_path):
    def f(x, y):
        return ops.matmul(x, y) + 1

    x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((3, 4), np.float32))
    ms.export(f, x, y, file_name=str(tmp_path / "f"), file_format="onnx")
    assert (tmp_path / "f.onnx").exists()
    got = ort.InferenceSession(str(tmp_path / "f.onnx")).run(None, {"input_0": x.asnumpy(), "input_1": y.asnumpy()})
    np.testing.assert_allclose(got[0], np.full((2, 4), 4.0))


# -- bad input -------------------------------------------------------------------------------------


def test_errors(tmp_path):
    net = nn.Dense(3, 2)
    x = Tensor(np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="AIR"):
        ms.export(net, x, file_name=str(tmp_path / "n"), file_format="AIR")
    with pytest.raises(ValueError, match="'file_format' must be 'MINDIR' or 'ONNX'"):
        ms.export(net, x, file_name=str(tmp_path / "n"), file_format="PB")
    with pytest.raises(TypeError, match="input 0 is ndarray"):
        ms.export(net, np.ones((4, 3), np.float32), file_name=str(tmp_path / "n"), file_format="MINDIR")
    with pytest.raises(NotImplementedError, match="enc_key"):
        ms.export(net, x, file_name=str(tmp_path / "n"), file_format="MINDIR", enc_key=b"0" * 16)
    with pytest.raises(ValueError, match="does not exist"):
        ms.load(str(tmp_path / "missing.mindir"))
    (tmp_path / "junk.mindir").write_bytes(b"not a graph")
    with pytest.raises(RuntimeError, match="not an opforge MINDIR file"):
        ms.load(str(tmp_path / "junk.mindir"))

    ms.export(net, x, file_name=str(tmp_path / "n"), file_format="MINDIR")
    cell = nn.GraphCell(ms.load(str(tmp_path / "n.mindir")))
    with pytest.raises(ValueError, match=r"input 0 must be a Tensor of shape \(4, 3\).*got shape \(5, 3\)"):
        cell(Tensor(np.ones((5, 3), np.float32)))
    with pytest.raises(TypeError, match="GraphCell"):
        nn.GraphCell("n.mindir")


def test_onnx_refusals_name_the_operator():
    x = Tensor(np.ones((2, 3, 4, 4), np.float32))
    with pytest.raises(ExportError, match="'Dropout'.*set_train"):
        to_onnx(record_graph(ops.Dropout(keep_prob=0.5), x))
    with pytest.raises(ExportError, match=r"no ONNX rule for the operator\(s\) \['Cholesky'\]"):
        to_onnx(record_graph(ops.Cholesky(), Tensor(np.eye(3, dtype=np.float32))))


def test_graph_cell_differentiates_and_replays_new_weights(tmp_path):
    """A loaded graph trains as the network does: gradients through it equal the network's, and a replay
    reads the weights' current values."""
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(4, 8), nn.Tanh(), nn.Dense(8, 2)])
    x = Tensor(np.random.default_rng(2).random((3, 4), np.float32))
    ms.export(net, x, file_name=str(tmp_path / "mlp"), file_format="MINDIR")
    cell = nn.GraphCell(ms.load(str(tmp_path / "mlp.mindir")))

    def loss(model):
        return lambda t: ops.ReduceSum()(model(t) ** 2)

    want = ms.value_and_grad(loss(net), grad_position=None, weights=net.trainable_params())(x)[1]
    got = ms.value_and_grad(loss(cell), grad_position=None, weights=cell.trainable_params())(x)[1]
    by_name = dict(zip([p.name for p in cell.trainable_params()], got))
    for p, g in zip(net.trainable_params(), want):
        np.testing.assert_allclose(by_name[p.name].asnumpy(), g.asnumpy(), rtol=1e-5, atol=1e-6)

    first = cell(x).asnumpy()
    cell.trainable_params()[0].set_data(Tensor(np.zeros((8, 4), np.float32)))
    second = cell(x).asnumpy()  # the same trace, replayed on the new weight
    assert not np.allclose(first, second)
    np.testing.assert_allclose(second, np.broadcast_to(second[0], second.shape), rtol=1e-6)  # x no longer matters
