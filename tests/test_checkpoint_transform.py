"""MindSpore's checkpoint transformation (opforge/parallel/checkpoint_transform.py) in one process: block
checkpoints written here from whole arrays, by rank coordinates worked out independently of the code under test,
re-cut to another strategy and compared with the blocks the destination strategy describes."""

import json
import os

import numpy as np
import pytest

import opforge
from opforge.dispatch import strategy_file
from opforge.parallel.checkpoint_transform import (
    convert_checkpoints,
    rank_list_for_transform,
    transform_checkpoint_by_rank,
    transform_checkpoints,
)

W = np.arange(32, dtype=np.float32).reshape(8, 4)
B = np.arange(4, dtype=np.float32) + 100


def _rows(a, part, parts):
    n = a.shape[0] // parts
    return a[part * n : (part + 1) * n]


def _cols(a, part, parts):
    n = a.shape[1] // parts
    return a[:, part * n : (part + 1) * n]


def _write(folder, rank, tensors):
    os.makedirs(folder / f"rank_{rank}", exist_ok=True)
    path = str(folder / f"rank_{rank}" / "net.ckpt")
    tensors = {k: opforge.Tensor(np.ascontiguousarray(v)) for k, v in tensors.items()}
    opforge.save_checkpoint(tensors, path)
    return path


@pytest.fixture
def four_by_rows(tmp_path):
    """A run on 4 ranks: the weight's rows split 4 ways (device matrix [4, 1], tensor map [1, -1]), the bias
    whole on every rank, the learning rate outside the strategy."""
    src = str(tmp_path / "src_strategy.ckpt")
    strategy_file.write_layouts(src, {"w": ([4, 1], [1, -1]), "b": ([4], [-1])})
    folder = tmp_path / "src"
    files = {r: _write(folder, r, {"w": _rows(W, r, 4), "b": B, "lr": np.float32([0.1 * (r + 1)])}) for r in range(4)}
    return src, folder, files


def _dst(tmp_path, layouts):
    path = str(tmp_path / "dst_strategy.ckpt")
    strategy_file.write_layouts(path, layouts)
    return path


def test_rank_lists_name_one_holder_per_block_read(four_by_rows, tmp_path):
    src, _, _ = four_by_rows
    rows = _dst(tmp_path, {"w": ([2, 1], [1, -1]), "b": ([2], [0])})
    # rows 4-7: source ranks 2 and 3; the whole bias: rank 1's own (the rank a destination rank prefers)
    assert rank_list_for_transform(1, src, rows) == [3, 2, 1]
    assert rank_list_for_transform(0, src, rows) == [1, 0]
    cols = _dst(tmp_path, {"w": ([2], [-1, 0]), "b": ([2], [0])})
    assert rank_list_for_transform(1, src, cols) == [3, 2, 1, 0]  # a column block reads every row block
    assert rank_list_for_transform(0, src, None) == [3, 2, 1, 0]
    assert rank_list_for_transform(5, None, rows) == [0]  # a whole source: rank 0's file
    with pytest.raises(ValueError, match="'rank_id' must be in \\[0, 2\\)"):
        rank_list_for_transform(2, src, rows)
    with pytest.raises(TypeError, match="'rank_id' must be an int"):
        rank_list_for_transform("0", src, rows)


def test_repeated_blocks_are_read_from_one_rank(tmp_path):
    # device matrix [2, 2], tensor map [1, -1]: rows halved by r // 2, each half on two ranks
    src = _dst(tmp_path, {"w": ([2, 2], [1, -1])})
    dst = str(tmp_path / "dst2.ckpt")
    strategy_file.write_layouts(dst, {"w": ([2, 1], [1, -1])})
    assert rank_list_for_transform(0, src, dst) == [0]
    assert rank_list_for_transform(1, src, dst) == [2]  # rows 4-7 on ranks 2 and 3: the lowest


def test_transform_checkpoints_recuts_every_rank(four_by_rows, tmp_path):
    src, folder, _ = four_by_rows
    dst = _dst(tmp_path, {"w": ([2], [-1, 0]), "b": ([2], [0])})
    out = tmp_path / "out"
    transform_checkpoints(str(folder), str(out), "net_", src, dst)
    for r in range(2):
        got = opforge.load_checkpoint(str(out / f"rank_{r}" / f"net_{r}.ckpt"))
        np.testing.assert_array_equal(got["w"].asnumpy(), _cols(W, r, 2))
        np.testing.assert_array_equal(got["b"].asnumpy(), B[r * 2 : (r + 1) * 2])
        np.testing.assert_allclose(got["lr"].asnumpy(), [0.1 * (r + 1)])  # from source rank r: as it is
    whole = tmp_path / "whole"
    convert_checkpoints(str(folder), str(whole), "net_", src, None)  # MindSpore 2.6's name: merged whole
    got = opforge.load_checkpoint(str(whole / "rank_0" / "net_0.ckpt"))
    np.testing.assert_array_equal(got["w"].asnumpy(), W)
    assert not (whole / "rank_1").exists()


