"""opforge.dataset.text as MindSpore's mindspore.dataset.text: the tokenizers (BERT's basic and wordpiece steps,
white space, characters, ICU patterns) against hand-worked examples, Vocab and Lookup, the string and
sequence transforms, and their use in a pipeline."""

import numpy as np
import pytest

import opforge
import opforge.dataset as ds
from opforge.dataset import text
from opforge.dataset.text import NormalizeForm


def _list(array):
    return np.asarray(array).tolist()


# -- BasicTokenizer -------------------------------------------------------------------------------


def test_basic_tokenizer_splits_punctuation_and_white_space():
    tok = text.BasicTokenizer()
    assert _list(tok(np.array("Hello, World!  How are you?"))) == ["Hello", ",", "World", "!", "How", "are", "you", "?"]
    # every ASCII symbol is split off ($ ^ ` ~ are not Unicode punctuation but are in BERT's ASCII ranges) ...
    assert _list(tok("a$b^c`d~e")) == ["a", "$", "b", "^", "c", "`", "d", "~", "e"]
    # ... Unicode punctuation (category P) too, but not other symbols (€ is Sc)
    assert _list(tok("«hi» 5€ x—y")) == ["«", "hi", "»", "5€", "x", "—", "y"]
    # no case change or accent stripping without lower_case; an empty text gives one empty token
    assert _list(tok("Héllo")) == ["Héllo"]
    assert _list(tok("")) == [""]
    assert tok("a b").dtype.kind == "U"


def test_basic_tokenizer_lower_case_strips_accents_and_folds():
    tok = text.BasicTokenizer(lower_case=True)
    assert _list(tok("Héllo WÖRLD Café naïve")) == ["hello", "world", "cafe", "naive"]
    assert _list(tok("Straße")) == ["strasse"]  # full case folding
    assert _list(tok("co\u00adop")) == ["coop"]  # the soft hyphen is default-ignorable: folded away


def test_basic_tokenizer_chinese_characters_are_tokens():
    tok = text.BasicTokenizer()
    assert _list(tok("我爱NLP和BERT")) == ["我", "爱", "NLP", "和", "BERT"]
    assert _list(tok("ab㐀cd")) == ["ab", "㐀", "cd"]  # CJK extension A (U+3400)
    assert _list(tok("かな")) == ["かな"]  # kana are not in BERT's CJK ranges


def test_basic_tokenizer_special_tokens_whitespace_and_control_characters():
    keep = text.BasicTokenizer(lower_case=True)
    assert _list(keep("[CLS] Hi [SEP] [unused12] [MASK]")) == ["[CLS]", "hi", "[SEP]", "[unused12]", "[MASK]"]
    split = text.BasicTokenizer(lower_case=True, preserve_unused_token=False)
    assert _list(split("[CLS] Hi")) == ["[", "cls", "]", "hi"]
    assert _list(text.BasicTokenizer(keep_whitespace=True)("a  b\tc")) == ["a", "  ", "b", " ", "c"]
    # control characters (Cc) and format characters (Cf) become spaces
    assert _list(text.BasicTokenizer()("a\x00b\u200bc")) == ["a", "b", "c"]
    nfkc = text.BasicTokenizer(normalization_form=NormalizeForm.NFKC)
    assert _list(nfkc("\ufb01ne ①")) == ["fine", "1"]


def test_basic_tokenizer_offsets_are_utf8_bytes():
    tokens, starts, limits = text.BasicTokenizer(with_offsets=True)("Hi, 你好")
    assert _list(tokens) == ["Hi", ",", "你", "好"]
    assert starts.dtype == np.uint32 and limits.dtype == np.uint32
    assert _list(starts) == [0, 2, 4, 7] and _list(limits) == [2, 3, 7, 10]


def test_basic_tokenizer_argument_and_input_errors():
    with pytest.raises(TypeError, match="lower_case"):
        text.BasicTokenizer(lower_case=1)
    with pytest.raises(TypeError, match="NormalizeForm"):
        text.BasicTokenizer(normalization_form="NFC")
    with pytest.raises(RuntimeError, match="scalar"):
        text.BasicTokenizer()(np.array(["a", "b"]))
    with pytest.raises(RuntimeError, match="string"):
        text.BasicTokenizer()(np.array(3))


# -- WordpieceTokenizer and BertTokenizer ---------------------------------------------------------


def _vocab(words):
    return text.Vocab.from_list(words)


