"""CRNN as MindSpore's model zoo runs it (tests/zoo/crnn: official/cv/CRNN/src with ``mindspore`` replaced by
``opforge``), on PNG images of digit strings written here: ``create_dataset("synth", ...)`` reads them through
the zoo's ``CaptchaDataset`` (labels padded with the blank) into a ``GeneratorDataset`` with its ``Resize`` /
``Normalize`` / ``HWC2CHW`` and ``TypeCast`` maps; train.py's step (``crnn`` V2: VGG + two BiLSTMs, the
``CTCLoss`` cell over ``P.CTCLoss`` with every label position in ``labels_indices``, ``nn.SGD`` with
``cosine_decay_lr_with_start_step``, ``TrainOneStepCellWithGradClip``) trains through ``Model.train`` with its
callbacks (``CRNNMonitor``, ``ResumeCallback``, ``EvalCallBack``, ``ModelCheckpoint`` with ``append_info``),
resumes from the checkpoint as train.py does, and eval.py evaluates with ``CRNNAccuracy`` (its greedy CTC
decoder and edit distance). The loss cell and the decoder are checked against NumPy references."""

import copy
import os

import numpy as np
import pytest
from helpers import ctc_nll_by_paths, softmax_rows
from PIL import Image, ImageDraw
from zoo.crnn import callback as crnn_callback
from zoo.crnn import crnn as crnn_net
from zoo.crnn import crnn_for_train, eval_callback, lr_scheduler
from zoo.crnn import dataset as crnn_dataset
from zoo.crnn import loss as crnn_loss
from zoo.crnn import metric as crnn_metric
from zoo.crnn.config import config as zoo_config

import opforge
import opforge.dataset as ds
import opforge.nn as nn
from opforge import Tensor, context
from opforge.nn.wrap import WithLossCell
from opforge.train.callback import CheckpointConfig, LambdaCallback, ModelCheckpoint
from opforge.train.model import Model
from opforge.train.serialization import load_checkpoint, load_param_into_net

LEXICON = ["12", "345", "6789", "90", "271", "58", "4", "606", "1357", "24", "88", "913"]


@pytest.fixture(autouse=True)
def _seeds():
    ds.config._state["seed"] = None
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


@pytest.fixture
def config(tmp_path):
    cfg = copy.copy(zoo_config)
    cfg.output_dir = str(tmp_path / "out")
    cfg.save_ckpt_dir = os.path.join(cfg.output_dir, "ckpt")
    return cfg


def _write_synth(root, count_train=16, count_test=4):
    """The layout CaptchaDataset reads: lexicon.txt, annotation_{train,test}.txt ("name lexicon-index"), and
    RGB images of the words (PIL's bitmap font, black on white, at a random offset)."""
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    (root / "lexicon.txt").write_text("\n".join(LEXICON) + "\n")
    for split, count in (("train", count_train), ("test", count_test)):
        lines = []
        for i in range(count):
            word = int(rng.integers(len(LEXICON)))
            image = Image.new("RGB", (64, 24), (255, 255, 255))
            ImageDraw.Draw(image).text((int(rng.integers(0, 12)), int(rng.integers(2, 8))), LEXICON[word], (0, 0, 0))
            name = f"{split}_{i}.png"
            image.save(root / name)
            lines.append(f"{name} {word}")
        (root / f"annotation_{split}.txt").write_text("\n".join(lines) + "\n")
    return str(root)


# ---------------------------------------------------------------------------------------------
# Independent references: the CTC loss of one sequence by every alignment, the greedy decoder


def _ctc_nll(logits: np.ndarray, labels: list, blank: int) -> float:
    """-log p(labels | logits [T, C]) by every alignment (tests/helpers.py)."""
    return ctc_nll_by_paths(softmax_rows(logits), labels, blank)


def test_crnn_ctc_loss_cell_reads_blank_padding_as_the_end_of_a_label():
    # The zoo's CTCLoss cell: labels_indices covers every (batch, position); the rows are padded with the blank.
    steps, batch, classes, max_len = 5, 3, 4, 3
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(steps, batch, classes)).astype(np.float32)
    labels = np.array([[0, 1, 3], [2, 2, 3], [1, 3, 3]], np.int32)  # blank = 3
    loss = crnn_loss.CTCLoss(max_sequence_length=steps, max_label_length=max_len, batch_size=batch)
    got = loss(Tensor(logits), Tensor(labels)).asnumpy()
    want = [_ctc_nll(logits[:, b].astype(np.float64), [int(v) for v in labels[b] if v < 3], 3) for b in range(batch)]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_crnn_accuracy_greedy_decoder_and_edit_distance(config):
    metric = crnn_metric.CRNNAccuracy(config, print_flag=False)
    blank = config.blank
    # argmax paths: "1 1 blank 2" -> "12"; "3 blank 3 3" -> "33"; "blank blank 4 blank" -> "4"
    paths = [[27, 27, blank, 28], [29, blank, 29, 29], [blank, blank, 30, blank]]
    y_pred = np.full((4, 3, config.class_num), -5.0, np.float32)
    for b, path in enumerate(paths):
        y_pred[np.arange(4), b, path] = 5.0
    label = np.full((3, config.max_text_length), blank, np.int32)
    label[0, :2] = [27, 28]  # "12": right
    label[1, :2] = [29, 30]  # "34": wrong
    label[2, :1] = [30]  # "4": right
    metric.clear()
    metric.update(Tensor(y_pred), Tensor(label))
    assert metric._ctc_greedy_decoder(y_pred) == ["12", "33", "4"]
    assert metric.eval() == pytest.approx(2 / 3)
    metric.update(Tensor(y_pred), ["12", "33", "44"])  # labels as strings, as the eval datasets give them
    assert metric.eval() == pytest.approx(4 / 6)
    assert crnn_metric.Levenshtein.distance("kitten", "sitting") == 3
    with pytest.raises(ValueError, match="CRNNAccuracy need 2 inputs"):
        metric.update(Tensor(y_pred))


