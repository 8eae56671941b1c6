"""opforge.dataset.TFRecordDataset and ds.Schema as MindSpore's, on TFRecord files written here by an
independent encoder (the record framing with a bit-by-bit CRC-32C, and the tf.train.Example protobuf
wire format, packed and unpacked): values, dtypes, shapes, schemas, columns_list, files, compression,
sharding, shuffling, and the errors of bad arguments and corrupted files. With TensorFlow importable,
files are also cross-checked against tf.io."""

import json

import numpy as np
import pytest
from tfrecord_encoder import crc32c_bits, example, masked, record, write

import opforge
import opforge.dataset as ds
from opforge import nn
from opforge.dataset.crc32c import crc32c, masked_crc32c
from opforge.train import Model


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def _rows(dataset, **kwargs):
    return list(dataset.create_tuple_iterator(output_numpy=True, **kwargs))


# ---------------------------------------------------------------------------------------------
# Examples for the independent writer (tests/tfrecord_encoder.py)


def _examples(n, start=0, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(start, start + n):
        out.append({
            "id": ("int64", [k]),
            "ints": ("int64", [k, -k - 1, -(1 << 40) - k, (1 << 62) + k]),
            "floats": ("float", list(rng.standard_normal(6).astype(np.float32))),
            "image": ("bytes", [rng.integers(0, 256, 6, dtype=np.uint8).tobytes()]),
            "text": ("bytes", [f"row {k} é".encode()]),
        })  # fmt: skip
    return out


def _ids(dataset):
    return [int(r[dataset.get_col_names().index("id")].reshape(-1)[0]) for r in _rows(dataset)]


# ---------------------------------------------------------------------------------------------
# CRC-32C


def test_crc32c_known_values_and_long_inputs_match_the_bitwise_reference():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA and crc32c(b"\xff" * 32) == 0x62A8AB43  # RFC 3720's vectors
    assert crc32c(bytes(range(32))) == 0x46DD794E
    rng = np.random.default_rng(0)
    for n in (0, 1, 511, 512, 513, 3000, 9001):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert crc32c(data) == crc32c_bits(data), n
        assert crc32c(np.frombuffer(data, np.uint8)) == crc32c(bytearray(data))
    assert masked_crc32c(b"abc") == masked(b"abc")


# ---------------------------------------------------------------------------------------------
# Rows without and with a schema


@pytest.mark.parametrize("packed", [True, False])
def test_rows_without_a_schema_take_the_first_records_features(tmp_path, packed):
    examples = _examples(4)
    data = ds.TFRecordDataset(str(write(tmp_path / "a.tfrecord", examples, packed)), shuffle=False)
    assert data.get_col_names() == ["floats", "id", "image", "ints", "text"]  # sorted by name
    assert data.get_dataset_size() == 4
    rows = _rows(data)
    for row, want in zip(rows, examples):
        floats, ident, image, ints, text = row
        assert floats.dtype == np.float32 and floats.shape == (6,)
        np.testing.assert_array_equal(floats, np.asarray(want["floats"][1], np.float32))
        assert ident.dtype == np.int64 and ident.shape == (1,) and ident[0] == want["id"][1][0]
        assert ints.tolist() == want["ints"][1]  # negatives and 2**62 survive the varints
        assert image.dtype == np.uint8 and image.tobytes() == want["image"][1][0]
        assert text.tobytes() == want["text"][1][0]


def test_schema_types_and_shapes(tmp_path):
    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 256, (3, 2, 3), dtype=np.uint8)
    examples = [{
        "image": ("bytes", [pixels[k].tobytes()]),
        "label": ("int64", [k - 1]),
        "big": ("int64", [1 << 40, -5]),
        "weights": ("float", [0.5 * k, 1.5, -2.0, 3.25]),
        "name": ("bytes", [f"name-{k}".encode()]),
        "tags": ("bytes", [b"a", b"bcd"]),
    } for k in range(3)]  # fmt: skip
    path = write(tmp_path / "s.tfrecord", examples)
    schema = ds.Schema()
    schema.add_column("image", de_type=opforge.uint8, shape=[2, 3])
    schema.add_column("label", de_type=opforge.int32, shape=[])  # rank 0: a scalar
    schema.add_column("big", de_type="int64")
    schema.add_column("weights", de_type=opforge.float64, shape=[2, -1])
    schema.add_column("name", de_type="string", shape=[])
    schema.add_column("tags", de_type="string")
    rows = _rows(ds.TFRecordDataset(str(path), schema=schema, shuffle=False))
    for k, (image, label, big, weights, name, tags) in enumerate(rows):
        assert image.dtype == np.uint8 and image.shape == (2, 3)
        np.testing.assert_array_equal(image, pixels[k])
        assert label.dtype == np.int32 and label.shape == () and int(label) == k - 1
        assert big.dtype == np.int64 and big.tolist() == [1 << 40, -5]
        assert weights.dtype == np.float64 and weights.shape == (2, 2)
        np.testing.assert_array_equal(weights.reshape(-1), [0.5 * k, 1.5, -2.0, 3.25])
        assert name.shape == () and str(name) == f"name-{k}"
        assert tags.tolist() == ["a", "bcd"]


