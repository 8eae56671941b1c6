"""NCF as MindSpore's model zoo runs it (tests/zoo/ncf: research/recommend/ncf with ``mindspore`` replaced by
``opforge``), on synthetic MovieLens-1M-sized ratings (6040 users, 3706 items; four training positives and one
held-out positive per user, drawn by a Zipf popularity) written as the pickled cache ``load_data`` reads:
train.py's ``run_train`` builds the training ``GeneratorDataset`` over ``NCFDataset`` with the zoo's own
``RandomSampler`` (a ``Sampler`` subclass giving one *row of sample indices per batch*), trains ``TrainStepWrap``
(Adam on ``dynamic_lr``, a ``sens``-scaled ``GradOperation``) through ``Model.train`` in sink mode, and eval.py's
``run_eval`` ranks each held-out item among 99 sampled negatives (``SequenceSampler`` giving ``(low, high)``
user ranges, ``PredictWithSigmoid``'s top-k, ``NCFMetric``'s HR and NDCG). The network, the loss, the top-k
and the metric are checked against NumPy, and the negative sampling against the ratings."""

import os
import pickle

import numpy as np
import pytest
from zoo.ncf import constants as rconst
from zoo.ncf import dataset as ncf_data
from zoo.ncf.config import config
from zoo.ncf.metrics import NCFMetric
from zoo.ncf.ncf import NCFModel, NetWithLossClass, PredictWithSigmoid

import opforge
from opforge import Tensor, context

USERS, ITEMS, PER_USER = ncf_data.DATASET_TO_NUM_USERS_AND_ITEMS["ml-1m"] + (4,)


@pytest.fixture(autouse=True)
def _state(monkeypatch):
    np.random.seed(0)
    opforge.set_seed(0)
    for key in ("data_path", "checkpoint_path", "checkpoint_file_path", "output_path", "train_epochs"):
        monkeypatch.setattr(config, key, getattr(config, key))
    yield
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


