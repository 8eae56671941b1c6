"""Checkpoints of a sharded run saved by blocks (``save_checkpoint(..., integrated_save=False)`` on every rank, in
opforge or MindSpore), merged whole by the layouts of a strategy file (opforge/dispatch/strategy_file.py):
MindSpore's ``build_searched_strategy``, ``merge_sliced_parameter`` and ``load_distributed_checkpoint``.

A layout's device matrix lists the mesh axes (the last fastest: rank ``r`` has row-major coordinates in it); its
tensor map gives, per dim, the axis splitting it counted from the right, or -1. The block of rank ``r`` covers,
along a split dim, the ``c``-th part where ``c`` is ``r``'s coordinate on that axis; ranks that differ only on
axes no dim uses hold the same block.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from opforge import log
from opforge.dispatch import strategy_file
from opforge.dispatch.sharding import coords
from opforge.nn.cell import Cell
from opforge.nn.checkpoint import load_checkpoint, load_param_into_net, save_checkpoint
from opforge.parallel.auto_parallel import AutoParallel
from opforge.parallel_context import strategy_ckpt_file
from opforge.tensor import Parameter, Tensor

__all__ = ["build_searched_strategy", "merge_sliced_parameter", "load_distributed_checkpoint"]

# MindSpore's unified safetensors folder (``unified_safetensors``, opforge/parallel/checkpoint_transform.py): the
# whole parameters in part files, which ``weight_map`` of the name map names, and the others (a step count, a
# learning rate) in the hyper-parameter file
NAME_MAP_FILE, HYPER_PARAM_FILE = "param_name_map.json", "hyper_param.safetensors"


def part_file(index: int) -> str:
    return f"part{index}.safetensors"


def build_searched_strategy(strategy_filename) -> dict:
    """``{parameter name: layout}`` from a strategy file (``set_auto_parallel_context(strategy_ckpt_config=
    {"save_file": ...})`` or ``strategy_ckpt_save_file``, written by opforge or MindSpore). A layout has
    MindSpore's fields: ``dev_matrix[0].dim``, ``tensor_map[0].dim``, ``param_split_shape``, ``field``, ..."""
    return strategy_file.read_layouts(strategy_filename)


def check_even_layout(layout, name: str, where: str) -> None:
    """A ValueError naming ``where`` unless ``layout`` places even blocks by its device matrix and tensor map only
    (no embedding field, no optimizer shards, no uneven split): the layouts opforge merges and re-cuts."""
    if layout.field > 0 or layout.opt_weight_shard_size > 1:
        raise ValueError(
            f"For '{where}', the parameter '{name}' is laid out with an embedding field ({layout.field}) or split "
            f"by the optimizer ({layout.opt_weight_shard_size} shards), which opforge does not merge."
        )
    if any(s.dim for s in layout.param_split_shape):
        raise ValueError(f"For '{where}', the parameter '{name}' is split unevenly, which opforge does not merge.")


def _merge_by_layout(blocks: list, layout, name: str) -> np.ndarray:
    where = "merge_sliced_parameter"
    dev_matrix, tensor_map = list(layout.dev_matrix[0].dim), list(layout.tensor_map[0].dim)
    check_even_layout(layout, name, where)
    if len(blocks) != math.prod(dev_matrix):
        raise ValueError(
            f"For '{where}', the parameter '{name}' has {len(blocks)} slices but its device matrix {dev_matrix} "
            f"has {math.prod(dev_matrix)} devices."
        )
    block = blocks[0].shape
    if len(tensor_map) != len(block) or any(b.shape != block for b in blocks):
        raise ValueError(
            f"For '{where}', the slices of '{name}' must all have one shape of {len(tensor_map)} dims (its tensor "
            f"map {tensor_map}), but got {[list(b.shape) for b in blocks]}."
        )
    axes = [None if m == -1 else len(dev_matrix) - 1 - m for m in tensor_map]
    whole = np.empty([n * (1 if a is None else dev_matrix[a]) for n, a in zip(block, axes)], blocks[0].dtype)
    for rank, data in enumerate(blocks):
        whole[_block_index(block, dev_matrix, tensor_map, rank)] = data
    return whole


