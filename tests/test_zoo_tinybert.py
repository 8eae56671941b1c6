"""TinyBERT as MindSpore's model zoo runs it (tests/zoo/tinybert: research/nlp/tinybert with ``mindspore`` replaced
by ``opforge``): a teacher ``BertModel`` checkpoint saved under the pre-training network's names
(``bert.bert.*``), a MindRecord folder of random token rows, then run_general_distill.py's
``run_general_distill`` on the CPU branch (float32, ``BertTrainCell`` without loss scale): ``create_tinybert_dataset``,
``BertNetworkWithLoss_gd`` (the teacher loaded and frozen, attention and representation MSE of the student
``TinyBertModel`` through ``fit_dense``), ``AdamWeightDecay`` on ``BertLearningRate`` with the grouped decay filter,
``Model.train`` in sink mode with ``TimeMonitor``, ``LossCallBack`` and ``ModelSaveCkpt``. Then task distill's
first phase loads the saved student into ``BertNetworkWithLoss_td`` (``is_predistill``) and the student
``BertModelCLS`` predicts as run_task_distill.py's ``do_eval_standalone`` does, scored by the zoo's
``Accuracy``. The distillation loss is checked against NumPy."""

import os
import re

import numpy as np
import pytest
from zoo.tinybert import general_distill as gd
from zoo.tinybert.assessment_method import Accuracy
from zoo.tinybert.config import bert_student_net_cfg, bert_teacher_net_cfg, config
from zoo.tinybert.tinybert_for_gd_td import BertNetworkWithLoss_gd, BertNetworkWithLoss_td
from zoo.tinybert.tinybert_model import BertModel

import opforge
from opforge import Tensor, context, nn
from opforge.mindrecord import FileWriter
from opforge.train.serialization import load_checkpoint, save_checkpoint

SEQ, VOCAB = bert_teacher_net_cfg.seq_length, bert_teacher_net_cfg.vocab_size


@pytest.fixture(autouse=True)
def _state(monkeypatch):
    np.random.seed(0)
    opforge.set_seed(0)
    for key in ("save_ckpt_path", "load_teacher_ckpt_path", "data_dir", "epoch_size"):
        monkeypatch.setattr(config, key, getattr(config, key))
    for cfg in (bert_teacher_net_cfg, bert_student_net_cfg):  # the CPU branch writes float32 into them
        monkeypatch.setattr(cfg, "compute_type", cfg.compute_type)
    yield
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


class _PreTraining(nn.Cell):
    """Names the teacher's parameters as the zoo's BertNetworkWithLoss(BertPreTraining(BertModel)) does."""

    def __init__(self, model):
        super().__init__()
        self.bert = model


def _teacher_ckpt(path):
    bert_teacher_net_cfg.compute_type = opforge.float32
    teacher = BertModel(bert_teacher_net_cfg, False)
    save_checkpoint(_PreTraining(_PreTraining(teacher)), path)
    return path


