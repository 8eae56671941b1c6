"""The Transformer NMT model as MindSpore's model zoo runs it (tests/zoo/transformer: official/nlp/Transformer/src
as it is, with ``mindspore`` replaced by ``opforge``): train.py's setup (``create_dynamic_lr``'s schedule as a
Tensor learning rate for ``Adam``, ``TransformerTrainOneStepWithLossScaleCell`` with a
``DynamicLossScaleManager``'s update cell, or ``TransformerTrainOneStepCell``) trains through ``Model.train`` on
a ``GeneratorDataset`` of synthetic token pairs with dataset.py's ``TypeCast`` maps, in PyNative and graph mode;
eval.py's path (a checkpoint renamed by its ``load_weights``, ``TransformerModel(is_training=False)`` with the
``BeamSearchDecoder``, ``Model.predict``) decodes a model trained to copy its input into the copy; and the
``BeamSearchDecoder`` over a fixed decoder agrees with an independent NumPy beam search."""

import numpy as np
import pytest
from zoo.transformer.beam_search import BeamSearchDecoder
from zoo.transformer.lr_schedule import create_dynamic_lr
from zoo.transformer.transformer_for_train import (
    TransformerNetworkWithLoss,
    TransformerTrainOneStepCell,
    TransformerTrainOneStepWithLossScaleCell,
)
from zoo.transformer.transformer_model import TransformerConfig, TransformerModel

import opforge as ms
import opforge.dataset as de
import opforge.nn as nn
from opforge.common.parameter import Parameter
from opforge.common.tensor import Tensor
from opforge.nn.optim import Adam
from opforge.ops import operations as P
from opforge.train.callback import Callback
from opforge.train.loss_scale_manager import DynamicLossScaleManager
from opforge.train.model import Model

COLUMNS = ["source_eos_ids", "source_eos_mask", "target_sos_ids", "target_sos_mask", "target_eos_ids",
           "target_eos_mask"]  # fmt: skip
SOS, EOS = 1, 2


@pytest.fixture(autouse=True)
def _seeds():
    ds_seed = de.config._state["seed"]
    np.random.seed(0)  # weight_init.py draws with np.random
    ms.set_seed(0)
    yield
    de.config._state["seed"] = ds_seed
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _config(batch_size, seq, vocab, compute_type=ms.float16, **kw):
    return TransformerConfig(batch_size=batch_size, seq_length=seq, vocab_size=vocab, hidden_size=32,
                             num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                             hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=seq,
                             beam_width=2, max_decode_length=seq - 1, dtype=ms.float32, compute_type=compute_type,
                             **kw)  # fmt: skip


def _copy_pair(rng, seq, vocab):
    """A source sentence (tokens, EOS, padding) and its copy as the target: SOS + tokens in, tokens + EOS out."""
    n = rng.randint(2, seq - 2)
    tokens = rng.randint(3, vocab, n)
    source = np.zeros(seq, np.int64)
    source[:n], source[n] = tokens, EOS
    mask = (np.arange(seq) <= n).astype(np.int64)
    target_sos = np.zeros(seq, np.int64)
    target_sos[0], target_sos[1 : n + 1] = SOS, tokens
    return source, mask, target_sos, mask, source.copy(), mask


def _dataset(batch_size, seq, vocab, rows, seed=0):
    """dataset.py's pipeline on synthetic rows: int64 columns cast to int32 by ``TypeCast`` maps, batched."""

    def rows_gen():
        rng = np.random.RandomState(seed)
        for _ in range(rows):
            yield _copy_pair(rng, seq, vocab)

    data = de.GeneratorDataset(rows_gen, column_names=COLUMNS, shuffle=False)
    type_cast_op = de.transforms.transforms.TypeCast(ms.int32)
    for column in COLUMNS:
        data = data.map(operations=type_cast_op, input_columns=column)
    return data.batch(batch_size, drop_remainder=True)


class _Outputs(Callback):
    """train.py's LossCallBack, keeping what it prints: (loss, overflow, loss scale) per step."""

    def __init__(self):
        super().__init__()
        self.outputs = []

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        self.outputs.append(cb_params.net_outputs)