def test_several_byte_strings_read_as_zero_padded_rows(tmp_path):
    path = write(tmp_path / "b.tfrecord", [{"v": ("bytes", [b"\x01\x02\x03", b"\x04"])}])
    (value,) = _rows(ds.TFRecordDataset(str(path), shuffle=False))[0]
    assert value.tolist() == [[1, 2, 3], [4, 0, 0]]


def test_schema_file_num_rows_and_columns_list(tmp_path):
    path = write(tmp_path / "c.tfrecord", _examples(5))
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps({
        "datasetType": "TF", "numRows": 3,
        "columns": {"id": {"type": "int64", "rank": 1, "shape": [1]}, "ints": {"type": "int64", "rank": 1},
                    "text": {"type": "string", "rank": 1}},
    }))  # fmt: skip
    data = ds.TFRecordDataset(str(path), schema=str(schema_file), shuffle=False)
    assert data.get_col_names() == ["id", "ints", "text"] and data.get_dataset_size() == 3  # numRows caps
    assert [r[2].tolist() for r in _rows(data)] == [[f"row {k} é"] for k in range(3)]
    picked = ds.TFRecordDataset(str(path), schema=str(schema_file), columns_list=["text", "id"], num_samples=4,
                                shuffle=False)  # fmt: skip
    assert picked.get_col_names() == ["text", "id"] and picked.get_dataset_size() == 4
    plain = ds.TFRecordDataset(str(path), columns_list=["id"], shuffle=False)
    assert plain.get_col_names() == ["id"] and [int(r[0][0]) for r in _rows(plain)] == list(range(5))


def test_schema_object_api():
    schema = ds.Schema()
    schema.add_column("image", de_type=opforge.uint8, shape=[2, 2])
    schema.add_column("label", de_type="int32")
    schema.parse_columns([{"name": "mask", "type": "bool", "shape": [4]}])
    schema.parse_columns({"score": {"type": "float32", "shape": [1]}})
    text = schema.to_json()
    assert json.loads(text)["columns"][0] == {"name": "image", "type": "uint8", "rank": 2, "shape": [2, 2]}
    again = ds.Schema()
    again.from_json(json.loads(text))
    assert again.to_json() == text == str(schema)
    assert again.column_names() == ["image", "label", "mask", "score"]
    with pytest.raises(ValueError, match="column type"):
        schema.add_column("x", de_type="complex64")
    with pytest.raises(RuntimeError, match="columns are missing"):
        ds.Schema().from_json({"numRows": 2})
    with pytest.raises(RuntimeError, match="unknown field 'rows'"):
        ds.Schema().from_json({"rows": 2, "columns": {"a": {"type": "int64"}}})
    with pytest.raises(RuntimeError, match="has no 'type'"):
        ds.Schema().parse_columns([{"name": "a"}])
    with pytest.raises(RuntimeError, match="cannot be loaded"):
        ds.Schema("/no/such/schema.json")


def test_files_are_read_in_sorted_order_from_lists_and_globs(tmp_path):
    write(tmp_path / "part-1.tfrecord", _examples(2, start=10))
    write(tmp_path / "part-0.tfrecord", _examples(3, start=0))
    by_glob = ds.TFRecordDataset(str(tmp_path / "part-*.tfrecord"), shuffle=False)
    by_list = ds.TFRecordDataset([str(tmp_path / "part-1.tfrecord"), str(tmp_path / "part-0.tfrecord")], shuffle=False)
    assert _ids(by_glob) == _ids(by_list) == [0, 1, 2, 10, 11]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_files(tmp_path, compression):
    path = write(tmp_path / "z.tfrecord", _examples(3), compress=compression)
    data = ds.TFRecordDataset(str(path), compression_type=compression, shuffle=False)
    assert _ids(data) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="z.tfrecord"):
        ds.TFRecordDataset(str(path), shuffle=False)  # read as plain records: the length CRC fails
    other = "ZLIB" if compression == "GZIP" else "GZIP"
    with pytest.raises(RuntimeError, match=f"cannot be decompressed as {other}"):
        ds.TFRecordDataset(str(path), compression_type=other)


