"""LSTM-CRF as MindSpore's model zoo runs it (tests/zoo/lstm_crf: research/nlp/lstm_crf with ``mindspore`` replaced
by ``opforge``), on a synthetic CoNLL2000 folder (``train.txt`` / ``test.txt`` of "word POS chunk-tag" lines, a
blank line after each sentence) and a synthetic ``glove.6B.8d.txt``: train.py's ``train_lstm_crf`` first builds
the vocabulary, tags and trimmed GloVe vectors (``build_data``), then trains ``Lstm_CRF`` (embedding, 2-layer
bidirectional LSTM, CRF) through ``Lstm_CRF_Cell_CPU`` (AdamWeightDecay with grouped weight decay on the
warm-up/polynomial ``LSTMCRFLearningRate``, a loss scale, clipped gradients) with ``Model.train`` and the zoo's
callbacks (``EvalCabllBack`` decodes the test set each epoch, ``LossCallBack``, ``ModelCheckpoint``), and eval.py's
``eval_lstm_crf`` loads the checkpoint, Viterbi-decodes the test set and reports accuracy and chunk F1. The CRF's
loss and its decoder are checked against NumPy."""

import os
import re

import numpy as np
import pytest
from zoo.lstm_crf import eval as crf_eval
from zoo.lstm_crf import train as crf_train
from zoo.lstm_crf.config import config
from zoo.lstm_crf.LSTM_CRF import Lstm_CRF, postprocess
from zoo.lstm_crf.util import get_chunks

import opforge
from opforge import Tensor, context

DETS, NOUNS, VERBS = ["the", "a", "this"], [f"noun{c}" for c in "abcdefgh"], [f"verb{c}" for c in "abcdef"]


@pytest.fixture(autouse=True)
def _state(monkeypatch):
    np.random.seed(0)
    opforge.set_seed(0)
    for key in ("data_CoNLL_path", "glove_path", "ckpt_save_path", "ckpt_path", "build_data", "num_epochs"):
        monkeypatch.setattr(config, key, getattr(config, key))
    yield
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


def _sentence(rng):
    """Noun phrases (determiner? + noun: B-NP I-NP), verbs (B-VP), numbers (B-NP), 'and' / '.' (O)."""
    tokens = []
    for _ in range(int(rng.integers(2, 4))):
        if rng.uniform() < 0.7:
            tokens.append((str(rng.choice(DETS)), "DT", "B-NP"))
            tokens.append((str(rng.choice(NOUNS)), "NN", "I-NP"))
        else:
            tokens.append((str(rng.integers(10, 99)), "CD", "B-NP"))
        tokens.append((str(rng.choice(VERBS)) if rng.uniform() < 0.8 else "and", "VB", "B-VP"))
    tokens[-1] = (".", ".", "O")
    return tokens


def _write_conll(root, seed=0, train=48, test=16):
    rng = np.random.default_rng(seed)
    data, glove = os.path.join(root, "CoNLL2000"), os.path.join(root, "glove")
    os.makedirs(data)
    os.makedirs(glove)
    for seg, count in (("train", train), ("test", test)):
        with open(os.path.join(data, seg + ".txt"), "w") as f:
            for _ in range(count):
                for word, pos, tag in _sentence(rng):
                    f.write(f"{word.upper() if rng.uniform() < 0.1 else word} {pos} {tag}\n")  # words are lowered
                f.write("\n")
    with open(os.path.join(glove, "glove.6B.8d.txt"), "w") as f:
        for word in [*DETS, *NOUNS, *VERBS[:-1], ".", "and", "unused"]:  # the last verb becomes <UNK>
            f.write(" ".join([word, *(f"{v:.4f}" for v in rng.normal(0, 1, 8))]) + "\n")
    return data, glove


def _np_lse(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis, keepdims=True))).squeeze(axis)


def _np_crf_loss(emission, labels, trans, start):
    """mean over the batch of log Z - score(gold path); trans[i, j] is the score of moving from tag j to i,
    the start row START, the stop row the last one (as _realpath_score / _normalization_factor read them)."""
    batch, seq, tags = emission.shape
    losses = []
    for b in range(batch):
        alpha = np.full(tags, -10000.0)
        alpha[start] = 0.0
        for t in range(seq):
            alpha = _np_lse(emission[b, t][:, None] + trans + alpha[None, :])
        log_z = _np_lse(alpha + trans[-1])
        path = [start, *labels[b]]
        gold = sum(emission[b, t, labels[b, t]] + trans[path[t + 1], path[t]] for t in range(seq))
        # the stop score reads [START, *labels][seq - 1], the second-to-last tag, as the zoo writes it
        losses.append(log_z - gold - trans[-1, path[seq - 1]])
    return float(np.mean(losses))


