"""Checkpoints: parameters saved by name and restored exactly, in MindSpore's file formats.

``save_checkpoint(net, "net.ckpt")`` writes every parameter under its ``name`` (``fc1.weight``) as MindSpore
does (``opforge/nn/checkpoint_proto.py``: the protobuf ``Checkpoint``), so checkpoints move both ways between
MindSpore and opforge; ``format="safetensors"`` writes MindSpore's safetensors file instead
(``opforge/nn/checkpoint_safetensors.py``), and a name ending with ``.npz`` opforge's NumPy archive (one array per
name plus a JSON record of each dtype and ``requires_grad``, read with ``allow_pickle=False``).
``load_checkpoint`` reads any of them as ``{name: Parameter}`` (a safetensors file with ``format="safetensors"``,
as MindSpore asks); ``load_param_into_net(net, params)`` copies them into a network's parameters of the same
names. Every format keeps every dtype it holds bit-exact (bfloat16 included).
"""

from __future__ import annotations

import json
import os
import threading

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch import sharding
from opforge.nn import checkpoint_proto, checkpoint_safetensors
from opforge.nn.cell import Cell
from opforge.tensor import Parameter, Tensor, is_placeholder

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "check_format", "format_of", "SUFFIXES"]

_META_KEY = "__opforge_meta__"
_FORMAT = 1
_STR = "str"  # the dtype name of a str value (an append_dict entry), as in MindSpore's files


def _named_tensors(save_obj) -> list:
    """(name, Tensor) pairs from a Cell, a dict, or a list of Parameters / {'name', 'data'} dicts."""
    if isinstance(save_obj, Cell):
        pairs = [(p.name, p) for p in save_obj.get_parameters()]
    elif isinstance(save_obj, dict):
        pairs = list(save_obj.items())
    elif isinstance(save_obj, (list, tuple)):
        pairs = []
        for item in save_obj:
            if isinstance(item, Parameter):
                pairs.append((item.name, item))
            elif isinstance(item, dict) and {"name", "data"} <= set(item):
                pairs.append((item["name"], item["data"]))
            else:
                raise TypeError(
                    "For 'save_checkpoint', a list must hold Parameters or {'name': ..., 'data': ...} dicts, "
                    f"but got {type(item).__name__}."
                )
    else:
        raise TypeError(
            f"For 'save_checkpoint', the 'save_obj' must be a Cell, a dict or a list, got {type(save_obj).__name__}."
        )
    seen = {}
    for name, value in pairs:
        if not isinstance(name, str) or not name:
            raise ValueError(f"For 'save_checkpoint', every name must be a non-empty str, but got {name!r}.")
        if name == _META_KEY or name.startswith("__"):
            raise ValueError(f"For 'save_checkpoint', the name {name!r} is reserved.")
        if name in seen:
            raise ValueError(
                f"For 'save_checkpoint', two parameters are both named {name!r}; give them unique names "
                f"(parameters take their attribute paths when assigned to a Cell)."
            )
        if not isinstance(value, Tensor):
            value = Tensor(value)
        seen[name] = value
    return list(seen.items())


