"""The model zoo's Wide&Deep (tests/zoo/wide_and_deep.py, official/recommend/Wide_and_Deep) as its
train_and_eval.py runs it: ``Model(train_net, eval_network=eval_net, metrics={"auc": AUCMetric()})``, evaluated
once, then trained through ``Model.train`` with its ``EvalCallBack`` (AUC after every epoch) and
``LossCallBack``, on the MindRecord-shaped dataset (rows of ``line_per_sample`` samples, batched then split by
``_padding_func``) over synthetic Criteo-like rows; the forward, the AUC metric and one FTRL step against NumPy."""

import types
import warnings

import numpy as np
from zoo import wide_and_deep as wd

import opforge
from opforge import Model, Tensor
from opforge.train.callback import TimeMonitor

BATCH, LINES, FIELDS, VOCAB, EMB = 16, 4, 8, 64, 8


def _config(tmp_path, sparse=False):
    return types.SimpleNamespace(
        batch_size=BATCH, eval_batch_size=BATCH, field_size=FIELDS, vocab_size=VOCAB, vocab_cache_size=0,
        emb_dim=EMB, deep_layer_dim=[32, 16, 16, 8], deep_layer_act="relu", keep_prob=1.0, dropout_flag=False,
        host_device_mix=0, parameter_server=0, field_slice=False, sparse=sparse, use_sp=True,
        deep_table_slice_mode="column_slice", weight_bias_init=["normal", "normal"], emb_init="normal",
        init_args=[-0.01, 0.01], l2_coef=8e-5, manual_shape=None, full_batch=False,
        eval_file_name=str(tmp_path / "eval.log"), loss_file_name=str(tmp_path / "loss.log"),
    )  # fmt: skip


def _datasets():
    ds_train = wd.create_dataset(wd.SyntheticCriteo(32, LINES, FIELDS, VOCAB, seed=0), True, BATCH, LINES, FIELDS)
    ds_eval = wd.create_dataset(wd.SyntheticCriteo(16, LINES, FIELDS, VOCAB, seed=1), False, BATCH, LINES, FIELDS)
    return ds_train, ds_eval


class _Losses(wd.LossCallBack):
    """The zoo's LossCallBack, keeping what it prints."""

    def __init__(self, config):
        super().__init__(config=config)
        self.losses = []

    def step_end(self, run_context):
        super().step_end(run_context)
        outs = run_context.original_args().net_outputs
        self.losses.append((float(outs[0].asnumpy()), float(outs[1].asnumpy())))


def test_wide_deep_trains_and_evaluates_auc_as_train_and_eval_py(tmp_path):
    opforge.set_seed(0)
    cfg = _config(tmp_path)
    ds_train, ds_eval = _datasets()
    assert ds_train.get_dataset_size() == 8
    ids, vals, label = next(ds_train.create_tuple_iterator())
    assert ids.shape == (BATCH, FIELDS) and vals.shape == (BATCH, FIELDS) and label.shape == (BATCH, 1)
    assert ids.dtype == opforge.int32 and vals.dtype == opforge.float32 and label.dtype == opforge.float32

    train_net, eval_net = wd.get_WideDeep_net(cfg)
    train_net.set_train()
    # FTRL on the wide part, Adam on the deep part, split by the parameters' names as the zoo splits them
    assert sorted(p.name for p in train_net.weights_w) == [
        "network.wide_b",
        "network.wide_embeddinglookup.embedding_table",
    ]
    assert isinstance(train_net.optimizer_w, opforge.nn.FTRL) and isinstance(train_net.optimizer_d, opforge.nn.Adam)
    auc_metric = wd.AUCMetric()
    model = Model(train_net, eval_network=eval_net, metrics={"auc": auc_metric})
    eval_callback = wd.EvalCallBack(model, ds_eval, auc_metric, cfg)
    callback = _Losses(cfg)
    before = model.eval(ds_eval, dataset_sink_mode=True)["auc"]
    table = train_net.network.network.wide_embeddinglookup.embedding_table.asnumpy().copy()
    model.train(4, ds_train, callbacks=[TimeMonitor(ds_train.get_dataset_size()), eval_callback, callback],
                dataset_sink_mode=True)  # fmt: skip
    losses = np.array(callback.losses)
    assert losses.shape == (32, 2) and np.all(np.isfinite(losses))
    assert np.all(losses[:, 1] > losses[:, 0])  # the deep loss adds the table's L2 term (sparse=False)
    assert losses[-8:, 0].mean() < losses[:8, 0].mean(), losses[:, 0]
    after = list(eval_callback.eval_values)[0]
    assert 0.0 <= before <= 1.0 and after > max(before + 0.2, 0.8), (before, after)
    assert not np.allclose(train_net.network.network.wide_embeddinglookup.embedding_table.asnumpy(), table)
    assert (tmp_path / "eval.log").read_text().count("EvalCallBack model.eval()") == 4
    assert (tmp_path / "loss.log").read_text().count("wide_loss") == 32


