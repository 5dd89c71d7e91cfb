"""A JSONL line as ingest parses it: a size bound checked before parsing, and integer literals of
any length.

**Size.** ``json.loads`` of one line holds several copies of it at once (its bytes, the decoded
``str``, each string value, the parser's pieces): a 268 MB line peaked at 3.26 GB before
``max_chars`` could reject its text. A line over :func:`max_line_bytes` is ``too_large`` unparsed.

A line is read past a piece at a time (:func:`skip_line`) where only its end is wanted: when the run
is planned (the line a chunk's cut falls in) and when a line is over the bound.

**Long numbers.** An integer literal longer than Python converts (4,300 digits, its guard against
quadratic conversions: ``int()`` raises ValueError) is kept as its digits, a :class:`LongNumber`,
instead of failing the line, or the whole run. It is read as any number is: an id or url of one is
its text (as an id of ``3`` is ``"3"``), a ``meta`` value of one a string of its digits, and a text,
HTML or source field of one a number, not a string (``wrong_type``).

>>> rec = loads('{"id": ' + "9" * 5000 + ', "n": 12}')
>>> type(rec["id"]).__name__, len(rec["id"]), rec["n"]
('LongNumber', 5000, 12)
"""

from __future__ import annotations

import json
import math
from typing import Any

#: bytes read at a time from a line over 1 MiB
_PIECE = 1 << 20
#: bytes a line may take per character of ``max_chars`` (:func:`max_line_bytes`)
LINE_BYTES_PER_CHAR = 12


def max_line_bytes(max_chars: int) -> int:
    """The longest line (bytes) parsed: a text of ``max_chars`` characters written in JSON's widest
    escape, ``\\uXXXX`` (6 bytes a character), and as much again for the record's other fields (an
    HTML page, which ``max_chars`` bounds too, ``meta``). 0 (no bound) when ``max_chars`` is 0.

    >>> max_line_bytes(20_000_000), max_line_bytes(0)
    (240000000, 0)
    """
    return LINE_BYTES_PER_CHAR * max_chars


def too_large_line(size: int, max_bytes: int) -> str:
    """A ``too_large`` row's detail for a line of ``size`` bytes.

    >>> too_large_line(300_000_000, max_line_bytes(20_000_000))
    'a line of 300000000 bytes > 240000000 (12 x max_chars 20000000), not parsed'
    """
    return f"a line of {size} bytes > {max_bytes} ({LINE_BYTES_PER_CHAR} x max_chars {max_bytes // LINE_BYTES_PER_CHAR}), not parsed"


def read_line(fh: Any, left: int = -1, max_bytes: int = 0) -> tuple[bytes | int, int, bool]:
    """The next line of ``fh`` (at most ``left`` bytes; -1: no bound), 1 MiB at a time: (its bytes, or
    its length when it is over ``max_bytes`` (0: no bound), read on to its end and never held; its
    size; whether a newline ends it). A line over the bound costs at most ``max_bytes``, never its size.

    >>> import io
    >>> read_line(io.BytesIO(b"ab\\ncd")), read_line(io.BytesIO(b"abcdef\\ncd"), -1, 3), read_line(io.BytesIO(b"abcdef"), 4)
    ((b'ab\\n', 3, True), (7, 7, True), (b'abcd', 4, False))
    """
    pieces: list[bytes] = []
    size = 0
    while left < 0 or size < left:
        want = _PIECE if left < 0 else min(_PIECE, left - size)
        piece = fh.readline(want)
        size += len(piece)
        newline = piece.endswith(b"\n")
        if max_bytes and size > max_bytes:
            pieces.clear()
            more, newline = (
                (0, newline) if newline or len(piece) < want else skip_line(fh, left - size if left > 0 else -1)
            )
            return size + more, size + more, newline
        pieces.append(piece)
        if newline or len(piece) < want:
            break
    return (pieces[0] if len(pieces) == 1 else b"".join(pieces)), size, bool(pieces) and pieces[-1].endswith(b"\n")


def skip_line(fh: Any, left: int = -1) -> tuple[int, bool]:
    """The bytes of ``fh`` read on to the end of the current line (at most ``left``; -1: no bound),
    1 MiB at a time and never held, and whether a newline ends them."""
    n = 0
    while left < 0 or n < left:
        piece = fh.readline(_PIECE if left < 0 else min(_PIECE, left - n))
        n += len(piece)
        if not piece or piece.endswith(b"\n"):
            return n, piece.endswith(b"\n")
    return n, False


class LongNumber(str):
    """The digits of a JSON integer literal too long for ``int()``: a ``str`` that says it was a number."""

    __slots__ = ()


def json_int(literal: str) -> int | str:
    """``literal`` as an int, or as a :class:`LongNumber` when ``int()`` refuses its length.

    >>> json_int("-12"), json_int("1" + "0" * 5000)[:3]
    (-12, '100')
    """
    try:
        return int(literal)
    except ValueError:  # more digits than sys.get_int_max_str_digits(): checked before converting, so cheap
        return LongNumber(literal)


def json_float(literal: str) -> float | str:
    """``literal`` as a float, or as a :class:`LongNumber` when it overflows to an infinity (``1e999``:
    ``meta`` would hold null for it).

    >>> json_float("2.5"), json_float("1e999")
    (2.5, '1e999')
    """
    value = float(literal)
    return value if math.isfinite(value) else LongNumber(literal)


def loads(data: str | bytes) -> Any:
    """``json.loads`` with long integer and overflowing float literals kept (:func:`json_int`, :func:`json_float`)."""
    return json.loads(data, parse_int=json_int, parse_float=json_float)


def loads_repeated(data: str | bytes) -> tuple[Any, list[str]]:
    """:func:`loads`, and the keys written more than once in one object of ``data`` (each once, in
    order; [] when none). JSON keeps a repeated key's last value, and so does this: the object is the
    one :func:`loads` gives. Each object passes through a hook that compares its keys with its pairs
    (1 to 15 % more decoding time on real flat records, twice as much on a line of thousands of small
    objects; docs/ingest.md, **Repeated keys**).

    >>> loads_repeated('{"text": "a", "m": {"k": 1, "k": 2}, "text": "b"}')
    ({'text': 'b', 'm': {'k': 2}}, ['k', 'text'])
    """
    repeated: list[str] = []

    def object_of(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen and key not in repeated:
                    repeated.append(key)
                seen.add(key)
        return obj

    return json.loads(data, parse_int=json_int, parse_float=json_float, object_pairs_hook=object_of), repeated


def plain(value: Any) -> Any:
    """``value``, with a :class:`LongNumber` as a number (0 stands for it): for a field whose kind is
    checked (a text that is a number is ``wrong_type``, never a document of digits).

    >>> plain(LongNumber("1" * 5000)), plain("text")
    (0, 'text')
    """
    return 0 if isinstance(value, LongNumber) else value