# ---------------------------------------------------------------------------------------------
# Shards and shuffles


@pytest.fixture
def four_files(tmp_path):
    for f in range(4):
        write(tmp_path / f"f{f}.tfrecord", _examples(3, start=10 * f, seed=f))
    return str(tmp_path / "f*.tfrecord")


def test_shards_by_files_and_by_equal_rows(four_files):
    every = [10 * f + k for f in range(4) for k in range(3)]
    by_files = [_ids(ds.TFRecordDataset(four_files, num_shards=2, shard_id=s, shuffle=False)) for s in range(2)]
    assert by_files == [[0, 1, 2, 20, 21, 22], [10, 11, 12, 30, 31, 32]]  # every 2nd file
    equal = [_ids(ds.TFRecordDataset(four_files, num_shards=5, shard_id=s, shuffle=False, shard_equal_rows=True))
             for s in range(5)]  # fmt: skip
    assert [len(e) for e in equal] == [3] * 5 and equal[1] == every[1::5]
    assert sorted(sum(equal, [])) == sorted(every + every[:3])  # 12 rows in 5 shards of 3: wrapped around
    with pytest.raises(ValueError, match="at least 'num_shards' \\(5\\) files"):
        ds.TFRecordDataset(four_files, num_shards=5, shard_id=0)
    capped = ds.TFRecordDataset(four_files, num_shards=2, shard_id=1, shuffle=False, num_samples=4)
    assert _ids(capped) == [10, 11, 12, 30]


def test_shuffle_levels_and_seeded_determinism(four_files):
    ordered = _ids(ds.TFRecordDataset(four_files, shuffle=False))

    def epochs(shuffle):
        ds.config.set_seed(7)
        data = ds.TFRecordDataset(four_files, shuffle=shuffle)
        return _ids(data), _ids(data)

    first, again = epochs(ds.Shuffle.GLOBAL), epochs(ds.Shuffle.GLOBAL)
    assert first == again and first[0] != first[1]  # reproducible, and a new order each epoch
    assert sorted(first[0]) == ordered and first[0] != ordered
    assert epochs(True) == first  # True is Shuffle.GLOBAL
    files_first, _ = epochs(ds.Shuffle.FILES)
    blocks = [files_first[k : k + 3] for k in range(0, 12, 3)]
    assert sorted(blocks) == [ordered[k : k + 3] for k in range(0, 12, 3)]  # whole files, rows in order
    shards = [_ids(ds.TFRecordDataset(four_files, num_shards=2, shard_id=s)) for s in range(2)]
    assert sorted(shards[0] + shards[1]) == ordered  # the ranks split one order: disjoint, complete
    with pytest.raises(ValueError, match="Shuffle.GLOBAL, Shuffle.FILES"):
        ds.TFRecordDataset(four_files, shuffle=ds.Shuffle.INFILE)


def test_worker_threads_keep_the_order_and_the_pipeline_trains(four_files):
    serial = _ids(ds.TFRecordDataset(four_files, shuffle=False))
    assert _ids(ds.TFRecordDataset(four_files, shuffle=False, num_parallel_workers=3)) == serial
    schema = ds.Schema()
    schema.add_column("floats", de_type=opforge.float32, shape=[6])
    schema.add_column("id", de_type=opforge.int32, shape=[])
    ds.config.set_seed(0)
    data = ds.TFRecordDataset(four_files, schema=schema).map(lambda y: np.int32(y % 2), input_columns="id")
    data = data.batch(4, drop_remainder=True)
    net = nn.Dense(6, 2)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9), metrics={"acc"})
    model.train(1, data)
    assert 0.0 <= model.eval(data)["acc"] <= 1.0


# ---------------------------------------------------------------------------------------------
# Errors