def _np_forward(net, ids, wts):
    """WideDeepModel.construct in NumPy: embeddings looked up and weighted, the wide sum plus Wide_b, five
    DenseLayers computed in float16 (ReLU on all but the last)."""
    wide = net.wide_embeddinglookup.embedding_table.asnumpy()[ids]  # [B, F, 1]
    deep = net.deep_embeddinglookup.embedding_table.asnumpy()[ids]  # [B, F, E]
    mask = wts[:, :, None]
    wide_out = (wide * mask).sum(1).reshape(-1, 1) + net.wide_b.asnumpy()
    x = (deep * mask).reshape(len(ids), -1)
    for i in range(1, 6):
        layer = getattr(net, f"dense_layer_{i}")
        w, b = layer.weight.asnumpy().astype(np.float16), layer.bias.asnumpy().astype(np.float16)
        x = (x.astype(np.float16) @ w + b).astype(np.float16)
        x = np.maximum(x, 0) if i < 5 else x
    return wide_out + x.astype(np.float32)


def test_wide_deep_forward_matches_numpy(tmp_path):
    opforge.set_seed(1)
    net = wd.WideDeepModel(_config(tmp_path))
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, (BATCH, FIELDS)).astype(np.int32)
    wts = rng.uniform(0.5, 1.5, (BATCH, FIELDS)).astype(np.float32)
    out, table = net(Tensor(ids), Tensor(wts))
    assert out.shape == (BATCH, 1) and table is net.deep_embeddinglookup.embedding_table
    np.testing.assert_allclose(out.asnumpy(), _np_forward(net, ids, wts), rtol=2e-2, atol=2e-3)
    logits, probs, labels = wd.PredictWithSigmoid(net)(
        Tensor(ids), Tensor(wts), Tensor(np.ones((BATCH, 1), np.float32))
    )
    np.testing.assert_allclose(probs.asnumpy(), 1 / (1 + np.exp(-logits.asnumpy())), rtol=1e-5)


def test_train_step_wrap_ftrl_step_on_wide_b_matches_numpy(tmp_path):
    """One TrainStepWrap step: loss_w's gradient (scaled by sens = 1024, unscaled by FTRL's loss_scale) moves
    Wide_b by ApplyFtrl's formula (initial_accum 1, lr 0.05, l1 = l2 = 1e-8, lr_power -0.5)."""
    opforge.set_seed(2)
    cfg = _config(tmp_path)
    train_net, _ = wd.get_WideDeep_net(cfg)
    train_net.set_train()
    rng = np.random.default_rng(3)
    ids = rng.integers(0, VOCAB, (BATCH, FIELDS)).astype(np.int32)
    wts = rng.uniform(0.5, 1.5, (BATCH, FIELDS)).astype(np.float32)
    label = rng.integers(0, 2, (BATCH, 1)).astype(np.float32)
    net = train_net.network.network
    w = net.wide_b.asnumpy().astype(np.float64)
    pred = _np_forward(net, ids, wts)
    g = np.mean(1 / (1 + np.exp(-pred)) - label)  # d mean(BCE-with-logits) / d Wide_b
    loss_w, _ = train_net(Tensor(ids), Tensor(wts), Tensor(label))
    expected_loss = np.mean(np.maximum(pred, 0) - pred * label + np.log1p(np.exp(-np.abs(pred))))
    np.testing.assert_allclose(float(loss_w.asnumpy()), expected_loss, rtol=1e-2)
    lr, l1, l2, n = 5e-2, 1e-8, 1e-8, 1.0
    n_new = n + g * g
    z = g - (np.sqrt(n_new) - np.sqrt(n)) / lr * w
    expected = np.where(np.abs(z) > l1, (np.sign(z) * l1 - z) / (np.sqrt(n_new) / lr + 2 * l2), 0.0)
    np.testing.assert_allclose(net.wide_b.asnumpy(), expected, rtol=2e-2, atol=1e-5)


def test_auc_metric_matches_pairwise_reference():
    rng = np.random.default_rng(4)
    metric = wd.AUCMetric()
    probs = rng.uniform(size=40).round(1).astype(np.float32)  # ties
    labels = (rng.uniform(size=40) < probs).astype(np.float32)
    for i in range(0, 40, 10):
        metric.update(Tensor(probs[i : i + 10]), Tensor(probs[i : i + 10]), Tensor(labels[i : i + 10]))
    pos, neg = probs[labels == 1], probs[labels == 0]
    pairs = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    np.testing.assert_allclose(metric.eval(), pairs / (len(pos) * len(neg)), rtol=1e-12)
    metric.clear()
    warnings.simplefilter("ignore")
    metric.update(Tensor(probs[:3]), Tensor(probs[:3]), Tensor(np.ones(3, np.float32)))
    auc = metric.eval()  # one class only: None (the zoo logs sklearn's error) or nan (newer sklearn warns)
    assert auc is None or np.isnan(auc)
