"""opforge.mindrecord (FileWriter, FileReader) and ds.MindDataset as MindSpore's: every field type written
and read back, the on-disk layout checked against MindSpore's format independently (header, pages,
MessagePack raw fields, blobs, integer compression, the SQLite index), shards, appends, page overflow,
columns_list, sharding, padding, shuffling, training a model, and the errors of bad rows and bad files."""

import json
import os
import sqlite3
import struct

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
from opforge import nn
from opforge.mindrecord import FileReader, FileWriter
from opforge.train import Model

SCHEMA = {
    "label": {"type": "int32"}, "count": {"type": "int64"}, "score": {"type": "float32"},
    "ratio": {"type": "float64"}, "name": {"type": "string"}, "data": {"type": "bytes"},
    "image": {"type": "float32", "shape": [2, 3]}, "ids": {"type": "int64", "shape": [-1]},
    "mask": {"type": "int32", "shape": [2, 2]}, "coef": {"type": "float64", "shape": [3]},
}  # fmt: skip


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def _row(k: int) -> dict:
    rng = np.random.default_rng(k)
    return {
        "label": k, "count": -(1 << 40) * k, "score": np.float32(0.25 * k), "ratio": 1.0 / (k + 1),
        "name": f"row-{k}-é", "data": bytes(rng.integers(0, 256, k % 5, dtype=np.uint8)),
        "image": rng.standard_normal((2, 3)).astype(np.float32),
        "ids": np.array([k, -300 * k, 70000 + k, 1 << 40][: 1 + k % 4], np.int64),
        "mask": np.array([[k, -k], [128 * k, -(1 << 20)]], np.int32), "coef": rng.standard_normal(3),
    }  # fmt: skip


def _write(path, rows, shard_num=1, schema=SCHEMA, index=None, page_size=None):
    writer = FileWriter(str(path), shard_num=shard_num, overwrite=True)
    writer.add_schema(schema, "test")
    if index is not None:
        writer.add_index(index)
    if page_size is not None:
        writer.set_page_size(page_size)
    writer.write_raw_data(rows)
    writer.commit()
    return str(path)


def _rows(dataset, **kwargs):
    return list(dataset.create_tuple_iterator(output_numpy=True, **kwargs))


def _labels(dataset):
    column = dataset.get_col_names().index("label")
    return [int(r[column]) for r in _rows(dataset)]


def _same(got, want):
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=0, abs=0)
    else:
        assert got == want and type(got) is type(want)


# ---------------------------------------------------------------------------------------------
# Round trips


def test_file_reader_gives_back_every_field_type(tmp_path):
    rows = [_row(k) for k in range(6)]
    path = _write(tmp_path / "all.mindrecord", rows)
    reader = FileReader(path)
    assert reader.len() == 6 and reader.schema() == SCHEMA
    got = list(reader.get_next())
    reader.close()
    for item, row in zip(got, rows):
        assert set(item) == set(SCHEMA)
        want = dict(row, score=float(row["score"]))  # scalars come back as Python values, as MindSpore's
        for field in SCHEMA:
            _same(item[field], want[field])
    picked = FileReader(path, columns=["ids", "name"])
    assert [sorted(r) for r in picked.get_next()] == [["ids", "name"]] * 6
    picked.close()


def test_mind_dataset_columns_dtypes_and_shapes(tmp_path):
    rows = [_row(k) for k in range(5)]
    data = ds.MindDataset(_write(tmp_path / "d.mindrecord", rows), shuffle=False)
    assert data.get_col_names() == sorted(SCHEMA) and data.get_dataset_size() == 5
    kinds = {"label": np.int32, "count": np.int64, "score": np.float32, "ratio": np.float64}
    for got, row in zip(_rows(data), rows):
        values = dict(zip(sorted(SCHEMA), got))
        for field, dtype in kinds.items():
            assert values[field].dtype == dtype and values[field].shape == ()
            assert values[field] == dtype(row[field])
        assert values["name"].shape == () and str(values["name"]) == row["name"]
        assert values["data"].dtype == np.uint8 and values["data"].tobytes() == row["data"]
        for field in ("image", "ids", "mask", "coef"):
            _same(values[field], row[field])
    picked = ds.MindDataset(_write(tmp_path / "p.mindrecord", rows), columns_list=["mask", "label"], shuffle=False)
    assert picked.get_col_names() == ["mask", "label"]
    assert [int(r[1]) for r in _rows(picked)] == list(range(5))


