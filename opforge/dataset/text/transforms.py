"""MindSpore's text transforms (``mindspore.dataset.text``, module ``text.transforms``), on NumPy string arrays
as MindSpore's rows hold them (a scalar string is a 0-d ``str`` array), called in ``Dataset.map`` or eagerly.

Tokenizers (a scalar string in; a 1-D array of tokens out, ``[""]`` when there are none; with
``with_offsets=True`` also ``offsets_start`` and ``offsets_limit``, uint32 UTF-8 byte offsets of each token in
the text the tokenizer split, as MindSpore's): ``WhitespaceTokenizer`` (Unicode White_Space),
``UnicodeCharTokenizer``, ``RegexTokenizer`` (an ICU pattern: ``_unicode.py`` translates ``\\p{..}``,
``\\x{..}``, ``\\s``), ``BasicTokenizer`` and ``WordpieceTokenizer``, and ``BertTokenizer`` (the two in turn),
``PythonTokenizer``. String transforms (any shape): ``CaseFold`` (ICU's NFKC_Casefold), ``NormalizeUTF8``,
``RegexReplace``, ``Lookup`` (tokens to ids), ``ToNumber``. Sequence transforms: ``SlidingWindow``, ``Ngram``,
``TruncateSequencePair``.

``BasicTokenizer`` follows MindSpore's steps (those of Google's BERT): with ``lower_case``, NFKC_Casefold (except
the special tokens [CLS], [SEP], [UNK], [PAD], [MASK] when ``preserve_unused_token``), NFD and the
non-spacing marks (accents) removed; else ``normalization_form``; then control and format characters become
spaces; then the text splits at white space (dropped unless ``keep_whitespace``) and around each ASCII
punctuation character, Unicode punctuation (category P) and CJK ideograph, which are tokens of their own;
with ``preserve_unused_token`` the special tokens and ``[unusedN]`` stay whole. ``WordpieceTokenizer`` splits
each word greedily into the longest vocab pieces from its start, later pieces prefixed by
``suffix_indicator``; a word with a part no piece matches, or longer than ``max_bytes_per_token`` UTF-8 bytes,
is ``unknown_token`` (the word itself when that is "").
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from opforge import dtype as mstype
from opforge.dataset.text import _unicode
from opforge.dataset.text.utils import NormalizeForm, Vocab, to_str

__all__ = [
    "WhitespaceTokenizer", "UnicodeCharTokenizer", "RegexTokenizer", "BasicTokenizer", "WordpieceTokenizer",
    "BertTokenizer", "PythonTokenizer", "CaseFold", "NormalizeUTF8", "RegexReplace", "Lookup", "ToNumber",
    "SlidingWindow", "Ngram", "TruncateSequencePair",
]  # fmt: skip

_UINT32_MAX = 2**32 - 1
_INT32_MAX = 2**31 - 1
_FORMS = {NormalizeForm.NONE: None, NormalizeForm.NFC: "NFC", NormalizeForm.NFKC: "NFKC",
          NormalizeForm.NFD: "NFD", NormalizeForm.NFKD: "NFKD"}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Argument checks (MindSpore's messages)


def _check_bool(name: str, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"Wrong input type for {name}, should be boolean.")


def _check_str(name: str, value) -> None:
    if not isinstance(value, str):
        raise TypeError(f"Wrong input type for {name}, should be string.")


def _check_uint32(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Wrong input type for {name}, should be int.")
    if not 0 <= value <= _UINT32_MAX:
        raise ValueError(f"Input {name} is not within the required interval of [0, {_UINT32_MAX}].")


def _check_vocab(vocab) -> None:
    if vocab is None:
        raise ValueError("vocab is not provided.")
    if not isinstance(vocab, Vocab):
        raise TypeError("Wrong input type for vocab, should be text.Vocab object.")
    vocab._table()  # a Vocab() never built: MindSpore's RuntimeError


def _check_form(form) -> str:
    if not isinstance(form, NormalizeForm):
        raise TypeError("Wrong input type for normalization_form, should be enum of 'NormalizeForm'.")
    return _FORMS[form]


def _strings(op: str, value) -> np.ndarray:
    """``value`` (a str, bytes, a list or an array of them) as a NumPy str array."""
    array = np.asarray(value)
    if array.dtype.kind == "S":
        array = np.char.decode(array, "utf-8")
    elif array.dtype.kind == "O" and all(isinstance(v, str) for v in array.ravel()):
        array = array.astype(np.str_)
    if array.dtype.kind != "U":
        raise RuntimeError(f"{op}: the input should be of type string, but got {array.dtype}.")
    return array


def _map_strings(fn, array: np.ndarray) -> np.ndarray:
    out = [fn(s) for s in array.ravel().tolist()]
    return np.array(out, dtype=np.str_).reshape(array.shape)


# ---------------------------------------------------------------------------------------------
# Tokenizers


class _Tokenizer:
    """A tokenizer of one scalar string: ``_split(text)`` gives (tokens, offsets_start, offsets_limit)."""

    name = "Tokenizer"

    def __init__(self, with_offsets=False):
        _check_bool("with_offsets", with_offsets)
        self.with_offsets = with_offsets

    def __call__(self, text):
        array = np.asarray(text)
        if array.ndim != 0 or array.dtype.kind not in "US":
            raise RuntimeError(
                f"{self.name}: the input shape should be scalar and the input datatype should be string, but got "
                f"shape {array.shape} and type {array.dtype}."
            )
        tokens, starts, limits = self._split(str(_strings(self.name, array)[()]))
        return _tokens_out(tokens, starts, limits, self.with_offsets)

    def _split(self, text: str) -> tuple:
        raise NotImplementedError


def _tokens_out(tokens, starts, limits, with_offsets):
    if not tokens:
        tokens, starts, limits = [""], [0], [0]
    out = np.array(tokens, dtype=np.str_)
    if not with_offsets:
        return out
    return out, np.array(starts, dtype=np.uint32), np.array(limits, dtype=np.uint32)


class WhitespaceTokenizer(_Tokenizer):
    """MindSpore's ``WhitespaceTokenizer(with_offsets=False)``: the runs of characters between Unicode White_Space
    characters (ICU's ``u_isUWhiteSpace``: space, tab, the line breaks, no-break spaces, ...)."""

    name = "WhitespaceTokenizer"

    def _split(self, text):
        tokens, starts, limits = [], [], []
        offset, current, current_start = 0, [], 0
        for ch in text:
            size = _unicode.utf8_len(ch)
            if ch in _unicode.WHITE_SPACE:
                if current:
                    tokens.append("".join(current))
                    starts.append(current_start)
                    limits.append(offset)
                    current = []
            else:
                if not current:
                    current_start = offset
                current.append(ch)
            offset += size
        if current:
            tokens.append("".join(current))
            starts.append(current_start)
            limits.append(offset)
        return tokens, starts, limits


class UnicodeCharTokenizer(_Tokenizer):
    """MindSpore's ``UnicodeCharTokenizer(with_offsets=False)``: one token per Unicode character (code point)."""

    name = "UnicodeCharTokenizer"

    def _split(self, text):
        tokens, starts, limits, offset = [], [], [], 0
        for ch in text:
            size = _unicode.utf8_len(ch)
            tokens.append(ch)
            starts.append(offset)
            limits.append(offset + size)
            offset += size
        return tokens, starts, limits


def _regex_split(text: str, delim: re.Pattern, keep) -> tuple:
    """MindSpore's RegexTokenizer: the text between matches of ``delim`` are tokens; a match is a token too when
    ``keep`` matches it whole; empty pieces are dropped. Offsets in UTF-8 bytes."""
    tokens, starts, limits = [], [], []
    offset, token_start = 0, 0
    for match in delim.finditer(text):
        begin, end = match.span()
        if begin > token_start:
            piece = text[token_start:begin]
            size = _unicode.utf8_len(piece)
            tokens.append(piece)
            starts.append(offset)
            limits.append(offset + size)
            offset += size
        if end > begin:
            piece = text[begin:end]
            size = _unicode.utf8_len(piece)
            if keep is not None and keep.fullmatch(piece):
                tokens.append(piece)
                starts.append(offset)
                limits.append(offset + size)
            offset += size
        token_start = end
    if token_start < len(text):
        piece = text[token_start:]
        tokens.append(piece)
        starts.append(offset)
        limits.append(offset + _unicode.utf8_len(piece))
    return tokens, starts, limits


def _compile(op: str, pattern: str) -> re.Pattern:
    try:
        return _unicode.icu_regex(pattern)
    except (re.error, ValueError) as e:
        raise ValueError(f"{op}: the pattern {pattern!r} is not a valid regular expression: {e}") from e


class RegexTokenizer(_Tokenizer):
    """MindSpore's ``RegexTokenizer(delim_pattern, keep_delim_pattern='', with_offsets=False)``: the text split at
    each match of ``delim_pattern``; a delimiter that ``keep_delim_pattern`` matches whole is a token too."""

    name = "RegexTokenizer"

    def __init__(self, delim_pattern, keep_delim_pattern="", with_offsets=False):
        if delim_pattern is None:
            raise ValueError("delim_pattern is not provided.")
        _check_str("delim_pattern", delim_pattern)
        _check_str("keep_delim_pattern", keep_delim_pattern)
        super().__init__(with_offsets)
        self.delim_pattern, self.keep_delim_pattern = delim_pattern, keep_delim_pattern
        self._delim = _compile(self.name, delim_pattern)
        self._keep = _compile(self.name, keep_delim_pattern) if keep_delim_pattern else None

    def _split(self, text):
        return _regex_split(text, self._delim, self._keep)


# The characters BERT makes tokens of their own: ASCII punctuation, Unicode punctuation, CJK ideographs.
_BERT_SPLIT = (
    r"[!-/]|[:-@]|[\[-`]|[{-~]|[\p{P}]|[\x{4E00}-\x{9FFF}]|[\x{3400}-\x{4DBF}]|[\x{20000}-\x{2A6DF}]"
    r"|[\x{2A700}-\x{2B73F}]|[\x{2B740}-\x{2B81F}]|[\x{2B820}-\x{2CEAF}]|[\x{F900}-\x{FAFF}]|[\x{2F800}-\x{2FA1F}]"
)
_BERT_SPECIAL = r"\[CLS\]|\[SEP\]|\[UNK\]|\[PAD\]|\[MASK\]|\[unused\d+\]|"
_CASE_KEPT = re.compile(r"\[(?:CLS|SEP|UNK|PAD|MASK)\]")


def _casefold_keeping_special(text: str) -> str:
    """NFKC_Casefold of the text but the special tokens [CLS], [SEP], [UNK], [PAD], [MASK]."""
    out, last = [], 0
    for match in _CASE_KEPT.finditer(text):
        out.append(_unicode.nfkc_casefold(text[last : match.start()]))
        out.append(match.group())
        last = match.end()
    out.append(_unicode.nfkc_casefold(text[last:]))
    return "".join(out)


class BasicTokenizer(_Tokenizer):
    """MindSpore's ``BasicTokenizer(lower_case=False, keep_whitespace=False, normalization_form=NormalizeForm.NONE,
    preserve_unused_token=True, with_offsets=False)``: BERT's basic tokenization (the module's docstring)."""

    name = "BasicTokenizer"

    def __init__(self, lower_case=False, keep_whitespace=False, normalization_form=NormalizeForm.NONE,
                 preserve_unused_token=True, with_offsets=False):  # fmt: skip
        _check_bool("lower_case", lower_case)
        _check_bool("keep_whitespace", keep_whitespace)
        _check_bool("preserve_unused_token", preserve_unused_token)
        super().__init__(with_offsets)
        self._form = _check_form(normalization_form)
        self.lower_case, self.keep_whitespace = lower_case, keep_whitespace
        self.normalization_form, self.preserve_unused_token = normalization_form, preserve_unused_token
        delim = r"\s+|" + _BERT_SPLIT
        keep = delim if keep_whitespace else _BERT_SPLIT
        if preserve_unused_token:
            delim, keep = _BERT_SPECIAL + delim, _BERT_SPECIAL + keep
        self._delim, self._keep = _unicode.icu_regex(delim), _unicode.icu_regex(keep)

    def _clean(self, text: str) -> str:
        if self.lower_case:
            text = _casefold_keeping_special(text) if self.preserve_unused_token else _unicode.nfkc_casefold(text)
            text = unicodedata.normalize("NFD", text)
            text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        else:
            text = _unicode.normalize(self._form, text)
        return "".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)

    def _split(self, text):
        return _regex_split(self._clean(text), self._delim, self._keep)