def _lr(steps, learning_rate, warmup, hidden, start_decay):
    return Tensor(
        create_dynamic_lr(
            schedule="constant*rsqrt_hidden*linear_warmup*rsqrt_decay",
            training_steps=steps,
            learning_rate=learning_rate,
            warmup_steps=warmup,
            hidden_size=hidden,
            start_decay_step=start_decay,
            min_lr=0.0,
        ),
        ms.float32,
    )


def _train(config, epochs, rows, learning_rate=1.0, loss_scale=True, seed=0, warmup=4, start_decay=8):
    np.random.seed(seed)
    netwithloss = TransformerNetworkWithLoss(config, True)
    dataset = _dataset(config.batch_size, config.seq_length, config.vocab_size, rows)
    lr = _lr(dataset.get_dataset_size() * epochs, learning_rate, warmup, config.hidden_size, start_decay)
    optimizer = Adam(netwithloss.trainable_params(), lr)
    if loss_scale:
        scale_manager = DynamicLossScaleManager(init_loss_scale=1024, scale_factor=2, scale_window=2000)
        netwithgrads = TransformerTrainOneStepWithLossScaleCell(
            netwithloss, optimizer=optimizer, scale_update_cell=scale_manager.get_update_cell()
        )
    else:
        netwithgrads = TransformerTrainOneStepCell(netwithloss, optimizer=optimizer)
    netwithgrads.set_train(True)
    outputs = _Outputs()
    Model(netwithgrads).train(epochs, dataset, callbacks=[outputs], dataset_sink_mode=False)
    return netwithloss, outputs.outputs


# ---------------------------------------------------------------------------------------------
# lr_schedule.py


def test_create_dynamic_lr_matches_the_noam_schedule():
    hidden, warmup, start_decay = 32, 4, 8
    got = create_dynamic_lr("constant*rsqrt_hidden*linear_warmup*rsqrt_decay", 20, 2.0, warmup, hidden,
                            start_decay_step=start_decay, min_lr=1e-3)  # fmt: skip
    want = []
    for step in range(1, 21):
        if warmup < step < start_decay:
            want.append(want[-1])
            continue
        value = 2.0 / np.sqrt(hidden) * min(1.0, step / warmup) / np.sqrt(max(step - start_decay + warmup, warmup))
        want.append(max(value, 1e-3) if step > warmup else value)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="unknown learning rate schedule"):
        create_dynamic_lr("cosine", 3, 1.0, 1, 8)


# ---------------------------------------------------------------------------------------------
# training (train.py)


def test_transformer_trains_with_dynamic_loss_scale_through_model_train():
    config = _config(4, 8, 16)  # compute_type float16, as train.py sets it
    _, outputs = _train(config, epochs=3, rows=32)
    assert len(outputs) == 24
    loss, overflow, scale = outputs[0]
    assert loss.shape == (1,) and loss.dtype == ms.float32
    assert overflow.shape == () and overflow.dtype == ms.bool_
    assert scale.shape == () and float(scale.asnumpy()) == 1024.0
    losses = np.array([o[0].asnumpy()[0] for o in outputs])
    assert not any(bool(o[1].asnumpy()) for o in outputs)
    assert np.all(np.isfinite(losses))
    assert losses[-8:].mean() < losses[:2].mean() - 0.5, losses


def test_transformer_train_one_step_cell_without_loss_scale():
    config = _config(4, 8, 16)
    _, outputs = _train(config, epochs=2, rows=32, loss_scale=False)
    losses = np.array([o.asnumpy()[0] for o in outputs])
    assert losses.shape == (16,) and np.all(np.isfinite(losses))
    assert losses[-4:].mean() < losses[:2].mean() - 0.5, losses


def test_transformer_training_in_graph_mode_matches_pynative():
    config = _config(4, 8, 16, compute_type=ms.float32)
    _, eager = _train(config, epochs=1, rows=24)
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", reserve_class_name_in_scope=False)
    _, graph = _train(config, epochs=1, rows=24)
    np.testing.assert_allclose([o[0].asnumpy()[0] for o in graph], [o[0].asnumpy()[0] for o in eager], rtol=1e-4)


