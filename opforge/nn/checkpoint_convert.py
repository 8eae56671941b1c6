"""MindSpore's conversions between its two checkpoint formats: ``ckpt_to_safetensors`` and ``safetensors_to_ckpt``
(``mindspore.ckpt_to_safetensors``, ``opforge.ckpt_to_safetensors``).

Either takes one file, converted next to it (or into ``save_path``), or a folder of ``rank*`` folders (a
distributed run's), each file of the source format in them converted into the same-named folder of ``save_path``
(or in place). ``name_map`` renames parameters on the way; ``file_name_regex`` picks the files; the files are
converted in this process (``processes_num`` is accepted). A str saved in a ``.ckpt`` (an ``append_dict`` entry)
has no place in safetensors, and the conversion says which.
"""

from __future__ import annotations

import os
import re

from opforge.nn.checkpoint import SUFFIXES, load_checkpoint, save_checkpoint

__all__ = ["ckpt_to_safetensors", "safetensors_to_ckpt"]


def ckpt_to_safetensors(file_path, save_path=None, name_map=None, file_name_regex=None, processes_num=1) -> None:
    """Convert MindSpore ``.ckpt`` files to ``.safetensors`` (a file, or a folder of ``rank*`` folders)."""
    _convert("ckpt_to_safetensors", "ckpt", "safetensors", file_path, save_path, name_map, file_name_regex)


def safetensors_to_ckpt(file_path, save_path=None, name_map=None, file_name_regex=None, processes_num=1) -> None:
    """Convert ``.safetensors`` files to MindSpore ``.ckpt`` (a file, or a folder of ``rank*`` folders)."""
    _convert("safetensors_to_ckpt", "safetensors", "ckpt", file_path, save_path, name_map, file_name_regex)


def _convert(where, src, dst, file_path, save_path, name_map, file_name_regex) -> None:
    if not isinstance(file_path, str) or not os.path.exists(file_path):
        raise ValueError(f"For '{where}', the input path must be a valid path or file, but got {file_path!r}.")
    if save_path is not None and (not isinstance(save_path, str) or os.path.splitext(save_path)[1]):
        raise ValueError(f"For '{where}', the save_path must be a directory, but got {save_path!r}.")
    if name_map is not None and not isinstance(name_map, dict):
        raise ValueError(f"For '{where}', the 'name_map' must be a dict, but got {type(name_map).__name__}.")
    if os.path.isdir(file_path):
        tasks = _rank_folder_tasks(where, SUFFIXES[src], file_path, save_path, file_name_regex)
    else:
        if not file_path.endswith(SUFFIXES[src]):
            raise ValueError(f"For '{where}', the input file must be a {SUFFIXES[src]} file, but got {file_path!r}.")
        if file_name_regex is not None and not re.search(file_name_regex, file_path):
            raise ValueError(f"For '{where}', the input file does not match the regular expression.")
        tasks = [(file_path, save_path or os.path.dirname(file_path))]
    for source, folder in tasks:
        os.makedirs(folder or ".", exist_ok=True)
        params = load_checkpoint(source, format=src)
        if name_map:
            params = {name_map.get(name, name): value for name, value in params.items()}
        name = os.path.basename(source)[: -len(SUFFIXES[src])] + SUFFIXES[dst]
        save_checkpoint(params, os.path.join(folder, name), format=dst)


def _rank_folder_tasks(where, suffix, file_path, save_path, file_name_regex) -> list:
    """``[(source file, destination folder)]`` for each matching file of each ``rank*`` folder."""
    folders = (d for d in os.listdir(file_path) if os.path.isdir(os.path.join(file_path, d)))
    ranks = sorted(d for d in folders if d.startswith("rank"))
    if not ranks:
        raise ValueError(f"For '{where}', no directories starting with 'rank' found in {file_path!r}.")
    tasks = []
    for rank in ranks:
        folder = os.path.join(file_path, rank)
        for name in sorted(os.listdir(folder)):
            if name.endswith(suffix) and (file_name_regex is None or re.search(file_name_regex, name)):
                tasks.append((os.path.join(folder, name), os.path.join(save_path, rank) if save_path else folder))
    return tasks