def _np_viterbi(emission, trans, start):
    batch, seq, tags = emission.shape
    paths = []
    for b in range(batch):
        score = np.full(tags, -10000.0)
        score[start] = 0.0
        pointers = []
        for t in range(seq):
            cand = score[None, :] + trans  # [next, prev]
            pointers.append(cand.argmax(1))
            score = cand.max(1) + emission[b, t]
        best = int((score + trans[-1]).argmax())
        path = [best]
        for ptr in reversed(pointers[1:]):
            best = int(ptr[best])
            path.append(best)
        paths.append(path[::-1])
    return paths


def _crf(is_training, batch=3, seq=5):
    tags = {"O": 0, "B-NP": 1, "I-NP": 2}
    weight = Tensor(np.random.default_rng(1).normal(0, 1, (10, 6)).astype(np.float32))
    return Lstm_CRF(vocab_size=10, tag_to_index=tags, embedding_size=6, hidden_size=4, num_layers=1, weight=weight,
                    bidirectional=True, batch_size=batch, seq_length=seq, is_training=is_training)  # fmt: skip


def test_crf_loss_and_viterbi_match_numpy():
    rng = np.random.default_rng(2)
    feature = Tensor(rng.integers(0, 10, (3, 5)).astype(np.int32))
    label = rng.integers(0, 3, (3, 5)).astype(np.int32)
    net = _crf(True)
    assert net.out_size == 5 and net.tag_to_index == {"O": 0, "B-NP": 1, "I-NP": 2, "<START>": 3, "<STOP>": 4}
    emission = net.lstm(feature).transpose(1, 0, 2).asnumpy()  # the Lstm's output is [seq, batch, tags]
    trans = net.transitions.asnumpy()
    loss = net(feature, Tensor(label)).asnumpy()
    assert loss.shape == () and np.isclose(loss, _np_crf_loss(emission, label, trans, 3), rtol=1e-4)

    net.is_training = False
    backpointers, best = net(feature, Tensor(label))
    assert len(backpointers) == 5 and backpointers[0][0].shape == (3, 5) and best.shape == (3,)
    assert postprocess(backpointers, best) == _np_viterbi(emission, trans, 3)


def test_crf_gradient_reaches_transitions_and_lstm_but_not_embedding():
    net = _crf(True)
    grads = opforge.ops.GradOperation(get_by_list=True)(net, net.trainable_params())(
        Tensor(np.ones((3, 5), np.int32)), Tensor(np.zeros((3, 5), np.int32))
    )
    names = [p.name for p in net.trainable_params()]
    assert "lstm.embedding.embedding_table" not in names and "transitions" in names  # requires_grad = False
    assert all(np.isfinite(g.asnumpy()).all() for g in grads)
    assert np.abs(grads[names.index("transitions")].asnumpy()).sum() > 0


def test_get_chunks():
    tags = {"O": 0, "B-NP": 1, "I-NP": 2, "B-VP": 3}
    assert get_chunks([1, 2, 3, 0, 1, 1, 2], tags) == [("NP", 0, 2), ("VP", 2, 3), ("NP", 4, 5), ("NP", 5, 7)]


def _losses(text):
    return [float(v) for v in re.findall(r"loss is (\S+)", text)]


def test_train_then_eval(tmp_path, capsys):
    data, glove = _write_conll(str(tmp_path))
    config.data_CoNLL_path, config.glove_path = data, glove
    config.ckpt_save_path = str(tmp_path / "ckpt")
    config.build_data = True
    crf_train.train_lstm_crf()  # run_build_data.sh: the vocabulary, tags, max length and trimmed vectors
    with open(os.path.join(data, "tags.txt")) as f:
        assert sorted(f.read().split("\n")) == ["B-NP", "B-VP", "I-NP", "O"]
    with np.load(os.path.join(data, "glove.6B.8trimmed.npz")) as npz:
        assert npz["embeddings"].shape[1] == 8
    capsys.readouterr()

    config.build_data = False
    crf_train.train_lstm_crf()
    out = capsys.readouterr().out
    losses = _losses(out)
    assert len(losses) == config.num_epochs * 6  # 48 sentences, batch 8
    assert np.mean(losses[-6:]) < 0.5 * np.mean(losses[:6]), losses
    f1s = [float(v) for v in re.findall(r"current F1 ([0-9.]+)%", out)]
    assert len(f1s) == config.num_epochs and f1s[-1] > 60, out
    assert os.path.exists(os.path.join(config.ckpt_save_path, f"lstm_crf-{config.num_epochs}_6.ckpt"))

    config.ckpt_path = f"lstm_crf-{config.num_epochs}_6.ckpt"
    crf_eval.eval_lstm_crf()
    acc, f1 = (float(v) for v in re.search(r"acc: ([0-9.]+)%,  F1: ([0-9.]+)%", capsys.readouterr().out).groups())
    # The zoo builds its vocabulary from Python sets, whose order follows the process's string hashing
    # (PYTHONHASHSEED): each process trains its own model, evaluated at an F1 from 89% to 100% over runs.
    assert acc > 75 and f1 > 75
