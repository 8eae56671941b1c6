"""The model zoo's GNNs as MindSpore's model zoo runs them -- GCN (tests/zoo/gcn: official/gnn/GCN) and GAT
(tests/zoo/gat: research/gnn/gat), ``mindspore`` replaced by ``opforge`` -- on a small synthetic Cora: Planetoid
files (``ind.cora.allx``, ``ally``, ``tx``, ``ty``, ``test.index``, ``graph``) that the zoo's graph converter
(tests/zoo/graph_to_mindrecord: writer.py with cora/mr_api.py, run as write_cora.sh runs it) turns into
MindRecord, which their dataset.py reads with ``GraphData``. The graph read back is checked against the Planetoid
files, the normalized adjacency, the networks and GCN's loss against NumPy; GCN's train.py (``run_train``, and
``run_gpu_train`` through ``Model`` with the zoo's EvalCallBack) and GAT's train.py (``gnn_train``) train: the
loss falls, the accuracy is far above chance."""

import os
import pickle
import runpy
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from zoo.gat import train as gat_train
from zoo.gat.dataset import load_and_process
from zoo.gat.gat import GAT
from zoo.gat.model_config import config as GAT_CONFIG
from zoo.gcn import train as gcn_train
from zoo.gcn.config import ConfigGCN
from zoo.gcn.dataset import get_adj_features_labels, get_mask
from zoo.gcn.gcn import GCN
from zoo.gcn.metrics import LossAccuracyWrapper
from zoo.gcn.model_config import config as default_args

import opforge
from opforge import Tensor, context

CONVERTER = os.path.join(os.path.dirname(__file__), "zoo", "graph_to_mindrecord")
NODES, CLASSES, WORDS, TESTS = 150, 3, 24, 40


def _planetoid(rng):
    """A Cora-like citation graph: each class's papers use their own words (and some noise words), cite
    mostly papers of their class. Returns the features, one-hot labels and the adjacency dict in node order."""
    labels = rng.integers(0, CLASSES, NODES)
    words = np.zeros((NODES, WORDS), np.float32)
    for v, c in enumerate(labels):
        own = rng.choice(np.arange(c * 6, c * 6 + 6), 3, replace=False)
        noise = rng.choice(np.arange(18, WORDS), 2, replace=False)
        words[v, own] = 1.0
        words[v, noise] = 1.0
        if rng.random() < 0.3:  # a word of another class
            words[v, rng.integers(0, 18)] = 1.0
    graph = {v: set() for v in range(NODES)}
    for v in range(NODES):
        for _ in range(2):
            same = rng.random() < 0.85
            pool = np.flatnonzero((labels == labels[v]) == same)
            u = int(rng.choice(pool[pool != v]))
            graph[v].add(u)
            graph[u].add(v)
    return words, np.eye(CLASSES, dtype=np.int64)[labels], {v: sorted(n) for v, n in graph.items()}


def _write_planetoid(root, words, onehot, graph, rng):
    """The Planetoid files as kimiyoung/planetoid ships Cora: allx/ally the first nodes, tx/ty the test nodes
    in the (shuffled) order of test.index."""
    os.makedirs(root)
    first_test = NODES - TESTS
    test_index = rng.permutation(np.arange(first_test, NODES))
    objects = {
        "allx": sp.csr_matrix(words[:first_test]),
        "ally": onehot[:first_test],
        "tx": sp.csr_matrix(words[test_index]),
        "ty": onehot[test_index],
        "graph": graph,
    }
    for name, value in objects.items():
        with open(os.path.join(root, f"ind.cora.{name}"), "wb") as f:
            pickle.dump(value, f)
    with open(os.path.join(root, "ind.cora.test.index"), "w") as f:
        f.write("\n".join(str(int(i)) for i in test_index) + "\n")


