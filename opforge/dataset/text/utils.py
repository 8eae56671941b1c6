"""MindSpore's ``mindspore.dataset.text.utils``: ``Vocab`` (a word to id table: ``from_list``, ``from_dict``,
``from_file``, ``from_dataset``; ``vocab()``, ``tokens_to_ids``, ``ids_to_tokens``), ``NormalizeForm`` (the
Unicode normalization forms), and ``to_str`` / ``to_bytes`` (NumPy string arrays decoded / encoded)."""

from __future__ import annotations

import collections
import enum
import os

import numpy as np

__all__ = ["Vocab", "NormalizeForm", "to_str", "to_bytes"]

_INT32_MAX = 2**31 - 1


class NormalizeForm(enum.IntEnum):
    """The Unicode normalization forms of ``NormalizeUTF8`` and the BERT tokenizers (NONE: unchanged)."""

    NONE = 0
    NFC = 1
    NFKC = 2
    NFD = 3
    NFKD = 4


def _type_error(name: str, value, types: str) -> TypeError:
    return TypeError(f"Argument {name} with value {value!r} is not of type {types}, but got {type(value).__name__}.")


def _check_bool(name: str, value) -> None:
    if not isinstance(value, bool):
        raise _type_error(name, value, "bool")


def _unique_words(words, name: str) -> set:
    if not isinstance(words, list):
        raise _type_error(name, words, "list")
    seen = set()
    for word in words:
        if not isinstance(word, str):
            raise _type_error(name, word, "str")
        if word in seen:
            raise ValueError(f"{name} contains duplicate word: {word}.")
        seen.add(word)
    return seen


