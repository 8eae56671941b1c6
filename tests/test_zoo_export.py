"""The model zoo's export.py scripts, run as the zoo runs them (``python export.py``: ``runpy`` with
``__name__ == "__main__"``, the values set through the program's config object as its README's command lines
set them), on a checkpoint saved first from a freshly built network, with sizes shrunk: tests/zoo/<name>/export.py
is the zoo's text with ``mindspore`` replaced by ``opforge`` in the imports (and ``src.`` by the ported package).

For each format the file export.py wrote must exist; the MINDIR file, read by ``opforge.load`` and run by
``nn.GraphCell``, gives the network's output on new inputs of the exported shapes (the same kernels: equal), and
the ONNX file, run by ONNX Runtime, matches it (allclose). The network is rebuilt here as export.py builds it and
given the checkpoint export.py loads.

Also here: what the zoo's exports needed of ``opforge.ir`` -- a BatchNorm on batch statistics (CycleGAN's
generators, ``use_batch_statistics=True``; Pix2Pix's, recorded in training mode) through both formats, and
the nodes no output reads (its moving statistics' update) left out of an ONNX file, which has no state.
"""

import os
import runpy
import sys

import numpy as np
import pytest

import opforge as ms
from opforge import Parameter, Tensor, context, nn, ops
from opforge.ir import ExportError, to_onnx
from opforge.ir import record as record_graph

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

FORMATS = ["MINDIR", "ONNX"]


@pytest.fixture(autouse=True)
def _state(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["export.py"])  # the scripts' argparse must not read pytest's
    np.random.seed(0)
    ms.set_seed(0)
    yield
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


@pytest.fixture
def keep():
    """``keep(obj)``: ``obj``'s attributes as they were, back after the test (scripts that write their
    config: CycleGAN's get_args, the batch sizes export.py sets)."""
    saved = []
    yield lambda obj: saved.append((obj, dict(vars(obj))))
    for obj, values in reversed(saved):
        vars(obj).clear()
        vars(obj).update(values)


def _set(monkeypatch, config, **values):
    """Config values for this test only (restored after it)."""
    for key, value in values.items():
        monkeypatch.setattr(config, key, value, raising=False)


def _run_export(module: str) -> dict:
    """``python export.py``: the script's globals after it ran."""
    return runpy.run_module(module, run_name="__main__")


def _random_statistics(net, seed=0, gamma=(0.5, 1.5)):
    """Random BatchNorm scales, shifts and moving statistics (a fresh net's are 1 and 0, which would let a
    wrong statistic go unseen)."""
    rng = np.random.default_rng(seed)
    for name, p in net.parameters_and_names():
        if name.endswith("gamma"):
            p.set_data(Tensor(rng.uniform(*gamma, p.shape).astype(np.float32)))
        elif name.endswith("moving_variance"):
            p.set_data(Tensor(rng.uniform(0.5, 1.5, p.shape).astype(np.float32)))
        elif name.endswith(("beta", "moving_mean")):
            p.set_data(Tensor(rng.normal(0.0, 0.1, p.shape).astype(np.float32)))


class _Holder(nn.Cell):
    """``net`` under the attribute ``name``: a checkpoint with the parameter names of a network holding it."""

    def __init__(self, name, net):
        super().__init__()
        self.insert_child_to_cell(name, net)


def _save(net, path) -> str:
    ms.save_checkpoint(net, str(path))
    return str(path)


def _images(shape, seed=1):
    return Tensor(np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(np.float32))