@pytest.fixture
def converter(monkeypatch):
    """Runs the zoo's writer.py as write_cora.sh does (from its folder: ``cora.mr_api`` and
    ``graph_map_schema`` are imported from there), in this process; its modules are dropped afterwards."""
    monkeypatch.syspath_prepend(CONVERTER)
    monkeypatch.setenv("graph_api_args", "")
    before = set(sys.modules)

    def run(src, out):
        monkeypatch.setattr(sys, "argv", ["writer.py", "--mindrecord_script", "cora", "--mindrecord_file", out,
                                          "--mindrecord_partitions", "1", "--mindrecord_header_size_by_bit", "18",
                                          "--mindrecord_page_size_by_bit", "20", "--graph_api_args", src])  # fmt: skip
        runpy.run_path(os.path.join(CONVERTER, "writer.py"), run_name="__main__")

    yield run
    for name in set(sys.modules) - before:
        if name in ("cora", "cora.mr_api", "graph_map_schema"):
            del sys.modules[name]


@pytest.fixture
def cora(tmp_path, converter, capsys):
    rng = np.random.default_rng(0)
    words, onehot, graph = _planetoid(rng)
    _write_planetoid(str(tmp_path / "cora"), words, onehot, graph, rng)
    os.makedirs(tmp_path / "mr")
    out = str(tmp_path / "mr" / "cora_mr")
    converter(str(tmp_path / "cora"), out)
    printed = capsys.readouterr().out
    assert f"Processed {NODES} lines for nodes." in printed and "END. Total time" in printed
    return out, words, onehot, graph


@pytest.fixture(autouse=True)
def _state(monkeypatch):
    np.random.seed(0)  # glorot draws from NumPy's generator
    opforge.set_seed(0)
    keys = ("data_dir", "train_nodes_num", "eval_nodes_num", "test_nodes_num", "save_ckptpath", "device_target",
            "train_with_eval")  # fmt: skip
    for key in keys:
        monkeypatch.setattr(default_args, key, getattr(default_args, key))
    monkeypatch.setattr(ConfigGCN, "epochs", ConfigGCN.epochs)
    yield
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


def test_converter_output_reads_back_as_the_planetoid_graph(cora):
    path, words, onehot, graph = cora
    g = opforge.dataset.GraphData(path)
    assert g.graph_info()["node_num"] == {0: NODES} and g.graph_info()["node_feature_type"] == [1, 2]
    assert g.graph_info()["edge_num"] == {0: sum(map(len, graph.values()))}
    nodes = g.get_all_nodes(0)
    assert nodes.tolist() == list(range(NODES))
    features, labels = g.get_node_feature(nodes.tolist(), [1, 2])
    np.testing.assert_allclose(features, words / words.sum(1, keepdims=True), rtol=1e-6)  # row-normalized
    assert labels.tolist() == onehot.argmax(1).tolist()
    table = g.get_all_neighbors(nodes.tolist(), 0)
    for row in table:
        assert [u for u in row[1:] if u >= 0] == graph[row[0]]  # the converter's edge order


def test_dataset_builds_the_normalized_adjacency(cora):
    path, words, onehot, graph = cora
    adj, features, labels_onehot, labels = get_adj_features_labels(path)
    a = np.zeros((NODES, NODES))
    for v, ns in graph.items():
        a[v, ns] = 1
    a = np.maximum(a, a.T) + np.eye(NODES)
    d = 1 / np.sqrt(a.sum(1))
    np.testing.assert_allclose(adj, a * d[:, None] * d[None, :], rtol=1e-6)
    np.testing.assert_array_equal(labels_onehot, onehot.astype(np.float32))
    assert labels.tolist() == onehot.argmax(1).tolist() and features.shape == (NODES, WORDS)