class Vocab:
    """MindSpore's ``Vocab``: words and their ids. Build one with ``from_list``, ``from_dict``, ``from_file`` or
    ``from_dataset``; ``Vocab()`` itself holds none (its methods then raise MindSpore's RuntimeError)."""

    def __init__(self):
        self._word2id = None
        self._id2word = None

    @classmethod
    def _of(cls, word2id: dict) -> Vocab:
        vocab = cls()
        vocab._word2id = word2id
        return vocab

    def _table(self) -> dict:
        if self._word2id is None:
            raise RuntimeError(
                f"The Vocab has not built yet, got type {type(self._word2id)}. Use Vocab.from_dataset(), "
                "Vocab.from_list(), Vocab.from_file() or Vocab.from_dict() to build a Vocab."
            )
        return self._word2id

    # -- building --------------------------------------------------------------------------------
    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True):
        """The words of ``word_list`` numbered 0, 1, ... in order; ``special_tokens`` numbered before them
        (``special_first``) or after."""
        words = _unique_words(word_list, "word_list")
        if special_tokens is not None:
            common = words & _unique_words(special_tokens, "special_tokens")
            if common:
                raise ValueError(f"special_tokens and word_list contain duplicate word :{common}.")
        _check_bool("special_first", special_first)
        specials = list(special_tokens or [])
        ordered = specials + list(word_list) if special_first else list(word_list) + specials
        return cls._of({w: i for i, w in enumerate(ordered)})

    @classmethod
    def from_dict(cls, word_dict):
        """The {word: id} pairs of ``word_dict`` (ids in [0, 2**31 - 1])."""
        if not isinstance(word_dict, dict):
            raise _type_error("word_dict", word_dict, "dict")
        for word, word_id in word_dict.items():
            if not isinstance(word, str):
                raise _type_error("word", word, "str")
            if isinstance(word_id, bool) or not isinstance(word_id, int):
                raise _type_error("word_id", word_id, "int")
            if not 0 <= word_id <= _INT32_MAX:
                raise ValueError(f"Input word_id is not within the required interval of [0, {_INT32_MAX}].")
        return cls._of(dict(word_dict))

    @classmethod
    def from_file(cls, file_path, delimiter="", vocab_size=None, special_tokens=None, special_first=True):
        """One word a line of ``file_path`` (the line's text before the first character of ``delimiter``, the
        whole line when it is ""), numbered in order; ``vocab_size`` words at most; ``special_tokens`` numbered
        before (``special_first``) or after them. A word twice is a RuntimeError, as in MindSpore."""
        if special_tokens is not None:
            _unique_words(special_tokens, "special_tokens")
        for name, value in (("file_path", file_path), ("delimiter", delimiter)):
            if not isinstance(value, str):
                raise _type_error(name, value, "str")
        if vocab_size is not None:
            if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
                raise _type_error("vocab_size", vocab_size, "int")
            if vocab_size <= 0:
                raise ValueError(f"Input vocab_size must be greater than 0, but got {vocab_size}.")
        _check_bool("special_first", special_first)
        if not os.path.isfile(file_path):
            raise RuntimeError(f"from_file: fail to open: {file_path} (no such file).")
        specials = list(special_tokens or [])
        with open(file_path, "rb") as f:
            lines = f.read().split(b"\n")
        if lines and lines[-1] == b"":  # the newline ending the last line ends no further line
            lines.pop()
        words: dict = {}
        start = len(specials) if special_first else 0
        for raw in lines:
            word = raw.decode("utf-8")
            if delimiter:
                cut = min((k for k in (word.find(c) for c in delimiter) if k >= 0), default=-1)
                if cut >= 0:
                    word = word[:cut]
            if word in words:
                raise RuntimeError(f"from_file: word_list contains duplicate word:{word}")
            if word in specials:
                raise RuntimeError(f"from_file: special_tokens and word_list contain duplicate word:{word}")
            words[word] = start + len(words)
            if vocab_size is not None and len(words) == vocab_size:
                break
        first_special = 0 if special_first else len(words)
        words.update({w: first_special + k for k, w in enumerate(specials)})
        return cls._of(words)

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None, special_tokens=None,
                     special_first=True):  # fmt: skip
        """The words of one epoch of ``dataset``'s string columns ``columns`` (all when None): those whose
        count is within ``freq_range`` (min, max; None: no bound), the ``top_k`` most frequent of them, ordered
        by count, most first, then by the word; ``special_tokens`` before (``special_first``) or after. A
        special token found among the counted words is a RuntimeError, as in MindSpore."""
        if columns is not None and not isinstance(columns, list):
            columns = [columns]
        if columns is not None:
            for c in columns:
                if not isinstance(c, str):
                    raise _type_error("col", c, "str")
        low, high = 0, None
        if freq_range is not None:
            if not isinstance(freq_range, tuple):
                raise _type_error("freq_range", freq_range, "tuple")
            if len(freq_range) != 2:
                raise ValueError("freq_range needs to be a tuple of 2 element.")
            for num in freq_range:
                if num is not None and (isinstance(num, bool) or not isinstance(num, int)):
                    raise ValueError(
                        "freq_range needs to be either None or a tuple of 2 integers or an int and a None."
                    )
            if isinstance(freq_range[0], int) and isinstance(freq_range[1], int):
                if freq_range[0] > freq_range[1] or freq_range[0] < 0:
                    raise ValueError("frequency range [a,b] should be 0 <= a <= b (a,b are inclusive).")
            low = 0 if freq_range[0] is None else freq_range[0]
            high = freq_range[1]
        if top_k is not None:
            if isinstance(top_k, bool) or not isinstance(top_k, int):
                raise _type_error("top_k", top_k, "int")
            if top_k <= 0:
                raise ValueError(f"Input top_k must be greater than 0, but got {top_k}.")
        _check_bool("special_first", special_first)
        specials = list(special_tokens or [])
        if special_tokens is not None:
            _unique_words(special_tokens, "special_tokens")
        names = dataset.get_col_names()
        picks = names if columns is None else columns
        for c in picks:
            if c not in names:
                raise RuntimeError(f"{c} column doesn't exist")
        counts: collections.Counter = collections.Counter()
        for row in dataset.create_tuple_iterator(columns=picks, num_epochs=1, output_numpy=True):
            for value in row:
                value = np.asarray(value)
                if value.dtype.kind == "S":
                    value = np.char.decode(value, "utf-8")
                if value.dtype.kind != "U":
                    raise RuntimeError("from_dataset only works on string columns")
                counts.update(value.ravel().tolist())
        if not counts:
            raise RuntimeError("word_cnt is empty")
        kept = {w: n for w, n in counts.items() if n >= low and (high is None or n <= high)}
        found = [s for s in specials if s in kept]
        if found:
            raise RuntimeError(
                f"These specials words are already in the dataset: {''.join(s + chr(9) for s in found)}."
            )
        ordered = sorted(kept, key=lambda w: (-kept[w], w))[:top_k]
        words = specials + ordered if special_first else ordered + specials
        return cls._of({w: i for i, w in enumerate(words)})

    # -- reading ---------------------------------------------------------------------------------
    def vocab(self) -> dict:
        """The {word: id} table."""
        return dict(self._table())

    def tokens_to_ids(self, tokens):
        """The id of a token (-1 when it is not in the vocab), or a list of them for a list or array of tokens
        (a single one gives its id, as MindSpore's)."""
        table = self._table()
        if not isinstance(tokens, (str, list, np.ndarray)):
            raise _type_error("tokens", tokens, "[str, list, numpy.ndarray]")
        if isinstance(tokens, np.ndarray):
            tokens = tokens.tolist()
        if isinstance(tokens, str):
            tokens = [tokens]
        for k, token in enumerate(tokens):
            if not isinstance(token, str):
                raise _type_error(f"tokens[{k}]", token, "[str, numpy.str_]")
        ids = [table.get(t, -1) for t in tokens]
        return ids[0] if len(ids) == 1 else ids

    def ids_to_tokens(self, ids):
        """The token of an id ("" when no token has it), or a list of them for a list or array of ids."""
        table = self._table()
        if isinstance(ids, bool) or not isinstance(ids, (int, list, np.ndarray)):
            raise _type_error("ids", ids, "[int, list, numpy.ndarray]")
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        if isinstance(ids, int):
            ids = [ids]
        for k, i in enumerate(ids):
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise _type_error(f"ids[{k}]", i, "int")
            if not 0 <= i <= _INT32_MAX:
                raise ValueError(f"Input ids[{k}] is not within the required interval of [0, {_INT32_MAX}].")
        if self._id2word is None:
            self._id2word = {i: w for w, i in table.items()}
        words = [self._id2word.get(int(i), "") for i in ids]
        return words[0] if len(words) == 1 else words

    def __len__(self) -> int:
        return len(self._table())


def to_bytes(array, encoding="utf8"):
    """A NumPy array of str encoded to an array of bytes."""
    if not isinstance(array, np.ndarray):
        raise ValueError("input should be a NumPy array.")
    return np.char.encode(array, encoding)


def to_str(array, encoding="utf8"):
    """A NumPy array of bytes decoded to an array of str."""
    if not isinstance(array, np.ndarray):
        raise TypeError("input should be a NumPy array.")
    return np.char.decode(array, encoding)