class WordpieceTokenizer:
    """MindSpore's ``WordpieceTokenizer(vocab, suffix_indicator='##', max_bytes_per_token=100,
    unknown_token='[UNK]', with_offsets=False)``: each word of a string (scalar or 1-D) split into vocab pieces
    (the module's docstring); the offsets are UTF-8 bytes within each word (an unknown word's span the word)."""

    name = "WordpieceTokenizer"

    def __init__(self, vocab, suffix_indicator="##", max_bytes_per_token=100, unknown_token="[UNK]",
                 with_offsets=False):  # fmt: skip
        _check_vocab(vocab)
        _check_str("suffix_indicator", suffix_indicator)
        _check_str("unknown_token", unknown_token)
        _check_bool("with_offsets", with_offsets)
        _check_uint32("max_bytes_per_token", max_bytes_per_token)
        self.vocab, self.suffix_indicator, self.max_bytes_per_token = vocab, suffix_indicator, max_bytes_per_token
        self.unknown_token, self.with_offsets = unknown_token, with_offsets

    def __call__(self, words):
        array = np.asarray(words)
        if array.ndim > 1 or array.dtype.kind not in "US":
            raise RuntimeError(
                "WordpieceTokenizer: The input shape should be 1D scalar the input datatype should be string, but got "
                f"shape {array.shape} and type {array.dtype}."
            )
        words = _strings(self.name, array).ravel().tolist()
        return self._pieces(words, [0] * len(words))

    def _pieces(self, words: list, word_starts: list):
        tokens, starts, limits = [], [], []
        for word, base in zip(words, word_starts):
            pieces = self._word_pieces(word)
            if pieces is None:  # unknown: one token for the whole word
                tokens.append(self.unknown_token or word)
                starts.append(base)
                limits.append(base + _unicode.utf8_len(word))
                continue
            for piece, (begin, end) in pieces:
                tokens.append(piece)
                starts.append(base + begin)
                limits.append(base + end)
        return _tokens_out(tokens, starts, limits, self.with_offsets)

    def _word_pieces(self, word: str):
        """[(piece, (byte start, byte end))] of the word, or None when it is unknown."""
        if _unicode.utf8_len(word) > self.max_bytes_per_token:
            return None
        table = self.vocab._table()
        byte_at = [0]
        for ch in word:
            byte_at.append(byte_at[-1] + _unicode.utf8_len(ch))
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):  # the longest piece first
                piece = word[start:end] if start == 0 else self.suffix_indicator + word[start:end]
                if piece in table:
                    pieces.append((piece, (byte_at[start], byte_at[end])))
                    start = end
                    break
            else:
                return None
        return pieces


