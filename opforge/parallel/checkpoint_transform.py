"""MindSpore's checkpoint transformation (``mindspore.parallel.checkpoint_transform``; ``opforge.transform_checkpoints``
and the others at the top too): the block checkpoints of a run sharded one way (one file per rank, with its
strategy file) re-cut into the blocks of another strategy, or merged whole, without the network:
``rank_list_for_transform`` (which source ranks a destination rank needs), ``transform_checkpoint_by_rank`` (one
destination rank's file), ``transform_checkpoints`` (a folder of ``rank_N`` folders into another), and MindSpore
2.6's ``*_convert*`` names of the same. The files are ``.ckpt`` or ``.safetensors``, each read and written in the
format its name says.

A strategy of None means whole tensors (every source rank's file holds them; the destination gets them whole).
A parameter the source strategy lacks (a learning rate, a step count) is copied as it is, from the source rank
with the destination rank's number modulo the source's devices; one only the destination strategy lacks keeps its
source block. Blocks are placed by device matrix and tensor map as ``merge_sliced_parameter`` places them
(opforge/nn/checkpoint_distributed.py); a layout with an embedding field, optimizer shards or uneven splits is
refused. ``rank_list_for_transform`` returns the ranks that hold a block the destination rank reads, one per
block (the rank itself when it holds one, else the lowest), in descending order as MindSpore's: MindSpore's planner
may list more ranks than that, whose files are then simply not read. A pipeline's stages' strategy files are joined
by ``merge_pipeline_strategys`` into one, read as each stage's layouts over its own ranks (rank ``stage *
devices + r``); a destination strategy merged so gives each rank its stage's parameters."""

from __future__ import annotations

import glob
import json
import math
import os
import re

import numpy as np

from opforge.dispatch import strategy_file
from opforge.dispatch.sharding import coords
from opforge.nn.checkpoint import SUFFIXES, format_of, load_checkpoint, save_checkpoint
from opforge.nn.checkpoint_distributed import HYPER_PARAM_FILE, NAME_MAP_FILE, check_even_layout, part_file
from opforge.nn.pipeline import sync_pipeline_shared_parameters  # noqa: F401 (MindSpore's newer path of it)
from opforge.tensor import Tensor

__all__ = [
    "merge_pipeline_strategys",
    "rank_list_for_transform",
    "transform_checkpoint_by_rank",
    "transform_checkpoints",
    "rank_list_for_convert",
    "convert_checkpoint_by_rank",
    "convert_checkpoints",
    "unified_safetensors",
]


_MERGED = re.compile(r"(\d+)-(.+)")  # a pipeline-merged file's names: "{stage}-{parameter}"


class _Strategy:
    """A strategy file's layouts (None: whole tensors), read as per-dim (split count, device axis). A
    pipeline-merged file (``merge_pipeline_strategys``) holds each stage's layouts over the ranks of one stage:
    the world's rank ``stage * devices + r`` is rank ``r`` of its stage."""

    def __init__(self, path, where: str):
        self.where, self.layouts, self.stages_of = where, None, {}
        if path is None:
            return
        layouts = strategy_file.read_layouts(path, where)
        merged = {name: _MERGED.fullmatch(name) for name in layouts}
        if not all(merged.values()):
            self.layouts = layouts
            return
        self.layouts = {}
        for name, match in merged.items():
            self.layouts.setdefault(match.group(2), layouts[name])
            self.stages_of.setdefault(match.group(2), set()).add(int(match.group(1)))
        stages = set().union(*self.stages_of.values())
        if stages != set(range(len(stages))):
            raise ValueError(
                f"For '{where}', the pipeline-merged strategy file {path!r} does not hold every stage: it holds "
                f"stages {sorted(stages)}."
            )

    @property
    def devices(self) -> int:
        """The ranks of one stage (of the world without a pipeline)."""
        if self.layouts is None:
            return 1
        return math.prod(next(iter(self.layouts.values())).dev_matrix[0].dim)

    @property
    def total(self) -> int:
        """The ranks of every stage."""
        return self.devices * max(1, len(set().union(*self.stages_of.values())))

    def has(self, name: str) -> bool:
        return self.layouts is not None and name in self.layouts

    def in_stage_of(self, name: str, rank: int) -> bool:
        """Whether ``rank``'s stage holds ``name`` (every rank does without a pipeline)."""
        return not self.stages_of or rank // self.devices in self.stages_of.get(name, ())

    def first_rank(self, name: str) -> int:
        """The first rank of the first stage holding ``name`` (0 without a pipeline)."""
        return min(self.stages_of.get(name, {0})) * self.devices

    def parts(self, name: str, rank: int) -> list:
        """Per dim of ``name``: (this rank's part, the number of parts); (0, 1) for a whole tensor."""
        layout = self.layouts[name]
        check_even_layout(layout, name, self.where)
        dev_matrix, tensor_map = list(layout.dev_matrix[0].dim), list(layout.tensor_map[0].dim)
        here = coords(rank % math.prod(dev_matrix), dev_matrix)
        axes = [None if m == -1 else len(dev_matrix) - 1 - m for m in tensor_map]
        return [(0, 1) if a is None else (here[a], dev_matrix[a]) for a in axes]