def test_blob_only_and_scalar_only_schemas(tmp_path):
    blobs = {"image": {"type": "int64", "shape": [3]}}
    path = _write(tmp_path / "b.mindrecord", [{"image": np.arange(3) + k} for k in range(3)], schema=blobs)
    assert [r[0].tolist() for r in _rows(ds.MindDataset(path, shuffle=False))] == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
    scalars = {"label": {"type": "int64"}, "name": {"type": "string"}}
    path = _write(tmp_path / "s.mindrecord", [{"label": k, "name": str(k)} for k in range(3)], schema=scalars)
    assert [(int(a), str(b)) for a, b in _rows(ds.MindDataset(path, shuffle=False))] == [(0, "0"), (1, "1"), (2, "2")]


# ---------------------------------------------------------------------------------------------
# The on-disk format, read independently


def _header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(length))


def test_layout_is_mindspores_format(tmp_path):
    schema = {"label": {"type": "int32"}, "data": {"type": "bytes"}}
    path = _write(tmp_path / "f.mindrecord", [{"label": 1, "data": b"xyz"}, {"label": 300, "data": b""}],
                  schema=schema)  # fmt: skip
    header = _header(path)
    assert header["version"] == "3.0" and header["shard_addresses"] == ["f.mindrecord"]
    assert header["header_size"] == 1 << 24 and header["page_size"] == 1 << 25  # MindSpore's defaults
    assert header["schema"] == [{"blob_fields": ["data"], "desc": "test", "schema": schema}]
    assert header["index_fields"] == [{"index_field": "label", "schema_id": 0}]  # scalars indexed by default
    blob_page, raw_page = header["page"]
    assert (blob_page["page_type"], blob_page["page_id"], blob_page["start_row_id"], blob_page["end_row_id"]) == (
        "BLOB_DATA",
        0,
        0,
        2,
    )
    assert raw_page["page_type"] == "RAW_DATA" and raw_page["row_group_ids"] == [{"id": 0, "offset": 0}]
    with open(path, "rb") as f:
        f.seek(1 << 24)  # page 0: each row's blob, uint64 length first
        assert f.read(blob_page["page_size"]) == struct.pack("<Q", 3) + b"xyz" + struct.pack("<Q", 0)
        f.seek((1 << 24) + (1 << 25))  # page 1: each row's scalars as a MessagePack map
        raw = f.read(raw_page["page_size"])
    first, second = b"\x81\xa5label\x01", b"\x81\xa5label\xcd\x01\x2c"
    assert raw == struct.pack("<Q", len(first)) + first + struct.pack("<Q", len(second)) + second
    db = sqlite3.connect(path + ".db")
    assert db.execute("SELECT NAME FROM SHARD_NAME").fetchall() == [("f.mindrecord",)]
    index = db.execute(
        "SELECT ROW_ID, ROW_GROUP_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, "
        "PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END, INC_0, label_0 FROM INDEXES ORDER BY ROW_ID"
    ).fetchall()
    db.close()
    assert index == [(0, 0, 1, 0, 8 + len(first), 0, 0, 11, 0, 1),
                     (1, 0, 1, 8 + len(first), 16 + len(first) + len(second), 0, 11, 19, 0, 300)]  # fmt: skip


def test_integer_arrays_are_compressed_and_several_blobs_are_length_prefixed(tmp_path):
    schema = {"a": {"type": "int64", "shape": [4]}, "b": {"type": "bytes"}}
    path = _write(tmp_path / "c.mindrecord", [{"a": np.array([1, 300, -70000, 1 << 40]), "b": b"hi"}], schema=schema)
    page = _header(path)["page"][0]
    with open(path, "rb") as f:
        f.seek(1 << 24)
        blob = f.read(page["page_size"])[8:]
    # a: count 4 (big-endian), width codes 0 1 2 3 (int8 int16 int32 int64) in one byte, each value LE
    a = (b"\x00\x00\x00\x04" + bytes([0b00011011]) + b"\x01" + b"\x2c\x01" + b"\x90\xee\xfe\xff"
         + b"\x00\x00\x00\x00\x00\x01\x00\x00")  # fmt: skip
    assert blob == struct.pack(">Q", len(a)) + a + struct.pack(">Q", 2) + b"hi"


# ---------------------------------------------------------------------------------------------
# Shards, appends and pages