def _as_list(value) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _check(base: str, fmt: str, net, inputs, train=False):
    """The file export.py wrote for ``base`` in ``fmt``, run on ``inputs``, against ``net`` (in inference,
    unless ``train``)."""
    net.set_train(train)
    want = [o.asnumpy() for o in _as_list(net(*inputs))]
    path = base + (".mindir" if fmt == "MINDIR" else ".onnx")
    assert os.path.isfile(path), f"export.py did not write {path}"
    if fmt == "MINDIR":
        cell = nn.GraphCell(ms.load(path))
        got = [o.asnumpy() for o in _as_list(cell(*inputs))]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        return
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {f"input_{i}": x.asnumpy() for i, x in enumerate(inputs)})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind == "f":
            scale = float(np.abs(w).max())
            assert scale > 0
            tol = 1e-2 if w.dtype == np.float16 else 1e-5  # (float16 rounds each layer's output)
            np.testing.assert_allclose(g, w, rtol=10 * tol, atol=tol * scale)
        else:
            np.testing.assert_array_equal(g, w)


# -- image classifiers --------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_googlenet_export_py(fmt, tmp_path, monkeypatch):
    from zoo.googlenet.model_utils.config import config
    from zoo.googlenet.src.googlenet import GoogleNet

    net = GoogleNet(num_classes=config.num_classes)
    _random_statistics(net)
    ckpt = _save(net, tmp_path / "googlenet.ckpt")
    base = str(tmp_path / "googlenet")
    _set(monkeypatch, config, ckpt_file=ckpt, batch_size=2, file_name=base, file_format=fmt)
    _run_export("zoo.googlenet.export")
    _check(base, fmt, net, [_images((2, 3, config.image_height, config.image_width))])


@pytest.mark.parametrize("fmt", FORMATS)
def test_squeezenet_export_py(fmt, tmp_path, monkeypatch):
    # python export.py --net squeezenet --dataset cifar10 --checkpoint_path ... (its docstring)
    from zoo.squeezenet.model_utils.config import config
    from zoo.squeezenet.src.squeezenet import SqueezeNet

    net = SqueezeNet(num_classes=10)
    ckpt = _save(net, tmp_path / "squeezenet.ckpt")
    base = str(tmp_path / "squeezenet")
    _set(monkeypatch, config, net_name="squeezenet", dataset="cifar10", checkpoint_file_path=ckpt)
    _set(monkeypatch, config, batch_size=2, height=64, width=64, file_name=base, file_format=fmt)
    _run_export("zoo.squeezenet.export")
    _check(base, fmt, net, [_images((2, 3, 64, 64))])


@pytest.mark.parametrize("fmt", FORMATS)
def test_alexnet_export_py(fmt, tmp_path, monkeypatch):
    from zoo.alexnet.src.alexnet import AlexNet
    from zoo.alexnet.src.model_utils.config import config

    # the CIFAR-10 branch: float32 NHWC images, the network's first step moves them to NCHW; the images stay
    # 227 x 227 (fc1 takes 6 x 6 x 256 features)
    net = AlexNet(num_classes=config.num_classes, dataset_name=config.dataset_name)
    ckpt = _save(net, tmp_path / "alexnet.ckpt")
    base = str(tmp_path / "alexnet")
    _set(monkeypatch, config, ckpt_file=ckpt, batch_size=1, file_name=base, file_format=fmt)
    _run_export("zoo.alexnet.export")
    images = Tensor(np.random.default_rng(1).uniform(0, 255, (1, 227, 227, 3)).astype(np.float32))
    _check(base, fmt, net, [images])


@pytest.mark.parametrize("fmt", FORMATS)
def test_densenet_export_py(fmt, tmp_path, monkeypatch):
    from zoo.densenet.config import config
    from zoo.densenet.densenet import DenseNet121

    net = DenseNet121(config.num_classes)
    _random_statistics(net, gamma=(0.2, 0.5))  # (scales of 0.5-1.5 grow the dense blocks' sums past float16)
    ckpt = _save(net, tmp_path / "densenet.ckpt")
    base = str(tmp_path / "densenet")
    _set(monkeypatch, config, ckpt_files=ckpt, batch_size=2, file_name=base, file_format=fmt)
    _run_export("zoo.densenet.export")
    net.add_flags_recursive(fp16=True)  # as export.py does: MindSpore's to_float(float16)
    _check(base, fmt, net, [_images((2, 3, 32, 32))])