def _whole_parts(ndim: int) -> list:
    return [(0, 1)] * ndim


def _overlaps(a: list, b: list) -> bool:
    """Whether two blocks, as (part, parts) per dim, share any element (exact fractions of each dim)."""
    return all(i * q < (j + 1) * p and j * p < (i + 1) * q for (i, p), (j, q) in zip(a, b))


def _source_blocks(src: _Strategy, name: str, want: list, rank_id: int) -> list:
    """The source ranks to read for the part ``want`` of ``name``: one per distinct block overlapping it (the
    destination's own number when it holds that block, else the lowest rank holding it)."""
    first, holders = src.first_rank(name), {}
    for r in range(src.devices):
        block = tuple(src.parts(name, r))
        if _overlaps(list(block), want):
            holders.setdefault(block, []).append(first + r)
    own = first + rank_id % src.devices
    return sorted(own if own in ranks else ranks[0] for ranks in holders.values())


def _needed(src: _Strategy, dst: _Strategy, rank_id: int) -> list:
    if src.layouts is None:
        return [0]
    ranks = set()
    for name, layout in src.layouts.items():
        if dst.layouts is not None and not (name in dst.layouts and dst.in_stage_of(name, rank_id)):
            continue
        ndim = len(layout.tensor_map[0].dim)
        want = dst.parts(name, rank_id) if dst.has(name) else _whole_parts(ndim)
        ranks.update(_source_blocks(src, name, want, rank_id))
    return sorted(ranks, reverse=True)


def _check_rank(rank_id, dst: _Strategy) -> None:
    if isinstance(rank_id, bool) or not isinstance(rank_id, int):
        raise TypeError(f"For '{dst.where}', the 'rank_id' must be an int, but got {type(rank_id).__name__}.")
    if dst.layouts is not None and not 0 <= rank_id < dst.total:
        raise ValueError(
            f"For '{dst.where}', the 'rank_id' must be in [0, {dst.total}) (the destination strategy's devices), "
            f"but got {rank_id}."
        )


def rank_list_for_transform(rank_id, src_strategy_file=None, dst_strategy_file=None) -> list:
    """The source ranks whose checkpoints destination rank ``rank_id`` is made from (descending; ``[0]`` when the
    source is whole)."""
    where = "rank_list_for_transform"
    if src_strategy_file is None:  # (MindSpore answers before reading anything else)
        _check_rank(rank_id, _Strategy(None, where))
        return [0]
    src, dst = _Strategy(src_strategy_file, where), _Strategy(dst_strategy_file, where)
    _check_rank(rank_id, dst)
    return _needed(src, dst, rank_id)


