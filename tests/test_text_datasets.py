"""MindSpore's TextFileDataset and CLUEDataset, Dataset.save (read back with MindDataset) and vision.MixUpBatch,
each against rows written or computed here."""

import json

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
from opforge.dataset import text, transforms, vision


@pytest.fixture(autouse=True)
def _no_seed():
    ds.config._state["seed"] = None
    yield
    ds.config._state["seed"] = None


def _rows(dataset, k=0):
    return [row[k].tolist() for row in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1)]


# -- TextFileDataset ---------------------------------------------------------------------------------


@pytest.fixture
def text_files(tmp_path):
    (tmp_path / "b.txt").write_bytes("b0\nb1 你好\n".encode())
    (tmp_path / "a.txt").write_bytes(b"a0\n\n\na1\r\na2")  # empty lines skipped; \r kept; no final newline
    return tmp_path


def test_text_file_dataset_rows_are_lines_in_sorted_file_order(text_files):
    data = ds.TextFileDataset([str(text_files / "b.txt"), str(text_files / "a.txt")], shuffle=False)
    assert data.get_col_names() == ["text"] and data.get_dataset_size() == 5
    first = next(data.create_tuple_iterator(output_numpy=True))[0]
    assert first.dtype.kind == "U" and first.shape == ()
    assert _rows(data) == ["a0", "a1\r", "a2", "b0", "b1 你好"]
    assert _rows(ds.TextFileDataset(str(text_files / "*.txt"), shuffle=False, num_samples=2)) == ["a0", "a1\r"]