def _block_index(block: tuple, dev_matrix: list, tensor_map: list, rank: int) -> tuple:
    """The index of rank ``rank``'s block (of shape ``block``) in the whole tensor a device matrix and a tensor map
    lay out: per dim, the block at the rank's coordinate along the axis splitting it."""
    here = coords(rank % math.prod(dev_matrix), dev_matrix)
    axes = [None if m == -1 else len(dev_matrix) - 1 - m for m in tensor_map]
    return tuple(slice(None) if a is None else slice(here[a] * n, (here[a] + 1) * n) for n, a in zip(block, axes))


def merge_sliced_parameter(sliced_parameters, strategy=None) -> Parameter:
    """One whole Parameter from its slices (``sliced_parameters``: Parameters of one name, in rank order), placed
    by ``strategy[name]`` (``build_searched_strategy``'s); without a strategy, concatenated along dim 0."""
    where = "merge_sliced_parameter"
    if not isinstance(sliced_parameters, list):
        raise TypeError(
            f"For '{where}', the 'sliced_parameters' must be a list, but got {type(sliced_parameters).__name__}."
        )
    if not sliced_parameters:
        raise ValueError(f"For '{where}', the 'sliced_parameters' must not be empty.")
    if strategy and not isinstance(strategy, dict):
        raise TypeError(f"For '{where}', the 'strategy' must be a dict, but got {type(strategy).__name__}.")
    for i, p in enumerate(sliced_parameters):
        if not isinstance(p, Parameter):
            raise TypeError(f"For '{where}', the element {i} of 'sliced_parameters' must be a Parameter, "
                            f"but got {type(p).__name__}.")  # fmt: skip
    first = sliced_parameters[0]
    name, shape = first.name, first.shape
    for i, p in enumerate(sliced_parameters):
        if p.name != name or len(p.shape) != len(shape) or p.shape[1:] != shape[1:]:
            raise ValueError(
                f"For '{where}', the slices must have one name, rank and shape past dim 0 ({name}, {len(shape)}, "
                f"{list(shape[1:])}), but the element {i} has {p.name}, {len(p.shape)}, {list(p.shape[1:])}."
            )
    blocks = [p.asnumpy() for p in sliced_parameters]
    if not strategy:
        whole = np.concatenate(blocks)
    elif name not in strategy:
        raise KeyError(f"For '{where}', the parameter '{name}' is not in the 'strategy'.")
    else:
        whole = _merge_by_layout(blocks, strategy[name], name)
    return Parameter(Tensor(whole, first.dtype), name=name, requires_grad=first.requires_grad)


def _check_files(checkpoint_filenames) -> None:
    where = "load_distributed_checkpoint"
    if not isinstance(checkpoint_filenames, list) or not checkpoint_filenames:
        raise TypeError(f"For '{where}', the 'checkpoint_filenames' must be a non-empty list of file names, "
                        f"but got {checkpoint_filenames!r}.")  # fmt: skip
    for i, f in enumerate(checkpoint_filenames):
        if not isinstance(f, str):
            raise TypeError(
                f"For '{where}', the 'checkpoint_filenames' element {i} must be a str, got {type(f).__name__}."
            )
        if not os.path.isfile(f):
            raise ValueError(f"For '{where}', the checkpoint file {f!r} does not exist.")


def _check_predict_strategy(predict_strategy) -> None:
    """MindSpore's check: ``{name: [dev_matrix, tensor_map, param_split_shape, field_size, ...]}``."""
    if predict_strategy is None:
        return

    def ints(x):
        return isinstance(x, list) and all(isinstance(i, int) for i in x)

    ok = isinstance(predict_strategy, dict) and all(
        isinstance(k, str) and isinstance(v, (list, tuple)) and len(v) >= 4 and ints(v[0]) and ints(v[1])
        and (not v[2] or ints(v[2])) and v[3] == 0
        for k, v in predict_strategy.items()
    )  # fmt: skip
    if not ok:
        raise ValueError(
            "For 'load_distributed_checkpoint', the 'predict_strategy' must be a dict of {parameter name: [dev_matrix, "
            f"tensor_map, param_split_shape, field_size, ...]}} (field_size 0), but got {predict_strategy!r}."
        )


def _auto_parallel_strategy_file(network: Cell) -> str:
    """The strategy file an ``AutoParallel`` cell in ``network`` saves (``save_param_strategy_file``), as MindSpore
    reads it when no training strategy file is given; "" when there is none."""
    for _, cell in network.cells_and_names():
        if isinstance(cell, AutoParallel) and cell.param_strategy_file:
            return cell.param_strategy_file
    return ""


