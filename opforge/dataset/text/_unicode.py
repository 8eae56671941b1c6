"""The Unicode pieces MindSpore's text transforms take from ICU, on Python's ``unicodedata`` and ``re``:

- ``icu_regex(pattern)``: an ICU regular expression as a compiled Python one. ICU's ``\\p{..}`` / ``\\P{..}``
  (general categories, short or long names), ``\\x{hhhh}`` and ``\\s`` / ``\\S`` (ICU's white space,
  ``[\\t\\n\\f\\r\\p{Z}]``) are translated into character classes; the rest is Python's syntax, which shares
  ICU's for the common constructs (classes, alternation, quantifiers, groups, ``\\d``, ``\\w``).
- ``icu_replacement(replace)``: an ICU replacement string (``$1``, ``${name}``, ``\\$``) as a function of a match.
- ``WHITE_SPACE``: the characters of Unicode's White_Space property (ICU's ``u_isUWhiteSpace``).
- ``nfkc_casefold(text)``: ICU's NFKC_Casefold normalizer: default-ignorable characters removed, then
  NFKC(casefold(NFKC(text))).
- ``utf8_len(text)``: the UTF-8 byte length (MindSpore's token offsets count bytes).

The character categories come from Python's ``unicodedata`` (its Unicode version may differ from an ICU
build's for characters added since).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["icu_regex", "icu_replacement", "WHITE_SPACE", "nfkc_casefold", "normalize", "utf8_len", "category_is"]

_MAX = 0x10FFFF

WHITE_SPACE = frozenset(
    [*map(chr, range(0x09, 0x0E)), " ", "\x85", "\xa0", "\u1680", *map(chr, range(0x2000, 0x200B)), "\u2028",
     "\u2029", "\u202f", "\u205f", "\u3000"]
)  # fmt: skip

# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties): NFKC_Casefold maps these to nothing.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip

_LONG_CATEGORY_NAMES = {
    "letter": "L", "casedletter": "LC", "uppercaseletter": "Lu", "lowercaseletter": "Ll", "titlecaseletter": "Lt",
    "modifierletter": "Lm", "otherletter": "Lo", "mark": "M", "combiningmark": "M", "nonspacingmark": "Mn",
    "spacingmark": "Mc", "enclosingmark": "Me", "number": "N", "decimalnumber": "Nd", "digit": "Nd",
    "letternumber": "Nl", "othernumber": "No", "punctuation": "P", "punct": "P", "connectorpunctuation": "Pc",
    "dashpunctuation": "Pd", "openpunctuation": "Ps", "closepunctuation": "Pe", "initialpunctuation": "Pi",
    "finalpunctuation": "Pf", "otherpunctuation": "Po", "symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc",
    "modifiersymbol": "Sk", "othersymbol": "So", "separator": "Z", "spaceseparator": "Zs", "lineseparator": "Zl",
    "paragraphseparator": "Zp", "other": "C", "control": "Cc", "cntrl": "Cc", "format": "Cf", "surrogate": "Cs",
    "privateuse": "Co", "unassigned": "Cn",
}  # fmt: skip


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@functools.lru_cache(maxsize=1)
def _category_ranges() -> dict:
    """{two-letter general category: [(first, last) code point ranges]} over all of Unicode (one pass)."""
    ranges: dict = {}
    category = unicodedata.category
    previous, start = None, 0
    for cp in range(_MAX + 1):
        c = category(chr(cp))
        if c != previous:
            if previous is not None:
                ranges.setdefault(previous, []).append((start, cp - 1))
            previous, start = c, cp
    ranges.setdefault(previous, []).append((start, _MAX))
    return ranges


def _property_ranges(name: str) -> list:
    key = name.replace("_", "").replace(" ", "").replace("-", "")
    short = key if key in ("LC",) or len(key) <= 2 else _LONG_CATEGORY_NAMES.get(key.lower())
    if short is None and key.lower().startswith(("gc=", "generalcategory=")):
        return _property_ranges(key.split("=", 1)[1])
    table = _category_ranges()
    if short == "LC":
        cats = ["Lu", "Ll", "Lt"]
    elif short is not None and len(short) == 1 and short.upper() == short:
        cats = [c for c in table if c[0] == short]
    elif short in table:
        cats = [short]
    else:
        raise ValueError(
            f"the Unicode property \\p{{{name}}} is not supported: opforge's ICU patterns take the general "
            "categories (L, Lu, P, Po, Z, ... or their long names)"
        )
    return sorted(r for c in cats for r in table.get(c, []))


def _complement(ranges: list) -> list:
    out, next_cp = [], 0
    for a, b in sorted(ranges):
        if a > next_cp:
            out.append((next_cp, a - 1))
        next_cp = max(next_cp, b + 1)
    if next_cp <= _MAX:
        out.append((next_cp, _MAX))
    return out


def _class_body(ranges: list) -> str:
    parts = []
    for a, b in ranges:
        parts.append(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}")
    return "".join(parts)


def _space_ranges() -> list:
    z = _property_ranges("Z")
    return sorted([(0x09, 0x0A), (0x0C, 0x0D), *z])


def _read_braced(pattern: str, i: int, what: str) -> tuple:
    end = pattern.find("}", i)
    if end < 0:
        raise ValueError(f"the pattern {pattern!r} has an unterminated {what}{{...}}")
    return pattern[i + 1 : end], end + 1


def translate(pattern: str) -> str:
    """The ICU ``pattern`` in Python's ``re`` syntax (see the module's docstring)."""
    out, i, in_class, n = [], 0, False, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt in "pP":
                if i + 2 < n and pattern[i + 2] == "{":
                    name, i = _read_braced(pattern, i + 2, f"\\{nxt}")
                else:
                    name, i = pattern[i + 2 : i + 3], i + 3
                negate = nxt == "P"
                if name.startswith("^"):
                    name, negate = name[1:], not negate
                ranges = _property_ranges(name)
                if in_class:
                    out.append(_class_body(_complement(ranges) if negate else ranges))
                else:
                    out.append(("[^" if negate else "[") + _class_body(ranges) + "]")
                continue
            if nxt == "x" and i + 2 < n and pattern[i + 2] == "{":
                digits, i = _read_braced(pattern, i + 2, "\\x")
                out.append(f"\\U{int(digits, 16):08x}")
                continue
            if nxt in "sS":
                ranges = _space_ranges()
                negate = nxt == "S"
                if in_class:
                    out.append(_class_body(_complement(ranges) if negate else ranges))
                else:
                    out.append(("[^" if negate else "[") + _class_body(ranges) + "]")
                i += 2
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if not in_class and ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a leading ] is a literal
                out.append("\\]")
                i += 1
            continue
        if in_class and ch == "]":
            in_class = False
        elif in_class and ch == "[":  # ICU's nested sets are not translated: a literal [
            out.append("\\[")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def icu_regex(pattern: str) -> re.Pattern:
    return re.compile(translate(pattern))


def icu_replacement(replace: str):
    """An ICU replacement string as a function of a match: ``$n`` / ``${name}`` insert a group, a backslash
    escapes the next character, the rest is literal."""
    parts, literal, i = [], [], 0
    while i < len(replace):
        ch = replace[i]
        if ch == "\\" and i + 1 < len(replace):
            literal.append(replace[i + 1])
            i += 2
        elif ch == "$" and i + 1 < len(replace) and (replace[i + 1].isdigit() or replace[i + 1] == "{"):
            if literal:
                parts.append("".join(literal))
                literal = []
            if replace[i + 1] == "{":
                name, i = _read_braced(replace, i + 1, "$")
                parts.append((int(name) if name.isdigit() else name,))
            else:
                j = i + 1
                while j < len(replace) and replace[j].isdigit():
                    j += 1
                parts.append((int(replace[i + 1 : j]),))
                i = j
        else:
            literal.append(ch)
            i += 1
    if literal:
        parts.append("".join(literal))

    def expand(match: re.Match) -> str:
        return "".join(p if isinstance(p, str) else (match.group(p[0]) or "") for p in parts)

    return expand


def _is_default_ignorable(ch: str) -> bool:
    cp = ord(ch)
    return any(a <= cp <= b for a, b in _DEFAULT_IGNORABLE)


def nfkc_casefold(text: str) -> str:
    kept = "".join(c for c in text if not _is_default_ignorable(c))
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", kept).casefold())


def normalize(form: str, text: str) -> str:
    """``unicodedata.normalize`` with ``form`` None for no normalization."""
    return text if form is None else unicodedata.normalize(form, text)


def category_is(ch: str, categories: tuple) -> bool:
    return unicodedata.category(ch) in categories
