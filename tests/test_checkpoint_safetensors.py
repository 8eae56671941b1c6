"""MindSpore's safetensors checkpoints (opforge/nn/checkpoint_safetensors.py, ``format="safetensors"``) and the
conversions between the formats (opforge/nn/checkpoint_convert.py), checked against the file layout read and
written here by hand (a little-endian header length, a JSON header, the bytes), not with the safetensors
library: opforge's files hold what MindSpore writes, and files laid out as MindSpore writes them load."""

import binascii
import json
import os
import struct

import numpy as np
import pytest

import opforge
import opforge.nn as nn
from opforge import Tensor
from opforge.dataset import NumpySlicesDataset
from opforge.train import CheckpointConfig, Model, ModelCheckpoint

# the format's dtype codes of opforge's dtypes (complex128 has none)
CODES = {
    opforge.float16: "F16", opforge.bfloat16: "BF16", opforge.float32: "F32", opforge.float64: "F64",
    opforge.int8: "I8", opforge.uint8: "U8", opforge.int16: "I16", opforge.uint16: "U16", opforge.int32: "I32",
    opforge.uint32: "U32", opforge.int64: "I64", opforge.uint64: "U64", opforge.bool_: "BOOL",
    opforge.complex64: "C64",
}  # fmt: skip


def _read(path):
    """(metadata, {name: (code, shape, bytes)}) of a safetensors file."""
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    body = data[8 + size :]
    metadata = header.pop("__metadata__", None)
    return metadata, {k: (v["dtype"], v["shape"], body[slice(*v["data_offsets"])]) for k, v in header.items()}


def _write(path, tensors, metadata=None):
    """A safetensors file of {name: (code, shape, bytes)}, laid out as MindSpore's writer lays it out."""
    header, body = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (code, shape, content) in tensors.items():
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [len(body), len(body) + len(content)]}
        body += content
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + body)


@pytest.mark.parametrize("dtype", list(CODES), ids=lambda d: d.name)
def test_every_dtype_is_written_as_mindspore_writes_it_and_reads_back(tmp_path, rng, dtype):
    array = Tensor(rng.standard_normal((2, 3)) * 50, dtype).asnumpy()
    path = opforge.save_checkpoint({"w": Tensor(array, dtype)}, str(tmp_path / "t"), format="safetensors")
    assert path.endswith("t.safetensors")
    metadata, tensors = _read(path)
    assert metadata == {"format": "ms"}
    assert tensors == {"w": (CODES[dtype], [2, 3], array.tobytes())}
    loaded = opforge.load_checkpoint(path, format="safetensors")["w"]
    assert loaded.dtype == dtype and loaded.asnumpy().tobytes() == array.tobytes()


def test_a_file_as_mindspore_writes_it_loads_into_a_network(tmp_path, rng):
    weight = rng.standard_normal((2, 3)).astype(np.float32)
    bias = rng.standard_normal(2).astype(np.float32)
    _write(
        tmp_path / "m.safetensors",
        {
            "epoch": ("I64", [], np.int64(3).tobytes()),  # an append_dict value: a scalar, shape []
            "bias": ("F32", [2], bias.tobytes()),
            "weight": ("F32", [2, 3], weight.tobytes()),
        },
        {"format": "ms"},
    )
    net = nn.Dense(3, 2)
    params = opforge.load_checkpoint(str(tmp_path / "m.safetensors"), net, format="safetensors")
    assert params["epoch"].shape == () and int(params["epoch"].asnumpy()) == 3
    np.testing.assert_array_equal(net.weight.asnumpy(), weight)
    np.testing.assert_array_equal(net.bias.asnumpy(), bias)


