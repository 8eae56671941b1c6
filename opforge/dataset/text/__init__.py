"""``opforge.dataset.text``: MindSpore's ``mindspore.dataset.text``, the NLP transforms of a dataset pipeline on
NumPy string arrays (``transforms.py``: the tokenizers ``WhitespaceTokenizer``, ``UnicodeCharTokenizer``,
``RegexTokenizer``, ``BasicTokenizer``, ``WordpieceTokenizer``, ``BertTokenizer``, ``PythonTokenizer``; ``Lookup``,
``CaseFold``, ``NormalizeUTF8``, ``RegexReplace``, ``ToNumber``, ``SlidingWindow``, ``Ngram``,
``TruncateSequencePair``) and its utilities (``utils.py``: ``Vocab``, ``NormalizeForm``, ``to_str``,
``to_bytes``). ICU's Unicode services are replaced by Python's ``unicodedata`` and ``re`` (``_unicode.py``).

Not here: ``JiebaTokenizer``, ``UnicodeScriptTokenizer``, ``FilterWikipediaXML``, the pretrained vectors
(``Vectors``, ``FastText``, ``GloVe``, ``CharNGram``, ``ToVectors``) and SentencePiece (``SentencePieceVocab``,
``SentencePieceTokenizer``: the ``sentencepiece`` package is not a dependency of opforge).
"""

from opforge.dataset.text import transforms, utils
from opforge.dataset.text.transforms import (
    BasicTokenizer,
    BertTokenizer,
    CaseFold,
    Lookup,
    Ngram,
    NormalizeUTF8,
    PythonTokenizer,
    RegexReplace,
    RegexTokenizer,
    SlidingWindow,
    ToNumber,
    TruncateSequencePair,
    UnicodeCharTokenizer,
    WhitespaceTokenizer,
    WordpieceTokenizer,
)
from opforge.dataset.text.utils import NormalizeForm, Vocab, to_bytes, to_str

__all__ = [
    "Vocab", "NormalizeForm", "to_str", "to_bytes", "Lookup", "WhitespaceTokenizer", "UnicodeCharTokenizer",
    "RegexTokenizer", "BasicTokenizer", "WordpieceTokenizer", "BertTokenizer", "PythonTokenizer", "CaseFold",
    "NormalizeUTF8", "RegexReplace", "ToNumber", "SlidingWindow", "Ngram", "TruncateSequencePair", "transforms",
    "utils",
]  # fmt: skip
