"""Numbers written in Unicode, read as inspect_ai reads them, so that `match(numeric=True)`
grades a reply as inspect's own scorer does: vulgar fractions ('2½'), superscript exponents
('3²'), digits of any script ('١٢', fullwidth '１２'), Unicode signs, locale separators
('1.234,5') and Chinese numerals ('十二', '二〇二五', '三點五').

Ported from inspect_ai 0.3.285 (`inspect_ai/scorer/_unicode.py`, MIT licence), rule for rule;
`tests/verifiers/test_inspect_parity.py` compares the two on thousands of generated strings.
"""

from __future__ import annotations

import unicodedata

_SUPERSCRIPT_DIGITS = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹")
_SUPERSCRIPT_SIGNS = frozenset("⁻⁺")
_SUPERSCRIPT_TRANS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_MINUS = frozenset({"-", "−", "﹣", "－"})
_PLUS = frozenset({"+", "＋", "﹢"})
_DECIMAL_EXTRAS = frozenset({"٫", "．"})
_GROUP = frozenset({",", "，", "﹐", "、", "٬", " ", "\u00a0", "\u202f", "\u2009", "\u2007", "\u2008",
                    "'", "’", "ʼ", "＇"})
_CH_DIGITS = {"零": 0, "〇": 0, "○": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "壹": 1, "贰": 2, "貳": 2, "叁": 3, "參": 3, "肆": 4, "伍": 5, "陆": 6,
              "陸": 6, "柒": 7, "捌": 8, "玖": 9, "两": 2, "兩": 2, "幺": 1}
_CH_ALT_TENS = {"廿": 20, "卅": 30, "卌": 40}
_CH_SMALL_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CH_LARGE_UNITS = {"万": 10_000, "萬": 10_000, "亿": 100_000_000, "億": 100_000_000, "兆": 1_000_000_000_000}
_CH_NEG = frozenset({"负", "負"})
_CH_POS = frozenset({"正"})
_CH_DEC_WORDS = ("点", "點")
_CH_ZEROS = frozenset({"零", "〇", "○"})
_CH_ANY = (frozenset(_CH_DIGITS) | frozenset(_CH_SMALL_UNITS) | frozenset(_CH_LARGE_UNITS)
           | frozenset(_CH_DEC_WORDS) | _CH_NEG | _CH_POS | frozenset(_CH_ALT_TENS))


def unicode_number_to_float(s: str) -> float:
    """`s` as a number; ValueError when it is not one. A leading sign binds to the base before a
    superscript exponent applies: '-2²' is 4.0."""
    text = s.strip()
    if not text:
        raise ValueError("Empty string")
    text, negative = _consume_leading_signs(text)
    single = _single_char(text)
    if single is not None:
        return -float(single) if negative else float(single)
    base_text, exponent = _split_superscript_exponent(text)
    base = _with_vulgar_fraction(base_text)
    if base is None:
        raise ValueError(f"Could not parse number from {s!r}")
    if negative:
        base = -base
    if exponent is not None:
        try:
            return float(base**exponent)
        except Exception as exc:  # noqa: BLE001 - inspect turns every failure into ValueError
            raise ValueError(f"Invalid exponent operation for {s!r}: {exc}") from exc
    return float(base)


def _split_superscript_exponent(s: str) -> tuple[str, int | None]:
    if not s:
        return s, None
    end = len(s) - 1
    while end >= 0 and (s[end].isspace() or s[end] in _GROUP):
        end -= 1
    if end < 0:
        return s.strip(), None
    j = end
    while j >= 0 and s[j] in _SUPERSCRIPT_DIGITS:
        j -= 1
    start = j + 1
    if start > end:
        return s.strip(), None
    if j >= 0 and s[j] in _SUPERSCRIPT_SIGNS:
        start = j
    base = s[:start].rstrip()
    if not base:
        return s.strip(), None
    exponent = s[start:end + 1].translate(_SUPERSCRIPT_TRANS)
    if exponent in ("", "+", "-") or all(c in "+-" for c in exponent):
        raise ValueError(f"Invalid exponent in {s!r}")
    try:
        return base, int(exponent)
    except Exception:  # noqa: BLE001
        raise ValueError(f"Invalid exponent in {s!r}") from None


def _fraction_value(ch: str) -> float | None:
    try:
        value = unicodedata.numeric(ch)
    except Exception:  # noqa: BLE001
        return None
    return float(value) if 0.0 < value < 1.0 else None


def _with_vulgar_fraction(s: str) -> float | None:
    if not s:
        return None
    hits = [(i, v) for i, ch in enumerate(s) if (v := _fraction_value(ch)) is not None]
    if not hits:
        return _core_number(s)
    if len(hits) > 1:
        raise ValueError(f"Multiple fraction characters in {s!r}")
    index, fraction = hits[0]
    head, tail = s[:index].strip(), s[index + 1:].strip()
    if tail and any(not (c.isspace() or c in _GROUP) for c in tail):
        raise ValueError(f"Unexpected characters after fraction in {s!r}")
    if not head:
        return fraction
    value = _core_number(head)
    if value is None:
        raise ValueError(f"Invalid base part in {s!r}")
    return value + fraction


