"""DeepSpeech2 as MindSpore's model zoo runs it (tests/zoo/deepspeech2: official/audio/DeepSpeech2 with
``mindspore`` replaced by ``opforge``), at a tiny size, on WAV files of tones written here (one tone per letter):
``create_dataset`` reads them through the zoo's ``ASRDataset`` (spectrograms padded to a fixed length, labels
padded with the blank, ``target_indices`` over every label position) and its own ``DistributedSampler`` class
given to ``GeneratorDataset(sampler=...)``; train.py's step (``DeepSpeechModel``: ``MaskConv``'s two convolutions
and batch norms, ``BatchRNN``'s bidirectional ``nn.LSTM`` stack, ``SequenceWise`` Dense; ``NetWithLossClass``
over ``P.CTCLoss``; ``Adam`` with ``loss_scale``, ``TrainOneStepCell``) trains through ``Model.train`` with
``ModelCheckpoint``, and eval.py reloads the checkpoint into ``PredictWithSoftmax`` and decodes greedily
(``MSGreedyDecoder``) with WER/CER. The loss cell and the decoder are checked against NumPy references."""

import copy
import json
import os
import wave

import numpy as np
import pytest
from zoo.deepspeech2 import dataset as ds2_dataset
from zoo.deepspeech2.config import eval_config, train_config
from zoo.deepspeech2.deepspeech2 import DeepSpeechModel, NetWithLossClass, PredictWithSoftmax
from zoo.deepspeech2.greedydecoder import MSGreedyDecoder
from zoo.deepspeech2.lr_generator import get_lr

import opforge
import opforge.dataset as ds
from opforge import ParameterTuple, Tensor, context
from opforge.nn import TrainOneStepCell
from opforge.nn.optim import Adam
from opforge.train import Model
from opforge.train.callback import CheckpointConfig, LambdaCallback, ModelCheckpoint, TimeMonitor
from opforge.train.serialization import load_checkpoint, load_param_into_net

LABELS = json.loads((__import__("pathlib").Path(ds2_dataset.__file__).parent / "labels.json").read_text())
BLANK = LABELS.index("_")
TONES = {"A": 50, "B": 100, "C": 150}  # Hz, at a 400 Hz sample rate: bins 2, 4, 6 of 9


@pytest.fixture(autouse=True)
def _seeds():
    ds.config._state["seed"] = None
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_audio(root, count=6):
    """WAV files (16-bit, 400 Hz) of 2-3 letters, 0.15 s of the letter's tone then 0.05 s of silence each,
    their transcripts, and the manifest ("wav,txt" lines) ASRDataset reads."""
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    lines, texts = [], []
    for i in range(count):
        text = "".join(rng.choice(list(TONES), int(rng.integers(2, 4))))
        t = np.arange(60) / 400
        y = np.concatenate([np.r_[0.5 * np.sin(2 * np.pi * TONES[ch] * t), np.zeros(20)] for ch in text])
        with wave.open(str(root / f"{i}.wav"), "wb") as f:
            f.setnchannels(1)
            f.setsampwidth(2)
            f.setframerate(400)
            f.writeframes((y * 32767).astype("<i2").tobytes())
        (root / f"{i}.txt").write_text(text + "\n")
        lines.append(f"{root / f'{i}.wav'},{root / f'{i}.txt'}")
        texts.append(text)
    (root / "manifest.csv").write_text("\n".join(lines) + "\n")
    return str(root / "manifest.csv"), texts


def _model(config):
    return DeepSpeechModel(
        batch_size=config.DataConfig.batch_size, rnn_hidden_size=config.ModelConfig.hidden_size,
        nb_layers=config.ModelConfig.hidden_layers, labels=LABELS, rnn_type=config.ModelConfig.rnn_type,
        audio_conf=config.DataConfig.SpectConfig, bidirectional=True,
    )  # fmt: skip


def _ctc_nll(logits, labels, blank):
    """-log p(labels | logits [T, C]): the forward recursion over the blank-interleaved labels, in NumPy."""
    logp = (
        logits
        - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True))
        - logits.max(1, keepdims=True)
    )
    ext = [blank]
    for c in labels:
        ext += [c, blank]
    alpha = np.full(len(ext), -np.inf)
    alpha[0], alpha[1] = logp[0, blank], logp[0, ext[1]]
    for t in range(1, len(logits)):
        prev = alpha.copy()
        for s in range(len(ext)):
            terms = [prev[s]] + ([prev[s - 1]] if s >= 1 else [])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(prev[s - 2])
            alpha[s] = np.logaddexp.reduce(terms) + logp[t, ext[s]]
    return -np.logaddexp(alpha[-1], alpha[-2])