def _tokens(rng, rows):
    ids = rng.integers(1, VOCAB, (rows, SEQ))
    lengths = rng.integers(SEQ // 2, SEQ + 1, rows)
    mask = (np.arange(SEQ)[None, :] < lengths[:, None]).astype(np.int64)
    segments = (np.arange(SEQ)[None, :] >= lengths[:, None] // 2).astype(np.int64) * mask
    return ids * mask, mask, segments


def _write_records(folder, rows=16, seed=0):
    os.makedirs(folder)
    writer = FileWriter(os.path.join(folder, "gd.mindrecord"), 1)
    writer.add_schema({k: {"type": "int64", "shape": [-1]} for k in ("input_ids", "input_mask", "segment_ids")},
                      "tinybert")  # fmt: skip
    ids, mask, seg = _tokens(np.random.default_rng(seed), rows)
    writer.write_raw_data([{"input_ids": i, "input_mask": m, "segment_ids": s} for i, m, s in zip(ids, mask, seg)])
    writer.commit()
    return folder


def _np_gd_loss(t_att, t_seq, s_att, s_seq, w, b):
    """Attention MSE (scores <= -100, the masked ones, set to 0) of student layer i against teacher layer
    (i + 1) * k - 1, plus representation MSE of fit_dense(student output i) against teacher output i * k."""
    k = len(t_att) // len(s_att)
    att = sum(np.mean((np.where(s <= -100, 0, s) - np.where(t <= -100, 0, t)) ** 2)
              for s, t in zip(s_att, t_att[k - 1::k]))  # fmt: skip
    rep = sum(np.mean((s @ w.T + b - t) ** 2) for s, t in zip(s_seq, t_seq[::k]))
    return att + rep


def test_general_distill_loss_matches_numpy(tmp_path):
    bert_student_net_cfg.compute_type = opforge.float32
    net = BertNetworkWithLoss_gd(bert_teacher_net_cfg, _teacher_ckpt(str(tmp_path / "t.ckpt")), bert_student_net_cfg,
                                 is_training=True)  # fmt: skip
    assert not any(p.name.startswith("teacher.") for p in net.trainable_params())  # the teacher is frozen
    net.set_train(False)
    ids, mask, seg = (Tensor(x.astype(np.int32)) for x in _tokens(np.random.default_rng(1), 3))
    _, _, _, t_seq, t_att = net.teacher(ids, seg, mask)
    _, _, _, s_seq, s_att = net.bert(ids, seg, mask)
    assert len(t_seq) == 5 and len(s_seq) == 3 and len(t_att) == 4 and len(s_att) == 2  # embeddings + layers
    np_outs = [[x.asnumpy() for x in outs] for outs in (t_att, t_seq, s_att, s_seq)]
    expect = _np_gd_loss(*np_outs, net.fit_dense.weight.asnumpy(), net.fit_dense.bias.asnumpy())
    assert np.isclose(net(ids, mask, seg).asnumpy(), expect, rtol=1e-4)


def test_general_distill_then_task_distill_loads_and_predicts(tmp_path, capsys):
    config.load_teacher_ckpt_path = _teacher_ckpt(str(tmp_path / "teacher.ckpt"))
    config.data_dir = _write_records(str(tmp_path / "data"))
    config.save_ckpt_path = str(tmp_path / "out")
    gd.run_general_distill()
    out = capsys.readouterr().out
    losses = [float(v) for v in re.findall(r"outputs are ([0-9.e+-]+)", out)]
    assert len(losses) == config.epoch_size * 4  # 16 rows, batch 4, one step per sink
    assert np.mean(losses[-4:]) < 0.6 * np.mean(losses[:4]), losses
    assert bert_student_net_cfg.compute_type == opforge.float32  # the CPU branch's warning and float32
    (run_dir,) = os.listdir(config.save_ckpt_path)
    saved = sorted(os.listdir(os.path.join(config.save_ckpt_path, run_dir)))
    assert saved == ["tiny_bert_3_4.ckpt"]  # max_ckpt_num = 1 removes the older ones
    student_ckpt = os.path.join(config.save_ckpt_path, run_dir, saved[0])
    params = load_checkpoint(student_ckpt)
    assert all(k.startswith("bert.") for k in params) and any("tinybert_" in k for k in params)

    td = BertNetworkWithLoss_td(bert_teacher_net_cfg, config.load_teacher_ckpt_path, bert_student_net_cfg,
                                student_ckpt, is_training=True, task_type="classification", num_labels=2)  # fmt: skip
    loaded = {p.name: p.asnumpy() for p in td.bert.get_parameters()}
    for key, value in params.items():  # the predistill renaming: bert. + key, tinybert_ -> bert_
        assert np.array_equal(loaded[re.sub("tinybert_", "bert_", "bert." + key)], value.asnumpy()), key

    student = td.bert
    student.set_train(False)
    ids, mask, seg = (Tensor(x.astype(np.int32)) for x in _tokens(np.random.default_rng(2), 4))
    log_probs = student(ids, seg, mask)  # the predict phase returns log-probabilities only
    assert log_probs.shape == (4, 2) and np.allclose(np.exp(log_probs.asnumpy()).sum(-1), 1, atol=1e-5)
    callback = Accuracy()
    callback.update(log_probs, Tensor(np.array([0, 1, 0, 1], np.int32)))
    assert callback.total_num == 4 and 0 <= callback.acc_num <= 4
    student.set_train(True)
    assert len(student(ids, seg, mask)) == 4  # the train phase returns the distillation outputs too