@pytest.mark.parametrize("fmt", FORMATS)
def test_efficientnet_export_py(fmt, tmp_path, monkeypatch):
    from zoo.efficientnet.config import config
    from zoo.efficientnet.efficientnet import efficientnet_b0

    kwargs = {"drop_rate": config.drop, "drop_connect_rate": config.drop_connect, "global_pool": config.gp}
    net = efficientnet_b0(num_classes=config.num_classes, bn_tf=config.bn_tf, **kwargs)
    _random_statistics(net)  # (a fresh B0's logits are ~1e-14: zero-initialised last BatchNorm scales)
    ckpt = _save(net, tmp_path / "efficientnet.ckpt")
    base = str(tmp_path / "efficientnet")
    _set(monkeypatch, config, ckpt_file=ckpt, batch_size=2, file_name=base, file_format=fmt)
    _run_export("zoo.efficientnet.export")
    _check(base, fmt, net, [_images((2, 3, config.height, config.width))])


@pytest.mark.parametrize("fmt", FORMATS)
def test_mobilenetv3_export_py(fmt, tmp_path, monkeypatch):
    # python export.py --checkpoint_path ... --device_target CPU --file_name ... --file_format ...: config_cpu's
    # network (softmax output) on one image, 64 x 64 here
    from zoo.mobilenetv3.src.config import config_cpu
    from zoo.mobilenetv3.src.mobilenetV3 import mobilenet_v3_large

    monkeypatch.setitem(config_cpu, "image_height", 64)
    monkeypatch.setitem(config_cpu, "image_width", 64)
    net = mobilenet_v3_large(num_classes=config_cpu.num_classes, activation="Softmax")
    _random_statistics(net)
    ckpt = _save(net, tmp_path / "mobilenetv3.ckpt")
    base = str(tmp_path / "mobilenetv3")
    argv = ["--checkpoint_path", ckpt, "--device_target", "CPU", "--file_name", base, "--file_format", fmt]
    monkeypatch.setattr(sys, "argv", ["export.py", *argv])
    _run_export("zoo.mobilenetv3.export")
    _check(base, fmt, net, [_images((1, 3, 64, 64))])


@pytest.mark.parametrize("fmt", FORMATS)
def test_inceptionv3_export_py(fmt, tmp_path, monkeypatch, keep):
    # one 299 x 299 image (export.py sets batch_size 1; the network's last pooling needs 299)
    from zoo.inceptionv3.src.inception_v3 import InceptionV3
    from zoo.inceptionv3.src.model_utils.config import config

    keep(config)
    net = InceptionV3(num_classes=config.num_classes, is_training=False)
    _random_statistics(net)
    base = str(tmp_path / "inceptionv3")
    _set(monkeypatch, config, ckpt_file=_save(net, tmp_path / "inceptionv3.ckpt"))
    _set(monkeypatch, config, file_name=base, file_format=fmt)
    _run_export("zoo.inceptionv3.export")
    _check(base, fmt, net, [_images((1, 3, config.width, config.height))])


# -- segmentation and image-to-image ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_deeplabv3_export_py(fmt, tmp_path, monkeypatch):
    # python export.py --ckpt_file ... --file_name ... --file_format ... --freeze_bn True (its README); 33 x 33
    from zoo.deeplabv3.model_utils.config import config
    from zoo.deeplabv3.src.nets import net_factory

    ckpt = str(tmp_path / "deeplabv3.ckpt")
    base = str(tmp_path / "deeplabv3")
    _set(monkeypatch, config, freeze_bn=True, ckpt_file=ckpt, input_size=33, file_name=base, file_format=fmt)
    backbone = net_factory.nets_map["deeplab_v3_s8"]("eval", config.num_classes, 8, config.freeze_bn)
    _random_statistics(backbone)
    _save(_Holder("network", backbone), ckpt)  # export.py's BuildEvalNetwork names the parameters "network.*"
    script = _run_export("zoo.deeplabv3.export")
    net = script["BuildEvalNetwork"](backbone, config.input_format)  # its softmax over the classes
    _check(base, fmt, net, [_images((config.export_batch_size, 3, 33, 33))])