def test_corrupted_and_truncated_files_name_the_file_and_record(tmp_path):
    good = write(tmp_path / "good.tfrecord", _examples(3)).read_bytes()
    first = len(record(example(_examples(1)[0])))
    bad_data = bytearray(good)
    bad_data[first + 20] ^= 0xFF  # a byte of record 1's data
    (tmp_path / "bad_data.tfrecord").write_bytes(bytes(bad_data))
    data = ds.TFRecordDataset(str(tmp_path / "bad_data.tfrecord"), shuffle=False)
    with pytest.raises(RuntimeError, match=r"bad_data.tfrecord' is corrupted: the data of record 1 .*CRC"):
        _rows(data)
    bad_length = bytearray(good)
    bad_length[first + 1] ^= 0x01  # record 1's length
    (tmp_path / "bad_length.tfrecord").write_bytes(bytes(bad_length))
    with pytest.raises(RuntimeError, match=r"bad_length.tfrecord' is corrupted .*length of record 1 \(at byte"):
        ds.TFRecordDataset(str(tmp_path / "bad_length.tfrecord"))
    (tmp_path / "short.tfrecord").write_bytes(good[:-3])
    with pytest.raises(RuntimeError, match=r"short.tfrecord' is truncated: record 2"):
        ds.TFRecordDataset(str(tmp_path / "short.tfrecord"))
    (tmp_path / "text.tfrecord").write_bytes(b"this is not a TFRecord file at all")
    with pytest.raises(RuntimeError, match="text.tfrecord' is corrupted or not a TFRecord file"):
        ds.TFRecordDataset(str(tmp_path / "text.tfrecord"))
    (tmp_path / "empty.tfrecord").write_bytes(b"")
    with pytest.raises(RuntimeError, match="hold no records"):
        ds.TFRecordDataset(str(tmp_path / "empty.tfrecord"))
    (tmp_path / "junk.tfrecord").write_bytes(record(b"\x0a\xff\x01"))  # a field longer than its message
    with pytest.raises(RuntimeError, match="record 0 of the file .*junk.tfrecord' is not a tf.train.Example"):
        ds.TFRecordDataset(str(tmp_path / "junk.tfrecord"))


def test_records_that_do_not_fit_the_schema(tmp_path):
    path = str(write(tmp_path / "t.tfrecord", _examples(2)))

    def first_row(**columns):
        schema = ds.Schema()
        for name, (de_type, shape) in columns.items():
            schema.add_column(name, de_type=de_type, shape=shape)
        return _rows(ds.TFRecordDataset(path, schema=schema, shuffle=False))

    with pytest.raises(RuntimeError, match="record 0 of the file .*'floats' is a float_list.*int32"):
        first_row(floats=("int32", None))
    with pytest.raises(RuntimeError, match="has no feature 'missing'"):
        first_row(missing=("int64", None))
    with pytest.raises(RuntimeError, match="'ints' holds .* out of the range of the column's type int32"):
        first_row(ints=("int32", None))
    with pytest.raises(RuntimeError, match="'floats' has 6 values, which do not fit the schema's shape \\[4\\]"):
        first_row(floats=("float32", [4]))


def test_argument_errors(tmp_path):
    path = str(write(tmp_path / "e.tfrecord", _examples(2)))
    with pytest.raises(ValueError, match="'TFRecordDataset'.*does not exist"):
        ds.TFRecordDataset(str(tmp_path / "none-*.tfrecord"))
    with pytest.raises(TypeError, match="'dataset_files'"):
        ds.TFRecordDataset(3)
    with pytest.raises(ValueError, match="'compression_type'.*'GZIP'"):
        ds.TFRecordDataset(path, compression_type="LZ4")
    with pytest.raises(TypeError, match="'shuffle'"):
        ds.TFRecordDataset(path, shuffle="yes")
    with pytest.raises(TypeError, match="'schema'"):
        ds.TFRecordDataset(path, schema=3)
    with pytest.raises(ValueError, match="'columns_list' names \\['nope'\\]"):
        ds.TFRecordDataset(path, columns_list=["nope"])
    with pytest.raises(ValueError, match="'shard_id'"):
        ds.TFRecordDataset(path, num_shards=2, shard_id=2, shard_equal_rows=True)
    with pytest.raises(ValueError, match="'num_samples'"):
        ds.TFRecordDataset(path, num_samples=0)
    with pytest.raises(TypeError, match="Argument cache with value .* is not of type"):
        ds.TFRecordDataset(path, cache=object())


def test_tensorflow_reads_these_files_and_we_read_tensorflows():
    tf = pytest.importorskip("tensorflow")  # a cross-check only where TensorFlow happens to be installed
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        ours = f"{folder}/ours.tfrecord"
        with open(ours, "wb") as f:
            f.write(b"".join(record(example(e)) for e in _examples(2)))
        parsed = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(ours)]
        assert [e.features.feature["ints"].int64_list.value[2] for e in parsed] == [-(1 << 40), -(1 << 40) - 1]
        theirs = f"{folder}/theirs.tfrecord"
        with tf.io.TFRecordWriter(theirs) as writer:
            for k in range(3):
                feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=[k, 0.5])),
                           "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[-k]))}  # fmt: skip
                writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
        rows = _rows(ds.TFRecordDataset(theirs, shuffle=False))
        assert [r[1].tolist() for r in rows] == [[0], [-1], [-2]] and rows[2][0].tolist() == [2.0, 0.5]