def test_transform_by_rank_from_a_whole_checkpoint_and_with_files_missing(four_by_rows, tmp_path):
    src, _, files = four_by_rows
    rows = _dst(tmp_path, {"w": ([2, 1], [1, -1]), "b": ([2], [0])})
    out = str(tmp_path / "r1.ckpt")
    transform_checkpoint_by_rank(1, {r: files[r] for r in (1, 2, 3)}, out, src, rows)
    got = opforge.load_checkpoint(out)
    np.testing.assert_array_equal(got["w"].asnumpy(), W[4:])
    np.testing.assert_array_equal(got["b"].asnumpy(), B[2:])
    whole = str(tmp_path / "whole.ckpt")
    opforge.save_checkpoint({"w": opforge.Tensor(W), "b": opforge.Tensor(B)}, whole)
    transform_checkpoint_by_rank(1, {0: whole}, out, None, rows)  # a stand-alone checkpoint cut for rank 1
    np.testing.assert_array_equal(opforge.load_checkpoint(out)["w"].asnumpy(), W[4:])
    with pytest.raises(ValueError, match="checkpoint of rank 2 is missing"):
        transform_checkpoint_by_rank(1, {1: files[1], 3: files[3]}, out, src, rows)
    with pytest.raises(ValueError, match="needed for converting rank1's checkpoint"):
        os.remove(files[3])
        transform_checkpoints(str(os.path.dirname(os.path.dirname(files[0]))), str(tmp_path / "o"), "n", src, rows)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda f, s: transform_checkpoint_by_rank(0, [f], "o.ckpt", s), TypeError, "must be a dict"),
        (lambda f, s: transform_checkpoint_by_rank(0, {0: f}, "o.npz", s), ValueError, "must end with .ckpt or"),
        (lambda f, s: transform_checkpoint_by_rank(0, {0: "/no/file"}, "o.ckpt", s), ValueError, "does not exist"),
        (lambda f, s: transform_checkpoint_by_rank(0, {0: f}, "o.ckpt"), ValueError, "None of the parameters"),
        (lambda f, s: transform_checkpoints("/no/dir", "/tmp/x", "n", s), ValueError, "can not be empty"),
    ],
)
def test_transform_checks_its_arguments(four_by_rows, tmp_path, call, error, match):
    src, _, files = four_by_rows
    with pytest.raises(error, match=match):
        call(files[0], src)


def test_unsafe_prefix_and_output_format_are_refused(four_by_rows, tmp_path):
    src, folder, _ = four_by_rows
    with pytest.raises(ValueError, match="'ckpt_prefix' '../n' is not a safe name"):
        transform_checkpoints(str(folder), str(tmp_path / "o"), "../n", src)
    with pytest.raises(ValueError, match="'output_format' can not be 'safetensors' when 'src_checkpoints_dir' only"):
        transform_checkpoints(str(folder), str(tmp_path / "o"), "n", src, output_format="safetensors")
    with pytest.raises(ValueError, match="'output_format' must be 'safetensors' or 'ckpt', but got 'npz'"):
        transform_checkpoints(str(folder), str(tmp_path / "o"), "n", src, output_format="npz")
    opforge.ckpt_to_safetensors(str(folder / "rank_0" / "net.ckpt"))
    with pytest.raises(ValueError, match="cannot contain both ckpt file and safetensors file"):
        transform_checkpoints(str(folder), str(tmp_path / "o"), "n", src)


@pytest.mark.parametrize("output_format", ["safetensors", "ckpt"])
def test_safetensors_checkpoints_are_recut_into_either_format(four_by_rows, tmp_path, output_format):
    src, folder, files = four_by_rows
    opforge.ckpt_to_safetensors(str(folder), str(tmp_path / "st"))
    dst = _dst(tmp_path, {"w": ([2], [-1, 0]), "b": ([2], [0])})
    transform_checkpoints(str(tmp_path / "st"), str(tmp_path / "out"), "net_", src, dst, output_format=output_format)
    for r in range(2):
        got = opforge.load_checkpoint(str(tmp_path / "out" / f"rank_{r}" / f"net_{r}.{output_format}"),
                                      format=output_format)  # fmt: skip
        np.testing.assert_array_equal(got["w"].asnumpy(), _cols(W, r, 2))
        np.testing.assert_array_equal(got["b"].asnumpy(), B[r * 2 : (r + 1) * 2])
    sources = {r: str(tmp_path / "st" / f"rank_{r}" / "net.safetensors") for r in range(4)}
    transform_checkpoint_by_rank(1, sources, str(tmp_path / "one.safetensors"), src, dst)
    got = opforge.load_checkpoint(str(tmp_path / "one.safetensors"), format="safetensors")
    np.testing.assert_array_equal(got["w"].asnumpy(), _cols(W, 1, 2))