def load_distributed_checkpoint(network, checkpoint_filenames=None, predict_strategy=None,
                                train_strategy_filename=None, strict_load=False, dec_key=None, dec_mode="AES-GCM",
                                format="ckpt", unified_safetensors_dir=None, dst_safetensors_dir=None, rank_id=None,
                                output_format="safetensors", name_map=None, max_process_num=64,
                                return_param_dict=False):  # fmt: skip
    """Load block checkpoints (``checkpoint_filenames``: one per training rank, in rank order) into ``network``:
    each parameter's blocks merged whole by the training strategy file (``train_strategy_filename``, else the file
    an ``AutoParallel`` cell in ``network`` was given by ``save_param_strategy_file``, as MindSpore reads it, else
    the context's ``strategy_ckpt_config['load_file']`` / ``strategy_ckpt_load_file``), then
    ``load_param_into_net``. A sharded ``network`` keeps each rank's block of the whole value, by its own
    strategies; ``predict_strategy`` (MindSpore's prediction layouts) is checked, the network's layouts rule.
    Parameters the strategy file lacks (MindSpore saves only the trainable ones by default) are not loaded,
    with a warning, as in MindSpore.

    With ``unified_safetensors_dir`` (MindSpore's safetensors flow: a folder ``unified_safetensors`` wrote), the
    whole parameters of that folder (``name_map``: {name in the network: name in the folder}) are loaded into
    ``network`` (returned instead with ``return_param_dict``); without a network, each rank's blocks by
    ``predict_strategy`` (a strategy file, or MindSpore's {name: [dev_matrix, tensor_map, ...]}; whole without
    one) are saved to ``dst_safetensors_dir/rank_N/net.{output_format}``, for ``rank_id`` or every rank.
    ``max_process_num`` is kept (one process works here)."""
    where = "load_distributed_checkpoint"
    if unified_safetensors_dir is not None:
        params = read_unified(unified_safetensors_dir, name_map, where)
        if network is None:
            return _save_blocks(params, predict_strategy, dst_safetensors_dir, rank_id, output_format, where)
        if not isinstance(network, Cell):
            raise TypeError(f"For '{where}', the 'network' must be a Cell, but got {type(network).__name__}.")
        return params if return_param_dict else load_param_into_net(network, params, strict_load=strict_load)
    if not isinstance(network, Cell):
        raise TypeError(f"For '{where}', the 'network' must be a Cell, but got {type(network).__name__}.")
    _check_files(checkpoint_filenames)
    _check_predict_strategy(predict_strategy)
    path = train_strategy_filename
    if path is None:
        path = _auto_parallel_strategy_file(network) or strategy_ckpt_file("load")
    if not path:
        raise ValueError(
            f"For '{where}', no training strategy file: pass 'train_strategy_filename', wrap the network in an "
            "AutoParallel given save_param_strategy_file(...), or set "
            "set_auto_parallel_context(strategy_ckpt_config={'load_file': ...})."
        )
    strategy = strategy_file.read_layouts(path, where)
    devices = math.prod(next(iter(strategy.values())).dev_matrix[0].dim)
    if devices != len(checkpoint_filenames):
        raise ValueError(
            f"For '{where}', the 'checkpoint_filenames' must hold one file per training device ({devices}), but "
            f"got {len(checkpoint_filenames)}."
        )
    files = [
        load_checkpoint(f, dec_key=dec_key, dec_mode=dec_mode, format=format) for f in checkpoint_filenames
    ]  # fmt: skip
    merged, not_in_strategy, not_in_files = {}, [], []
    for p in network.get_parameters():
        if p.name not in strategy:
            not_in_strategy.append(p.name)
        elif any(p.name not in f for f in files):
            not_in_files.append(p.name)
        else:
            merged[p.name] = merge_sliced_parameter([f[p.name] for f in files], strategy)
    if not_in_strategy:
        log.warning(f"For '{where}', these parameters of the network are not in the strategy file: {not_in_strategy}.")
    if not_in_files:
        log.warning(
            f"For '{where}', these parameters of the strategy are not in every checkpoint file: {not_in_files}."
        )
    load_param_into_net(network, merged, strict_load=strict_load)