def test_wordpiece_longest_match_first_and_continuations():
    vocab = _vocab(["[UNK]", "un", "##aff", "##able", "runn", "##ing", "a", "ab", "##c", "##bc"])
    tok = text.WordpieceTokenizer(vocab)
    assert _list(tok(np.array(["unaffable", "running"]))) == ["un", "##aff", "##able", "runn", "##ing"]
    # greedy: the longest prefix "ab" first, then "##c" (not "a" + "##bc")
    assert _list(tok(np.array("abc"))) == ["ab", "##c"]
    # a word with a part no piece matches is unknown as a whole
    assert _list(tok(np.array(["xyz", "abz"]))) == ["[UNK]", "[UNK]"]
    assert _list(text.WordpieceTokenizer(vocab, unknown_token="")(np.array(["xyz"]))) == ["xyz"]
    # max_bytes_per_token: a longer word is unknown
    assert _list(text.WordpieceTokenizer(vocab, max_bytes_per_token=5)(np.array(["unaffable", "runn"]))) == [
        "[UNK]",
        "runn",
    ]
    assert _list(text.WordpieceTokenizer(_vocab(["x", "@@y"]), suffix_indicator="@@")(np.array("xy"))) == ["x", "@@y"]


def test_wordpiece_offsets_within_each_word():
    vocab = _vocab(["你", "##好", "ab", "##cd"])
    tokens, starts, limits = text.WordpieceTokenizer(vocab, with_offsets=True)(np.array(["你好", "abcd", "q"]))
    assert _list(tokens) == ["你", "##好", "ab", "##cd", "[UNK]"]
    assert _list(starts) == [0, 3, 0, 2, 0] and _list(limits) == [3, 6, 2, 4, 1]
    with pytest.raises(RuntimeError, match="1D"):
        text.WordpieceTokenizer(vocab)(np.array([["a"]]))
    with pytest.raises(ValueError, match="max_bytes_per_token"):
        text.WordpieceTokenizer(vocab, max_bytes_per_token=-1)
    with pytest.raises(TypeError, match="Vocab"):
        text.WordpieceTokenizer(["a"])


def test_bert_tokenizer_is_basic_then_wordpiece():
    # Google BERT's own example: lower case, the accent stripped, punctuation split, then wordpieces
    vocab = _vocab(["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing", ","])
    tok = text.BertTokenizer(vocab, lower_case=True, with_offsets=True)
    tokens, starts, limits = tok(np.array("UNwant\u00e9d,running"))
    assert _list(tokens) == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert _list(starts) == [0, 2, 6, 8, 9, 13] and _list(limits) == [2, 6, 8, 9, 13, 16]
    plain = text.BertTokenizer(vocab)
    assert _list(plain("[CLS] unwanted running [SEP]")) == ["[CLS]", "un", "##want", "##ed", "runn", "##ing", "[SEP]"]
    assert _list(plain("Running")) == ["[UNK]"]  # no lower case: "Running" has no piece
    assert _list(plain("")) == [""]
    chinese = text.BertTokenizer(_vocab(["[UNK]", "床", "前", "明", "月", "光"]))
    assert _list(chinese("床前明月光")) == ["床", "前", "明", "月", "光"]
    with pytest.raises(ValueError, match="not provided"):
        text.BertTokenizer(None)


# -- the other tokenizers -------------------------------------------------------------------------


def test_whitespace_and_unicode_char_tokenizers():
    tokens, starts, limits = text.WhitespaceTokenizer(with_offsets=True)(np.array("  Welcome\tTo\u3000北京\n"))
    assert _list(tokens) == ["Welcome", "To", "北京"]
    assert _list(starts) == [2, 10, 15] and _list(limits) == [9, 12, 21]
    assert _list(text.WhitespaceTokenizer()("   ")) == [""]
    tokens, starts, limits = text.UnicodeCharTokenizer(True)("a北é")
    assert _list(tokens) == ["a", "北", "é"]
    assert _list(starts) == [0, 1, 4] and _list(limits) == [1, 4, 6]
    with pytest.raises(TypeError, match="with_offsets"):
        text.WhitespaceTokenizer(with_offsets="yes")