V = np.arange(24, dtype=np.float32).reshape(4, 6) - 50


@pytest.fixture(params=[".ckpt", ".json"])
def two_stages(tmp_path, request):
    """A 2-stage pipeline of 2 ranks a stage: stage 0 holds "w" (rows split over its 2 ranks), stage 1 holds "v"
    (columns split over its 2); each rank wrote its stage's strategy file (protobuf or JSON) and its own blocks, as
    a pipeline's ranks do."""
    strategys, folder = tmp_path / "strategys", tmp_path / "src"
    for rank in range(4):
        stage, r = divmod(rank, 2)
        layouts = {"w": ([2, 1], [1, -1])} if stage == 0 else {"v": ([2], [-1, 0])}
        path = str(strategys / f"stage_{rank}{request.param}")
        strategy_file.write_layouts(path, layouts, stage=stage, shapes={"w": W.shape, "v": V.shape})
        block = {"w": _rows(W, r, 2)} if stage == 0 else {"v": _cols(V, r, 2)}
        _write(folder, rank, {**block, "step": np.int32([7])})
    merged = str(tmp_path / "merged.ckpt")
    opforge.merge_pipeline_strategys(str(strategys), merged)
    return merged, folder


def test_pipeline_stages_strategy_files_merge_and_their_blocks_come_back_whole(two_stages, tmp_path):
    merged, folder = two_stages
    layouts = strategy_file.read_layouts(merged)
    assert sorted(layouts) == ["0-w", "1-v"]  # one entry per stage, whichever of its ranks' files was read
    assert rank_list_for_transform(0, merged, None) == [3, 2, 1, 0]  # both stages' blocks, each from its ranks
    transform_checkpoints(str(folder), str(tmp_path / "whole"), "net", merged, None)
    got = opforge.load_checkpoint(str(tmp_path / "whole" / "rank_0" / "net0.ckpt"))
    np.testing.assert_array_equal(got["w"].asnumpy(), W)
    np.testing.assert_array_equal(got["v"].asnumpy(), V)
    assert got["step"].asnumpy().tolist() == [7]


def test_a_pipelined_destination_gives_each_rank_its_stages_parameters(two_stages, tmp_path):
    merged, folder = two_stages
    for rank in range(2):  # the destination: 2 stages of 1 rank, "w" and "v" swapped between the stages
        layouts = {"v": ([1], [-1, -1])} if rank == 0 else {"w": ([1], [-1, -1])}
        strategy_file.write_layouts(str(tmp_path / "dst" / f"r{rank}.ckpt"), layouts, stage=rank)
    dst = str(tmp_path / "dst_merged.ckpt")
    opforge.merge_pipeline_strategys(str(tmp_path / "dst"), dst)
    assert rank_list_for_transform(0, merged, dst) == [3, 2] and rank_list_for_transform(1, merged, dst) == [1, 0]
    transform_checkpoints(str(folder), str(tmp_path / "out"), "net", merged, dst)
    stage0 = opforge.load_checkpoint(str(tmp_path / "out" / "rank_0" / "net0.ckpt"))
    stage1 = opforge.load_checkpoint(str(tmp_path / "out" / "rank_1" / "net1.ckpt"))
    assert set(stage0) == {"v", "step"} and set(stage1) == {"w", "step"}
    np.testing.assert_array_equal(stage0["v"].asnumpy(), V)
    np.testing.assert_array_equal(stage1["w"].asnumpy(), W)


