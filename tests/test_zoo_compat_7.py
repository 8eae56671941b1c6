"""What the model zoo's FastText and DeepSpeech2 (tests/zoo/fasttext, tests/zoo/deepspeech2;
tests/test_zoo_fasttext.py, tests/test_zoo_deepspeech2.py) needed of opforge, one focused check each:
``Dataset.concat`` and ``ds1 + ds2`` (FastText's ``load_dataset`` joins one dataset per bucket),
``load_param_into_net`` loading parameters found under a prefix, as MindSpore's ``_load_dismatch_prefix_params``
(FastText's eval.py loads the training cell's checkpoint, ``fasttext.fc.weight``, into a bare ``FastText``), and
``GeneratorDataset(sampler=...)`` with an iterable of row indices (DeepSpeech2's own ``DistributedSampler``),
which opforge had ignored."""

import numpy as np
import pytest

import opforge
import opforge.dataset as de
from opforge import Tensor, nn
from opforge.train.serialization import load_checkpoint, load_param_into_net, save_checkpoint


@pytest.fixture(autouse=True)
def _seed():
    de.config._state["seed"] = None
    opforge.set_seed(0)
    yield
    de.config._state["seed"] = None


def _numbers(start, stop, names=("x",)):
    return de.NumpySlicesDataset({names[0]: np.arange(start, stop, dtype=np.int32)}, shuffle=False)


def _column(data, epochs=1):
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[row[0].tolist() for row in it] for _ in range(epochs)]


# ---------------------------------------------------------------------------------------------
# Dataset.concat / +


def test_dataset_concat_and_plus_read_the_datasets_one_after_another():
    a, b, c = _numbers(0, 3), _numbers(10, 12), _numbers(20, 21)
    assert _column(a + b) == [[0, 1, 2, 10, 11]]
    joined = a.concat([b, c])
    assert joined.get_dataset_size() == 6 and joined.get_col_names() == ["x"]
    assert _column(joined, epochs=2) == [[0, 1, 2, 10, 11, 20]] * 2
    assert _column((a + b) + c) == _column(a + (b + c)) == [[0, 1, 2, 10, 11, 20]]