def _cut(src: _Strategy, dst: _Strategy, name: str, blocks: dict, rank_id: int) -> np.ndarray:
    """Destination rank ``rank_id``'s block of ``name`` from the source ranks' blocks (``{rank: array}``)."""
    first = next(iter(blocks.values()))

    def source_parts(r):
        return src.parts(name, r) if src.has(name) else _whole_parts(first.ndim)

    whole = [n * p for n, (_, p) in zip(first.shape, source_parts(next(iter(blocks))))]
    want = dst.parts(name, rank_id) if dst.has(name) else _whole_parts(first.ndim)
    if any(n % p for n, (_, p) in zip(whole, want)):
        raise ValueError(
            f"For '{dst.where}', the parameter {name!r} of shape {whole} does not split evenly as the destination "
            f"strategy says ({[p for _, p in want]} parts)."
        )
    lo = [i * n // p for n, (i, p) in zip(whole, want)]
    out = np.empty([n // p for n, (_, p) in zip(whole, want)], first.dtype)
    for r in _source_blocks(src, name, want, rank_id) if src.has(name) else [min(blocks)]:
        if r not in blocks:
            raise ValueError(
                f"For '{dst.where}', the checkpoint of rank {r} is missing (it holds a block of {name!r})."
            )
        start = [i * n // p for n, (i, p) in zip(whole, source_parts(r))]
        ends = [(max(a, b), min(a + n, b + m)) for a, b, n, m in zip(start, lo, blocks[r].shape, out.shape)]
        here = tuple(slice(a - b, e - b) for (a, e), b in zip(ends, lo))
        there = tuple(slice(a - b, e - b) for (a, e), b in zip(ends, start))
        out[here] = blocks[r][there]
    return out


def _transform(src: _Strategy, dst: _Strategy, files: dict, rank_id: int) -> dict:
    """``{name: Tensor}`` of destination rank ``rank_id`` from the loaded source checkpoints ``{rank: {name: ...}}``."""
    if src.layouts is None and dst.layouts is None:
        raise ValueError(
            f"For '{src.where}', None of the parameters in checkpoint file are in either src strategy or dst "
            "strategy: give at least one strategy file."
        )
    mine = rank_id % src.total if (rank_id % src.total) in files else min(files)
    names = list(dict.fromkeys(name for f in files.values() for name in f))
    out = {}
    for name in names:
        if dst.has(name) and not dst.in_stage_of(name, rank_id):
            continue  # another stage's parameter
        holders = {r: f[name] for r, f in files.items() if name in f}
        if (src.layouts is not None and not src.has(name)) or (dst.layouts is not None and not dst.has(name)):
            out[name] = holders[mine] if mine in holders else next(iter(holders.values()))  # copied as it is
            continue
        arrays = {r: p.asnumpy() for r, p in holders.items()}
        dtype = next(iter(holders.values())).dtype
        out[name] = Tensor(_cut(src, dst, name, arrays, rank_id), dtype)
    return out


def _check_file_map(checkpoint_files_map) -> None:
    if not isinstance(checkpoint_files_map, dict):
        raise TypeError("For 'transform_checkpoint_by_rank', the 'checkpoint_files_map' must be a dict.")
    for rank, path in checkpoint_files_map.items():
        if not isinstance(path, str) or not os.path.exists(path):
            raise ValueError(
                f"For 'transform_checkpoint_by_rank', the checkpoint file {path!r} of rank {rank} does not exist."
            )


def transform_checkpoint_by_rank(
    rank_id, checkpoint_files_map, save_checkpoint_file_name, src_strategy_file=None, dst_strategy_file=None
) -> None:
    """Write destination rank ``rank_id``'s checkpoint (``save_checkpoint_file_name``: a ``.ckpt``, or a
    ``.safetensors``) from the source ranks' checkpoints ``{rank: file}`` (those ``rank_list_for_transform``
    lists, or more; each read in the format its name says)."""
    where = "transform_checkpoint_by_rank"
    _check_file_map(checkpoint_files_map)
    if not isinstance(save_checkpoint_file_name, str):
        raise TypeError(f"For '{where}', the 'save_checkpoint_file_name' must be a str.")
    if not save_checkpoint_file_name.endswith(tuple(SUFFIXES.values())):
        raise ValueError(
            f"For '{where}', the 'save_checkpoint_file_name' {save_checkpoint_file_name!r} must end with .ckpt "
            "or .safetensors."
        )
    for arg, path in (("src_strategy_file", src_strategy_file), ("dst_strategy_file", dst_strategy_file)):
        if path is not None and os.path.dirname(path) and not os.path.isdir(os.path.dirname(path)):
            raise ValueError(f"For '{where}', the folder of the '{arg}' {os.path.dirname(path)!r} does not exist.")
    src, dst = _Strategy(src_strategy_file, where), _Strategy(dst_strategy_file, where)
    _check_rank(rank_id, dst)
    files = {rank % src.total: _load(path) for rank, path in checkpoint_files_map.items()}
    _save(_transform(src, dst, files, rank_id), save_checkpoint_file_name)


def _load(path: str) -> dict:
    return load_checkpoint(path, format=format_of(path))


def _save(params: dict, path: str) -> None:
    save_checkpoint(params, path, format=format_of(path))


_UNSAFE = re.compile(r"\.\.|//|~|^\s*$")


def _rank_files(src_checkpoints_dir: str, where: str, file_suffix: str = "") -> tuple:
    """(format, ``{rank: the last checkpoint of src/rank_N}``): MindSpore's choice, the last name in sorted order
    (of the names ending with ``file_suffix`` before the extension); the folders hold ``.ckpt`` files or
    ``.safetensors`` files, not both."""
    found = {fmt: {} for fmt in SUFFIXES}
    for folder in glob.glob(os.path.join(glob.escape(src_checkpoints_dir), "rank_*")):
        number = os.path.basename(folder)[len("rank_") :]
        for fmt, suffix in SUFFIXES.items():
            pattern = os.path.join(glob.escape(folder), "*" + glob.escape(file_suffix) + suffix)
            files = [f for f in sorted(glob.glob(pattern)) if os.path.isfile(f)]
            if number.isdigit() and files:
                found[fmt][int(number)] = files[-1]
    if found["ckpt"] and found["safetensors"]:
        raise ValueError(
            f"For '{where}', the 'src_checkpoints_dir' cannot contain both ckpt file and safetensors file "
            f"simultaneously: {src_checkpoints_dir!r} holds both."
        )
    fmt = "safetensors" if found["safetensors"] else "ckpt"
    if not found[fmt]:
        raise ValueError(
            f"For '{where}', the 'src_checkpoints_dir' can not be empty: no rank_N folder with a .ckpt or "
            f".safetensors file in {src_checkpoints_dir!r}."
        )
    return fmt, found[fmt]


def transform_checkpoints(
    src_checkpoints_dir,
    dst_checkpoints_dir,
    ckpt_prefix,
    src_strategy_file=None,
    dst_strategy_file=None,
    process_num=1,
    output_format="ckpt",
) -> None:
    """Every destination rank's checkpoint, ``dst_checkpoints_dir/rank_N/{ckpt_prefix}N.{output_format}``, from
    the source ranks' (``src_checkpoints_dir/rank_N/*.ckpt``, or ``*.safetensors``). Every needed source file is
    checked before anything is written. ``process_num`` is kept (one process works here); as in MindSpore,
    ``output_format`` may be "safetensors" only for safetensors sources."""
    where = "transform_checkpoints"
    if not isinstance(src_checkpoints_dir, str) or not isinstance(dst_checkpoints_dir, str):
        raise TypeError(f"For '{where}', the 'src_checkpoints_dir' and 'dst_checkpoints_dir' must be str.")
    source_format, sources = _rank_files(src_checkpoints_dir, where)
    if output_format not in SUFFIXES:
        raise ValueError(
            f"For '{where}', the 'output_format' must be 'safetensors' or 'ckpt', but got {output_format!r}."
        )
    if source_format == "ckpt" and output_format == "safetensors":
        raise ValueError(
            f"For '{where}', 'output_format' can not be 'safetensors' when 'src_checkpoints_dir' only contains "
            "ckpt file (convert them first: opforge.ckpt_to_safetensors)."
        )
    if not isinstance(ckpt_prefix, str):
        raise TypeError(f"For '{where}', the 'ckpt_prefix' must be a str, but got {type(ckpt_prefix).__name__}.")
    for arg, value in (("dst_checkpoints_dir", dst_checkpoints_dir), ("ckpt_prefix", ckpt_prefix)):
        if _UNSAFE.search(value) or (arg == "ckpt_prefix" and "/" in value):
            raise ValueError(f"For '{where}', the '{arg}' {value!r} is not a safe name.")
    src, dst = _Strategy(src_strategy_file, where), _Strategy(dst_strategy_file, where)
    ranks = range(dst.total)
    plans = {r: _needed(src, dst, r) for r in ranks}
    for rank, needed in plans.items():
        missing = [n for n in needed if n not in sources]
        if missing:
            raise ValueError(
                f"For '{where}', the checkpoint file of rank{missing[0]} is needed for converting rank{rank}'s "
                "checkpoint, but it is missing."
            )
    loaded = {}
    for rank in ranks:
        for n in plans[rank] + [rank % src.total]:
            if n in sources and n not in loaded:
                loaded[n] = _load(sources[n])
        files = {n: loaded[n] for n in plans[rank] + [rank % src.total] if n in loaded}
        folder = os.path.join(dst_checkpoints_dir, f"rank_{rank}")
        os.makedirs(folder, exist_ok=True)
        _save(_transform(src, dst, files, rank), os.path.join(folder, f"{ckpt_prefix}{rank}{SUFFIXES[output_format]}"))


def merge_pipeline_strategys(src_strategy_dirs, dst_strategy_file) -> None:
    """One strategy file, ``dst_strategy_file``, of a pipeline's stages' files (every ``*.ckpt`` of the folder
    ``src_strategy_dirs``, or every ``*.json``: each rank's ``strategy_ckpt_save_file``; the merged file takes
    their form), which the transformation reads: each stage's layouts named ``"{stage}-{parameter}"``, as
    MindSpore's."""
    where = "merge_pipeline_strategys"
    if not isinstance(src_strategy_dirs, str) or not os.path.isdir(src_strategy_dirs):
        raise NotADirectoryError(f"For '{where}', src_strategy_dirs {src_strategy_dirs!r} is not a directory.")
    if not isinstance(dst_strategy_file, str):
        raise TypeError(f"For '{where}', the 'dst_strategy_file' must be a str.")
    protobuf, json_files = (
        glob.glob(os.path.join(glob.escape(src_strategy_dirs), f"*{s}")) for s in (".ckpt", ".json")
    )
    if protobuf and json_files:
        raise ValueError(
            f"For '{where}', the strategy files in {src_strategy_dirs!r} must be all '.ckpt' or all '.json'."
        )
    files = protobuf or json_files
    if not files:
        raise ValueError(f"For '{where}', no strategy file (*.ckpt or *.json) in {src_strategy_dirs!r}.")
    strategy_file.merge_stages(files, os.path.abspath(dst_strategy_file), where)


_PART_BYTES = 3 << 30  # MindSpore's unified part files hold about 3 GiB each


def unified_safetensors(
    src_dir,
    src_strategy_file,
    dst_dir,
    merge_with_redundancy=True,
    file_suffix=None,
    max_process_num=64,
    choice_func=None,
    split_dst_file=(),
) -> None:
    """MindSpore's unified safetensors: the block files of a run (``src_dir/rank_N/*.safetensors``, those whose
    name ends with ``file_suffix`` if given) and its strategy file merged into whole parameters, written to
    ``dst_dir`` as ``part{i}.safetensors`` files of about 3 GiB each (the largest parameters first, each into the
    lightest part), ``param_name_map.json`` (``{"metadata": {"total_size": bytes}, "weight_map": {name: part
    file}}``) and ``hyper_param.safetensors`` (rank 0's values the strategy lacks: a step count, a learning rate).
    Gradient accumulators (``accu_grads*``) are left out, as MindSpore's. ``choice_func(name)`` returns False to
    leave a parameter out or a str to rename it; ``split_dst_file=(k, n)``
    writes the k-th of n shares of the part files (the map and the hyper-parameters with the first share).
    ``load_distributed_checkpoint(network, unified_safetensors_dir=dst_dir)`` reads the folder back.
    ``max_process_num`` is kept (one process works here)."""
    where = "unified_safetensors"
    for arg, value in (("src_dir", src_dir), ("dst_dir", dst_dir), ("src_strategy_file", src_strategy_file)):
        if not isinstance(value, str):
            raise TypeError(f"For '{where}', the '{arg}' must be a str, but got {type(value).__name__}.")
    if os.path.isfile(src_dir):
        raise ValueError(f"For '{where}', the 'src_dir' can not be a file: {src_dir!r}.")
    if not merge_with_redundancy:
        raise ValueError(
            f"For '{where}', merge_with_redundancy=False (source files saved without their redundant blocks) is "
            "not supported: opforge saves every rank's blocks."
        )
    share = _check_split(split_dst_file, where)
    source_format, sources = _rank_files(src_dir, where, file_suffix or "")
    if source_format != "safetensors":
        raise ValueError(f"For '{where}', the 'src_dir' {src_dir!r} holds .ckpt files, not safetensors.")
    src, whole = _Strategy(src_strategy_file, where), _Strategy(None, where)
    missing = [r for r in _needed(src, whole, 0) if r not in sources]
    if missing:
        raise ValueError(f"For '{where}', the safetensors file of rank {missing[0]} is needed, but it is missing.")
    files = {r: _load(sources[r]) for r in _needed(src, whole, 0) + [0] if r in sources}
    merged = _transform(src, whole, files, 0)
    kept = {}
    for name, value in merged.items():  # the strategy's parameters, as choice_func names them
        choice = choice_func(name) if choice_func is not None and src.has(name) else True
        if src.has(name) and not name.startswith("accu_grads") and choice is not False:
            kept[choice if isinstance(choice, str) else name] = value
    hyper = {name: files[0][name] for name in files.get(0, {}) if not src.has(name)}
    _write_unified(kept, hyper, dst_dir, share)


def _check_split(split_dst_file, where: str):
    """``(k, n)`` of ``split_dst_file`` (None for ``()``)."""
    if split_dst_file == () or split_dst_file is None:
        return None
    ok = isinstance(split_dst_file, tuple) and len(split_dst_file) == 2
    if not ok or not all(isinstance(v, int) and not isinstance(v, bool) for v in split_dst_file):
        raise TypeError(f"For '{where}', the 'split_dst_file' must be a tuple (k, n) of two ints.")
    k, n = split_dst_file
    if not 1 <= k <= n:
        raise ValueError(f"For '{where}', the 'split_dst_file' (k, n) must have 1 <= k <= n, but got {split_dst_file}.")
    return k, n


def _write_unified(params: dict, hyper: dict, dst_dir: str, share) -> None:
    sizes = {name: math.prod(t.shape) * t.dtype.itemsize for name, t in params.items()}
    parts = [[] for _ in range(max(1, min(len(sizes), -(-sum(sizes.values()) // _PART_BYTES))))]
    loads = [0] * len(parts)
    for name, size in sorted(sizes.items(), key=lambda item: -item[1]):
        lightest = loads.index(min(loads))
        parts[lightest].append(name)
        loads[lightest] += size
    mine = range(len(parts))
    if share is not None:  # the k-th of n near-equal runs of part files
        k, n = share
        first = (len(parts) // n) * (k - 1) + min(k - 1, len(parts) % n)
        mine = range(first, first + len(parts) // n + (1 if k <= len(parts) % n else 0))
    os.makedirs(dst_dir, exist_ok=True)
    for i in mine:
        if parts[i]:
            save_checkpoint(
                {name: params[name] for name in parts[i]}, os.path.join(dst_dir, part_file(i)), format="safetensors"
            )
    if share is None or share[0] == 1:
        weight_map = {name: part_file(i) for i, names in enumerate(parts) for name in names}
        with open(os.path.join(dst_dir, NAME_MAP_FILE), "w") as f:
            json.dump({"metadata": {"total_size": sum(sizes.values())}, "weight_map": weight_map}, f, indent=4)
        if hyper:
            save_checkpoint(hyper, os.path.join(dst_dir, HYPER_PARAM_FILE), format="safetensors")


# MindSpore 2.6's names of the same (``mindspore.parallel``)
rank_list_for_convert = rank_list_for_transform
convert_checkpoint_by_rank = transform_checkpoint_by_rank
convert_checkpoints = transform_checkpoints