def test_merging_checks_its_folder_and_stages(tmp_path):
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        opforge.merge_pipeline_strategys(str(tmp_path / "none"), str(tmp_path / "m.ckpt"))
    (tmp_path / "mixed").mkdir()
    strategy_file.write_layouts(str(tmp_path / "mixed" / "s0.json"), {"v": ([2], [-1, 0])})
    strategy_file.write_layouts(str(tmp_path / "mixed" / "s1.ckpt"), {"v": ([2], [-1, 0])}, stage=1)
    with pytest.raises(ValueError, match="must be all '.ckpt' or all '.json'"):
        opforge.merge_pipeline_strategys(str(tmp_path / "mixed"), str(tmp_path / "m.ckpt"))
    strategy_file.write_layouts(str(tmp_path / "one" / "s1.ckpt"), {"v": ([2], [-1, 0])}, stage=1)
    opforge.merge_pipeline_strategys(str(tmp_path / "one"), str(tmp_path / "m.ckpt"))
    with pytest.raises(ValueError, match="does not hold every stage: it holds stages \\[1\\]"):
        rank_list_for_transform(0, str(tmp_path / "m.ckpt"), None)


def test_json_strategy_files_hold_mindspores_form_and_read_as_the_protobuf_ones(tmp_path):
    layouts = {"w": ([2, 2], [1, 0]), "b": ([4], [-1])}
    strategy_file.write_layouts(str(tmp_path / "s.json"), layouts, stage=1, shapes={"w": (4, 6), "b": (6,)})
    strategy_file.write_layouts(str(tmp_path / "s.ckpt"), layouts, stage=1)
    content = json.loads((tmp_path / "s.json").read_text())
    assert content["current_stage"] == 1
    assert content["parallel_strategy_item"]["w"] == {"stage": 1, "parallel_strategy": [[2, 2]]}
    assert content["parallel_layout_item"]["w"] == {
        "dev_matrix": [2, 2],
        "tensor_map": [1, 0],
        "tensor_shape": [4, 6],
        "field": 0,
        "opt_weight_shard_step": 0,
        "opt_weight_shard_size": 0,
    }
    from_json = strategy_file.read_layouts(str(tmp_path / "s.json"))
    assert from_json == strategy_file.read_layouts(str(tmp_path / "s.ckpt"))


def test_a_json_strategy_file_of_another_form_raises_naming_it(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"parallel_layout_item": {"w": {"tensor_map": [0]}}}')
    with pytest.raises(
        ValueError, match=r"bad.json' is not a JSON strategy file of MindSpore's form \(it lacks the key 'dev_matrix'\)"
    ):
        opforge.build_searched_strategy(str(bad))
    bad.write_text("[1, 2")
    with pytest.raises(ValueError, match="is not a JSON strategy file"):
        opforge.build_searched_strategy(str(bad))


def _write_safetensors(folder, rank, tensors):
    os.makedirs(folder / f"rank_{rank}", exist_ok=True)
    tensors = {k: opforge.Tensor(np.ascontiguousarray(v)) for k, v in tensors.items()}
    opforge.save_checkpoint(tensors, str(folder / f"rank_{rank}" / "net.safetensors"), format="safetensors")


@pytest.fixture
def four_by_rows_safetensors(tmp_path):
    """``four_by_rows``'s run saved as safetensors (MindSpore's unified flow reads those)."""
    src = str(tmp_path / "src_strategy.ckpt")
    strategy_file.write_layouts(src, {"w": ([4, 1], [1, -1]), "b": ([4], [-1])})
    for r in range(4):
        _write_safetensors(tmp_path / "sf", r, {"w": _rows(W, r, 4), "b": B, "lr": np.float32([0.1 * (r + 1)])})
    return src, str(tmp_path / "sf")


def _unified(folder) -> tuple:
    weight_map = json.loads((folder / "param_name_map.json").read_text())
    parts = {
        f: opforge.load_checkpoint(str(folder / f), format="safetensors")
        for f in set(weight_map["weight_map"].values())
    }
    return weight_map, parts


def test_unified_safetensors_merges_the_blocks_whole_into_part_files(four_by_rows_safetensors, tmp_path):
    src, folder = four_by_rows_safetensors
    opforge.unified_safetensors(folder, src, str(tmp_path / "unified"))
    weight_map, parts = _unified(tmp_path / "unified")
    assert weight_map == {
        "metadata": {"total_size": W.nbytes + B.nbytes},
        "weight_map": {"w": "part0.safetensors", "b": "part0.safetensors"},
    }
    np.testing.assert_array_equal(parts["part0.safetensors"]["w"].asnumpy(), W)
    np.testing.assert_array_equal(parts["part0.safetensors"]["b"].asnumpy(), B)
    hyper = opforge.load_checkpoint(str(tmp_path / "unified" / "hyper_param.safetensors"), format="safetensors")
    assert set(hyper) == {"lr"} and hyper["lr"].asnumpy().tolist() == [np.float32(0.1)]  # rank 0's