def test_gcn_network_loss_and_accuracy_match_numpy(cora):
    """GCN (eval mode: no dropout) is adj @ relu(adj @ X W0^T) W1^T; the loss is weight_decay * L2(W0) plus
    the softmax cross-entropy, both weighted by mask / mean(mask) and averaged; the accuracy likewise."""
    adj, features, onehot, _ = get_adj_features_labels(cora[0])
    net = GCN(ConfigGCN(), WORDS, CLASSES)
    net.set_train(False)
    logits = net(Tensor(adj), Tensor(features)).asnumpy()
    w0, w1 = net.layer0.fc.weight.asnumpy(), net.layer1.fc.weight.asnumpy()
    want = adj @ (np.maximum(adj @ (features @ w0.T), 0) @ w1.T)
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-5)
    mask = get_mask(NODES, 10, 70)
    loss, acc = LossAccuracyWrapper(net, onehot, mask, ConfigGCN.weight_decay)(Tensor(adj), Tensor(features))
    shifted = want - want.max(1, keepdims=True)
    ce = -(onehot * (shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))).sum(1)
    weight = mask / mask.mean()
    l2 = ConfigGCN.weight_decay * 0.5 * np.sum(w0.astype(np.float64) ** 2)
    np.testing.assert_allclose(loss.asnumpy(), np.mean((l2 + ce) * weight), rtol=1e-4)
    hits = (want.argmax(1) == onehot.argmax(1)).astype(np.float64)
    np.testing.assert_allclose(acc.asnumpy(), np.mean(hits * weight), rtol=1e-5)


def test_gcn_trains_as_train_py(cora, tmp_path, capsys):
    path = cora[0]
    default_args.data_dir = path
    default_args.train_nodes_num, default_args.eval_nodes_num, default_args.test_nodes_num = 40, 40, TESTS
    default_args.save_ckptpath = str(tmp_path / "ckpts")
    gcn_train.run_train()
    out = capsys.readouterr().out
    lines = [line.split() for line in out.splitlines() if line.startswith("Epoch:")]
    train_loss = [float(words[words.index("train_loss=") + 1]) for words in lines]
    val_acc = [float(words[words.index("val_acc=") + 1]) for words in lines]
    # the zoo's ConfigGCN: 200 epochs, stopping early when the validation loss rises over 50 epochs' mean
    assert 50 < len(train_loss) <= ConfigGCN.epochs
    assert np.mean(train_loss[-5:]) < 0.7 * np.mean(train_loss[:3]), train_loss
    assert max(val_acc) > 0.8, val_acc
    test = out.split("Test set results:")[1].split()
    assert float(test[test.index("accuracy=") + 1]) > 0.75  # chance: 1/3
    assert os.path.isfile(os.path.join(default_args.save_ckptpath, "gcn.ckpt"))


def test_gcn_gpu_branch_trains_through_model(cora, tmp_path, monkeypatch, capsys):
    """train.py's GPU branch: GCN_GPU through Model.train (amp O3, sink mode) with the zoo's EvalCallBack
    keeping the best checkpoint and ModelCheckpoint the last."""
    monkeypatch.chdir(tmp_path)  # ConfigGCN's ckpt_dir and best_ckpt_dir are relative: ./ckpt, ./best_ckpt
    default_args.data_dir = cora[0]
    default_args.train_nodes_num, default_args.eval_nodes_num, default_args.test_nodes_num = 40, 40, TESTS
    default_args.device_target = "GPU"
    default_args.train_with_eval = True
    ConfigGCN.epochs = 30
    gcn_train.run_gpu_train()
    out = capsys.readouterr().out
    losses = [float(line.rsplit("loss is ", 1)[1]) for line in out.splitlines() if "loss is" in line]
    assert len(losses) == 30 and np.mean(losses[-3:]) < 0.8 * np.mean(losses[:3]), losses
    best = float(out.split("End training, the best Acc is: ")[1].split(",")[0])
    assert best > 0.8  # over every node (the zoo's eval dataset), chance 1/3
    assert os.listdir(tmp_path / "best_ckpt") == ["best.ckpt"]
    assert os.listdir(tmp_path / "ckpt") == ["ckpt_gcn-30_1.ckpt"]
    params = opforge.load_checkpoint(str(tmp_path / "best_ckpt" / "best.ckpt"))
    assert "layer0.fc.weight" in params and "layer1.fc.weight" in params


@pytest.fixture
def gat_config(monkeypatch):
    for key in ("data_dir", "train_nodes_num", "eval_nodes_num", "test_nodes_num", "device_target", "num_epochs"):
        monkeypatch.setattr(GAT_CONFIG, key, getattr(GAT_CONFIG, key))
    GAT_CONFIG.train_nodes_num, GAT_CONFIG.eval_nodes_num, GAT_CONFIG.test_nodes_num = 40, 40, TESTS
    GAT_CONFIG.device_target = "CPU"
    return GAT_CONFIG