def read_unified(folder, name_map, where: str) -> dict:
    """``{name: Parameter}`` of a unified safetensors folder: the part files its name map names (a folder of one
    safetensors file and no map: that file's), then the hyper-parameters."""
    if not isinstance(folder, str) or not os.path.isdir(folder):
        raise ValueError(f"For '{where}', the 'unified_safetensors_dir' {folder!r} is not a directory.")
    if name_map is not None and not isinstance(name_map, dict):
        raise TypeError(f"For '{where}', the 'name_map' must be a dict, but got {type(name_map).__name__}.")
    names = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    if os.path.isfile(os.path.join(folder, NAME_MAP_FILE)):
        with open(os.path.join(folder, NAME_MAP_FILE)) as f:
            content = json.load(f)
        weight_map = content.get("weight_map", content)
    elif len(names) == 1:
        weight_map = dict.fromkeys(load_checkpoint(os.path.join(folder, names[0]), format="safetensors"), names[0])
    else:
        raise ValueError(f"For '{where}', there must be a JSON file named '{NAME_MAP_FILE}' in {folder!r}.")
    network_name = {stored: name for name, stored in (name_map or {}).items()}  # MindSpore's: network -> folder
    loaded, params = {}, {}
    for name, file in weight_map.items():
        if file not in loaded:
            loaded[file] = load_checkpoint(os.path.join(folder, file), format="safetensors")
        if name not in loaded[file]:
            raise ValueError(f"For '{where}', the part file {file!r} lacks {name!r}, which {NAME_MAP_FILE} names.")
        renamed = network_name.get(name, name)
        params[renamed] = Parameter(loaded[file][name], name=renamed)
    if HYPER_PARAM_FILE in names:
        params.update(load_checkpoint(os.path.join(folder, HYPER_PARAM_FILE), format="safetensors"))
    return params


def _save_blocks(params: dict, predict_strategy, dst_dir, rank_id, output_format: str, where: str) -> None:
    """MindSpore's save mode: each rank's blocks of ``params`` by ``predict_strategy`` (whole without one)."""
    if not isinstance(dst_dir, str):
        raise ValueError(f"For '{where}', 'dst_safetensors_dir' can not be None when the network is None.")
    if output_format not in ("safetensors", "ckpt"):
        raise ValueError(f"For '{where}', the 'output_format' must be 'safetensors' or 'ckpt', got {output_format!r}.")
    layouts = _predict_layouts(predict_strategy, where)
    devices = math.prod(next(iter(layouts.values()))[0]) if layouts else 1
    for rank in [rank_id] if rank_id is not None else range(devices):
        blocks = {n: p for n, p in params.items() if not layouts or n not in layouts}  # hyper-parameters whole
        for name, (dev_matrix, tensor_map) in layouts.items():
            if name in params:
                blocks[name] = Tensor(
                    _block_of(params[name].asnumpy(), dev_matrix, tensor_map, rank), params[name].dtype
                )
        os.makedirs(os.path.join(dst_dir, f"rank_{rank}"), exist_ok=True)
        save_checkpoint(blocks, os.path.join(dst_dir, f"rank_{rank}", f"net.{output_format}"), format=output_format)


def _predict_layouts(predict_strategy, where: str) -> dict:
    """``{name: (dev_matrix, tensor_map)}`` of a strategy file or MindSpore's prediction layouts (None: {})."""
    if predict_strategy is None:
        return {}
    if isinstance(predict_strategy, str):
        read = strategy_file.read_layouts(predict_strategy, where)
        return {n: (list(lay.dev_matrix[0].dim), list(lay.tensor_map[0].dim)) for n, lay in read.items()}
    _check_predict_strategy(predict_strategy)
    return {n: (list(v[0]), list(v[1])) for n, v in predict_strategy.items()}


def _block_of(whole: np.ndarray, dev_matrix: list, tensor_map: list, rank: int) -> np.ndarray:
    """Rank ``rank``'s block of ``whole`` by a device matrix and a tensor map (as ``_merge_by_layout`` places it)."""
    parts = [1 if m == -1 else dev_matrix[len(dev_matrix) - 1 - m] for m in tensor_map]
    block = tuple(n // k for n, k in zip(whole.shape, parts))
    return np.ascontiguousarray(whole[_block_index(block, dev_matrix, tensor_map, rank)])