def _append_pairs(append_dict) -> list:
    """(name, value) pairs of ``save_checkpoint``'s ``append_dict``: {str: int, float, bool, str or Tensor}
    (a str is saved as MindSpore saves it, and ``load_checkpoint`` gives it back as a str)."""
    if append_dict is None:
        return []
    if not isinstance(append_dict, dict):
        raise TypeError(
            f"For 'save_checkpoint', the 'append_dict' must be a dict, but got {type(append_dict).__name__}."
        )
    pairs = []
    for name, value in append_dict.items():
        if not isinstance(value, (bool, int, float, str, Tensor)):
            raise TypeError(
                f"For 'save_checkpoint', the 'append_dict' values must be int, float, bool, str or Tensor, but "
                f"'{name}' is {type(value).__name__}."
            )
        pairs.append((name, value if isinstance(value, (str, Tensor)) else Tensor(value)))
    return pairs


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False, append_dict=None,
                    enc_key=None, enc_mode="AES-GCM", choice_func=None, crc_check=False, format="ckpt",
                    **kwargs) -> str:  # fmt: skip
    """Save the parameters of ``save_obj`` (a Cell, ``{name: Tensor}`` or a list of Parameters) to
    ``ckpt_file_name``; returns the path written. As MindSpore: ``.ckpt`` is appended to a name without it,
    and the file is MindSpore's protobuf checkpoint; a name ending with ``.npz`` writes opforge's NumPy archive
    (which also keeps each parameter's ``requires_grad``). MindSpore's arguments: ``append_dict`` (``{name:
    int, float, bool, str or Tensor}``, saved alongside, e.g. ``{"epoch_num": 3}``), ``choice_func`` (a
    function of the name: only names it returns True for are saved), ``crc_check`` (MindSpore's CRC-32
    trailer; with safetensors, the metadata's ``crc_num``), ``integrated_save`` (a parameter split across ranks
    by a sharding strategy is gathered whole, a collective every rank must join, as in MindSpore; False saves
    this rank's block; a rank of a pipeline saves its stage's parameters), ``format`` ("ckpt", or
    "safetensors": ``.safetensors`` appended to a name without it; tensors only, no str in ``append_dict``);
    ``async_save`` (saved at once) and the rest are accepted; ``enc_key`` (encryption) is not supported."""
    check_format("save_checkpoint", format)
    if enc_key is not None:
        raise ValueError("For 'save_checkpoint', encrypted checkpoints ('enc_key') are not supported.")
    path = os.fspath(ckpt_file_name)
    suffixes = (checkpoint_safetensors.SUFFIX,) if format == "safetensors" else (".npz", ".ckpt")
    if not path.endswith(suffixes):
        path += suffixes[-1]
    pairs = _named_tensors(save_obj) + _append_pairs(append_dict)
    if choice_func is not None:
        pairs = [(name, t) for name, t in pairs if choice_func(name)]
    # a pipeline's other stages' parameters have no data on this rank: each rank saves its stage's, as in MindSpore
    pairs = [(name, _whole_or_block(t, integrated_save)) for name, t in pairs if not is_placeholder(t)]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # written whole, then renamed: a reader never sees half a file; named by the process, as ranks writing one
    # path (MindSpore's samples transform checkpoints on every rank), or threads, would rename each other's files away
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp.npz"
    if format == "safetensors":
        checkpoint_safetensors.write_values(tmp, pairs, crc_check=bool(crc_check))
    elif path.endswith(".npz"):
        _write_npz(tmp, pairs)
    else:
        checkpoint_proto.write_values(tmp, pairs, crc_check=bool(crc_check))
    os.replace(tmp, path)
    return path


SUFFIXES = {"ckpt": ".ckpt", "safetensors": checkpoint_safetensors.SUFFIX}  # MindSpore's formats' file names


def format_of(path: str) -> str:
    """The format a checkpoint file's name says ("safetensors" or "ckpt")."""
    return "safetensors" if path.endswith(SUFFIXES["safetensors"]) else "ckpt"


def check_format(where: str, format) -> None:
    """The checkpoint formats MindSpore names: "ckpt" and "safetensors"."""
    if format not in SUFFIXES:
        raise ValueError(f"For '{where}', the 'format' must be 'ckpt' or 'safetensors', but got {format!r}.")


def _whole_or_block(t, integrated_save: bool):
    """What a rank saves of a value split across ranks: the whole value, or its own block."""
    if isinstance(t, str) or not sharding.is_sharded(t):
        return t
    return sharding.gather_whole(t) if integrated_save else sharding.local_of(t)