@pytest.mark.parametrize("fmt", FORMATS)
def test_cyclegan_export_py(fmt, tmp_path, monkeypatch, keep):
    """Both generators, with batch statistics in their BatchNorms (export.py's ``enable_batch_statistics``:
    instance normalisation at batch size 1), written as <name>_AtoB and <name>_BtoA."""
    from zoo.cyclegan.args import args
    from zoo.cyclegan.cycle_gan import get_generator
    from zoo.cyclegan.tools import enable_batch_statistics

    keep(args)  # get_args("export") writes phase, n_epochs, max_dataset_size, norm_mode
    small = {"platform": "CPU", "image_size": 32, "ngf": 8, "ndf": 8, "gl_num": 2, "dl_num": 2}
    _set(monkeypatch, args, dataroot=str(tmp_path), **small)
    generators = {}
    for way in ("A", "B"):
        g = get_generator(args)
        _set(monkeypatch, args, **{f"G_{way}_ckpt": _save(g, tmp_path / f"G_{way}.ckpt")})
        enable_batch_statistics(g)
        generators[way] = g
    base = str(tmp_path / "CycleGAN")
    _set(monkeypatch, args, export_file_name=base, export_file_format=fmt)
    _run_export("zoo.cyclegan.export")
    x = _images((args.export_batch_size, 3, 32, 32))
    _check(base + "_AtoB", fmt, generators["A"], [x])
    _check(base + "_BtoA", fmt, generators["B"], [x])


@pytest.mark.parametrize("fmt", FORMATS)
def test_crnn_export_py(fmt, tmp_path, monkeypatch, keep):
    """CRNN (V2: the VGG, then a bidirectional LSTM of LSTMLayer primitives, ONNX's LSTM) on one 32 x 48 image,
    the logits of its 11 time steps."""
    from zoo.crnn.config import config
    from zoo.crnn.crnn import crnn

    keep(config)
    config.batch_size = 1  # as export.py sets it
    net = crnn(config, full_precision=True)
    _random_statistics(net)
    base = str(tmp_path / "crnn")
    _set(monkeypatch, config, ckpt_file=_save(net, tmp_path / "crnn.ckpt"), file_name=base, file_format=fmt)
    _run_export("zoo.crnn.export")
    _check(base, fmt, net, [_images((1, 3, config.image_height, config.image_width))])


@pytest.mark.parametrize("fmt", FORMATS)
def test_pix2pix_export_py(fmt, tmp_path, monkeypatch):
    """The U-Net generator as export.py records it, after ``set_train()``: its BatchNorms on the batch's
    statistics (the image's, at batch size 1); 256 x 256 images, which the network fixes."""
    from zoo.pix2pix.src.models.pix2pix import get_generator
    from zoo.pix2pix.src.utils.config import config

    net = get_generator()
    base = str(tmp_path / "pix2pix")
    _set(monkeypatch, config, ckpt=_save(net, tmp_path / "pix2pix.ckpt"), file_name=base, file_format=fmt)
    _run_export("zoo.pix2pix.export")
    _check(base, fmt, net, [_images((config.batch_size, 3, 256, 256))], train=True)


# -- text and recommendation ----------------------------------------------------------------------------