def test_dataset_concat_of_batched_buckets_then_shuffle_as_fasttext_load_dataset():
    short = _numbers(0, 5).batch(2)  # batches of one bucket each, as the zoo's batch_per_bucket gives
    long = de.NumpySlicesDataset({"x": np.arange(10, 16, dtype=np.int32).reshape(3, 2)}, shuffle=False).batch(2)
    data = short + long
    assert data.get_dataset_size() == 3 + 2
    data = data.shuffle(data.get_dataset_size())
    batches = [row[0] for row in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert sorted(b.tolist() for b in batches if b.ndim == 1) == [[0, 1], [2, 3], [4]]
    assert sorted(b.tolist() for b in batches if b.ndim == 2) == [[[10, 11], [12, 13]], [[14, 15]]]


def test_dataset_concat_errors():
    a = _numbers(0, 2)
    with pytest.raises(TypeError, match="For 'concat', 'datasets' must be a Dataset or a list of Datasets"):
        a + 1
    with pytest.raises(TypeError, match="For 'concat'"):
        a.concat([a, "b"])
    with pytest.raises(RuntimeError, match=r"For 'concat', every dataset must have the columns \['x'\]"):
        a + _numbers(0, 2, names=("y",))


# ---------------------------------------------------------------------------------------------
# load_param_into_net: parameters under a prefix


def test_load_param_into_net_finds_parameters_under_a_prefix(tmp_path):
    opforge.set_seed(1)
    net = nn.Dense(3, 2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    holder = nn.SequentialCell([net])  # names its parameters "0.weight", "0.bias"
    path = str(tmp_path / "holder.ckpt")
    save_checkpoint(holder, path)
    params = load_checkpoint(path)
    assert sorted(params) == ["0.bias", "0.weight"]
    fresh = nn.Dense(3, 2)
    not_loaded, unused = load_param_into_net(fresh, params)
    assert not_loaded == [] and unused == []
    np.testing.assert_array_equal(fresh.weight.asnumpy(), net.weight.asnumpy())
    # a training cell's checkpoint under one more prefix: the network's entries come before the optimizer's
    # "moments.*", so the first name that ends with "weight" gives the prefix "outer.", as in MindSpore
    save_checkpoint(step, str(tmp_path / "step.ckpt"))
    params = load_checkpoint(str(tmp_path / "step.ckpt"))
    params = {"outer." + k: v for k, v in params.items()}
    fresh = nn.Dense(3, 2)
    not_loaded, _ = load_param_into_net(fresh, params)
    assert not_loaded == []
    np.testing.assert_array_equal(fresh.bias.asnumpy(), net.bias.asnumpy())
    np.testing.assert_array_equal(fresh.weight.asnumpy(), net.weight.asnumpy())


def test_load_param_into_net_prefix_search_keeps_strict_load_and_missing_names():
    net = nn.Dense(3, 2)
    params = {"net.weight": Tensor(np.ones((2, 3), np.float32))}
    not_loaded, unused = load_param_into_net(net, params)
    assert not_loaded == ["bias"] and unused == []
    np.testing.assert_array_equal(net.weight.asnumpy(), np.ones((2, 3)))
    # strict_load: no prefix search, as MindSpore's
    assert load_param_into_net(nn.Dense(3, 2), params, strict_load=True) == (["weight", "bias"], ["net.weight"])
    with pytest.raises(ValueError, match="has shape"):
        load_param_into_net(nn.Dense(3, 2), {"net.weight": Tensor(np.ones((3, 3), np.float32))})


# ---------------------------------------------------------------------------------------------
# GeneratorDataset(sampler=iterable of indices)


class _EpochSampler:
    """Yields a different order each time it is iterated, as DeepSpeech2's DistributedSampler does."""

    def __init__(self, orders):
        self.orders, self.calls = orders, 0

    def __iter__(self):
        self.calls += 1
        return iter(self.orders[(self.calls - 1) % len(self.orders)])

    def __len__(self):
        return len(self.orders[0])


def test_generator_dataset_reads_the_rows_its_sampler_gives_each_epoch():
    source = [np.array(10 * i, np.int32) for i in range(5)]
    sampler = _EpochSampler([[3, 1, 4], [0, 0, 2]])
    data = de.GeneratorDataset(source, ["x"], sampler=sampler)
    assert data.get_dataset_size() == 3 and sampler.calls == 0  # counted by len(), not by iterating
    assert _column(data, epochs=2) == [[30, 10, 40], [0, 0, 20]]
    assert _column(de.GeneratorDataset(source, ["x"], sampler=[4, 2, 0, 1], num_samples=2)) == [[40, 20]]
    assert _column(de.GeneratorDataset(source, ["x"], sampler=range(5)).batch(2)) == [[[0, 10], [20, 30], [40]]]


def test_generator_dataset_sampler_errors():
    source = [np.array(i) for i in range(3)]
    with pytest.raises(TypeError, match="For 'GeneratorDataset', the 'sampler' must be an iterable of row indices"):
        de.GeneratorDataset(source, ["x"], sampler=3)
    with pytest.raises(ValueError, match="'sampler' and 'shuffle' cannot be specified at the same time"):
        de.GeneratorDataset(source, ["x"], sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="'sampler' and sharding cannot be specified at the same time"):
        de.GeneratorDataset(source, ["x"], sampler=[0], num_shards=2, shard_id=0)
    with pytest.raises(ValueError, match="'sampler' needs a random-access source"):
        de.GeneratorDataset(lambda: iter(source), ["x"], sampler=[0])
    with pytest.raises(ValueError, match="the sampler gave the index 3, but the source has 3 rows"):
        _column(de.GeneratorDataset(source, ["x"], sampler=[0, 3]))