def _write_npz(path: str, pairs: list) -> None:
    arrays, meta = {}, {"format": _FORMAT, "dtypes": {}, "requires_grad": {}, "order": []}
    for i, (name, t) in enumerate(pairs):
        key = f"p{i}"
        if isinstance(t, str):
            arrays[key], meta["dtypes"][name] = np.array(t), _STR
        else:
            array = np.asarray(t)
            arrays[key] = array.view(np.uint16) if t.dtype is mstype.bfloat16 else array
            meta["dtypes"][name] = t.dtype.name
            meta["requires_grad"][name] = bool(getattr(t, "requires_grad", True))
        meta["order"].append([name, key])
    arrays[_META_KEY] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, **arrays)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None,
                    dec_mode="AES-GCM", specify_prefix=None, choice_func=None, crc_check=False, format="ckpt",
                    **kwargs) -> dict:  # fmt: skip
    """``{name: Parameter}`` from a checkpoint file: MindSpore's (written by MindSpore or by ``save_checkpoint``)
    or opforge's ``.npz``, told apart by the content; a str saved by ``append_dict`` comes back as a str.
    MindSpore's arguments: ``choice_func`` (a function of the name: only names it returns True for are kept),
    ``specify_prefix`` / ``filter_prefix`` (a str or tuple of str: keep only / drop the names starting with
    one), ``crc_check`` (the file must carry MindSpore's CRC-32 trailer, and it must match; a trailer present
    is always checked), ``net`` (the parameters are also loaded into it, ``load_param_into_net(net, params,
    strict_load)``), ``format`` ("safetensors" for a ``.safetensors`` file, "ckpt" for the others, as MindSpore
    asks); ``dec_key`` (decryption) is not supported."""
    check_format("load_checkpoint", format)
    if dec_key is not None:
        raise ValueError("For 'load_checkpoint', encrypted checkpoints ('dec_key') are not supported.")
    params = _read_checkpoint(ckpt_file_name, bool(crc_check), format)
    for arg, prefix in (("specify_prefix", specify_prefix), ("filter_prefix", filter_prefix)):
        if prefix is None:
            continue
        prefix = (prefix,) if isinstance(prefix, str) else tuple(prefix)
        if not prefix or not all(isinstance(x, str) for x in prefix):
            raise TypeError(f"For 'load_checkpoint', the '{arg}' must be a str or a tuple of str, but got {prefix!r}.")
        keep = arg == "specify_prefix"
        params = {k: v for k, v in params.items() if k.startswith(prefix) == keep}
    if choice_func is not None:
        params = {k: v for k, v in params.items() if choice_func(k)}
    if net is not None:
        load_param_into_net(net, params, strict_load)
    return params


def _checkpoint_path(ckpt_file_name, format: str) -> str:
    path = os.fspath(ckpt_file_name)
    suffixes = (checkpoint_safetensors.SUFFIX,) if format == "safetensors" else (".ckpt", ".npz")
    for candidate in (path, *(path + suffix for suffix in suffixes)):
        if os.path.isfile(candidate):
            break
    else:
        raise FileNotFoundError(f"For 'load_checkpoint', no checkpoint file at {path!r}.")
    if format_of(candidate) != format:
        raise ValueError(
            f"For 'load_checkpoint', the file's format must be the 'format' argument's: {candidate!r} is read with "
            f"format={'ckpt' if format == 'safetensors' else 'safetensors'!r}, but got format={format!r}."
        )
    return candidate


def _read_checkpoint(ckpt_file_name, crc_check: bool = False, format: str = "ckpt") -> dict:
    path = _checkpoint_path(ckpt_file_name, format)
    if format == "safetensors":
        return {name: Parameter(v, name=name) for name, v in checkpoint_safetensors.read_values(path, crc_check)}
    if checkpoint_proto.is_mindspore_checkpoint(path):
        values = checkpoint_proto.read_values(path, crc_check)
        return {name: v if isinstance(v, str) else Parameter(v, name=name) for name, v in values}
    if crc_check:
        raise ValueError(f"For 'load_checkpoint', {path!r} is an opforge .npz checkpoint: it has no CRC code to check.")
    return _read_npz(path)