class BertTokenizer(BasicTokenizer):
    """MindSpore's ``BertTokenizer(vocab, suffix_indicator='##', max_bytes_per_token=100, unknown_token='[UNK]',
    lower_case=False, keep_whitespace=False, normalization_form=NormalizeForm.NONE, preserve_unused_token=True,
    with_offsets=False)``: ``BasicTokenizer`` then ``WordpieceTokenizer`` on its words (offsets in the
    basic tokenizer's text)."""

    name = "BertTokenizer"

    def __init__(self, vocab, suffix_indicator="##", max_bytes_per_token=100, unknown_token="[UNK]", lower_case=False,
                 keep_whitespace=False, normalization_form=NormalizeForm.NONE, preserve_unused_token=True,
                 with_offsets=False):  # fmt: skip
        if vocab is None:
            raise ValueError("vacab is not provided.")
        _check_vocab(vocab)
        _check_str("suffix_indicator", suffix_indicator)
        _check_uint32("max_bytes_per_token", max_bytes_per_token)
        _check_str("unknown_token", unknown_token)
        super().__init__(lower_case, keep_whitespace, normalization_form, preserve_unused_token, with_offsets)
        self._wordpiece = WordpieceTokenizer(vocab, suffix_indicator, max_bytes_per_token, unknown_token, with_offsets)
        self.vocab, self.suffix_indicator = vocab, suffix_indicator
        self.max_bytes_per_token, self.unknown_token = max_bytes_per_token, unknown_token

    def __call__(self, text):
        array = np.asarray(text)
        if array.ndim != 0 or array.dtype.kind not in "US":
            raise RuntimeError(
                "BasicTokenizer: the input should be a scalar of type string, but got "
                f"shape {array.shape} and type {array.dtype}."
            )
        words, starts, _ = self._split(str(_strings(self.name, array)[()]))
        if not words:
            words, starts = [""], [0]
        return self._wordpiece._pieces(words, starts)