def test_shard_files_and_reading_one_or_all(tmp_path):
    rows = [_row(k) for k in range(10)]
    base = tmp_path / "s.mindrecord"
    _write(base, rows, shard_num=3)
    paths = [f"{base}{k}" for k in range(3)]
    assert all(os.path.exists(p) and os.path.exists(p + ".db") for p in paths)
    assert _header(paths[2])["shard_addresses"] == [os.path.basename(p) for p in paths]
    every = ds.MindDataset(paths[1], shuffle=False)  # one shard's path: the whole dataset
    assert sorted(_labels(every)) == list(range(10))
    sizes = [FileReader([p]).len() for p in paths]
    assert sorted(sizes) == [3, 3, 4]
    assert _labels(ds.MindDataset([paths[0]], shuffle=False)) == list(range(sizes[0]))  # a list: those files
    assert _header(paths[0])["shard_id"] == 0 and _header(paths[2])["shard_id"] == 2


def test_many_pages_and_appends(tmp_path):
    schema = {"label": {"type": "int32"}, "text": {"type": "string"}, "blob": {"type": "bytes"}}
    rows = [{"label": k, "text": "t" * (3000 + k), "blob": bytes([k % 256]) * 7000} for k in range(40)]
    path = _write(tmp_path / "m.mindrecord", rows[:25], schema=schema, page_size=1 << 15)
    pages = _header(path)["page"]
    assert (
        sum(p["page_type"] == "BLOB_DATA" for p in pages) >= 5 and sum(p["page_type"] == "RAW_DATA" for p in pages) >= 2
    )
    writer = FileWriter.open_for_append(path)
    writer.write_raw_data(rows[25:32])
    writer.write_raw_data(rows[32:])
    writer.commit()
    read = list(FileReader(path).get_next())
    assert [r["label"] for r in read] == list(range(40))
    assert all(r["text"] == row["text"] and r["blob"] == row["blob"] for r, row in zip(read, rows))
    assert len(_rows(ds.MindDataset(path))) == 40


# ---------------------------------------------------------------------------------------------
# Dataset options


def test_sharding_padding_and_num_samples(tmp_path):
    path = _write(tmp_path / "h.mindrecord", [_row(k) for k in range(7)])
    shards = [_labels(ds.MindDataset(path, num_shards=3, shard_id=s)) for s in range(3)]
    assert [len(s) for s in shards] == [3, 3, 3] and set(sum(shards, [])) == set(range(7))  # wrapped to one size
    padded = {"label": -1, "mask": np.zeros((2, 2), np.int32)}
    parts = [ds.MindDataset(path, columns_list=["label", "mask"], num_shards=3, shard_id=s, shuffle=False,
                            padded_sample=padded, num_padded=2) for s in range(3)]  # fmt: skip
    got = [[int(r[0]) for r in _rows(p)] for p in parts]
    assert sorted(sum(got, [])) == [-1, -1] + list(range(7)) and [len(g) for g in got] == [3, 3, 3]
    with pytest.raises(RuntimeError, match=r"\(7\) and 'num_padded' \(1\) must divide among the 'num_shards' \(3\)"):
        ds.MindDataset(path, columns_list=["label"], num_shards=3, shard_id=0, padded_sample={"label": 0}, num_padded=1)
    capped = ds.MindDataset(path, shuffle=False, num_samples=4)
    assert capped.get_dataset_size() == 4 and _labels(capped) == [0, 1, 2, 3]


def test_shuffle_levels_and_seeded_determinism(tmp_path):
    base = tmp_path / "r.mindrecord"
    _write(base, [_row(k) for k in range(12)], shard_num=3)
    path = f"{base}0"
    ordered = _labels(ds.MindDataset(path, shuffle=False))

    def epochs(shuffle):
        ds.config.set_seed(3)
        data = ds.MindDataset(path, shuffle=shuffle)
        return _labels(data), _labels(data)

    first = epochs(None)  # MindDataset shuffles globally by default
    assert first == epochs(ds.Shuffle.GLOBAL) == epochs(True)
    assert first[0] != first[1] and sorted(first[0]) == sorted(ordered) and first[0] != ordered
    files = epochs(ds.Shuffle.FILES)[0]
    assert sorted(files[k : k + 4] for k in range(0, 12, 4)) == sorted(ordered[k : k + 4] for k in range(0, 12, 4))
    infile = epochs(ds.Shuffle.INFILE)[0]
    assert [sorted(infile[k : k + 4]) for k in range(0, 12, 4)] == [sorted(ordered[k : k + 4]) for k in range(0, 12, 4)]
    with pytest.raises(ValueError, match="'num_samples' cannot be given together"):
        ds.MindDataset(path, shuffle=ds.Shuffle.FILES, num_samples=2)