def _ratings(seed=0):
    """load_data's result for ml-1m-sized data: users in order, each with PER_USER training items (sorted by
    user, as load_data sorts) and one evaluation item, all distinct, drawn by a Zipf(0.8) item popularity."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, ITEMS + 1) ** 0.8
    items = np.stack([rng.choice(ITEMS, PER_USER + 1, replace=False, p=popularity / popularity.sum())
                      for _ in range(USERS)])  # fmt: skip
    return {
        rconst.TRAIN_USER_KEY: np.repeat(np.arange(USERS), PER_USER).astype(rconst.USER_DTYPE),
        rconst.TRAIN_ITEM_KEY: items[:, :PER_USER].reshape(-1).astype(rconst.ITEM_DTYPE),
        rconst.EVAL_USER_KEY: np.arange(USERS).astype(rconst.USER_DTYPE),
        rconst.EVAL_ITEM_KEY: items[:, PER_USER].astype(rconst.ITEM_DTYPE),
        rconst.USER_MAP: {u + 1: u for u in range(USERS)},  # MovieLens ids start at 1
        rconst.ITEM_MAP: {i + 1: i for i in range(ITEMS)},
        "create_time": 0.0,
    }


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("movielens")
    os.makedirs(root / "ml-1m")
    with open(root / "ml-1m" / rconst.RAW_CACHE_FILE, "wb") as f:
        pickle.dump(_ratings(), f, protocol=pickle.HIGHEST_PROTOCOL)
    return str(root)


def _np_ncf(net, users, items):
    """NCFModel.construct in NumPy: GMF (the first num_factors embedding columns multiplied) beside the MLP
    (the columns after mf_dim, concatenated, two ReLU dense layers), then the logits dense layer."""
    eu = net.embedding_user.embedding_table.asnumpy()[users[:, 0]]
    ei = net.embedding_item.embedding_table.asnumpy()[items[:, 0]]
    mf = eu[:, : net.num_factors] * ei[:, : net.num_factors]
    x = np.concatenate([eu[:, net.mf_dim :], ei[:, net.mf_dim :]], 1)
    for dense in (net.mlp_dense1, net.mlp_dense2):
        x = np.maximum(x @ dense.weight.asnumpy().T + dense.bias.asnumpy(), 0)
    x = np.concatenate([mf, x], 1)
    return x @ net.logits_dense.weight.asnumpy().T + net.logits_dense.bias.asnumpy()


def _net():
    net = NCFModel(num_users=50, num_items=300, num_factors=config.num_factors, model_layers=config.layers,
                   mf_regularization=0, mlp_reg_layers=[0.0, 0.0, 0.0, 0.0], mf_dim=16)  # fmt: skip
    rng = np.random.default_rng(1)
    for table in (net.embedding_user.embedding_table, net.embedding_item.embedding_table):
        table.set_data(Tensor(rng.normal(0, 0.5, table.shape).astype(np.float32)))
    return net


def test_ncf_network_and_loss_match_numpy():
    net = _net()
    rng = np.random.default_rng(2)
    users = rng.integers(0, 50, (12, 1)).astype(np.int32)
    items = rng.integers(0, 300, (12, 1)).astype(np.int32)
    logits = net(Tensor(users), Tensor(items)).asnumpy()
    want = _np_ncf(net, users, items)
    assert logits.shape == (12, 1) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-6)
    # the loss: softmax cross-entropy of [0, logit] (a sigmoid BCE), averaged over the valid points only
    labels = rng.integers(0, 2, (12, 1)).astype(np.int32)
    mask = (np.arange(12) < 9).astype(np.float32)[:, None]
    loss = NetWithLossClass(net)(Tensor(users), Tensor(items), Tensor(labels), Tensor(mask)).asnumpy()
    pair = np.concatenate([np.zeros_like(want), want], 1)
    ce = np.log(np.exp(pair).sum(1)) - pair[np.arange(12), labels[:, 0]]
    np.testing.assert_allclose(loss, (ce * mask[:, 0]).sum() / mask.sum(), rtol=1e-5)


def test_predict_with_sigmoid_top_k_and_ncf_metric_match_numpy():
    net = _net()
    rng = np.random.default_rng(3)
    users = np.repeat(np.arange(4), 100)[:, None].astype(np.int32)
    items = rng.integers(0, 300, (400, 1)).astype(np.int32)
    dup = np.zeros((400, 1), np.float32)
    dup[300:399] = 1  # user 3: every negative a duplicate (padding), so its metric weight is 0
    indices, batch_items, weights = PredictWithSigmoid(net, rconst.TOP_K, rconst.NUM_EVAL_NEGATIVES)(
        Tensor(users), Tensor(items), Tensor(dup)
    )
    scores = _np_ncf(net, users, items).reshape(4, 100)
    np.testing.assert_array_equal(indices.asnumpy(), np.argsort(-scores, 1, kind="stable")[:, :10])
    np.testing.assert_array_equal(batch_items.asnumpy(), items.reshape(4, 100))
    np.testing.assert_array_equal(weights.asnumpy(), [True, True, True, False])

    metric = NCFMetric()
    metric.clear()
    metric.update(indices, batch_items, weights)
    hr, ndcg = [], []
    for u in range(3):  # the positive is the last item of each row
        ranked = items.reshape(4, 100)[u][np.argsort(-scores[u], kind="stable")[:10]].tolist()
        positive = int(items.reshape(4, 100)[u, -1])
        hr.append(positive in ranked)
        ndcg.append(1 / np.log2(ranked.index(positive) + 2) if positive in ranked else 0.0)
    np.testing.assert_allclose(metric.eval(), (np.mean(hr), np.mean(ndcg)))


def _ncf_dataset(is_training, batch_size):
    data = _ratings()
    lookup = ncf_data.construct_lookup_variables(data[rconst.TRAIN_USER_KEY], data[rconst.TRAIN_ITEM_KEY], USERS)
    users, items = (
        (data[rconst.TRAIN_USER_KEY], data[rconst.TRAIN_ITEM_KEY])
        if is_training
        else (data[rconst.EVAL_USER_KEY], data[rconst.EVAL_ITEM_KEY])
    )
    dataset = ncf_data.NCFDataset(users, items, USERS, ITEMS, batch_size, *lookup, config.num_neg, is_training)
    positives = {u: set(data[rconst.TRAIN_ITEM_KEY][u * PER_USER : (u + 1) * PER_USER]) for u in range(USERS)}
    return dataset, positives


def test_ncf_dataset_draws_negatives_outside_each_users_positives():
    """NCFDataset.__getitem__ as the samplers call it: a row of sample indices for a training batch (those past
    the positives are negatives, drawn by lookup_negative_items' bisection), a (low, high) user range for an
    evaluation batch (the held-out positive last, 99 drawn negatives, a duplicate mask)."""
    np.random.seed(4)
    train, positives = _ncf_dataset(True, 256)
    pos_count = USERS * PER_USER
    assert len(train) == -(-pos_count * 5 // 256)
    index = np.concatenate([np.arange(100), pos_count + np.arange(100)])  # a last, partial batch of 200
    users, items, labels, mask = train[index]
    assert users.shape == items.shape == labels.shape == mask.shape == (256, 1)
    assert labels.dtype == np.int32 and mask.dtype == np.float32 and users.dtype == np.int32
    np.testing.assert_array_equal(labels[:, 0], np.r_[np.ones(100), np.zeros(156)])
    np.testing.assert_array_equal(mask[:, 0], np.r_[np.ones(200), np.zeros(56)])
    np.testing.assert_array_equal(users[:200, 0], np.r_[np.arange(100), np.arange(100)] // PER_USER)
    assert all(items[k, 0] in positives[users[k, 0]] for k in range(100))
    assert all(0 <= items[k, 0] < ITEMS and items[k, 0] not in positives[users[k, 0]] for k in range(100, 200))

    evaluation, _ = _ncf_dataset(False, 1000)  # 10 users a batch
    users, items, dup = evaluation[(20, 30)]
    assert users.shape == items.shape == dup.shape == (1000, 1)
    users, items, dup = users.reshape(10, 100), items.reshape(10, 100), dup.reshape(10, 100)
    np.testing.assert_array_equal(users, np.repeat(np.arange(20, 30), 100).reshape(10, 100))
    np.testing.assert_array_equal(items[:, -1], _ratings()[rconst.EVAL_ITEM_KEY][20:30])
    for u in range(10):
        assert not set(items[u, :-1].tolist()) & positives[20 + u]
        # the mask marks an item seen earlier in [positive, negatives...]; then the positive is swapped last
        drawn = items[u, [-1, *range(1, 99), 0]]
        want = np.array([v in drawn[:k] for k, v in enumerate(drawn)], np.float32)[[-1, *range(1, 99), 0]]
        np.testing.assert_array_equal(dup[u], want)
        assert dup[u, -1] == 0


def test_ncf_trains_and_evaluates_as_train_and_eval_py(data_dir, tmp_path, capsys):
    from zoo.ncf import eval as ncf_eval
    from zoo.ncf import train as ncf_train

    config.data_path = data_dir
    config.checkpoint_path = str(tmp_path / "checkpoint")
    config.output_path = str(tmp_path / "output")
    ncf_train.run_train()
    out = capsys.readouterr().out
    assert "ds_train.size: 472" in out  # ceil(6040 * 4 * (1 + num_neg) / 256)
    losses = [float(line.rsplit("loss is ", 1)[1]) for line in out.splitlines() if "loss is " in line]
    assert len(losses) == config.train_epochs  # LossMonitor(per_print_times=472): once an epoch
    assert losses[0] < 0.6 and losses[-1] < 0.45, losses  # a first loss of ln 2, at 1 in 5 positives
    # save_checkpoint_steps (19418) is past the 1416 steps: the checkpoint is the one written at the end
    assert os.listdir(tmp_path / "checkpoint") == [f"NCF-{config.train_epochs}_472.ckpt"]

    config.checkpoint_file_path = str(tmp_path / "checkpoint" / f"NCF-{config.train_epochs}_472.ckpt")
    hr, ndcg = ncf_eval.run_eval()["ncf"]
    out = capsys.readouterr().out
    # the eval source's length is ceil(6040 * 5 / 160000) = 1 batch, which caps the SequenceSampler's 4 batches
    # (a Sampler's num_samples is capped by the dataset size): 1600 users ranked
    assert "ds_eval.size: 1" in out
    assert 0.35 < hr <= 1 and 0 < ndcg < hr, (hr, ndcg)  # random ranking: HR@10 = 0.1
    log = (tmp_path / "output" / config.eval_file_name).read_text()
    assert log == f"EvalCallBack: HR = {hr}, NDCG = {ndcg}\n"