class PythonTokenizer:
    """MindSpore's ``PythonTokenizer(tokenizer)``: ``tokenizer(str)`` (a list of str) applied to each string of a
    NumPy array (bytes are decoded first), the tokens as a str array."""

    def __init__(self, tokenizer):
        if not callable(tokenizer):
            raise TypeError("tokenizer is not a callable Python function.")
        self.pyfunc = tokenizer
        self.tokenizer = np.vectorize(lambda x: np.array(tokenizer(x), dtype="U"), signature="()->(n)")
        self.random = False

    def __call__(self, in_array):
        if not isinstance(in_array, np.ndarray):
            raise TypeError(f"input should be a NumPy array. Got {type(in_array)}.")
        if in_array.dtype.type is np.bytes_:
            in_array = to_str(in_array)
        try:
            return self.tokenizer(in_array)
        except Exception as e:
            name = getattr(self.pyfunc, "__name__", type(self.pyfunc).__name__)
            raise RuntimeError(f"Error occurred in Pyfunc [{name}], error message: {e}") from e


# ---------------------------------------------------------------------------------------------
# String transforms


class CaseFold:
    """MindSpore's ``CaseFold()``: each string folded by ICU's NFKC_Casefold (more aggressive than
    ``str.lower``: ``"ß"`` becomes ``"ss"``, compatibility characters their plain forms)."""

    def __call__(self, text):
        return _map_strings(_unicode.nfkc_casefold, _strings("CaseFold", text))