def _core_number(s: str) -> float | None:
    s = s.strip()
    if not s:
        return None
    if any(ch in _CH_ANY for ch in s):
        value = _chinese_number(s)
        if value is not None:
            return float(value)
    generic = _generic_digits(s)
    if generic is not None:
        return float(generic)
    return _single_char(s) if len(s) == 1 else None


def _consume_leading_signs(s: str) -> tuple[str, bool]:
    negative = False
    text = s.lstrip()
    while text:
        ch = text[0]
        if ch in _MINUS or ch in _CH_NEG:
            negative = not negative
        elif not (ch in _PLUS or ch in _CH_POS):
            break
        text = text[1:].lstrip()
    return text, negative


def _single_char(s: str) -> float | None:
    if len(s) != 1:
        return None
    try:
        return float(unicodedata.numeric(s))
    except Exception:  # noqa: BLE001
        return None


def _decimal_mark(s: str) -> str | None:
    dots = [i for i, ch in enumerate(s) if ch == "."]
    commas = [i for i, ch in enumerate(s) if ch == ","]
    if dots and commas:
        return "." if dots[-1] > commas[-1] else ","
    if dots:
        return "."
    if commas:
        tail = sum(1 for ch in s[commas[-1] + 1:] if _ascii_digit(ch) is not None)
        if tail in (1, 2, 3) and "." not in s:
            return ","
    return None


def _generic_digits(s: str) -> float | None:
    s = s.strip()
    if not s:
        return None
    mark = _decimal_mark(s)
    out: list[str] = []
    seen_decimal = seen_exp = False
    i = 0
    while i < len(s):
        ch = s[i]
        if ch in ("e", "E") and not seen_exp:
            if not out:
                return None
            out.append(ch)
            seen_exp = True
            i += 1
            if i < len(s) and (s[i] in _PLUS or s[i] in _MINUS):
                out.append("+" if s[i] in _PLUS else "-")
                i += 1
            continue
        if ch in _DECIMAL_EXTRAS or (mark and ch == mark):
            if seen_decimal:
                return None
            out.append(".")
            seen_decimal = True
        elif ch in _GROUP or ch.isspace() or (mark and ch in {",", "."} and ch != mark):
            pass
        elif (digit := _ascii_digit(ch)) is not None:
            out.append(digit)
        else:
            return None  # a Chinese numeral (the caller's other parser) or an unknown symbol
        i += 1
    if not out or all(c in {".", "e", "E", "+", "-"} for c in out):
        return None
    try:
        return float("".join(out))
    except Exception:  # noqa: BLE001
        return None


def _ascii_digit(ch: str) -> str | None:
    if "0" <= ch <= "9":
        return ch
    for read in (unicodedata.decimal, unicodedata.digit):
        try:
            return str(read(ch))
        except Exception:  # noqa: BLE001, S112
            continue
    if ch in _CH_DIGITS:
        return str(_CH_DIGITS[ch])
    return None


def _chinese_number(s: str) -> float | None:
    s = s.strip()
    if not s:
        return None
    integer, fraction = s, ""
    for mark in (*_CH_DEC_WORDS, "．", "."):
        if mark in s:
            integer, _, fraction = s.partition(mark)
            break
    if not any(ch in _CH_SMALL_UNITS or ch in _CH_LARGE_UNITS or ch in _CH_ALT_TENS for ch in integer):
        digits = _digits(integer)
        if digits is None:
            return None
        whole = int("".join(digits)) if digits else 0
    else:
        units = _chinese_integer(integer)
        if units is None:
            return None
        whole = units
    decimals = _digits(fraction)
    if decimals is None:
        return None
    value, place = 0.0, 0.1
    for digit in decimals:
        value += int(digit) * place
        place /= 10.0
    return float(whole) + value


def _digits(text: str) -> list[str] | None:
    """The ASCII digits of `text`'s digits of any script, spaces skipped; None at another character."""
    digits = []
    for ch in text:
        if ch.isspace():
            continue
        digit = _ascii_digit(ch)
        if digit is None:
            return None
        digits.append(digit)
    return digits


def _chinese_integer(s: str) -> int | None:
    total = section = number = 0
    for ch in s:
        if ch.isspace() or ch in _CH_ZEROS:
            continue
        if ch in _CH_ALT_TENS:
            section += _CH_ALT_TENS[ch]
        elif ch in _CH_DIGITS:
            number = _CH_DIGITS[ch]
        elif (digit := _ascii_digit(ch)) is not None:
            number = int(digit)
        elif ch in _CH_SMALL_UNITS:
            section += (number or 1) * _CH_SMALL_UNITS[ch]
            number = 0
        elif ch in _CH_LARGE_UNITS:
            total += (section + number) * _CH_LARGE_UNITS[ch]
            section = number = 0
        else:
            return None
    return total + section + number