# ---------------------------------------------------------------------------------------------
# inference (eval.py): a model trained to copy decodes copies


class TransformerInferCell(nn.Cell):
    """eval.py's: the network's predicted ids for (source_ids, source_mask)."""

    def __init__(self, network):
        super().__init__(auto_prefix=False)
        self.network = network

    def construct(self, source_ids, source_mask):
        predicted_ids = self.network(source_ids, source_mask)
        return predicted_ids


def load_weights(model_path):
    """eval.py's: a training checkpoint renamed for the inference network (its decoder sits in the beam search)."""
    ms_ckpt = ms.load_checkpoint(model_path)
    weights = {}
    for msname in ms_ckpt:
        infer_name = msname
        if "tfm_decoder" in msname:
            infer_name = "tfm_decoder.decoder." + infer_name
        weights[infer_name] = ms_ckpt[msname].data.asnumpy()
    weights["tfm_decoder.decoder.tfm_embedding_lookup.embedding_table"] = weights[
        "tfm_embedding_lookup.embedding_table"
    ]
    parameter_dict = {}
    for name in weights:
        parameter_dict[name] = Parameter(Tensor(weights[name]), name=name)
    return parameter_dict


def test_parameter_names_are_the_ones_eval_py_maps():
    config = _config(2, 8, 12)
    train_names = {p.name for p in TransformerNetworkWithLoss(config, True).trainable_params()}
    infer_names = {p.name for p in TransformerModel(config, is_training=False).trainable_params()}
    assert "tfm_embedding_lookup.embedding_table" in train_names
    assert "tfm_decoder.layers.0.cross_attention.attention.query_layer.weight" in train_names
    mapped = {("tfm_decoder.decoder." + n if "tfm_decoder" in n else n) for n in train_names}
    mapped = (mapped - {"tfm_embedding_lookup.embedding_table"}) | {
        "tfm_decoder.decoder.tfm_embedding_lookup.embedding_table"
    }
    assert mapped == infer_names


def test_transformer_trained_to_copy_decodes_the_copy_with_beam_search(tmp_path):
    seq, vocab = 8, 12
    config = _config(16, seq, vocab, compute_type=ms.float32)
    netwithloss, outputs = _train(config, epochs=1, rows=16 * 400, learning_rate=0.5, warmup=50, start_decay=100)
    losses = [o[0].asnumpy()[0] for o in outputs]
    assert np.mean(losses[-10:]) < 0.6  # label smoothing 0.1 over 12 words: the floor is about 0.567
    ckpt = str(tmp_path / "transformer.ckpt")
    ms.save_checkpoint(netwithloss, ckpt)

    eval_config = _config(4, seq, vocab, compute_type=ms.float16)  # eval.py computes in float16
    tfm_model = TransformerModel(config=eval_config, is_training=False, use_one_hot_embeddings=False)
    param_not_load, _ = ms.load_param_into_net(tfm_model, load_weights(ckpt))
    assert param_not_load == []
    model = Model(TransformerInferCell(tfm_model))

    rng = np.random.RandomState(7)
    rows = [_copy_pair(rng, seq, vocab) for _ in range(4)]
    source = np.stack([r[0] for r in rows]).astype(np.int32)
    mask = np.stack([r[1] for r in rows]).astype(np.int32)
    predicted = model.predict(Tensor(source, ms.int32), Tensor(mask, ms.int32))
    assert predicted.shape == (4, 1, seq) and predicted.dtype == ms.int32
    out = predicted.asnumpy()[:, 0]
    for source_row, out_row in zip(source, out):
        n = int(np.argmax(source_row == EOS))
        want = np.concatenate([[SOS], source_row[:n], np.full(seq - 1 - n, EOS)])
        np.testing.assert_array_equal(out_row, want)


def test_untrained_inference_is_deterministic_and_graph_mode_agrees():
    config = _config(2, 6, 10)
    tfm_model = TransformerModel(config, is_training=False)
    source = Tensor(np.array([[5, 6, 7, 2, 0, 0], [9, 4, 3, 8, 2, 0]], np.int32))
    mask = Tensor(np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0]], np.int32))
    first = tfm_model(source, mask).asnumpy()
    assert first.shape == (2, 1, 6) and first.dtype == np.int32
    assert np.all(first[:, 0, 0] == SOS) and np.all((first >= 0) & (first < 10))
    np.testing.assert_array_equal(tfm_model(source, mask).asnumpy(), first)
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(tfm_model(source, mask).asnumpy(), first)