def test_regex_tokenizer_icu_patterns_and_kept_delimiters():
    tok = text.RegexTokenizer(r"\s+|\p{P}", keep_delim_pattern=r"\p{P}", with_offsets=True)
    tokens, starts, limits = tok("Hi, you。 ok")
    assert _list(tokens) == ["Hi", ",", "you", "。", "ok"]
    assert _list(starts) == [0, 2, 4, 7, 11] and _list(limits) == [2, 3, 7, 10, 13]
    assert _list(text.RegexTokenizer(r"[\x{4E00}-\x{9FFF}]")("ab中cd")) == ["ab", "cd"]
    assert _list(text.RegexTokenizer(r"[ |,]")("a,b c")) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="not a valid regular expression"):
        text.RegexTokenizer("(")


def test_python_tokenizer():
    tok = text.PythonTokenizer(lambda line: line.split("-"))
    assert _list(tok(np.array("a-b-c"))) == ["a", "b", "c"]
    assert _list(tok(np.array(b"x-y"))) == ["x", "y"]
    with pytest.raises(TypeError, match="NumPy array"):
        tok("a-b")
    with pytest.raises(TypeError, match="callable"):
        text.PythonTokenizer("split")


# -- Vocab and Lookup -----------------------------------------------------------------------------


def test_vocab_from_list_dict_and_ids():
    vocab = text.Vocab.from_list(["w1", "w2", "w3"], special_tokens=["<pad>", "<unk>"], special_first=True)
    assert vocab.vocab() == {"<pad>": 0, "<unk>": 1, "w1": 2, "w2": 3, "w3": 4}
    last = text.Vocab.from_list(["w1", "w2"], special_tokens=["<unk>"], special_first=False)
    assert last.vocab() == {"w1": 0, "w2": 1, "<unk>": 2}
    assert vocab.tokens_to_ids("w3") == 4 and vocab.tokens_to_ids(["w1", "nope"]) == [2, -1]
    assert vocab.tokens_to_ids(np.array(["w2"])) == 3
    assert vocab.ids_to_tokens(2) == "w1" and vocab.ids_to_tokens([0, 99]) == ["<pad>", ""]
    assert text.Vocab.from_dict({"home": 3, "behind": 2}).tokens_to_ids(["behind", "home"]) == [2, 3]
    with pytest.raises(ValueError, match="duplicate word: w1"):
        text.Vocab.from_list(["w1", "w1"])
    with pytest.raises(ValueError, match="special_tokens and word_list contain duplicate word"):
        text.Vocab.from_list(["w1"], special_tokens=["w1"])
    with pytest.raises(ValueError, match="word_id"):
        text.Vocab.from_dict({"a": -1})
    with pytest.raises(RuntimeError, match="has not built yet"):
        text.Vocab().vocab()


def test_vocab_from_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("apple,apple2\nbanana, 333\ncat,00\ndog\n")
    vocab = text.Vocab.from_file(str(path), ",", None, ["<pad>", "<unk>"], True)
    assert vocab.vocab() == {"<pad>": 0, "<unk>": 1, "apple": 2, "banana": 3, "cat": 4, "dog": 5}
    assert text.Vocab.from_file(str(path), ",", vocab_size=2).vocab() == {"apple": 0, "banana": 1}
    # no delimiter: the whole line; the specials after the words
    whole = text.Vocab.from_file(str(path), special_tokens=["<unk>"], special_first=False)
    assert whole.vocab() == {"apple,apple2": 0, "banana, 333": 1, "cat,00": 2, "dog": 3, "<unk>": 4}
    (tmp_path / "dup.txt").write_text("a\nb\na\n")
    with pytest.raises(RuntimeError, match="duplicate word:a"):
        text.Vocab.from_file(str(tmp_path / "dup.txt"))
    with pytest.raises(RuntimeError, match="fail to open"):
        text.Vocab.from_file(str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="vocab_size"):
        text.Vocab.from_file(str(path), vocab_size=0)