def test_deepspeech2_dataset_pads_spectrograms_and_labels(tmp_path):
    manifest, texts = _write_audio(tmp_path / "audio")
    config = train_config
    data = ds2_dataset.create_dataset(
        audio_conf=config.DataConfig.SpectConfig, manifest_filepath=manifest, labels=LABELS, normalize=True,
        batch_size=2, train_mode=True, rank=0, group_size=1,
    )  # fmt: skip
    assert data.get_dataset_size() == 3
    rows = list(data.create_tuple_iterator(output_numpy=True, num_epochs=1))
    words = [["".join(LABELS[v] for v in r[3].reshape(2, -1)[k] if v != BLANK) for k in range(2)] for r in rows]
    assert sorted(map(sorted, words)) == sorted(sorted(texts[i : i + 2]) for i in range(0, 6, 2))  # the bins
    for r, pair in zip(rows, words):  # 80 samples a letter at a hop of 8: 10 frames each, and a centred last
        assert r[1].tolist() == [1 + 10 * len(w) for w in pair]
    inputs, input_length, target_indices, label_values = rows[0]
    pad = ds2_dataset.TRAIN_LABEL_PAD_LENGTH
    assert inputs.shape == (2, 1, 9, ds2_dataset.TRAIN_INPUT_PAD_LENGTH) and input_length.dtype == np.float32
    assert target_indices.tolist() == [[k, m] for k in range(2) for m in range(pad)] and label_values.shape == (
        2 * pad,
    )