def test_threads_keep_the_order_and_model_trains_on_a_mind_dataset(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"feature": rng.standard_normal(4).astype(np.float32), "label": int(k % 2)} for k in range(16)]
    schema = {"feature": {"type": "float32", "shape": [4]}, "label": {"type": "int32"}}
    path = _write(tmp_path / "t.mindrecord", rows, schema=schema)
    assert _labels(ds.MindDataset(path, shuffle=False, num_parallel_workers=3)) == _labels(
        ds.MindDataset(path, shuffle=False)
    )
    ds.config.set_seed(1)
    data = ds.MindDataset(path, columns_list=["feature", "label"]).batch(4, drop_remainder=True)
    net = nn.Dense(4, 2)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9), metrics={"acc"})
    before = net.weight.asnumpy().copy()
    model.train(2, data)
    assert not np.allclose(before, net.weight.asnumpy())
    assert 0.0 <= model.eval(data)["acc"] <= 1.0
    feature, label = _rows(data)[0]
    assert feature.shape == (4, 4) and feature.dtype == np.float32 and label.dtype == np.int32


# ---------------------------------------------------------------------------------------------
# Errors


def test_writer_argument_schema_and_row_errors(tmp_path):
    with pytest.raises(ValueError, match="'shard_num' must be in \\[1, 1000\\]"):
        FileWriter(str(tmp_path / "x"), shard_num=0)
    with pytest.raises(ValueError, match="file name"):
        FileWriter(str(tmp_path / "a:b"))
    writer = FileWriter(str(tmp_path / "w.mindrecord"))
    with pytest.raises(ValueError, match="'add_schema'.*field name 'bad name'"):
        writer.add_schema({"bad name": {"type": "int32"}})
    with pytest.raises(ValueError, match="'add_schema'.*'x' has the type 'int8'"):
        writer.add_schema({"x": {"type": "int8"}})
    with pytest.raises(ValueError, match="'add_schema'.*array field 'x' has the type 'string'"):
        writer.add_schema({"x": {"type": "string", "shape": [2]}})
    with pytest.raises(ValueError, match="'add_schema'.*shape \\[-1, -1\\]"):
        writer.add_schema({"x": {"type": "int32", "shape": [-1, -1]}})
    with pytest.raises(RuntimeError, match="add the schema"):
        writer.write_raw_data([{"x": 1}])
    writer.add_schema({"label": {"type": "int32"}, "vec": {"type": "float32", "shape": [2]}})
    with pytest.raises(ValueError, match="'vec' cannot be indexed"):
        writer.add_index(["vec"])
    with pytest.raises(TypeError, match="'raw_data' must be a list"):
        writer.write_raw_data({"label": 1})
    with pytest.warns(UserWarning) as caught:
        writer.write_raw_data([
            {"label": 1, "vec": np.ones(2, np.float32)},
            {"vec": np.ones(2, np.float32)},  # no label
            {"label": 1.5, "vec": np.ones(2, np.float32)},  # a float for an int32
            {"label": 2, "vec": np.ones(3, np.float32)},  # a shape that does not fit
            {"label": 1 << 40, "vec": np.ones(2, np.float32)},  # out of int32's range
        ])  # fmt: skip
    messages = [str(w.message) for w in caught]
    assert len(messages) == 4 and "row 1 is dropped: there is not 'label'" in messages[0]
    writer.commit()
    assert FileReader(str(tmp_path / "w.mindrecord")).len() == 1
    with pytest.raises(RuntimeError, match="committed"):
        writer.write_raw_data([{"label": 1, "vec": np.ones(2, np.float32)}])
    with pytest.raises(RuntimeError, match="already exists"):
        FileWriter(str(tmp_path / "w.mindrecord"))
    with pytest.raises(ValueError, match="'page_size' must be a multiple of 4"):
        FileWriter(str(tmp_path / "y"), overwrite=True).set_page_size(1000)
    small = FileWriter(str(tmp_path / "big.mindrecord"), overwrite=True)
    small.add_schema({"b": {"type": "bytes"}})
    small.set_page_size(1 << 15)
    with pytest.raises(RuntimeError, match="more than the page size 32768"):
        small.write_raw_data([{"b": bytes(40000)}])