def test_crnn_dataset_reads_the_synth_images(tmp_path, config):
    path = _write_synth(tmp_path / "synth")
    data = crnn_dataset.create_dataset("synth", path, batch_size=config.batch_size, config=config)
    assert data.get_dataset_size() == 4
    image, label = next(data.create_tuple_iterator())
    assert image.shape == (4, 3, config.image_height, config.image_width) and image.dtype == opforge.float32
    assert label.shape == (4, config.max_text_length) and label.dtype == opforge.int32
    assert -1.0 <= image.asnumpy().min() and image.asnumpy().max() <= 1.0
    for row in label.asnumpy():  # digits are classes 26..35, then the blank padding
        word = [int(v) for v in row if v != config.blank]
        assert "".join(config.label_dict[v] for v in word) in LEXICON
        assert list(row[len(word) :]) == [config.blank] * (len(row) - len(word))


def _train(config, dataset, eval_callbacks=None, resume_param=None):
    """train.py's train() after the dataset: lr, loss, net, SGD, WithLossCell, TrainOneStepCellWithGradClip,
    Model, its callbacks (``eval_callbacks(net, loss)``: run_eval's); the losses each step."""
    config.steps_per_epoch = dataset.get_dataset_size()
    lr = lr_scheduler.cosine_decay_lr_with_start_step(
        0.0, config.learning_rate, config.epoch_size * config.steps_per_epoch, config.steps_per_epoch,
        config.epoch_size, config.train_start_epoch * config.steps_per_epoch,
    )  # fmt: skip
    loss = crnn_loss.CTCLoss(
        max_sequence_length=config.num_step, max_label_length=config.max_text_length, batch_size=config.batch_size
    )
    net = crnn_net.crnn(config, full_precision=config.device_target != "Ascend")
    opt = nn.SGD(params=net.trainable_params(), learning_rate=lr, momentum=config.momentum, nesterov=config.nesterov)
    net_with_loss = WithLossCell(net, loss)
    net_with_grads = crnn_for_train.TrainOneStepCellWithGradClip(net_with_loss, opt).set_train()
    if resume_param is not None:
        load_param_into_net(net_with_grads, resume_param)
    model = Model(net_with_grads)
    callbacks = [crnn_callback.ResumeCallback(start_epoch=config.train_start_epoch)]
    if eval_callbacks is not None:
        callbacks += eval_callbacks(net, loss)
    ckpt_append_info = [{"epoch_num": 0}]
    config_ck = CheckpointConfig(
        save_checkpoint_steps=config.save_checkpoint_steps, keep_checkpoint_max=config.keep_checkpoint_max,
        append_info=ckpt_append_info,
    )  # fmt: skip
    callbacks.append(ModelCheckpoint(prefix="crnn", directory=config.save_ckpt_dir, config=config_ck))
    callbacks.append(crnn_callback.CRNNMonitor(config, lr))
    losses = []
    callbacks.append(LambdaCallback(on_train_step_end=lambda rc: losses.append(rc.original_args().net_outputs)))
    model.train(
        config.epoch_size - config.train_start_epoch, dataset, callbacks=callbacks,
        dataset_sink_mode=config.device_target == "Ascend",
    )  # fmt: skip
    return net, loss, [float(np.mean(out.asnumpy())) for out in losses]


def _apply_eval(eval_param):  # train.py's
    evaluation_model = eval_param["model"]
    eval_ds = eval_param["dataset"]
    metrics_name = eval_param["metrics_name"]
    res = evaluation_model.eval(eval_ds)
    return res[metrics_name]


