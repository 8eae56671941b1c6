"""GPT as MindSpore's model zoo runs it (tests/zoo/gpt: official/nlp/GPT/src with ``mindspore`` replaced by
``opforge``), on opforge.parallel._transformer's AttentionMask, TransformerEncoder, _LayerNorm and
CrossEntropyLoss, shrunk through GPTConfig. train.py's setup: TransformerOpParallelConfig, CrossEntropyLoss on its
dp_mp_config, GPTWithLoss, the LearningRate schedule, AdamWeightDecay over decay / no-decay groups and a
DynamicLossScaleUpdateCell. The zoo's step cell (GPTTrainOneStepWithLossScaleCell) reads Ascend's NPU float
status, which opforge lacks, and GPT has no GPU path, so the step is nn.TrainOneStepWithLossScaleCell (MindSpore's
overflow check by FloatStatus, the GPU path of the other zoo models) with the same update cell. Then eval.py's
EvalNet (argmax and generate mode) and inference.generate (top-k sampling)."""

import numpy as np
import pytest
from zoo.gpt.gpt import GPT, EvalNet, GPTWithLoss
from zoo.gpt.inference import generate
from zoo.gpt.utils import GPTConfig, LearningRate

import opforge
import opforge.dataset as ds
from opforge import Tensor, nn
from opforge.common import dtype as mstype
from opforge.parallel._transformer import TransformerOpParallelConfig
from opforge.parallel._transformer.loss import CrossEntropyLoss
from opforge.train.callback import LambdaCallback
from opforge.train.model import Model

BATCH, SEQ, VOCAB = 4, 8, 16


@pytest.fixture(autouse=True)
def _seeds():
    np.random.seed(0)
    opforge.set_seed(0)


def _config():
    return GPTConfig(batch_size=BATCH, seq_length=SEQ, vocab_size=VOCAB, embedding_size=16, num_layers=2,
                     num_heads=2, expand_ratio=4, post_layernorm_residual=False, dropout_rate=0.1,
                     compute_dtype=mstype.float16, use_past=False)  # fmt: skip


def _rows(n, rng):
    """Counting sequences (t, t+1, ...) over tokens 1..VOCAB-1 (0 is generate's padding): learnable."""
    starts = rng.integers(1, VOCAB, n)
    return [((s - 1 + np.arange(SEQ + 1)) % (VOCAB - 1) + 1).astype(np.int32) for s in starts]


def test_gpt_trains_and_generates():
    rng = np.random.default_rng(0)
    config = _config()
    gpt = GPT(config)
    parallel_config = TransformerOpParallelConfig(data_parallel=1, model_parallel=1)
    loss = CrossEntropyLoss(parallel_config.dp_mp_config)
    gpt_with_loss = GPTWithLoss(gpt, loss)

    rows = _rows(64, rng)
    data = ds.GeneratorDataset(lambda: ((r,) for r in rows), ["input_ids"], shuffle=False).batch(BATCH)
    steps = data.get_dataset_size()
    epochs = 4
    lr = LearningRate(learning_rate=5e-3, end_learning_rate=1e-4, warmup_steps=4, decay_steps=epochs * steps)
    decay_filter = lambda x: "layernorm" not in x.name.lower() and "bias" not in x.name.lower()  # noqa: E731
    params = gpt.trainable_params()
    decay_params = list(filter(decay_filter, params))
    other_params = list(filter(lambda x: not decay_filter(x), params))
    group_params = [{"params": decay_params, "weight_decay": 1e-2}, {"params": other_params, "weight_decay": 0.0},
                    {"order_params": params}]  # fmt: skip
    optimizer = nn.AdamWeightDecay(group_params, learning_rate=lr)
    update_cell = nn.DynamicLossScaleUpdateCell(loss_scale_value=1024, scale_factor=2, scale_window=1000)
    step_cell = nn.TrainOneStepWithLossScaleCell(gpt_with_loss, optimizer, scale_sense=update_cell)

    losses = []

    def record(run_context):
        out = run_context.original_args().net_outputs
        losses.append(float((out[0] if isinstance(out, tuple) else out).asnumpy().reshape(-1)[0]))

    Model(step_cell).train(epochs, data, callbacks=[LambdaCallback(on_train_step_end=record)],
                           dataset_sink_mode=False)  # fmt: skip
    assert len(losses) == epochs * steps and np.all(np.isfinite(losses))
    first, last = np.mean(losses[:steps]), np.mean(losses[-steps:])
    assert last < 0.7 * first, (first, last)

    # eval.py: argmax of the next token (the counting rule once learned) and the generate mode's probabilities
    gpt.set_train(False)
    ids = np.stack(_rows(BATCH, rng))[:, :SEQ]
    mask = np.ones_like(ids, np.float32)
    predicted = EvalNet(gpt, generate=False)(Tensor(ids), Tensor(mask)).asnumpy().reshape(BATCH, SEQ)
    expected = ids % (VOCAB - 1) + 1
    assert (predicted[:, 1:] == expected[:, 1:]).mean() > 0.5
    probs = EvalNet(gpt, generate=True)(Tensor(ids), Tensor(mask)).asnumpy()
    assert probs.shape == (BATCH * SEQ, VOCAB)
    np.testing.assert_allclose(probs.sum(-1), 1.0, atol=1e-2)

    # inference.generate: top-5 sampling from a prompt, batch 1 (the zoo's script reshapes to its batch)
    config1 = _config()
    config1.batch_size = 1
    eval_net = EvalNet(gpt, generate=True)
    out = generate(eval_net, np.array([[3, 4, 5]], np.int32), SEQ, end_token=VOCAB + 1)
    assert out.shape[0] <= SEQ and list(out[:3]) == [3, 4, 5] and np.all((out > 0) & (out < VOCAB))