def test_text_file_dataset_shuffle_and_shards(text_files):
    pattern = str(text_files / "*.txt")
    everything = ["a0", "a1\r", "a2", "b0", "b1 你好"]
    ds.config.set_seed(3)
    shuffled = ds.TextFileDataset(pattern)
    epochs = [_rows(shuffled) for _ in range(3)]
    assert all(sorted(e) == sorted(everything) for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # a new order each epoch
    by_files = _rows(ds.TextFileDataset(pattern, shuffle=ds.Shuffle.FILES))
    assert by_files in (everything, everything[3:] + everything[:3])  # the files' rows stay in order
    shards = [_rows(ds.TextFileDataset(pattern, shuffle=False, num_shards=2, shard_id=k)) for k in range(2)]
    assert shards == [["a0", "a2", "b1 你好"], ["a1\r", "b0", "a0"]]  # every 2nd row, wrapped to one size
    with pytest.raises(ValueError, match="Shuffle"):
        ds.TextFileDataset(pattern, shuffle=ds.Shuffle.INFILE)
    with pytest.raises(ValueError, match="does not exist"):
        ds.TextFileDataset(str(text_files / "missing.txt"))
    (text_files / "empty.txt").write_bytes(b"\n\n")
    with pytest.raises(RuntimeError, match="no rows"):
        ds.TextFileDataset(str(text_files / "empty.txt"))


def test_text_file_dataset_tokenized_and_looked_up(text_files):
    data = ds.TextFileDataset(str(text_files / "b.txt"), shuffle=False)
    data = data.map([text.UnicodeCharTokenizer(), text.Lookup(text.Vocab.from_list(list("b01 你好")))])
    assert _rows(data) == [[0, 1], [0, 2, 3, 4, 5]]


# -- CLUEDataset -------------------------------------------------------------------------------------


def _jsonl(path, records):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n\n", encoding="utf-8")
    return str(path)


def test_clue_afqmc_and_tnews_columns(tmp_path):
    afqmc = _jsonl(tmp_path / "afqmc.json", [
        {"sentence1": "花呗怎么还", "sentence2": "花呗如何还款", "label": "1"},
        {"sentence1": "借呗额度", "sentence2": "花呗", "label": "0", "extra": 5},
    ])  # fmt: skip
    data = ds.CLUEDataset(afqmc, task="AFQMC", usage="train", shuffle=False)
    assert data.get_col_names() == ["label", "sentence1", "sentence2"]  # sorted by name, as MindSpore
    rows = [[v.tolist() for v in row] for row in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert rows == [["1", "花呗怎么还", "花呗如何还款"], ["0", "借呗额度", "花呗"]]
    tnews = _jsonl(tmp_path / "tnews_test.json", [{"id": 0, "sentence": "新闻", "keywords": "a,b"}])
    test = ds.CLUEDataset(tnews, task="TNEWS", usage="test", shuffle=False)
    assert test.get_col_names() == ["id", "keywords", "sentence"]
    row = next(test.create_tuple_iterator(output_numpy=True))
    assert row[0].dtype == np.uint32 and row[0].item() == 0 and row[2].item() == "新闻"
    train = ds.CLUEDataset(tnews, task="TNEWS", usage="train", shuffle=False)
    assert train.get_col_names() == ["keywords", "label", "label_desc", "sentence"]
    with pytest.raises(RuntimeError, match="failed to find key: label"):
        next(train.create_tuple_iterator())


def test_clue_wsc_nested_keys_and_value_types(tmp_path):
    wsc = _jsonl(tmp_path / "wsc.json", [{
        "target": {"span2_index": 37, "span1_index": 5, "span1_text": "床", "span2_text": "它"},
        "idx": 0, "label": "false", "text": "帮我把床搬走,它太旧了",
    }])  # fmt: skip
    data = ds.CLUEDataset(wsc, task="WSC", usage="eval", shuffle=False)
    assert data.get_col_names() == ["idx", "label", "span1_index", "span1_text", "span2_index", "span2_text", "text"]
    row = next(data.create_tuple_iterator(output_numpy=True))
    assert [v.item() for v in row] == [0, "false", 5, "床", 37, "它", "帮我把床搬走,它太旧了"]
    assert row[2].dtype == np.uint32
    csl = _jsonl(tmp_path / "csl.json", [{"id": -3, "abst": "摘要", "keyword": ["深度", "学习"], "label": 0.5}])
    row = next(ds.CLUEDataset(csl, task="CSL", shuffle=False).create_tuple_iterator(output_numpy=True))
    abst, id_, keyword, label = row
    assert id_.dtype == np.int32 and id_.item() == -3
    assert keyword.dtype.kind == "U" and keyword.tolist() == ["深度", "学习"]
    assert label.dtype == np.float32 and label.item() == 0.5
    (tmp_path / "bad.json").write_text('{"sentence1": "x"\n')
    with pytest.raises(RuntimeError, match="failed to parse json"):
        next(ds.CLUEDataset(str(tmp_path / "bad.json")).create_tuple_iterator())
    with pytest.raises(ValueError, match="task should be"):
        ds.CLUEDataset(wsc, task="SQUAD")
    with pytest.raises(ValueError, match="usage should be"):
        ds.CLUEDataset(wsc, task="WSC", usage="dev")


def test_clue_tnews_bert_preprocessing(tmp_path):
    """The zoo's TNEWS steps: label_desc looked up in the label vocab, the sentence BERT-tokenized to ids."""
    tnews = _jsonl(tmp_path / "train.json", [
        {"label": "102", "label_desc": "news_entertainment", "sentence": "明星", "keywords": ""},
        {"label": "110", "label_desc": "news_military", "sentence": "军事新闻", "keywords": "军"},
    ])  # fmt: skip
    data = ds.CLUEDataset(tnews, task="TNEWS", usage="train", shuffle=False)
    labels = text.Vocab.from_list(["news_military", "news_entertainment"])
    data = data.map(text.Lookup(labels), input_columns="label_desc", output_columns="label_id")
    vocab = text.Vocab.from_list(["[PAD]", "[UNK]", "明", "星", "军", "事", "新", "闻"])
    data = data.map(text.BertTokenizer(vocab, lower_case=True), input_columns=["sentence"])
    data = data.map(text.Lookup(vocab, unknown_token="[UNK]"), input_columns=["sentence"], output_columns=["ids"])
    data = data.project(["ids", "label_id"])
    rows = [[v.tolist() for v in row] for row in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert rows == [[[2, 3], 1], [[4, 5, 6, 7], 0]]


def test_clue_cmnli_sentence_pair_preprocessing(tmp_path):
    """The zoo's CMNLI steps: both sentences tokenized, the pair truncated, [CLS]/[SEP] added, segment ids from
    two filled columns joined by Concatenate (MindSpore's Concatenate joins all its input columns)."""
    cmnli = _jsonl(tmp_path / "dev.json", [{"sentence1": "他去了北京。", "sentence2": "他在北京", "label": "neutral"}])
    data = ds.CLUEDataset(cmnli, task="CMNLI", usage="eval", shuffle=False)
    data = data.map(text.Lookup(text.Vocab.from_list(["neutral", "entailment"])), "label", "label_id")
    vocab = text.Vocab.from_list(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "他", "去", "了", "北", "京", "。", "在"])
    for column in ("sentence1", "sentence2"):
        data = data.map(text.BertTokenizer(vocab), input_columns=[column])
    data = data.map(text.TruncateSequencePair(7), input_columns=["sentence1", "sentence2"])
    data = data.map(transforms.Concatenate(prepend=np.array(["[CLS]"]), append=np.array(["[SEP]"])), "sentence1")
    data = data.map(transforms.Concatenate(append=np.array(["[SEP]"])), input_columns=["sentence2"])
    data = data.map(transforms.Duplicate(), "sentence1", ["sentence1", "type1"])
    data = data.map(transforms.Duplicate(), "sentence2", ["sentence2", "type2"])
    data = data.map([text.Lookup(vocab), transforms.Fill(0)], input_columns=["type1"])
    data = data.map([text.Lookup(vocab), transforms.Fill(1)], input_columns=["type2"])
    data = data.map(transforms.Concatenate(), input_columns=["type1", "type2"], output_columns=["segment_ids"])
    data = data.map(transforms.Concatenate(), input_columns=["sentence1", "sentence2"], output_columns=["text_ids"])
    data = data.map(text.Lookup(vocab), input_columns=["text_ids"]).project(["text_ids", "segment_ids", "label_id"])
    row = [v.tolist() for v in next(data.create_tuple_iterator(output_numpy=True))]
    # the pair (6 + 4 tokens) truncated to 7: the longer first sentence loses 2, then the second 1
    assert row == [[2, 4, 5, 6, 7, 3, 4, 10, 7, 3], [0, 0, 0, 0, 0, 0, 1, 1, 1, 1], 0]


# -- Dataset.save ------------------------------------------------------------------------------------


def _mixed_rows():
    rng = np.random.default_rng(0)
    for i in range(5):
        yield (
            np.int8(i - 2),
            np.uint32(4_000_000_000 + i),
            rng.random(i + 1).astype(np.float16),  # 1-D, its length changes
            rng.random((i + 1, 2)),  # float64, the first dim changes
            np.array(f"row {i} 行"),
            np.bool_(i % 2),
            np.arange(6, dtype=np.uint8).reshape(2, 3) + i,
        )


_NAMES = ["small", "big", "half", "pairs", "name", "flag", "img.data"]


def test_save_writes_mindrecord_with_mindspore_types(tmp_path):
    data = ds.GeneratorDataset(_mixed_rows, column_names=_NAMES, shuffle=False)
    path = str(tmp_path / "saved.mindrecord")
    data.save(path)
    back = ds.MindDataset(path, shuffle=False)
    assert back.get_col_names() == sorted(["small", "big", "half", "pairs", "name", "flag", "img_data"])
    got = [dict(zip(back.get_col_names(), row)) for row in back.create_tuple_iterator(output_numpy=True)]
    assert len(got) == 5
    for row, source in zip(got, _mixed_rows()):
        small, big, half, pairs, name, flag, img = source
        assert row["small"].dtype == np.int32 and row["small"].item() == small
        assert row["big"].dtype == np.int64 and row["big"].item() == big
        assert row["half"].dtype == np.float32 and np.array_equal(row["half"], half.astype(np.float32))
        assert row["pairs"].dtype == np.float64 and np.array_equal(row["pairs"], pairs)
        assert row["name"].item() == str(name)
        assert row["flag"].dtype == np.int32 and row["flag"].item() == int(flag)
        assert row["img_data"].dtype == np.int32 and np.array_equal(row["img_data"], img)
    with pytest.raises(RuntimeError, match="already exists"):
        data.save(path)


def test_save_into_several_files_and_the_errors(tmp_path):
    data = ds.NumpySlicesDataset({"id": np.arange(7, dtype=np.int64), "x": np.ones((7, 3), np.float32)}, shuffle=False)
    data.save(str(tmp_path / "parts"), num_files=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "parts0", "parts0.db", "parts1", "parts1.db", "parts2", "parts2.db",
    ]  # fmt: skip
    back = ds.MindDataset(str(tmp_path / "parts1"), shuffle=False)
    assert sorted(_rows(back, back.get_col_names().index("id"))) == list(range(7))
    with pytest.raises(ValueError, match="num_files should between"):
        data.save(str(tmp_path / "n"), num_files=0)
    with pytest.raises(ValueError, match="tfrecord dataset format is not supported"):
        data.save(str(tmp_path / "t"), file_type="tfrecord")
    with pytest.raises(RuntimeError, match="must not be a directory"):
        data.save(str(tmp_path))
    words = ds.NumpySlicesDataset({"w": np.array([["a", "b"]])}, shuffle=False)
    with pytest.raises(RuntimeError, match="multi-dimensional string"):
        words.save(str(tmp_path / "w"))

    def ragged():
        yield (np.zeros((2, 3), np.float32),)
        yield (np.zeros((2, 4), np.float32),)

    with pytest.raises(RuntimeError, match="dynamic shape do not currently support saving"):
        ds.GeneratorDataset(ragged, ["v"], shuffle=False).save(str(tmp_path / "r"))
    with pytest.raises(RuntimeError, match="unsupported data type: complex64"):
        ds.NumpySlicesDataset({"c": np.ones(2, np.complex64)}, shuffle=False).save(str(tmp_path / "c"))


def test_save_a_tokenized_pipeline_round_trips(tmp_path):
    vocab = text.Vocab.from_list(["[PAD]", "[UNK]", "a", "b", "c"])
    data = ds.NumpySlicesDataset({"text": np.array(["a b", "c a b z"])}, shuffle=False)
    data = data.map([text.WhitespaceTokenizer(), text.Lookup(vocab, "[UNK]")], input_columns="text")
    data = data.map(transforms.PadEnd([6], 0), input_columns="text").rename("text", "input_ids")
    data.save(str(tmp_path / "ids.mindrecord"))
    back = ds.MindDataset(str(tmp_path / "ids.mindrecord"), shuffle=False)
    assert _rows(back) == [[2, 3, 0, 0, 0, 0], [4, 2, 3, 1, 0, 0]]


# -- MixUpBatch -------------------------------------------------------------------------------------


def _batches(images, labels, batch):
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
    data = data.map(transforms.OneHot(4), input_columns="label").batch(batch)
    return data.map(vision.MixUpBatch(alpha=0.4), input_columns=["image", "label"])


def test_mix_up_batch_matches_the_seeded_draws():
    rng = np.random.default_rng(1)
    images = rng.random((8, 5, 5, 3)).astype(np.float32)
    labels = np.array([0, 1, 2, 3, 3, 2, 1, 0], np.int32)
    ds.config.set_seed(11)
    out = [(img, lab) for img, lab in _batches(images, labels, 4).create_tuple_iterator(output_numpy=True)]
    draws = np.random.default_rng(11)  # the dataset seed's stream: two Gamma(alpha) draws, then a permutation
    onehot = np.eye(4, dtype=np.float32)[labels]
    for b, (img, lab) in enumerate(out):
        x1, x2 = np.float32(draws.gamma(0.4)), np.float32(draws.gamma(0.4))
        lam = np.float32(x1 / (x1 + x2))
        perm = draws.permutation(4)
        src, hot = images[4 * b : 4 * b + 4], onehot[4 * b : 4 * b + 4]
        assert img.dtype == np.float32 and lab.dtype == np.float32
        np.testing.assert_allclose(img, lam * src + (1 - lam) * src[perm], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(lab, lam * hot + (1 - lam) * hot[perm], rtol=1e-6, atol=1e-7)


def test_mix_up_batch_is_a_convex_combination_of_a_permutation():
    """Without the seed: the labels tell each row's weight and partner; the images must agree."""
    images = np.random.default_rng(2).random((4, 3, 2, 2)).astype(np.float64)  # CHW
    labels = np.eye(4, dtype=np.int64)  # one class per row: the mixed label shows the partner
    mixed, mixed_labels = vision.MixUpBatch(1.0)(images, labels)
    lam = None
    partners = []
    for i in range(4):
        row = mixed_labels[i]
        weight = row[i] if row[i] < 1 else 1.0
        others = [c for c in range(4) if c != i and row[c] > 0]
        partners.append(others[0] if others else i)
        if others:
            assert lam is None or abs(lam - weight) < 1e-6
            lam = weight
            assert abs(row[i] + row[others[0]] - 1) < 1e-6
    assert sorted(partners) == [0, 1, 2, 3]  # a permutation
    lam = 1.0 if lam is None else lam
    expected = np.stack([lam * images[i] + (1 - lam) * images[partners[i]] for i in range(4)])
    np.testing.assert_allclose(mixed, expected, rtol=1e-6)


def test_mix_up_batch_integer_images_round_and_the_vit_pipeline():
    ds.config.set_seed(5)
    images = np.random.default_rng(3).integers(0, 256, (4, 2, 2, 3), dtype=np.uint8)
    labels = np.eye(3, dtype=np.int32)[[0, 1, 2, 0]]
    mixed, _ = vision.MixUpBatch(2.0)(images, labels)
    draws = np.random.default_rng(5)
    x1, x2 = np.float32(draws.gamma(2.0)), np.float32(draws.gamma(2.0))
    lam = np.float32(x1 / (x1 + x2))
    perm = draws.permutation(4)
    exact = images * np.float64(lam) + images[perm] * np.float64(np.float32(1) - lam)
    assert mixed.dtype == np.uint8 and np.array_equal(mixed, np.rint(exact).astype(np.uint8))
    # the zoo's ViT: TypeCast(int32), OneHot (integer one-hot, as MindSpore's), batch, MixUpBatch
    data = ds.NumpySlicesDataset({"image": images.astype(np.float32), "label": np.array([0, 1, 2, 1])}, shuffle=False)
    data = data.map(transforms.TypeCast(opforge.int32), input_columns="label")
    data = data.map(transforms.OneHot(3), input_columns=["label"]).batch(2, drop_remainder=True)
    data = data.map(vision.MixUpBatch(alpha=0.2), input_columns=["image", "label"])
    for image, label in data.create_tuple_iterator(output_numpy=True):
        assert image.shape == (2, 2, 2, 3) and label.shape == (2, 3)
        np.testing.assert_allclose(label.sum(axis=1), 1.0, rtol=1e-6)


def test_mix_up_batch_errors():
    images = np.zeros((2, 4, 4, 3), np.float32)
    with pytest.raises(RuntimeError, match="wrong labels type"):
        vision.MixUpBatch()(images, np.eye(2, dtype=np.float32))
    with pytest.raises(RuntimeError, match="wrong labels shape"):
        vision.MixUpBatch()(images, np.array([0, 1]))
    with pytest.raises(RuntimeError, match="batched before calling MixUpBatch"):
        vision.MixUpBatch()(images[0], np.eye(2, dtype=np.int32))
    with pytest.raises(RuntimeError, match="HWC or CHW"):
        vision.MixUpBatch()(np.zeros((2, 4, 4, 5)), np.eye(2, dtype=np.int32))
    with pytest.raises(RuntimeError, match="lack of images or labels"):
        vision.MixUpBatch()(images)
    with pytest.raises(ValueError, match="alpha"):
        vision.MixUpBatch(0.0)
    with pytest.raises(TypeError, match="alpha"):
        vision.MixUpBatch("1")
    # before batch: the map's RuntimeError names MixUpBatch and chains MindSpore's
    data = ds.NumpySlicesDataset({"image": images, "label": np.array([0, 1])}, shuffle=False)
    data = data.map(transforms.OneHot(2), input_columns="label")
    data = data.map(vision.MixUpBatch(), input_columns=["image", "label"])
    with pytest.raises(RuntimeError, match="MixUpBatch") as info:
        next(data.create_tuple_iterator())
    assert "batched before calling MixUpBatch" in str(info.value.__cause__)