def test_crnn_trains_resumes_and_evaluates_as_train_and_eval_py(tmp_path, config):
    path = _write_synth(tmp_path / "synth")
    config.epoch_size = 6
    dataset = crnn_dataset.create_dataset(
        name="synth", dataset_path=path, batch_size=config.batch_size, num_shards=1, shard_id=0, config=config
    )
    eval_dataset = crnn_dataset.create_dataset(
        name="synth", dataset_path=path, batch_size=config.batch_size, is_training=False, config=config
    )
    accuracies = []

    class _EvalCallBack(eval_callback.EvalCallBack):
        def epoch_end(self, run_context):
            super().epoch_end(run_context)
            accuracies.append(self.best_res)

    def eval_callbacks(net, loss):  # train.py's run_eval
        eval_model = Model(net, loss, metrics={"CRNNAccuracy": crnn_metric.CRNNAccuracy(config, print_flag=False)})
        eval_param_dict = {"model": eval_model, "dataset": eval_dataset, "metrics_name": "CRNNAccuracy"}
        eval_cb = _EvalCallBack(
            _apply_eval, eval_param_dict, interval=config.eval_interval, eval_start_epoch=config.epoch_size,
            save_best_ckpt=True, ckpt_directory=config.save_ckpt_dir, best_ckpt_name="best_acc.ckpt",
            eval_all_saved_ckpts=False, metrics_name="acc",
        )  # fmt: skip
        return [eval_cb]

    net, loss, losses = _train(config, dataset, eval_callbacks=eval_callbacks)
    assert len(losses) == config.epoch_size * 4 and np.all(np.isfinite(losses))
    assert np.mean(losses[-4:]) < 0.5 * np.mean(losses[:4]), losses
    assert len(accuracies) == config.epoch_size and 0.0 <= accuracies[-1] <= 1.0  # evaluated at the last epoch
    assert os.path.isfile(os.path.join(config.save_ckpt_dir, "best_acc.ckpt"))
    ckpts = sorted(f for f in os.listdir(config.save_ckpt_dir) if f.startswith("crnn") and f.endswith(".ckpt"))
    assert ckpts, os.listdir(config.save_ckpt_dir)
    last = os.path.join(config.save_ckpt_dir, ckpts[-1])

    # train.py's resume: the epoch from the checkpoint's append_info, the rest of its parameters loaded
    resume_param = load_checkpoint(last, choice_func=lambda x: not x.startswith(("learning_rate", "global_step")))
    assert not any(k.startswith(("learning_rate", "global_step")) for k in resume_param)
    config.train_start_epoch = int(resume_param.get("epoch_num", 0).asnumpy().item())
    assert config.train_start_epoch == config.epoch_size  # saved at the end of training, as MindSpore does
    config.train_start_epoch = config.epoch_size - 1  # one more epoch from the loaded parameters
    _, _, resumed = _train(config, dataset, resume_param=resume_param)
    assert len(resumed) == 4 and np.mean(resumed) < np.mean(losses[:4])

    # eval.py: batch size 1, a new net with the checkpoint's parameters, Model(net, loss_fn, metrics)
    config.batch_size = 1
    eval_set = crnn_dataset.create_dataset(
        name="synth", dataset_path=path, batch_size=config.batch_size, is_training=False, config=config
    )
    loss = crnn_loss.CTCLoss(config.num_step, config.max_text_length, config.batch_size)
    eval_net = crnn_net.crnn(config, full_precision=True)
    param_dict = load_checkpoint(last)
    param_not_load, ckpt_not_load = load_param_into_net(eval_net, param_dict)
    assert param_not_load == [] and "epoch_num" in ckpt_not_load and "labels_indices" in ckpt_not_load
    eval_net.set_train(False)
    model = Model(eval_net, loss_fn=loss, metrics={"CRNNAccuracy": crnn_metric.CRNNAccuracy(config, print_flag=False)})
    res = model.eval(eval_set, dataset_sink_mode=False)
    assert set(res) == {"CRNNAccuracy"} and 0.0 <= res["CRNNAccuracy"] <= 1.0


@pytest.mark.parametrize("path", ["graph_mode", "ascend_float16"])
def test_crnn_trains_in_graph_mode_and_in_float16(tmp_path, config, path):
    # train.py sets GRAPH_MODE; on Ascend it builds crnn(config, full_precision=False): float16 logits
    if path == "graph_mode":
        context.set_context(mode=context.GRAPH_MODE, device_target="CPU", save_graphs=False)
    else:
        config.device_target = "Ascend"  # full_precision=False, dataset_sink_mode=True (runs as False)
    config.epoch_size = 3
    dataset = crnn_dataset.create_dataset("synth", _write_synth(tmp_path / "synth"), config.batch_size, config=config)
    net, _, losses = _train(config, dataset)
    assert len(losses) == 12 and np.all(np.isfinite(losses))
    assert np.mean(losses[-4:]) < 0.5 * np.mean(losses[:4]), losses
    out = net(Tensor(np.zeros((config.batch_size, 3, config.image_height, config.image_width), np.float32)))
    assert out.shape == (config.num_step, config.batch_size, config.class_num)
    assert out.dtype == (opforge.float16 if path == "ascend_float16" else opforge.float32)
