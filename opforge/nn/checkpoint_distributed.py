"""Checkpoints of a sharded run saved by blocks (``save_checkpoint(..., integrated_save=False)`` on every rank, in
opforge or MindSpore), merged whole by the layouts of a strategy file (opforge/dispatch/strategy_file.py):
MindSpore's ``build_searched_strategy``, ``merge_sliced_parameter`` and ``load_distributed_checkpoint``.

A layout's device matrix lists the mesh axes (the last fastest: rank ``r`` has row-major coordinates in it); its
tensor map gives, per dim, the axis splitting it counted from the right, or -1. The block of rank ``r`` covers,
along a split dim, the ``c``-th part where ``c`` is ``r``'s coordinate on that axis; ranks that differ only on
axes no dim uses hold the same block.
"""

from __future__ import annotations

import math
import os

import numpy as np

from opforge import log
from opforge.dispatch import strategy_file
from opforge.dispatch.sharding import coords
from opforge.nn.cell import Cell
from opforge.nn.checkpoint import load_checkpoint, load_param_into_net
from opforge.parallel.auto_parallel import AutoParallel
from opforge.parallel_context import strategy_ckpt_file
from opforge.tensor import Parameter, Tensor

__all__ = ["build_searched_strategy", "merge_sliced_parameter", "load_distributed_checkpoint"]


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
        here = coords(rank, dev_matrix)
        index = tuple(slice(None) if a is None else slice(here[a] * n, (here[a] + 1) * n) for n, a in zip(block, axes))
        whole[index] = data
    return whole


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


def load_distributed_checkpoint(network, checkpoint_filenames, predict_strategy=None, train_strategy_filename=None,
                                strict_load=False, dec_key=None, dec_mode="AES-GCM", format="ckpt"):  # fmt: skip
    """Load block checkpoints (``checkpoint_filenames``: one per training rank, in rank order) into ``network``:
    each parameter's blocks merged whole by the training strategy file (``train_strategy_filename``, else the file
    an ``AutoParallel`` cell in ``network`` was given by ``save_param_strategy_file``, as MindSpore reads it, else
    the context's ``strategy_ckpt_config['load_file']`` / ``strategy_ckpt_load_file``), then
    ``load_param_into_net``. A sharded ``network`` keeps each rank's block of the whole value, by its own
    strategies; ``predict_strategy`` (MindSpore's prediction layouts) is checked, the network's layouts rule.
    Parameters the strategy file lacks (MindSpore saves only the trainable ones by default) are not loaded,
    with a warning, as in MindSpore."""
    where = "load_distributed_checkpoint"
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