def _write_movie_review(root, count=20, seed=0) -> str:
    """rt-polarity.pos / rt-polarity.neg: sentences of 4 to 9 words from 30 (letters only: MovieReview drops
    digits)."""
    rng = np.random.default_rng(seed)
    words = ["w" + "abcdefghijklmnopqrstuvwxyz"[i // 26] + "abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(30)]
    os.makedirs(root)
    for polarity in ("pos", "neg"):
        with open(os.path.join(root, f"rt-polarity.{polarity}"), "w") as f:
            for _ in range(count):
                f.write(" ".join(str(w) for w in rng.choice(words, int(rng.integers(4, 10)))) + " .\n")
    return str(root)


@pytest.mark.parametrize("fmt", FORMATS)
def test_textcnn_export_py(fmt, tmp_path, monkeypatch):
    """On a MovieReview folder (export.py reads it for the vocabulary size)."""
    from zoo.textcnn.config import config
    from zoo.textcnn.dataset import MovieReview
    from zoo.textcnn.textcnn import TextCNN

    data = _write_movie_review(tmp_path / "data")
    vocab = MovieReview(root_dir=data, maxlen=config.word_len, split=0.9).get_dict_len()
    net = TextCNN(vocab_len=vocab, word_len=config.word_len, num_classes=config.num_classes, vec_length=8)
    ckpt = _save(net, tmp_path / "textcnn.ckpt")
    base = str(tmp_path / "textcnn")
    _set(monkeypatch, config, data_path=data, checkpoint_file_path=ckpt, batch_size=4)
    _set(monkeypatch, config, vec_length=8, file_name=base, file_format=fmt)
    _run_export("zoo.textcnn.export")
    tokens = Tensor(np.random.default_rng(1).integers(0, vocab, (4, config.word_len)).astype(np.int32))
    _check(base, fmt, net, [tokens])


@pytest.mark.parametrize("fmt", FORMATS)
def test_fasttext_export_py(fmt, tmp_path, monkeypatch):
    """FastText under export.py's FastTextInferExportCell (log-softmax, ArgMaxWithValue's index). MINDIR: AG's
    shapes ([batch, 467] tokens); ONNX: one file per batch shape of the test bucket's MindRecord, as the
    zoo's ONNX branch reads them (<name>_<batch>_<length>_ag.onnx)."""
    from zoo.fasttext import dataset as ft_data
    from zoo.fasttext.config import config
    from zoo.fasttext.fasttext_model import FastText

    net = FastText(config.vocab_size, config.embedding_dims, config.num_class)
    table = net.embeding_func.embedding_table
    table.set_data(Tensor(np.random.default_rng(0).normal(0, 1, table.shape).astype(np.float32)))  # "Zeros"
    ckpt = _save(net, tmp_path / "fasttext.ckpt")
    rng = np.random.default_rng(0)
    rows = [[[int(t) for t in rng.integers(2, config.vocab_size, int(n))], int(n), 0] for n in rng.integers(3, 22, 12)]
    data = tmp_path / "data"
    data.mkdir()
    buckets = ft_data.pad_to_buckets(rows, config.test_buckets, {b: [] for b in config.test_buckets})
    for length, items in buckets.items():
        ft_data.write_to_mindrecord(items, str(data / f"test_dataset_bs_{length}.mindrecord"))
    base = str(tmp_path / "fasttext")
    _set(monkeypatch, config, ckpt_file=ckpt, dataset_path=str(data), file_name=base, file_format=fmt)
    script = _run_export("zoo.fasttext.export")
    infer = script["FastTextInferExportCell"](net)
    length = config.test_buckets[0]
    shapes = [(config.batch_size, 467)] if fmt == "MINDIR" else [(config.batch_size, length), (4, length)]
    for batch, width in shapes:  # 12 rows in batches of 8: 8 and 4
        tokens = Tensor(rng.integers(0, config.vocab_size, (batch, width)).astype(np.int32))
        lengths = Tensor(rng.integers(3, width, (batch, 1)).astype(np.int32))
        name = base + "_ag" if fmt == "MINDIR" else f"{base}_{batch}_{width}_ag"
        _check(name, fmt, infer, [tokens, lengths])


@pytest.mark.parametrize("fmt", FORMATS)
def test_deepfm_export_py(fmt, tmp_path, monkeypatch):
    """The eval network (logits, probabilities, labels passed through) on a batch of 16 rows of 39 fields."""
    from zoo.deepfm.config import config
    from zoo.deepfm.deepfm import ModelBuilder

    base = str(tmp_path / "deepfm")
    _set(monkeypatch, config, batch_size=16, file_name=base, file_format=fmt)
    _, net = ModelBuilder(config, config).get_train_eval_net()
    _set(monkeypatch, config, ckpt_file=_save(net, tmp_path / "deepfm.ckpt"))
    _run_export("zoo.deepfm.export")
    rng = np.random.default_rng(1)
    ids = Tensor(rng.integers(0, config.data_vocab_size, (16, config.data_field_size)).astype(np.int32))
    weights = Tensor(rng.uniform(0, 1, (16, config.data_field_size)).astype(np.float32))
    labels = Tensor(rng.integers(0, 2, (16, 1)).astype(np.float32))
    _check(base, fmt, net, [ids, weights, labels])


@pytest.mark.parametrize("fmt", FORMATS)
def test_ncf_export_py(fmt, tmp_path, monkeypatch):
    """NCF on ml-1m's sizes under PredictWithSigmoid: the top-10 of each user's 100 items (TopK), the items,
    and whether the user's row had duplicates; two users (eval_batch_size 200)."""
    from zoo.ncf.config import config
    from zoo.ncf.ncf import NCFModel, PredictWithSigmoid

    ncf = NCFModel(
        num_users=6040, num_items=3706, num_factors=config.num_factors, model_layers=config.layers,
        mf_regularization=0, mlp_reg_layers=[0.0, 0.0, 0.0, 0.0], mf_dim=16,
    )  # fmt: skip
    base = str(tmp_path / "ncf")
    _set(monkeypatch, config, ckpt_file=_save(ncf, tmp_path / "ncf.ckpt"), eval_batch_size=200)
    _set(monkeypatch, config, file_name=base, file_format=fmt)
    _run_export("zoo.ncf.export")
    rng = np.random.default_rng(1)
    users = Tensor(np.repeat(rng.integers(0, 6040, (2, 1)), 100, axis=0).astype(np.int32))
    items = Tensor(rng.integers(0, 3706, (200, 1)).astype(np.int32))
    masks = Tensor((np.arange(200) > 100).astype(np.float32).reshape(200, 1))  # user 2: 99 duplicates
    net = PredictWithSigmoid(ncf, 10, 99)
    _check(base, fmt, net, [users, items, masks])
    _, _, weights = net(users, items, masks)
    assert weights.asnumpy().tolist() == [True, False]


@pytest.mark.parametrize("fmt", FORMATS)
def test_tinybert_export_py(fmt, tmp_path, monkeypatch, keep):
    """python export.py --config_path td_config_sst2.yaml --task_name SST-2 --ckpt_file ...: the student
    BertModelCLS (float16 compute) at export.py's batch 32 and SST-2's 64 tokens, from a task-distill
    checkpoint (the student under "bert.", its cells "tinybert_*" as TinyBertModel names them)."""
    from zoo.tinybert.config import config, td_student_net_cfg
    from zoo.tinybert.tinybert_model import BertModelCLS

    keep(td_student_net_cfg)
    td_student_net_cfg.seq_length, td_student_net_cfg.batch_size = 64, 32  # as export.py sets them
    net = BertModelCLS(td_student_net_cfg, False, 2, 0.0, phase_type="student")
    params = ms.load_checkpoint(_save(_Holder("bert", net), tmp_path / "student.ckpt"))
    ckpt = str(tmp_path / "tinybert_td.ckpt")
    ms.save_checkpoint([{"name": k.replace("bert_", "tinybert_"), "data": v} for k, v in params.items()], ckpt)
    base = str(tmp_path / "tinybert")
    _set(monkeypatch, config, task_name="SST-2", task_type="classification", ckpt_file=ckpt)
    _set(monkeypatch, config, file_name=base, file_format=fmt)
    _run_export("zoo.tinybert.export")
    rng = np.random.default_rng(1)
    ids = Tensor(rng.integers(0, td_student_net_cfg.vocab_size, (32, 64)).astype(np.int32))
    token_types = Tensor(rng.integers(0, 2, (32, 64)).astype(np.int32))
    mask = Tensor((np.arange(64) < rng.integers(8, 65, (32, 1))).astype(np.int32))
    _check(base, fmt, net, [ids, token_types, mask])


# -- what the exports needed of opforge.ir ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 6), (2, 6, 5), (1, 6, 3, 3), (3, 6, 2, 4)])
def test_batch_statistics_batchnorm_through_mindir_and_onnx(shape, tmp_path):
    """BatchNorm(is_training=True): y and the batch's mean and biased variance (its other outputs) from the
    ONNX file, as opforge's kernel gives them; the MINDIR graph runs the same kernel."""
    rng = np.random.default_rng(0)
    c = shape[1]
    scale, offset = (Tensor(rng.normal(1, 0.2, c).astype(np.float32)), Tensor(rng.normal(0, 0.2, c).astype(np.float32)))
    mean = Parameter(Tensor(rng.normal(0, 1, c).astype(np.float32)), name="mean", requires_grad=False)
    variance = Parameter(Tensor(rng.uniform(0.5, 2, c).astype(np.float32)), name="variance", requires_grad=False)
    bn = ops.BatchNorm(is_training=True, epsilon=1e-3)

    def f(x):
        return bn(x, scale, offset, mean, variance)

    x = Tensor(rng.normal(2, 3, shape).astype(np.float32))
    model = to_onnx(record_graph(f, x))
    assert {n.op_type for n in model.graph.node}.isdisjoint({"BatchNormalization"})
    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"input_0": x.asnumpy()}
    )
    want = [o.asnumpy() for o in f(x)]
    axes = (0, *range(2, len(shape)))
    xs = x.asnumpy().astype(np.float64)
    np.testing.assert_allclose(want[1], xs.mean(axes), rtol=1e-5)  # the reference: NumPy's batch statistics
    np.testing.assert_allclose(want[2], xs.var(axes), rtol=1e-5)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)

    net = nn.BatchNorm2d(c, use_batch_statistics=True) if len(shape) == 4 else None
    if net is not None:  # a network in inference that normalises with the batch's statistics, as CycleGAN's
        net.set_train(False)
        ms.export(net, x, file_name=str(tmp_path / "bn"), file_format="MINDIR")
        cell = nn.GraphCell(ms.load(str(tmp_path / "bn.mindir")))
        np.testing.assert_array_equal(cell(x).asnumpy(), net(x).asnumpy())


def test_onnx_leaves_out_writes_no_output_reads():
    """The nodes no output reads are left out of an ONNX file (a training BatchNorm's update of its moving
    statistics), with the weights only they read; a weight read after an in-place write is read from the
    write, which then stays and is refused by name (an ONNX graph has no state to write)."""
    w = Parameter(Tensor(np.ones(3, np.float32)), name="w")
    assign = ops.Assign()

    def reads_after_write(x):
        assign(w, x * 2)
        return x + w

    def writes_only(x):
        assign(w, x * 2)
        return x + 1

    x = Tensor(np.arange(3, dtype=np.float32))
    with pytest.raises(ExportError, match=r"no ONNX rule for the operator\(s\) \['Assign'\]"):
        to_onnx(record_graph(reads_after_write, x))
    model = to_onnx(record_graph(writes_only, x))
    assert [n.op_type for n in model.graph.node] == ["Add", "Identity"]
    assert [t.name for t in model.graph.initializer] == [model.graph.node[0].input[1]]  # only what is read