def test_vocab_from_dataset_orders_by_frequency_then_word():
    rows = np.array(["b a c", "a b", "a d", "e"])
    data = ds.NumpySlicesDataset({"text": rows}, shuffle=False).map(text.WhitespaceTokenizer(), input_columns="text")
    # counts: a 3, b 2, c 1, d 1, e 1 (ties by the word)
    vocab = text.Vocab.from_dataset(data, "text", special_tokens=["<pad>"], special_first=True)
    assert vocab.vocab() == {"<pad>": 0, "a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    assert text.Vocab.from_dataset(data, ["text"], top_k=2).vocab() == {"a": 0, "b": 1}
    assert text.Vocab.from_dataset(data, None, freq_range=(2, None)).vocab() == {"a": 0, "b": 1}
    assert text.Vocab.from_dataset(data, None, freq_range=(None, 1), top_k=2).vocab() == {"c": 0, "d": 1}
    with pytest.raises(RuntimeError, match="already in the dataset"):
        text.Vocab.from_dataset(data, special_tokens=["a"])
    with pytest.raises(RuntimeError, match="column doesn't exist"):
        text.Vocab.from_dataset(data, ["nope"])
    with pytest.raises(ValueError, match="frequency range"):
        text.Vocab.from_dataset(data, freq_range=(3, 1))


def test_lookup_ids_unknown_token_and_types():
    vocab = text.Vocab.from_list(["深", "圳", "欢", "迎", "您", "<unk>"])
    ids = text.Lookup(vocab)(np.array(["深", "圳", "欢", "迎", "您"]))
    assert ids.dtype == np.int32 and _list(ids) == [0, 1, 2, 3, 4]
    with_unknown = text.Lookup(vocab, unknown_token="<unk>", data_type=opforge.int64)
    out = with_unknown(np.array([["您", "好"], ["x", "深"]]))
    assert out.dtype == np.int64 and _list(out) == [[4, 5], [5, 0]]
    with pytest.raises(RuntimeError, match='"好" doesn\'t exist in vocab and no unknown token'):
        text.Lookup(vocab)(np.array(["好"]))
    with pytest.raises(RuntimeError, match="doesn't exist in vocab"):
        text.Lookup(vocab, unknown_token="[UNK]")
    with pytest.raises(TypeError, match="Vocab"):
        text.Lookup({"a": 0})
    with pytest.raises(RuntimeError, match="not string"):
        text.Lookup(vocab)(np.array([1, 2]))


# -- string transforms ------------------------------------------------------------------------------


def test_case_fold_normalize_and_regex_replace():
    folded = text.CaseFold()(np.array([["Straße", "ＡＢＣ"], ["ΣΑΣ", "İ"]]))
    assert folded.shape == (2, 2) and _list(folded) == [["strasse", "abc"], ["σασ", "i\u0307"]]
    assert _list(text.NormalizeUTF8()(np.array(["①", "ﬁ"]))) == ["1", "fi"]  # NFKC by default
    assert len(str(text.NormalizeUTF8(NormalizeForm.NFD)(np.array("é")))) == 2
    assert str(text.NormalizeUTF8(NormalizeForm.NFC)(np.array("e\u0301"))) == "é"
    assert str(text.NormalizeUTF8(NormalizeForm.NONE)(np.array("e\u0301"))) == "e\u0301"
    replace_all = text.RegexReplace("Canada", "China")
    assert str(replace_all(np.array("Canada, Canada"))) == "China, China"
    assert str(text.RegexReplace(r"(\d+)", "<$1>", replace_all=False)(np.array("a1 b22"))) == "a<1> b22"
    assert str(text.RegexReplace(r"\p{P}+", "")(np.array("a,b!!c"))) == "abc"
    with pytest.raises(TypeError, match="NormalizeForm"):
        text.NormalizeUTF8("NFC")


def test_to_number():
    assert _list(text.ToNumber(opforge.int8)(np.array(["1", "-2", " 3"]))) == [1, -2, 3]
    assert text.ToNumber(opforge.int32)(np.array("12ab")).item() == 12  # stoll reads the leading number
    floats = text.ToNumber(opforge.float32)(np.array([["1.5e3", "-.25"]]))
    assert floats.dtype == np.float32 and floats.shape == (1, 2) and _list(floats) == [[1500.0, -0.25]]
    assert text.ToNumber(opforge.float16)(np.array("0.1")).dtype == np.float16
    with pytest.raises(RuntimeError, match="out of bounds if cast to int8"):
        text.ToNumber(opforge.int8)(np.array("200"))
    with pytest.raises(RuntimeError, match="out of bounds if cast to uint8"):
        text.ToNumber(opforge.uint8)(np.array("-1"))
    with pytest.raises(RuntimeError, match="invalid to convert"):
        text.ToNumber(opforge.int64)(np.array("abc"))
    with pytest.raises(RuntimeError, match="out of bounds if cast to float32"):
        text.ToNumber(opforge.float32)(np.array("1e39"))
    with pytest.raises(TypeError, match="not numeric"):
        text.ToNumber(opforge.bool_)


# -- sequence transforms ----------------------------------------------------------------------------


def test_sliding_window_ngram_and_truncate_sequence_pair():
    assert _list(text.SlidingWindow(3, 0)(np.array([1, 2, 3, 4, 5]))) == [[1, 2, 3], [2, 3, 4], [3, 4, 5]]
    assert text.SlidingWindow(3)(np.array([1, 2])).shape == (0, 3)
    with pytest.raises(RuntimeError, match="1D"):
        text.SlidingWindow(2)(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="width"):
        text.SlidingWindow(0)
    words = np.array(["WildRose Country", "Canada's Ocean Playground", "Land of Living Skies"])
    assert _list(text.Ngram(3, separator="-")(words)) == [
        "WildRose Country-Canada's Ocean Playground-Land of Living Skies"
    ]
    # pads capped at n - 1; a sequence shorter than n gives one empty string
    grams = text.Ngram([1, 2, 4], left_pad=("_", 3), right_pad=("$", 1))(np.array(["a", "b"]))
    assert _list(grams) == ["a", "b", "_ a", "a b", "b $", "_ _ _ a", "_ _ a b", "_ a b $"]
    assert _list(text.Ngram(3)(np.array(["a", "b"]))) == [""]
    with pytest.raises(ValueError, match="non-empty list"):
        text.Ngram([])
    with pytest.raises(ValueError, match="left_pad"):
        text.Ngram(2, left_pad=("_",))
    a, b = text.TruncateSequencePair(4)(np.array([1, 2, 3]), np.array([4, 5]))
    assert _list(a) == [1, 2] and _list(b) == [4, 5]
    # from the longer one; the second when they are as long
    a, b = text.TruncateSequencePair(3)(np.array(["a", "b"]), np.array(["c", "d"]))
    assert _list(a) == ["a", "b"] and _list(b) == ["c"]
    with pytest.raises(RuntimeError, match="rank 1"):
        text.TruncateSequencePair(3)(np.array(1), np.array([2]))


def test_to_str_and_to_bytes():
    assert _list(text.to_str(np.array([b"1", b"\xe4\xbd\xa0"]))) == ["1", "你"]
    assert text.to_bytes(np.array(["你"])).tolist() == [b"\xe4\xbd\xa0"]
    with pytest.raises(TypeError, match="NumPy array"):
        text.to_str(b"x")
    with pytest.raises(ValueError, match="NumPy array"):
        text.to_bytes("x")
    assert text.transforms.BertTokenizer is text.BertTokenizer and text.utils.Vocab is text.Vocab


# -- in a pipeline ----------------------------------------------------------------------------------


def test_bert_pipeline_tokens_to_padded_ids():
    """The model zoo's BERT fine-tuning steps (finetune_data_preprocess.py) on two sentences."""
    from opforge.dataset import transforms as ops

    vocab = text.Vocab.from_list(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "我", "爱", "hello", "world", "!"])
    data = ds.NumpySlicesDataset({"sentence": np.array(["我爱 Hello!", "World world 她"])}, shuffle=False)
    data = data.map(text.BertTokenizer(vocab, lower_case=True), input_columns=["sentence"])
    data = data.map(ops.Slice(slice(0, 4)), input_columns=["sentence"])
    data = data.map(ops.Concatenate(prepend=np.array(["[CLS]"]), append=np.array(["[SEP]"])), input_columns="sentence")
    data = data.map(text.Lookup(vocab, unknown_token="[UNK]"), input_columns=["sentence"], output_columns=["ids"])
    data = data.map(ops.PadEnd([8], 0), input_columns=["ids"])
    ids = [row[0].tolist() for row in data.create_tuple_iterator(output_numpy=True)]
    assert ids == [[2, 4, 5, 6, 8, 3, 0, 0], [2, 7, 7, 1, 3, 0, 0, 0]]


def test_tokenizer_with_offsets_in_map_gives_three_columns():
    data = ds.NumpySlicesDataset({"text": np.array(["ab cd", "e"])}, shuffle=False)
    data = data.map(
        text.WhitespaceTokenizer(with_offsets=True),
        input_columns=["text"],
        output_columns=["token", "offsets_start", "offsets_limit"],
    )
    rows = [[v.tolist() for v in row] for row in data.create_tuple_iterator(output_numpy=True)]
    assert data.get_col_names() == ["token", "offsets_start", "offsets_limit"]
    assert rows == [[["ab", "cd"], [0, 3], [2, 5]], [["e"], [0], [1]]]