class NormalizeUTF8:
    """MindSpore's ``NormalizeUTF8(normalize_form=NormalizeForm.NFKC)``: each string in the Unicode normalization
    form (NONE: unchanged)."""

    def __init__(self, normalize_form=NormalizeForm.NFKC):
        self._form = _check_form(normalize_form)
        self.normalize_form = normalize_form

    def __call__(self, text):
        return _map_strings(lambda s: _unicode.normalize(self._form, s), _strings("NormalizeUTF8", text))


class RegexReplace:
    """MindSpore's ``RegexReplace(pattern, replace, replace_all=True)``: in each string, every match of the ICU
    ``pattern`` (the first only without ``replace_all``) replaced by ``replace`` (``$1`` inserts a group)."""

    def __init__(self, pattern, replace, replace_all=True):
        for name, value in (("pattern", pattern), ("replace", replace)):
            if not isinstance(value, str):
                raise TypeError(f"Argument {name} with value {value!r} is not of type [<class 'str'>].")
        if not isinstance(replace_all, bool):
            raise TypeError(f"Argument replace_all with value {replace_all!r} is not of type [<class 'bool'>].")
        self.pattern, self.replace, self.replace_all = pattern, replace, replace_all
        self._regex = _compile("RegexReplace", pattern)
        self._expand = _unicode.icu_replacement(replace)

    def __call__(self, text):
        count = 0 if self.replace_all else 1
        return _map_strings(lambda s: self._regex.sub(self._expand, s, count=count), _strings("RegexReplace", text))


def _check_type(name: str, value) -> mstype.Type:
    if not isinstance(value, mstype.Type):
        raise TypeError(f"Argument {name} with value {value!r} is not of type [<class 'mindspore.dtype.Type'>].")
    return value


class Lookup:
    """MindSpore's ``Lookup(vocab, unknown_token=None, data_type=mstype.int32)``: each token's id in ``vocab``
    (the input's shape, ``data_type``); a token not in it takes ``unknown_token``'s id, or, without one, is a
    RuntimeError."""

    def __init__(self, vocab, unknown_token=None, data_type=mstype.int32):
        if unknown_token is not None and not isinstance(unknown_token, str):
            raise TypeError(f"Argument unknown_token with value {unknown_token!r} is not of type [<class 'str'>].")
        if not isinstance(vocab, Vocab):
            raise TypeError(f"vocab is not an instance of text.Vocab, but got {type(vocab).__name__}.")
        _check_type("data_type", data_type)
        if data_type in (mstype.complex64, mstype.complex128):
            raise RuntimeError("Lookup : The parameter data_type must be numeric including bool.")
        table = vocab._table()
        self._default = None
        if unknown_token is not None:
            if unknown_token not in table:
                raise RuntimeError(f'Lookup: "{unknown_token}" doesn\'t exist in vocab.')
            self._default = table[unknown_token]
        self.vocab, self.unknown_token, self.data_type = vocab, unknown_token, data_type
        self._np_dtype = mstype.to_dtype(data_type).np_dtype

    def __call__(self, tokens):
        array = np.asarray(tokens)
        if array.dtype.kind not in "US":
            raise RuntimeError("Lookup: input is not string datatype.")
        array = _strings("Lookup", array)
        table = self.vocab._table()
        ids = []
        for token in array.ravel().tolist():
            word_id = table.get(token, self._default)
            if word_id is None:
                raise RuntimeError(
                    f'Lookup: invalid data, token: "{token}" doesn\'t exist in vocab and no unknown token is specified.'
                )
            ids.append(word_id)
        return np.array(ids, dtype=np.int32).reshape(array.shape).astype(self._np_dtype)


