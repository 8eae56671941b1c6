"""Block checkpoints merged by strategy files (opforge/nn/checkpoint_distributed.py, opforge/dispatch/strategy_file.py)
in one process: the blocks are cut here from a whole array by rank coordinates worked out independently; the
multi-rank run is tests/mpi_scripts/sharded_checkpoint.py (tests/test_parallel.py)."""

import numpy as np
import pytest
from test_checkpoint_mindspore import _field

import opforge
from opforge import Parameter, Tensor
from opforge.dispatch import strategy_file


def _blocks(whole, splits_by_rank):
    """Parameters holding, for each rank, ``whole`` cut to the part index per dim that ``splits_by_rank(rank)``
    gives as ((part, parts), ...)."""
    out = []
    for parts in splits_by_rank:
        index = tuple(slice(p * (n // k), (p + 1) * (n // k)) for (p, k), n in zip(parts, whole.shape))
        out.append(Parameter(Tensor(np.ascontiguousarray(whole[index])), name="w"))
    return out


def _strategy(tmp_path, layouts):
    path = str(tmp_path / "strategy.ckpt")
    strategy_file.write_layouts(path, layouts)
    return opforge.build_searched_strategy(path)


def test_a_two_by_two_device_matrix_merges_both_dims(tmp_path, rng):
    whole = rng.standard_normal((4, 6)).astype(np.float32)
    # device matrix [2, 2]: rank = 2 * a + b; tensor map [1, 0]: dim 0 by a (map 1 counts from the right), dim 1 by b
    parts = [((r // 2, 2), (r % 2, 2)) for r in range(4)]
    strategy = _strategy(tmp_path, {"w": ([2, 2], [1, 0])})
    merged = opforge.merge_sliced_parameter(_blocks(whole, parts), strategy)
    assert merged.name == "w" and merged.dtype == opforge.float32
    np.testing.assert_array_equal(merged.asnumpy(), whole)


def test_ranks_repeating_a_block_merge_to_the_same_whole(tmp_path, rng):
    whole = rng.standard_normal((3, 8)).astype(np.float32)
    parts = [((0, 1), (r % 4, 4)) for r in range(8)]  # device matrix [2, 4], tensor map [-1, 0]: a repeats
    merged = opforge.merge_sliced_parameter(_blocks(whole, parts), _strategy(tmp_path, {"w": ([2, 4], [-1, 0])}))
    np.testing.assert_array_equal(merged.asnumpy(), whole)


def test_without_a_strategy_slices_are_concatenated_along_dim_0():
    slices = [Parameter(Tensor(np.full(3, i, np.float64)), name="table") for i in range(4)]
    merged = opforge.merge_sliced_parameter(slices)
    assert merged.shape == (12,) and merged.dtype == opforge.float64
    np.testing.assert_array_equal(merged.asnumpy(), np.repeat(np.arange(4.0), 3))


def test_a_strategy_file_as_older_mindspore_writes_it_reads(tmp_path):
    # ParallelLayouts without the optimizer-shard fields (6 and 7), which newer MindSpore added
    layouts = _field(1, _field(1, b"\x02")) + _field(2, _field(1, 0) + _field(1, 2**64 - 1)) + _field(5, 0)
    item = _field(1, b"fc.weight") + _field(2, layouts)
    path = tmp_path / "old_strategy.ckpt"
    path.write_bytes(_field(1, 0) + _field(3, item))
    strategy = opforge.build_searched_strategy(str(path))
    lay = strategy["fc.weight"]
    assert list(lay.dev_matrix[0].dim) == [2] and list(lay.tensor_map[0].dim) == [0, -1]
    assert lay.opt_weight_shard_size == 0 and lay.field == 0
    whole = np.arange(8.0).reshape(4, 2)
    blocks = [Parameter(Tensor(whole[2 * r : 2 * r + 2]), name="fc.weight") for r in range(2)]
    np.testing.assert_array_equal(opforge.merge_sliced_parameter(blocks, strategy).asnumpy(), whole)


def test_merge_errors_name_the_argument(tmp_path):
    w = [Parameter(Tensor(np.zeros((2, 2), np.float32)), name="w") for _ in range(2)]
    with pytest.raises(TypeError, match="'sliced_parameters' must be a list"):
        opforge.merge_sliced_parameter(tuple(w))
    with pytest.raises(ValueError, match="must not be empty"):
        opforge.merge_sliced_parameter([])
    with pytest.raises(TypeError, match="element 1 of 'sliced_parameters' must be a Parameter"):
        opforge.merge_sliced_parameter([w[0], np.zeros((2, 2))])
    with pytest.raises(ValueError, match="the element 1 has v"):
        opforge.merge_sliced_parameter([w[0], Parameter(Tensor(np.zeros((2, 2), np.float32)), name="v")])
    strategy = _strategy(tmp_path, {"w": ([4], [0, -1]), "x": ([2], [-1, 0])})
    with pytest.raises(KeyError, match="'u' is not in the 'strategy'"):
        opforge.merge_sliced_parameter([Parameter(Tensor(np.zeros(2)), name="u")], strategy)
    with pytest.raises(ValueError, match="has 2 slices but its device matrix \\[4\\] has 4 devices"):
        opforge.merge_sliced_parameter(w, strategy)
    with pytest.raises(TypeError, match="'strategy' must be a dict"):
        opforge.merge_sliced_parameter(w, [1])


def test_load_distributed_checkpoint_merges_block_files_into_a_network(tmp_path, rng):
    net = opforge.nn.Dense(4, 6)
    whole_w, whole_b = net.weight.asnumpy(), net.bias.asnumpy()
    files = []
    for r in range(2):  # column-parallel: the weight's rows and the bias split across 2 ranks
        rows = slice(3 * r, 3 * r + 3)
        blocks = {"weight": Tensor(whole_w[rows]), "bias": Tensor(whole_b[rows])}
        files.append(opforge.save_checkpoint(blocks, str(tmp_path / f"rank{r}.ckpt")))
    path = str(tmp_path / "train_strategy.ckpt")
    strategy_file.write_layouts(path, {"weight": ([2], [0, -1]), "bias": ([2], [0])})
    fresh = opforge.nn.Dense(4, 6)
    opforge.load_distributed_checkpoint(fresh, files, train_strategy_filename=path)
    np.testing.assert_array_equal(fresh.weight.asnumpy(), whole_w)
    np.testing.assert_array_equal(fresh.bias.asnumpy(), whole_b)
    # the training strategy file from the context when none is passed
    opforge.set_auto_parallel_context(strategy_ckpt_config={"load_file": path})
    try:
        other = opforge.nn.Dense(4, 6)
        opforge.load_distributed_checkpoint(other, files)
        np.testing.assert_array_equal(other.weight.asnumpy(), whole_w)
    finally:
        opforge.reset_auto_parallel_context()
    # the file an AutoParallel wrapper saves its strategy to (MindSpore 2.6)
    from opforge.parallel.auto_parallel import AutoParallel

    wrapped = AutoParallel(opforge.nn.Dense(4, 6))
    wrapped.save_param_strategy_file(path)
    opforge.load_distributed_checkpoint(wrapped, files)
    np.testing.assert_array_equal(wrapped.network.weight.asnumpy(), whole_w)
    with pytest.raises(ValueError, match="no training strategy file"):
        opforge.load_distributed_checkpoint(fresh, files)
    with pytest.raises(ValueError, match="one file per training device \\(2\\), but got 1"):
        opforge.load_distributed_checkpoint(fresh, files[:1], train_strategy_filename=path)
    with pytest.raises(ValueError, match="'predict_strategy' must be a dict"):
        opforge.load_distributed_checkpoint(fresh, files, {"weight": [[2], [0]]}, path)
    with pytest.raises(ValueError, match="does not exist"):
        opforge.load_distributed_checkpoint(fresh, [files[0], str(tmp_path / "missing.ckpt")], None, path)


def test_strategy_file_options_are_checked():
    with pytest.raises(TypeError, match="'strategy_ckpt_save_file' must be str"):
        opforge.set_auto_parallel_context(strategy_ckpt_save_file=3)
    with pytest.raises(ValueError, match="unknown keys \\['file'\\]"):
        opforge.set_auto_parallel_context(strategy_ckpt_config={"file": "a"})
    with pytest.raises(TypeError, match="only_trainable_params'\\]' must be bool"):
        opforge.set_auto_parallel_context(strategy_ckpt_config={"only_trainable_params": 1})
    opforge.set_auto_parallel_context(strategy_ckpt_save_file="s.ckpt")
    assert opforge.get_auto_parallel_context("strategy_ckpt_config")["only_trainable_params"] is True
    opforge.reset_auto_parallel_context()
    with pytest.raises(ValueError, match="no strategy file"):
        opforge.build_searched_strategy("/nonexistent/strategy.ckpt")