def test_scalars_and_non_contiguous_tensors_keep_their_shape_and_values(tmp_path, rng):
    base = rng.standard_normal((4, 6)).astype(np.float32)
    t = Tensor(base).transpose(1, 0)[::2]
    path = opforge.save_checkpoint({"t": t}, str(tmp_path / "t"), format="safetensors", append_dict={"lr": 0.5})
    _, tensors = _read(path)
    assert tensors["t"] == ("F32", [3, 4], np.ascontiguousarray(base.T[::2]).tobytes())
    assert tensors["lr"] == ("F32", [], np.float32(0.5).tobytes())


def test_crc_is_mindspores_over_sorted_names_and_checked(tmp_path):
    values = {"w": np.arange(5, dtype=np.float32), "a": np.ones(2, np.int32)}
    path = opforge.save_checkpoint({k: Tensor(v) for k, v in values.items()}, str(tmp_path / "c.safetensors"),
                                   format="safetensors", crc_check=True)  # fmt: skip
    metadata, _ = _read(path)
    crc = 0
    for name in sorted(values):
        crc = binascii.crc32(values[name].tobytes(), binascii.crc32(name.encode(), crc))
    assert metadata == {"format": "ms", "crc_num": str(crc)}
    assert opforge.load_checkpoint(path, format="safetensors", crc_check=True).keys() == {"a", "w"}
    data = bytearray(open(path, "rb").read())
    data[-1] ^= 0xFF  # a byte of the last tensor
    open(path, "wb").write(bytes(data))
    with pytest.raises(ValueError, match="CRC check"):
        opforge.load_checkpoint(path, format="safetensors", crc_check=True)
    plain = opforge.save_checkpoint(nn.Dense(1, 1), str(tmp_path / "p"), format="safetensors")
    with pytest.raises(ValueError, match="no CRC code"):
        opforge.load_checkpoint(plain, format="safetensors", crc_check=True)