def _read_npz(path: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as data:
            if _META_KEY not in data.files:
                raise ValueError(f"For 'load_checkpoint', {path!r} is not an opforge checkpoint (no metadata).")
            meta = json.loads(bytes(data[_META_KEY]).decode())
            out = {}
            for name, key in meta["order"]:
                if meta["dtypes"][name] == _STR:
                    out[name] = str(data[key])
                    continue
                dtype = mstype.to_dtype(meta["dtypes"][name])
                array = data[key]
                if dtype is mstype.bfloat16:
                    array = array.view(dtype.np_dtype)
                out[name] = Parameter(array, name=name, requires_grad=bool(meta["requires_grad"].get(name, True)))
            return out
    except (OSError, KeyError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"For 'load_checkpoint', {path!r} is not a readable opforge checkpoint: {e}") from e


def _load_one(p, key: str, parameter_dict: dict, used: set, strict_load: bool = False) -> None:
    value = parameter_dict[key]
    value = value if isinstance(value, Tensor) else Tensor(value)
    block = sharding.local_of(p) if sharding.is_sharded(p) else None
    if value.shape != p.shape and block is not None and value.shape == block.shape:
        # this rank's slice (a checkpoint saved with integrated_save=False), loaded into this rank's block as
        # MindSpore's sliced parameters take it
        _check_dtype(p, value, strict_load)
        block.set_data(np.asarray(value).astype(p.dtype.np_dtype))
        used.add(key)
        return
    if value.shape != p.shape:
        raise ValueError(
            f"For 'load_param_into_net', the parameter '{p.name}' has shape {list(p.shape)} in the network "
            f"but {list(value.shape)} in the checkpoint."
        )
    _check_dtype(p, value, strict_load)
    p.set_data(np.asarray(value).astype(p.dtype.np_dtype))
    used.add(key)


def _check_dtype(p, value, strict_load: bool) -> None:
    if strict_load and value.dtype != p.dtype:  # MindSpore converts the dtype only when not strict
        raise RuntimeError(
            f"For 'load_param_into_net' (strict_load), the parameter '{p.name}' is {p.dtype} in the network "
            f"but {value.dtype} in the checkpoint."
        )


def _load_prefixed(net: Cell, parameter_dict: dict, not_loaded: list, used: set) -> list:
    """MindSpore's ``_load_dismatch_prefix_params``: take the prefix under which the checkpoint holds a
    missing parameter's name, load every missing parameter found under it, and repeat while one loads."""
    while not_loaded:
        prefix = next(
            (key[: -len(name)] for name in not_loaded for key in parameter_dict if key.endswith(name) and key != name),
            None,
        )
        loaded = [p for p in net.get_parameters() if p.name in not_loaded and prefix is not None
                  and prefix + p.name in parameter_dict]  # fmt: skip
        if not loaded:
            return not_loaded
        for p in loaded:
            _load_one(p, prefix + p.name, parameter_dict, used)
        not_loaded = [name for name in not_loaded if name not in {p.name for p in loaded}]
    return not_loaded


def load_param_into_net(net: Cell, parameter_dict: dict, strict_load: bool = False) -> tuple:
    """Copy ``parameter_dict[name]`` into each parameter of ``net`` with that name (same shape; the
    value is cast to the parameter's dtype). Without ``strict_load``, parameters still missing are then
    looked up under a prefix, as MindSpore does: a checkpoint of ``TrainOneStepCell(WithLossCell(net))``
    names them ``network.net.x`` or ``fasttext.x`` and loads into the bare ``net``. Returns ``(net names not
    loaded, checkpoint names not used)``. ``strict_load`` (as MindSpore's) turns off the prefix look-up and
    the dtype conversion (a dtype mismatch is a RuntimeError); missing or unused names are returned, not
    raised: the model zoo's SSD loads a checkpoint filtered of its head with ``strict_load=True``."""
    if not isinstance(net, Cell):
        raise TypeError(f"For 'load_param_into_net', the 'net' must be a Cell, but got {type(net).__name__}.")
    if not isinstance(parameter_dict, dict):
        raise TypeError(
            f"For 'load_param_into_net', the 'parameter_dict' must be a dict, but got {type(parameter_dict).__name__}."
        )
    not_loaded, used = [], set()
    for p in net.get_parameters():
        if p.name in parameter_dict:
            _load_one(p, p.name, parameter_dict, used, bool(strict_load))
        else:
            not_loaded.append(p.name)
    if not strict_load:
        not_loaded = _load_prefixed(net, parameter_dict, not_loaded, used)
    unused = [name for name in parameter_dict if name not in used]
    return not_loaded, unused