def test_bad_files_raise_clear_errors(tmp_path):
    path = _write(tmp_path / "g.mindrecord", [_row(k) for k in range(3)])
    data = open(path, "rb").read()
    with pytest.raises(RuntimeError, match="'MindDataset'.*no.mindrecord' does not exist"):
        ds.MindDataset(str(tmp_path / "no.mindrecord"))
    (tmp_path / "junk.mindrecord").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{abc}")
    with pytest.raises(RuntimeError, match="junk.mindrecord' is not a MindRecord file: its header is not JSON"):
        ds.MindDataset(str(tmp_path / "junk.mindrecord"))
    (tmp_path / "tiny.mindrecord").write_bytes(b"\x01\x02")
    with pytest.raises(RuntimeError, match="tiny.mindrecord' has 2 bytes"):
        FileReader(str(tmp_path / "tiny.mindrecord"))
    os.rename(path + ".db", path + ".db.bak")
    with pytest.raises(RuntimeError, match="index file .*g.mindrecord.db' .* does not exist"):
        ds.MindDataset(path)
    os.rename(path + ".db.bak", path + ".db")
    renamed = str(tmp_path / "h.mindrecord")
    os.rename(path, renamed)
    os.rename(path + ".db", renamed + ".db")
    with pytest.raises(RuntimeError, match="h.mindrecord' is not one of its dataset's shards \\['g.mindrecord'\\]"):
        ds.MindDataset(renamed)
    with pytest.raises(RuntimeError, match="belongs to the file 'g.mindrecord', not 'h.mindrecord'"):
        ds.MindDataset([renamed])
    os.rename(renamed, path)
    os.rename(renamed + ".db", path + ".db")
    with open(path, "r+b") as f:
        f.truncate(len(data) - 10)
    with pytest.raises(RuntimeError, match="g.mindrecord' is truncated or does not match its index: row 2"):
        ds.MindDataset(path)
    corrupted = bytearray(data)
    blob_start = (1 << 24) + sqlite3.connect(path + ".db").execute(
        "SELECT PAGE_OFFSET_BLOB FROM INDEXES WHERE ROW_ID = 1"
    ).fetchone()[0]
    corrupted[blob_start] ^= 0x40  # row 1's blob length
    open(path, "wb").write(bytes(corrupted))
    with pytest.raises(RuntimeError, match="g.mindrecord' is corrupted: row 1's blob entry"):
        _rows(ds.MindDataset(path, shuffle=False))


def test_dataset_argument_errors(tmp_path):
    path = _write(tmp_path / "a.mindrecord", [_row(k) for k in range(2)])
    with pytest.raises(ValueError, match="'columns_list' names \\['nope'\\]"):
        ds.MindDataset(path, columns_list=["nope"])
    with pytest.raises(TypeError, match="'shuffle'"):
        ds.MindDataset(path, shuffle="yes")
    with pytest.raises(RuntimeError, match="needs 'num_padded'"):
        ds.MindDataset(path, columns_list=["label"], padded_sample={"label": 0})
    with pytest.raises(RuntimeError, match="needs 'columns_list'"):
        ds.MindDataset(path, padded_sample={"label": 0}, num_padded=1)
    with pytest.raises(RuntimeError, match="'num_padded' is given but 'padded_sample' is not"):
        ds.MindDataset(path, num_padded=1)
    with pytest.raises(ValueError, match="no value for the columns \\['mask'\\]"):
        ds.MindDataset(path, columns_list=["label", "mask"], padded_sample={"label": 0}, num_padded=2)
    with pytest.raises(TypeError, match="'sampler' must be an iterable of row indices or a sampler"):
        ds.MindDataset(path, sampler=object())
    with pytest.raises(TypeError, match="'columns'"):
        FileReader(path, columns="label")
    with pytest.raises(ValueError, match="'num_consumer'"):
        FileReader(path, num_consumer=0)
    assert opforge.mindrecord.FileWriter is FileWriter


def test_mind_dataset_takes_mindspore_1x_dataset_file(tmp_path):
    """The zoo's older programs (predrnn++, res2net_deeplabv3) pass ``dataset_file=``, MindSpore 1.x's name."""
    path = _write(tmp_path / "old.mindrecord", [_row(k) for k in range(3)])
    new = _rows(ds.MindDataset(path, columns_list=["label"], shuffle=False))
    old = _rows(ds.MindDataset(dataset_file=path, columns_list=["label"], shuffle=False))
    assert [int(r[0]) for r in old] == [int(r[0]) for r in new] == [0, 1, 2]
    with pytest.raises(TypeError, match="'dataset_files' or its older name 'dataset_file', not both"):
        ds.MindDataset(path, dataset_file=path)
    with pytest.raises(TypeError, match="'dataset_files' .* is missing"):
        ds.MindDataset()
