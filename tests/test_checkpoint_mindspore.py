"""MindSpore's checkpoint format (opforge/nn/checkpoint_proto.py), checked against a protobuf wire encoder and
decoder written here from the schema (not the protobuf library): files laid out as MindSpore writes them load
into opforge, and opforge's files hold exactly what MindSpore reads."""

import binascii
import os

import numpy as np
import pytest

import opforge
import opforge.nn as nn
from opforge import Tensor
from opforge.dataset import NumpySlicesDataset
from opforge.train import CheckpointConfig, Model, ModelCheckpoint

# -- the protobuf wire format, by hand ------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # int64 as protobuf encodes it (two's complement, ten bytes when negative)
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _value(tag: str, dims, tensor_type: str, content: bytes) -> bytes:
    """One serialized ``Checkpoint`` holding one ``Value``, as MindSpore writes each chunk."""
    tensor = b"".join(_field(1, d) for d in dims) + _field(2, tensor_type.encode()) + _field(3, content)
    return _field(1, _field(1, tag.encode()) + _field(2, tensor))


def _read_varint(buf: bytes, i: int):
    shift = result = 0
    while True:
        byte = buf[i]
        result |= (byte & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if not byte & 0x80:
            return result, i


def _fields(buf: bytes):
    """(number, value) of each field: an int for varints, bytes for length-delimited ones."""
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _read_varint(buf, i)
        elif wire == 2:
            size, i = _read_varint(buf, i)
            value, i = buf[i : i + size], i + size
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        yield number, value


def _decode_file(path):
    """[(tag, dims, tensor_type, content)] of every Value in the file, chunks not joined."""
    out, data = [], open(path, "rb").read()
    if data[-17:-10] == b"crc_num":  # MindSpore's CRC trailer (checked in test_crc_trailer_is_written_and_checked)
        data = data[:-17]
    for number, value in _fields(data):
        assert number == 1
        tag, tensor = None, None
        for n, v in _fields(value):
            if n == 1:
                tag = v.decode()
            elif n == 2:
                tensor = v
        dims, tensor_type, content = [], None, b""
        for n, v in _fields(tensor):
            if n == 1:
                dims.append(v)
            elif n == 2:
                tensor_type = v.decode()
            elif n == 3:
                content = v
        out.append((tag, dims, tensor_type, content))
    return out


# -- a file as MindSpore writes it loads into opforge ---------------------------------------------------------


class LeNetHead(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16, 10)

    def construct(self, x):
        return self.fc1(self.conv1(x).mean(axis=(2, 3)).reshape(x.shape[0], -1).tile((1, 3))[:, :16])


def test_a_mindspore_layout_file_loads_into_a_network(tmp_path, rng):
    conv = rng.standard_normal((6, 1, 5, 5)).astype(np.float32)
    weight = rng.standard_normal((10, 16)).astype(np.float32)
    bias = rng.standard_normal(10).astype(np.float32)
    half = weight.tobytes()[: weight.nbytes // 2]  # a parameter written in two chunks under one tag
    data = (
        _value("conv1.weight", conv.shape, "Float32", conv.tobytes())
        + _value("fc1.weight", weight.shape, "Float32", half)
        + _value("fc1.weight", weight.shape, "Float32", weight.tobytes()[len(half) :])
        + _value("fc1.bias", bias.shape, "Float32", bias.tobytes())
        + _value("epoch_num", [0], "Int64", np.int64(7).tobytes())
        + _value("learning_rate", [0], "Float32", np.float32(0.01).tobytes())
        + _value("note", [0], "str", np.array("τrain").tobytes())
    )
    path = tmp_path / "LeNet-1_32.ckpt"
    path.write_bytes(data)
    params = opforge.load_checkpoint(str(path))
    assert list(params) == ["conv1.weight", "fc1.weight", "fc1.bias", "epoch_num", "learning_rate", "note"]
    assert params["note"] == "τrain"
    assert params["epoch_num"].shape == () and int(params["epoch_num"].asnumpy()) == 7
    assert params["epoch_num"].dtype == opforge.int64 and params["learning_rate"].dtype == opforge.float32
    net = LeNetHead()
    not_loaded, unused = opforge.load_param_into_net(net, params)
    assert not_loaded == []  # MindSpore's Conv2d has no bias by default
    assert sorted(unused) == ["epoch_num", "learning_rate", "note"]
    np.testing.assert_array_equal(net.conv1.weight.asnumpy(), conv)
    np.testing.assert_array_equal(net.fc1.weight.asnumpy(), weight)
    np.testing.assert_array_equal(net.fc1.bias.asnumpy(), bias)


@pytest.mark.parametrize(
    "dtype,tensor_type",
    [
        (opforge.float16, "Float16"), (opforge.bfloat16, "BFloat16"), (opforge.float64, "Float64"),
        (opforge.int8, "Int8"), (opforge.uint8, "UInt8"), (opforge.int16, "Int16"), (opforge.uint16, "UInt16"),
        (opforge.int32, "Int32"), (opforge.uint32, "UInt32"), (opforge.uint64, "UInt64"), (opforge.bool_, "Bool"),
    ],
)  # fmt: skip
def test_every_type_name_reads_and_writes_as_mindspore_names_it(tmp_path, rng, dtype, tensor_type):
    array = Tensor(rng.standard_normal((2, 3)) * 50, dtype).asnumpy()
    path = tmp_path / "t.ckpt"
    path.write_bytes(_value("w", [2, 3], tensor_type, array.tobytes()))
    loaded = opforge.load_checkpoint(str(path))["w"]
    assert loaded.dtype == dtype and loaded.asnumpy().tobytes() == array.tobytes()
    written = opforge.save_checkpoint({"w": Tensor(array, dtype)}, str(tmp_path / "back.ckpt"))
    assert _decode_file(written) == [("w", [2, 3], tensor_type, array.tobytes())]


# -- opforge's file holds what MindSpore reads ----------------------------------------------------------------


def test_save_checkpoint_writes_one_value_per_parameter_in_order(tmp_path, rng):
    net = nn.Dense(3, 2)
    path = opforge.save_checkpoint(net, str(tmp_path / "dense"), append_dict={"epoch_num": 3, "tag": "ok"})
    assert path.endswith("dense.ckpt")
    values = _decode_file(path)
    assert [v[0] for v in values] == ["weight", "bias", "epoch_num", "tag"]
    assert values[0][1:] == ([2, 3], "Float32", net.weight.asnumpy().tobytes())
    assert values[1][1:] == ([2], "Float32", net.bias.asnumpy().tobytes())
    assert values[2][1:] == ([0], "Int64", np.int64(3).tobytes())  # MindSpore's scalar: dims [0]
    assert values[3][1:] == ([0], "str", np.array("ok").tobytes())  # UCS-4, as NumPy's "<U2"


def test_a_non_contiguous_parameter_is_written_in_c_order(tmp_path, rng):
    base = rng.standard_normal((4, 6)).astype(np.float32)
    t = Tensor(base).transpose(1, 0)[::2]
    path = opforge.save_checkpoint({"t": t}, str(tmp_path / "t.ckpt"))
    assert _decode_file(path) == [("t", [3, 4], "Float32", np.ascontiguousarray(base.T[::2]).tobytes())]


def test_crc_trailer_is_written_and_checked(tmp_path):
    path = opforge.save_checkpoint({"w": Tensor(np.arange(5, dtype=np.float32))}, str(tmp_path / "c.ckpt"),
                                   crc_check=True)  # fmt: skip
    data = open(path, "rb").read()
    body, mark, crc = data[:-17], data[-17:-10], int.from_bytes(data[-10:], "big")
    assert mark == b"crc_num" and crc == binascii.crc32(body)
    np.testing.assert_array_equal(opforge.load_checkpoint(path, crc_check=True)["w"].asnumpy(), np.arange(5))
    damaged = bytearray(data)
    damaged[len(body) - 3] ^= 0xFF  # a byte of the last value's content
    open(path, "wb").write(bytes(damaged))
    with pytest.raises(ValueError, match="CRC check"):
        opforge.load_checkpoint(path)
    plain = opforge.save_checkpoint({"w": Tensor(np.ones(2, np.float32))}, str(tmp_path / "plain.ckpt"))
    with pytest.raises(ValueError, match="no CRC code"):
        opforge.load_checkpoint(plain, crc_check=True)


def test_values_opforge_cannot_hold_are_left_out(tmp_path):
    weight = np.arange(4, dtype=np.float32)
    data = (
        _value("random_op", [0], "random_op", b"\x01\x02")  # MindSpore's random operators' states
        + _field(1, _field(1, b"table") + _field(3, b""))  # a map parameter: a maptensor, no tensor
        + _value("w", [4], "Float32", weight.tobytes())
    )
    (tmp_path / "extra.ckpt").write_bytes(data)
    loaded = opforge.load_checkpoint(str(tmp_path / "extra.ckpt"))
    assert list(loaded) == ["w"] and np.array_equal(loaded["w"].asnumpy(), weight)


def test_damaged_and_foreign_files_raise_naming_the_file(tmp_path):
    good = _value("w", [4], "Float32", np.ones(4, np.float32).tobytes())
    (tmp_path / "cut.ckpt").write_bytes(good[:-5])
    with pytest.raises(ValueError, match="cut.ckpt.*cannot be parsed"):
        opforge.load_checkpoint(str(tmp_path / "cut.ckpt"))
    (tmp_path / "short.ckpt").write_bytes(_value("w", [4], "Float32", np.ones(3, np.float32).tobytes()))
    with pytest.raises(ValueError, match="'w' holds 3 Float32 values but its shape \\[4\\] needs 4"):
        opforge.load_checkpoint(str(tmp_path / "short.ckpt"))
    (tmp_path / "odd.ckpt").write_bytes(_value("w", [1], "Complex256", b"\0" * 32))
    with pytest.raises(ValueError, match="'w' has an unknown type 'Complex256'"):
        opforge.load_checkpoint(str(tmp_path / "odd.ckpt"))
    with pytest.raises(ValueError, match="'format' must be 'ckpt' or 'safetensors', but got 'npy'"):
        opforge.save_checkpoint(nn.Dense(1, 1), str(tmp_path / "x"), format="npy")


def test_an_earlier_opforge_checkpoint_named_ckpt_still_loads(tmp_path, rng):
    net = nn.Dense(4, 3)
    npz = opforge.save_checkpoint(net, str(tmp_path / "old.npz"))
    os.replace(npz, tmp_path / "old.ckpt")  # what opforge wrote under a .ckpt name before it wrote MindSpore's format
    fresh = nn.Dense(4, 3)
    assert opforge.load_param_into_net(fresh, opforge.load_checkpoint(str(tmp_path / "old.ckpt"))) == ([], [])
    np.testing.assert_array_equal(fresh.weight.asnumpy(), net.weight.asnumpy())


def test_model_checkpoint_callback_files_resume_training(tmp_path, rng):
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = (x @ rng.standard_normal((4, 2))).astype(np.float32)
    net = nn.Dense(4, 2)
    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    config = CheckpointConfig(save_checkpoint_steps=4, crc_check=True)
    ckpt = ModelCheckpoint(prefix="dense", directory=str(tmp_path), config=config)
    model.train(1, NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(4), callbacks=[ckpt])
    files = sorted(f for f in os.listdir(tmp_path) if f.endswith(".ckpt"))
    assert files and all(_decode_file(tmp_path / f) for f in files)
    saved = opforge.load_checkpoint(str(tmp_path / files[-1]), crc_check=True)  # each file carries the CRC
    assert {"weight", "bias", "moments.weight", "moments.bias"} <= set(saved)
    np.testing.assert_array_equal(saved["weight"].asnumpy(), net.weight.asnumpy())