def test_unified_safetensors_choice_func_renames_and_leaves_out(four_by_rows_safetensors, tmp_path):
    src, folder = four_by_rows_safetensors
    opforge.unified_safetensors(
        folder, src, str(tmp_path / "u"), choice_func=lambda n: "layer.w" if n == "w" else False
    )
    weight_map, parts = _unified(tmp_path / "u")
    assert weight_map["weight_map"] == {"layer.w": "part0.safetensors"}
    np.testing.assert_array_equal(parts["part0.safetensors"]["layer.w"].asnumpy(), W)


def test_unified_safetensors_splits_into_parts_and_shares(four_by_rows_safetensors, tmp_path, monkeypatch):
    from opforge.parallel import checkpoint_transform

    src, folder = four_by_rows_safetensors
    monkeypatch.setattr(checkpoint_transform, "_PART_BYTES", B.nbytes)  # two parts: w, then b
    opforge.unified_safetensors(folder, src, str(tmp_path / "one"), split_dst_file=(1, 2))
    opforge.unified_safetensors(folder, src, str(tmp_path / "two"), split_dst_file=(2, 2))
    assert sorted(os.listdir(tmp_path / "one")) == [
        "hyper_param.safetensors",
        "param_name_map.json",
        "part0.safetensors",
    ]
    assert sorted(os.listdir(tmp_path / "two")) == ["part1.safetensors"]
    weight_map = json.loads((tmp_path / "one" / "param_name_map.json").read_text())["weight_map"]
    assert weight_map == {"w": "part0.safetensors", "b": "part1.safetensors"}  # the largest first


def test_a_unified_folder_loads_into_a_network_or_is_cut_for_each_rank(four_by_rows_safetensors, tmp_path):
    src, folder = four_by_rows_safetensors
    unified = str(tmp_path / "unified")
    opforge.unified_safetensors(folder, src, unified)

    class Net(opforge.nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = opforge.Parameter(opforge.Tensor(np.zeros_like(W)), name="w")
            self.b = opforge.Parameter(opforge.Tensor(np.zeros_like(B)), name="b")

    net = Net()
    not_loaded, _ = opforge.load_distributed_checkpoint(net, unified_safetensors_dir=unified, format="safetensors")
    assert not_loaded == []
    np.testing.assert_array_equal(net.w.asnumpy(), W)
    params = opforge.load_distributed_checkpoint(Net(), unified_safetensors_dir=unified, return_param_dict=True)
    assert sorted(params) == ["b", "lr", "w"]
    renamed = opforge.load_distributed_checkpoint(  # MindSpore's name_map: {name in the network: in the folder}
        Net(), unified_safetensors_dir=unified, return_param_dict=True, name_map={"layer.w": "w"}
    )
    assert sorted(renamed) == ["b", "layer.w", "lr"] and renamed["layer.w"].name == "layer.w"
    np.testing.assert_array_equal(renamed["layer.w"].asnumpy(), W)
    # no network: each rank's blocks by a prediction strategy (w by columns on 2 ranks)
    predict = {"w": [[2], [-1, 0], [], 0, 0, 0]}
    opforge.load_distributed_checkpoint(
        None, predict_strategy=predict, unified_safetensors_dir=unified, dst_safetensors_dir=str(tmp_path / "cut")
    )
    for r in range(2):
        got = opforge.load_checkpoint(str(tmp_path / "cut" / f"rank_{r}" / "net.safetensors"), format="safetensors")
        np.testing.assert_array_equal(got["w"].asnumpy(), _cols(W, r, 2))
        np.testing.assert_array_equal(got["b"].asnumpy(), B)


def test_unified_safetensors_checks_its_sources(four_by_rows, four_by_rows_safetensors, tmp_path):
    src, folder = four_by_rows_safetensors
    with pytest.raises(ValueError, match="holds .ckpt files, not safetensors"):
        opforge.unified_safetensors(str(four_by_rows[1]), src, str(tmp_path / "u"))
    with pytest.raises(ValueError, match="merge_with_redundancy=False"):
        opforge.unified_safetensors(folder, src, str(tmp_path / "u"), merge_with_redundancy=False)
    with pytest.raises(ValueError, match="split_dst_file"):
        opforge.unified_safetensors(folder, src, str(tmp_path / "u"), split_dst_file=(3, 2))
    os.remove(os.path.join(folder, "rank_2", "net.safetensors"))
    with pytest.raises(ValueError, match="the safetensors file of rank 2 is needed"):
        opforge.unified_safetensors(folder, src, str(tmp_path / "u"))
    with pytest.raises(ValueError, match="must be a JSON file named 'param_name_map.json'"):
        opforge.load_distributed_checkpoint(
            None, unified_safetensors_dir=folder, dst_safetensors_dir=str(tmp_path / "d")
        )