# ---------------------------------------------------------------------------------------------
# BeamSearchDecoder against an independent NumPy beam search, over a fixed decoder


class _TableDecoder(nn.Cell):
    """A decoder step with known log-probabilities: log_softmax(table[last word] + position[step])."""

    def __init__(self, table, position):
        super().__init__()
        self.table = Tensor(table)
        self.position = Tensor(position)
        self.gather = P.Gather()
        self.log_softmax = nn.LogSoftmax(axis=-1)

    def construct(self, input_ids, enc_states, enc_attention_mask, seq_length):
        step = input_ids.shape[1] - 1
        last = input_ids[::, step : step + 1 : 1]
        logits = self.gather(self.table, last, 0) + self.position[step : step + 1 : 1]
        return self.log_softmax(logits)  # [batch * beam, 1, vocab]


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _numpy_beam_search(table, position, batch, beam, vocab, steps, weight, inf=1e9):
    """Beam search as beam_search.py's docstrings state it, in NumPy (float32 scores, stable orders)."""
    scores = np.tile(np.array([0.0] + [-inf] * (beam - 1), np.float32), (batch, 1))
    seq = np.full((batch, beam, 1), SOS, np.int64)
    finished = np.zeros((batch, beam), bool)
    length = np.zeros((batch, beam), np.int64)
    rows = np.arange(batch)[:, None]
    for step in range(steps):
        log_probs = _log_softmax(table[seq[:, :, -1]] + position[step]).astype(np.float32)
        total = log_probs + scores[..., None] + np.where(finished, -inf, 0.0).astype(np.float32)[..., None]
        flat = total.reshape(batch, beam * vocab)
        top = np.argsort(-flat, axis=1, kind="stable")[:, :beam]
        top_scores = np.take_along_axis(flat, top, 1)
        beams, words = top // vocab, top % vocab
        # a finished beam keeps its place, emits EOS and keeps its score
        beams = np.where(finished, np.arange(beam)[None], beams)
        words = np.where(finished, EOS, words)
        top_scores = np.where(finished, scores, top_scores)
        # the beams that end now go last
        order = np.argsort(-np.where(words == EOS, np.float32(-inf), top_scores), axis=1, kind="stable")
        beams, words, top_scores = beams[rows, order], words[rows, order], top_scores[rows, order]
        length = np.where(finished, length, length + 1)[rows, beams]
        seq = np.concatenate([seq[rows, beams], words[..., None]], axis=-1)
        finished, scores = words == EOS, top_scores
    penalty = ((length + 5.0) / 6.0) ** weight
    best = np.argsort(-(scores / penalty), axis=1, kind="stable")[:, :1]
    return seq[rows, best]


@pytest.mark.parametrize("beam", [1, 3])
def test_beam_search_decoder_matches_a_numpy_beam_search(beam):
    batch, vocab, steps = 2, 7, 6
    rng = np.random.RandomState(3)
    table = (rng.standard_normal((vocab, vocab)) * 2.0).astype(np.float32)
    position = (rng.standard_normal((steps, vocab)) * 0.5).astype(np.float32)
    position[3:, EOS] += 2.0  # sentences end at different steps
    decoder = BeamSearchDecoder(
        batch_size=batch,
        seq_length=5,
        vocab_size=vocab,
        decoder=_TableDecoder(table, position),
        beam_width=beam,
        length_penalty_weight=1.0,
        max_decode_length=steps,
    )
    enc_states = Tensor(np.zeros((batch * beam, 5, 4), np.float32))
    enc_mask = Tensor(np.ones((batch * beam, steps, 5), np.float32))
    got = decoder(enc_states, enc_mask).asnumpy()
    want = _numpy_beam_search(table, position, batch, beam, vocab, steps, 1.0)
    assert got.shape == (batch, 1, steps + 1)
    np.testing.assert_array_equal(got, want)