_INT_PREFIX = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")
_FLOAT_PREFIX = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?|[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?"
    r"|\.[0-9]+(?:[eE][+-]?[0-9]+)?)",
    re.IGNORECASE,
)


class ToNumber:
    """MindSpore's ``ToNumber(data_type)``: each string as a number of ``data_type`` (an int or float type), read
    as C++'s ``stoll`` / ``stoull`` / ``stof`` / ``stod`` read it: leading white space, a sign, then the longest
    number (``"12ab"`` is 12); no number, or a number out of the type's range (a minus sign for an unsigned type),
    is a RuntimeError. float16 is read as float32, then rounded. Decimal numbers, ``inf`` and ``nan`` are read;
    C's hexadecimal floats (``0x1p3``) are not."""

    def __init__(self, data_type):
        _check_type("data_type", data_type)
        if data_type not in mstype.number_type:
            raise TypeError(f"data_type: {data_type} is not numeric data type.")
        if data_type in (mstype.bfloat16, mstype.complex64, mstype.complex128):
            raise TypeError(f"ToNumber: unsupported cast type: {data_type}.")
        self.data_type = data_type
        self._np_dtype = np.dtype(mstype.to_dtype(data_type).np_dtype)

    def __call__(self, text):
        array = np.asarray(text)
        if array.dtype.kind not in "US":
            raise RuntimeError("ToNumber: input should be string datatype.")
        array = _strings("ToNumber", array)
        values = [self._convert(s) for s in array.ravel().tolist()]
        return np.array(values, dtype=self._np_dtype).reshape(array.shape)

    def _range_error(self, s: str, low, high):
        return RuntimeError(
            f"ToNumber: string input {s} will be out of bounds if cast to {self._np_dtype.name}. The valid range is: "
            f"[{low}, {high}]."
        )

    def _convert(self, s: str):
        kind = self._np_dtype.kind
        if kind in "iu":
            match = _INT_PREFIX.match(s)
            if match is None:
                what = "a number" if kind == "i" else "an unsigned integer"
                raise RuntimeError(f'ToNumber: it is invalid to convert "{s}" to {what}.')
            info = np.iinfo(self._np_dtype)
            value = int(match.group())
            if (kind == "u" and "-" in s) or not info.min <= value <= info.max:
                raise self._range_error(s, info.min, info.max)
            return value
        match = _FLOAT_PREFIX.match(s)
        if match is None:
            raise RuntimeError(f'ToNumber: it is invalid to convert "{s}" to a number.')
        text = match.group().strip()
        value = float(text.split("(")[0])  # nan(chars): a NaN
        reader = np.finfo(np.float64 if self._np_dtype == np.float64 else np.float32)
        overflow = np.isfinite(value) and abs(value) > reader.max
        underflow = value != 0 and np.isfinite(value) and abs(value) < reader.tiny
        if overflow or underflow or (np.isinf(value) and "inf" not in text.lower()):
            raise self._range_error(s, f"{-float(reader.max):f}", f"{float(reader.max):f}")
        return value


# ---------------------------------------------------------------------------------------------
# Sequence transforms