def test_deepspeech2_ctc_loss_cell_against_numpy(tmp_path):
    manifest, _ = _write_audio(tmp_path / "audio")
    data = ds2_dataset.create_dataset(
        audio_conf=train_config.DataConfig.SpectConfig, manifest_filepath=manifest, labels=LABELS, normalize=True,
        batch_size=2, train_mode=True, rank=0, group_size=1,
    )  # fmt: skip
    inputs, input_length, target_indices, label_values = next(data.create_tuple_iterator(num_epochs=1))
    net = _model(train_config)
    predict, output_length = net(inputs, input_length)
    assert predict.shape == (ds2_dataset.TRAIN_INPUT_PAD_LENGTH // 2, 2, len(LABELS))
    np.testing.assert_allclose(output_length.asnumpy(), (input_length.asnumpy() - 1) / 2 + 1)  # get_seq_lens
    loss = NetWithLossClass(net)(inputs, input_length, target_indices, label_values).asnumpy()
    x, lengths = predict.asnumpy().astype(np.float64), output_length.asnumpy().astype(np.int32)
    rows = label_values.asnumpy().reshape(2, -1)
    want = np.mean([_ctc_nll(x[: lengths[b], b], [int(v) for v in rows[b] if v != BLANK], BLANK) for b in range(2)])
    np.testing.assert_allclose(loss, want, rtol=1e-4)


def test_deepspeech2_greedy_decoder_and_error_rates():
    decoder = MSGreedyDecoder(labels=LABELS, blank_index=BLANK)
    a, b, c, space = LABELS.index("A"), LABELS.index("B"), LABELS.index("C"), LABELS.index(" ")
    paths = [[a, a, BLANK, a, space, b, c, c], [c, BLANK, BLANK, b, b, b, a, a]]
    probs = np.full((2, 8, len(LABELS)), 0.01, np.float32)
    for n, path in enumerate(paths):
        probs[n, np.arange(8), path] = 0.9
    strings, offsets = decoder.decode(Tensor(probs), Tensor(np.array([8, 5], np.int32)))
    assert strings == [["AA BC"], ["CB"]]  # repeats merged, blanks dropped, the second cut at 5 frames
    assert offsets == [[[0, 3, 4, 5, 6]], [[0, 3]]]
    assert decoder.convert_to_strings([[np.int32(a), np.int32(b)], [np.int32(c)]]) == [["AB"], ["C"]]  # eval.py's
    assert decoder.wer("AA BC", "AA CB") == 1 and decoder.cer("AA BC", "AB BC") == 1


def test_deepspeech2_trains_and_decodes_as_train_and_eval_py(tmp_path):
    manifest, texts = _write_audio(tmp_path / "audio")
    config = copy.deepcopy(train_config)
    config.DataConfig.train_manifest = manifest
    config.CheckpointConfig.ckpt_path = str(tmp_path / "ckpt")
    context.set_context(mode=context.GRAPH_MODE, device_target="CPU", save_graphs=False)
    ds_train = ds2_dataset.create_dataset(
        audio_conf=config.DataConfig.SpectConfig, manifest_filepath=config.DataConfig.train_manifest,
        labels=LABELS, normalize=True, train_mode=True, batch_size=config.DataConfig.batch_size, rank=0, group_size=1,
    )  # fmt: skip
    steps_size = ds_train.get_dataset_size()
    lr = Tensor(get_lr(lr_init=config.OptimConfig.learning_rate, total_epochs=config.TrainingConfig.epochs,
                       steps_per_epoch=steps_size))  # fmt: skip
    assert lr.shape == (config.TrainingConfig.epochs * steps_size,)
    deepspeech_net = _model(config)
    loss_net = NetWithLossClass(deepspeech_net)
    weights = ParameterTuple(deepspeech_net.trainable_params())
    optimizer = Adam(weights, learning_rate=config.OptimConfig.learning_rate, eps=config.OptimConfig.epsilon,
                     loss_scale=config.OptimConfig.loss_scale)  # fmt: skip
    train_net = TrainOneStepCell(loss_net, optimizer)
    train_net.set_train(True)
    model = Model(train_net)
    losses = []
    record = LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))
    config_ck = CheckpointConfig(
        save_checkpoint_steps=5, keep_checkpoint_max=config.CheckpointConfig.keep_checkpoint_max
    )
    ckpt_cb = ModelCheckpoint(prefix=config.CheckpointConfig.ckpt_file_name_prefix,
                              directory=config.CheckpointConfig.ckpt_path, config=config_ck)  # fmt: skip
    model.train(config.TrainingConfig.epochs, ds_train, callbacks=[TimeMonitor(steps_size), record, ckpt_cb],
                dataset_sink_mode=False)  # fmt: skip
    assert len(losses) == config.TrainingConfig.epochs * steps_size and np.isfinite(losses).all()
    assert np.mean(losses[-steps_size:]) < np.mean(losses[:steps_size])
    assert sorted(os.listdir(config.CheckpointConfig.ckpt_path)) == ["DeepSpeech-2_2.ckpt", "DeepSpeech-3_3.ckpt"]

    # eval.py
    config = copy.deepcopy(eval_config)
    model = PredictWithSoftmax(_model(config))
    ds_eval = ds2_dataset.create_dataset(
        audio_conf=config.DataConfig.SpectConfig, manifest_filepath=manifest, labels=LABELS, normalize=True,
        train_mode=False, batch_size=config.DataConfig.batch_size, rank=0, group_size=1,
    )  # fmt: skip
    param_dict = load_checkpoint(str(tmp_path / "ckpt" / "DeepSpeech-3_3.ckpt"))
    param_dict_new = {}
    for k, v in param_dict.items():  # noqa: B007  (eval.py's text)
        if "rnn" in k:
            param_dict_new[k.replace("rnn", "RNN")] = param_dict[k]
        else:
            param_dict_new[k] = param_dict[k]
    assert load_param_into_net(model, param_dict_new)[0] == []
    decoder = MSGreedyDecoder(labels=LABELS, blank_index=BLANK)
    target_decoder = MSGreedyDecoder(LABELS, blank_index=BLANK)
    model.set_train(False)
    total_cer, num_chars, references = 0, 0, []
    for data in ds_eval.create_dict_iterator():
        inputs, input_length, target_indices, targets = (
            data["inputs"], data["input_length"], data["target_indices"], data["label_values"],
        )  # fmt: skip
        split_targets = []
        start, count, last_id = 0, 0, 0
        target_indices, targets = target_indices.asnumpy(), targets.asnumpy()
        for i in range(np.shape(targets)[0]):
            if target_indices[i, 0] == last_id:
                count += 1
            else:
                split_targets.append(list(targets[start:count]))
                last_id += 1
                start = count
                count += 1
        split_targets.append(list(targets[start:]))
        out, output_sizes = model(inputs, input_length)
        decoded_output, _ = decoder.decode(out, output_sizes)
        target_strings = target_decoder.convert_to_strings(split_targets)
        probs, sizes = out.asnumpy(), output_sizes.asnumpy()
        assert probs.shape[:2] == (2, ds2_dataset.TEST_INPUT_PAD_LENGTH // 2)
        np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
        for n, (doutput, toutput) in enumerate(zip(decoded_output, target_strings)):
            best = probs[n, : sizes[n]].argmax(-1)  # the greedy path, collapsed and without blanks
            want = "".join(LABELS[c] for k, c in enumerate(best) if c != BLANK and (k == 0 or c != best[k - 1]))
            assert doutput[0] == want
            total_cer += decoder.cer(doutput[0], toutput[0])
            num_chars += len(toutput[0].replace(" ", ""))
            references.append(toutput[0])
    assert sorted(references) == sorted(texts)
    assert 0 <= total_cer / num_chars <= 3