def _np_gat(net, features, biases):
    """GAT (eval: no dropout) in NumPy: each head h = ELU(softmax(LeakyReLU(f1 + f2^T) + bias) @ XW^T + b), with
    f1, f2 the two 1-unit transforms of XW^T; the hidden layer concatenates its heads, the output layer (no
    activation) sums them, divided by the output heads."""

    def head(attn, x, activation):
        feature = x @ attn.feature_transform.weight.asnumpy().T
        f1 = feature @ attn.f_1_transform.weight.asnumpy().T + attn.f_1_transform.bias.asnumpy()
        f2 = feature @ attn.f_2_transform.weight.asnumpy().T + attn.f_2_transform.bias.asnumpy()
        logits = f1 + f2.T
        logits = np.where(logits > 0, logits, 0.2 * logits) + biases
        coefs = np.exp(logits - logits.max(1, keepdims=True))
        coefs /= coefs.sum(1, keepdims=True)
        out = coefs @ feature + attn.bias.asnumpy()
        return np.where(out > 0, out, np.expm1(out)) if activation else out

    hidden = np.concatenate([head(a, features, True) for a in net.layers[0].attns], 1)
    out = sum(head(a, hidden, False) for a in net.layers[1].attns)
    return out / net.num_heads[-1]


def test_gat_network_matches_numpy(cora, gat_config):
    features, biases, y_train, train_mask, *_ = load_and_process(cora[0], 40, 40, TESTS)
    assert features.shape == (1, NODES, WORDS) and biases.shape == (1, NODES, NODES)
    assert train_mask.dtype == np.bool_ and train_mask.sum() == 40 and y_train.shape == (1, NODES, CLASSES)
    net = GAT(WORDS, CLASSES, NODES, [4], [2, 1])
    logits = net(Tensor(features), Tensor(biases), training=False).asnumpy()
    np.testing.assert_allclose(logits[0], _np_gat(net, features[0], biases[0]), rtol=1e-4, atol=1e-5)


def test_gat_trains_as_train_py(cora, gat_config, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # train.py keeps its checkpoint in ./ckpts
    gat_config.data_dir = cora[0]
    gat_config.num_epochs = 60
    gat_train.gnn_train()
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("Epoch:")]
    number = lambda line, key: float(line.split(key + "=")[1].split(",")[0].split()[0])  # noqa: E731
    train_loss = [number(line, "train loss") for line in lines]
    val_loss = [number(line, "val loss") for line in lines]
    assert len(lines) == 60
    assert np.mean(train_loss[-5:]) < 0.9 * np.mean(train_loss[:5]) and val_loss[-1] < 0.85 * val_loss[0]
    assert float(out.split("test acc=")[1].split()[0]) > 0.75  # chance: 1/3
    assert os.listdir(tmp_path / "ckpts") == ["gat.ckpt"]


def test_cell_attr_register_records_the_init_arguments():
    """GAT's GNNFeatureTransform is decorated with mindspore._extends.cell_attr_register: the cell keeps its
    class name and the arguments of the call (MindSpore's ``cell_init_args``)."""
    from zoo.gat.gat import GNNFeatureTransform

    from opforge import nn
    from opforge._extends import cell_attr_register

    cell = GNNFeatureTransform(4, 3, weight_init="XavierUniform")
    assert cell.cell_init_args == "GNNFeatureTransform" + str({"a": 4, "b": 3, "c": "XavierUniform"}.values())
    assert cell.weight.shape == (3, 4) and cell.bias.shape == (3,)

    class Chosen(nn.Cell):
        @cell_attr_register(attrs=["width", "missing"])
        def __init__(self, width):
            super().__init__()
            self.width = width

    assert Chosen(7).cell_init_args == "Chosen[7]"
    with pytest.raises(ValueError, match="attrs"):
        cell_attr_register(attrs=3)