class SlidingWindow:
    """MindSpore's ``SlidingWindow(width, axis=0)``: the windows of ``width`` consecutive elements of a 1-D array,
    one a row (shape (n - width + 1, width)); none (shape (0, width)) when the array is shorter than ``width``."""

    def __init__(self, width, axis=0):
        if isinstance(width, bool) or not isinstance(width, int):
            raise TypeError(f"Argument width with value {width!r} is not of type [<class 'int'>].")
        if not 1 <= width <= _INT32_MAX:
            raise ValueError(f"Input width is not within the required interval of [1, {_INT32_MAX}].")
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"Argument axis with value {axis!r} is not of type [<class 'int'>].")
        self.width, self.axis = width, axis

    def __call__(self, data):
        array = np.asarray(data)
        if array.ndim != 1:
            raise RuntimeError(f"SlidingWindow: SlidingWindow supports 1D input only for now, but got {array.ndim}D.")
        if self.axis not in (0, -1):
            raise RuntimeError(f"SlidingWindow: axis supports 0 or -1 only for now, but got {self.axis}.")
        if len(array) < self.width:
            return np.zeros((0, self.width), array.dtype)
        return np.lib.stride_tricks.sliding_window_view(array, self.width).copy()


class Ngram:
    """MindSpore's ``Ngram(n, left_pad=('', 0), right_pad=('', 0), separator=' ')``: the n-grams of a 1-D string
    array for each n of ``n`` (an int or a list), in turn, each joined by ``separator``; the sequence is padded
    with ``left_pad``'s token (its width capped at n - 1) and ``right_pad``'s; a sequence shorter than n gives
    one empty string for that n."""

    def __init__(self, n, left_pad=("", 0), right_pad=("", 0), separator=" "):
        if isinstance(n, int) and not isinstance(n, bool):
            n = [n]
        if not (isinstance(n, list) and n != []):
            raise ValueError("n needs to be a non-empty list of positive integers.")
        for i, gram in enumerate(n):
            if isinstance(gram, bool) or not isinstance(gram, int):
                raise TypeError(f"Argument gram[{i}] with value {gram!r} is not of type [<class 'int'>].")
            if gram <= 0:
                raise ValueError(f"Input gram_{i} must be greater than 0.")
        for name, pad in (("left_pad", left_pad), ("right_pad", right_pad)):
            if not (isinstance(pad, tuple) and len(pad) == 2 and isinstance(pad[0], str) and isinstance(pad[1], int)):
                raise ValueError(f"{name} needs to be a tuple of (str, int) str is pad token and int is pad_width.")
        if left_pad[1] < 0 or right_pad[1] < 0:
            raise ValueError("padding width need to be positive numbers.")
        if not isinstance(separator, str):
            raise TypeError(f"Argument separator with value {separator!r} is not of type [<class 'str'>].")
        self.ngrams, self.left_pad, self.right_pad, self.separator = n, left_pad, right_pad, separator

    def __call__(self, tokens):
        array = np.asarray(tokens)
        if array.ndim != 1 or array.dtype.kind not in "US":
            raise RuntimeError("Ngram: input is not a 1D data with string datatype.")
        words = _strings("Ngram", array).tolist()
        (left, left_width), (right, right_width) = self.left_pad, self.right_pad
        out = []
        for n in self.ngrams:
            seq = [left] * min(left_width, n - 1) + words + [right] * min(right_width, n - 1)
            if len(seq) < n:
                out.append("")
            else:
                out.extend(self.separator.join(seq[i : i + n]) for i in range(len(seq) - n + 1))
        return np.array(out, dtype=np.str_)


class TruncateSequencePair:
    """MindSpore's ``TruncateSequencePair(max_length)``: two 1-D arrays cut from their ends, one element at a time
    from the longer (the second when they are as long), until their lengths sum to ``max_length`` at most."""

    def __init__(self, max_length):
        if isinstance(max_length, bool) or not isinstance(max_length, int):
            raise TypeError(f"Argument max_length with value {max_length!r} is not of type [<class 'int'>].")
        if max_length < 0:
            raise ValueError(
                f"TruncateSequencePair : The parameter max_length must be greater than or equal to 0: {max_length}"
            )
        self.max_length = max_length

    def __call__(self, *sequences):
        if len(sequences) != 2:
            raise RuntimeError(f"TruncateSequencePair: Number of inputs should be two, but got {len(sequences)}.")
        first, second = (np.asarray(s) for s in sequences)
        if first.ndim != 1 or second.ndim != 1:
            raise RuntimeError("TruncateSequencePair: Both sequences should be of rank 1.")
        n1, n2 = len(first), len(second)
        while n1 + n2 > self.max_length:
            if n1 > n2:
                n1 -= 1
            else:
                n2 -= 1
        return first[:n1], second[:n2]