def test_what_the_format_cannot_hold_or_read_raises_naming_it(tmp_path):
    with pytest.raises(ValueError, match="tensors only, but 'note' is the str 'hi'"):
        opforge.save_checkpoint(nn.Dense(1, 1), str(tmp_path / "s"), format="safetensors", append_dict={"note": "hi"})
    with pytest.raises(ValueError, match="cannot hold this checkpoint.*complex128"):
        opforge.save_checkpoint({"z": Tensor(np.ones(2, np.complex128))}, str(tmp_path / "z"), format="safetensors")
    assert not os.listdir(tmp_path)  # nothing half-written
    path = opforge.save_checkpoint(nn.Dense(1, 1), str(tmp_path / "d"), format="safetensors")
    with pytest.raises(ValueError, match="is read with format='safetensors', but got format='ckpt'"):
        opforge.load_checkpoint(path)
    ckpt = opforge.save_checkpoint(nn.Dense(1, 1), str(tmp_path / "d.ckpt"))
    with pytest.raises(ValueError, match="is read with format='ckpt', but got format='safetensors'"):
        opforge.load_checkpoint(ckpt, format="safetensors")
    (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(ValueError, match="bad.safetensors' is not a readable safetensors file"):
        opforge.load_checkpoint(str(tmp_path / "bad.safetensors"), format="safetensors")
    with pytest.raises(ValueError, match="'format' must be 'ckpt' or 'safetensors'"):
        opforge.load_checkpoint(path, format="st")


def test_model_checkpoint_saves_safetensors_and_training_resumes_from_them(tmp_path, rng):
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = (x @ rng.standard_normal((4, 2))).astype(np.float32)
    net = nn.Dense(4, 2)
    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    config = CheckpointConfig(save_checkpoint_steps=2, format="safetensors", append_info=["epoch_num"])
    ckpt = ModelCheckpoint(prefix="dense", directory=str(tmp_path), config=config)
    model.train(1, NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(4), callbacks=[ckpt])
    assert sorted(os.listdir(tmp_path)) == ["dense-1_2.safetensors", "dense-1_4.safetensors"]
    assert ckpt.latest_ckpt_file_name == str(tmp_path / "dense-1_4.safetensors")
    fresh = nn.Dense(4, 2)
    saved = opforge.load_checkpoint(ckpt.latest_ckpt_file_name, fresh, format="safetensors")
    assert {"moments.weight", "moments.bias"} <= set(saved) and int(saved["epoch_num"].asnumpy()) == 1
    np.testing.assert_array_equal(fresh.weight.asnumpy(), net.weight.asnumpy())
    with pytest.raises(ValueError, match="format='safetensors' the 'enc_key', 'enc_mode', 'crc_check'"):
        CheckpointConfig(format="safetensors", crc_check=True)
    with pytest.raises(ValueError, match="'CheckpointConfig', encrypted checkpoints"):  # (not a plain file)
        CheckpointConfig(enc_key=b"0123456789ABCDEF", enc_mode="AES-GCM")
    with pytest.raises(ValueError, match="'format' must be 'ckpt' or 'safetensors'"):
        CheckpointConfig(format="pt")


def _rank_files(root, fmt, ranks=2):
    """A distributed run's files: root/rank_N/net_N.{fmt}, values that tell the ranks apart."""
    for rank in range(ranks):
        net = nn.Dense(2, 2)
        net.weight.set_data(Tensor(np.full((2, 2), rank, np.float32)))
        opforge.save_checkpoint(net, str(root / f"rank_{rank}" / f"net_{rank}.{fmt}"), format=fmt)
    return root


@pytest.mark.parametrize("src,dst", [("ckpt", "safetensors"), ("safetensors", "ckpt")])
def test_a_folder_of_rank_folders_converts_file_by_file(tmp_path, src, dst):
    convert = opforge.ckpt_to_safetensors if dst == "safetensors" else opforge.safetensors_to_ckpt
    root = _rank_files(tmp_path / "src", src)
    convert(str(root), str(tmp_path / "out"), name_map={"weight": "fc.weight"})
    for rank in range(2):
        out = tmp_path / "out" / f"rank_{rank}" / f"net_{rank}.{dst}"
        params = opforge.load_checkpoint(str(out), format=dst)
        assert set(params) == {"fc.weight", "bias"}
        np.testing.assert_array_equal(params["fc.weight"].asnumpy(), np.full((2, 2), rank, np.float32))
    convert(str(root), file_name_regex="net_1")  # in place, the matching files only
    assert os.path.exists(root / "rank_1" / f"net_1.{dst}") and not os.path.exists(root / "rank_0" / f"net_0.{dst}")


def test_one_file_converts_beside_itself_and_mistakes_raise(tmp_path):
    ckpt = opforge.save_checkpoint(nn.Dense(2, 2), str(tmp_path / "a.ckpt"))
    opforge.ckpt_to_safetensors(ckpt)
    back = opforge.load_checkpoint(str(tmp_path / "a.safetensors"), format="safetensors")
    assert {k: v.asnumpy().tolist() for k, v in back.items()} == {
        k: v.asnumpy().tolist() for k, v in opforge.load_checkpoint(ckpt).items()
    }
    with pytest.raises(ValueError, match="For 'safetensors_to_ckpt', the input file must be a .safetensors file"):
        opforge.safetensors_to_ckpt(ckpt)
    with pytest.raises(ValueError, match="the save_path must be a directory"):
        opforge.ckpt_to_safetensors(ckpt, str(tmp_path / "x.ckpt"))
    with pytest.raises(ValueError, match="the input path must be a valid path"):
        opforge.ckpt_to_safetensors(str(tmp_path / "missing.ckpt"))
    with pytest.raises(ValueError, match="no directories starting with 'rank'"):
        opforge.ckpt_to_safetensors(str(tmp_path))
    with pytest.raises(ValueError, match="'name_map' must be a dict"):
        opforge.ckpt_to_safetensors(ckpt, name_map=[("weight", "w")])
    with pytest.raises(ValueError, match="does not match the regular expression"):
        opforge.ckpt_to_safetensors(ckpt, file_name_regex="^b")
