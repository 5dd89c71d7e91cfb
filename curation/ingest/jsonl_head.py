"""Checks of a JSONL file's first bytes when the run is planned: a file whose lines are not UTF-8
JSON Lines is refused before any output, with the command that converts it, instead of becoming
one ledger row per line (or one for the whole file) that does not say why.

Refused: a JSON array (it opens with ``[``), a file compressed twice, UTF-16 or UTF-32 text (a byte order mark, or the
NUL bytes every other byte that ASCII text has in UTF-16), GB18030 or Windows-1252 text (most of its first lines not UTF-8:
:mod:`curation.ingest.legacy_text`), and line ends of a carriage return
alone (CR, classic Mac OS: the file would be one line). CRLF line ends are read as LF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.ingest.discover import InputError
from curation.ingest.json_line import loads, skip_line
from curation.ingest.legacy_text import legacy_encoding
from curation.ingest.streams import BOM, MAGIC, open_input

#: bytes read to judge the encoding and the line ends; up to :data:`_LINE_SCAN` while no line end shows
_HEAD = 1 << 16
_LINE_SCAN = 1 << 20
#: the longest first record parsed (16 MiB): a longer one is passed over, the next one looked at
_RECORD_SCAN = 1 << 24
_CR_TO_LF = "tr '\\r' '\\n'"
_LEGACY_NAMES = {"GB18030": "GB18030 (GBK, GB2312)", "CP1252": "Windows-1252 (Latin-1)"}
_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32BE"), (b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\xfe\xff", "UTF-16BE"), (b"\xff\xfe", "UTF-16LE"))


def first_record(path: Path) -> dict[str, Any] | None:
    """The first JSON object among the file's first 100 lines, once the file's first bytes pass
    :func:`check_head`. A file whose first non-blank line opens with ``[`` is refused: it is one
    JSON array (a common ``.json`` layout), and its lines are not records; so is one whose first
    line is ``{`` alone (one object written over many lines)."""
    try:
        with open_input(path) as fh:
            head = fh.read(_HEAD)
            ended = len(head) < _HEAD
            while not ended and b"\n" not in head and b"\r" not in head and len(head) < _LINE_SCAN:
                more = fh.read(_HEAD)  # a long first record: read on to its line end
                head, ended = head + more, len(more) < _HEAD
        check_head(path, head, ended)
        with open_input(path) as fh:
            seen = False  # a non-blank line
            for _ in range(100):
                raw = fh.readline(_RECORD_SCAN)
                if not raw:
                    return None
                if long := len(raw) == _RECORD_SCAN and not raw.endswith(b"\n"):
                    skip_line(fh)  # never held whole: its start is looked at, not parsed
                if not seen and (start := raw.removeprefix(BOM).strip()):
                    seen = True
                    if start == b"{":  # json.dump(..., indent=2), jq .: one object over many lines
                        raise InputError(f"{path} opens with a line of '{{' alone: one JSON object written over many lines, "
                                         f"not JSON Lines (one object a line); if it describes the dataset, leave it out of "
                                         f"--input; if its records are documents, write them one a line first (jq -c)")
                    if start.startswith(b"["):
                        plain = path.suffix.lower() not in (".gz", ".zst")
                        lines = f"{path.stem}.jsonl" if path.suffix.lower() == ".json" else _renamed(path.name, "lines")  # never the file itself
                        how = f"jq -c '.[]' {path.name} > {lines}" if plain else "decompress it, then jq -c '.[]'"
                        raise InputError(f"{path} opens with '[': a JSON array, not JSON Lines (one object a line); "
                                         f"convert it first ({how})")
                if long:  # a record over 16 MiB is not parsed here (its reader ledgers it when over the bound, json_line.py)
                    continue
                try:
                    obj = loads(raw)  # a long integer literal kept as its digits
                except (ValueError, RecursionError):  # its row says why, when the file is read
                    continue
                if isinstance(obj, dict):
                    return obj
    except (EOFError, OSError) as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from exc
    return None


def check_head(path: Path, head: bytes, ended: bool = True) -> None:
    """Refuse a file whose first (decompressed) bytes ``head`` are UTF-16/32, GB18030 or Windows-1252, or end lines
    with CR alone; ``ended``: ``head`` is the whole file (a CR at its end is no cut CRLF).

    >>> check_head(Path("a.jsonl"), '{"text": "hi"}\\n'.encode("utf-16-le"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    curation.ingest.discover.InputError: a.jsonl is UTF-16LE text (no byte order mark), not UTF-8: ...
    """
    inner = next((name for magic, name in MAGIC.items() if head.startswith(magic)), None)
    if inner is not None and path.suffix.lower() in (".gz", ".zst"):  # compressed twice: its lines would be binary
        raise InputError(f"{path} decompresses to {inner} data again (compressed twice); decompress it once more first "
                         f"(e.g. {'gzip' if path.suffix.lower() == '.gz' else 'zstd'} -dc {path.name} | {inner} -dc | gzip > "
                         f"{_renamed(path.name[: -len(path.suffix)], 'once')}.gz)")
    encoding, bom = text_encoding(head)
    if encoding:
        how = _convert(path, f"iconv -f {encoding[:-2] if bom else encoding} -t UTF-8", "utf8")
        raise InputError(f"{path} is {encoding} text ({'with a byte order mark' if bom else 'no byte order mark'}), not UTF-8: "
                         f"JSON Lines must be UTF-8; convert it first ({how})")
    if legacy := legacy_encoding(head, ended):
        name, bad = legacy
        where = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
        raise InputError(f"{path} is {_LEGACY_NAMES[name]} text, not UTF-8: {len(bad)} of its first lines ({where}) are not UTF-8 "
                         f"and its first bytes decode as {name}; JSON Lines must be UTF-8; convert it first "
                         f"({_convert(path, f'iconv -f {name} -t UTF-8', 'utf8')}), or, if it is UTF-8 with those lines damaged, mend them")
    body = head if ended else head.removesuffix(b"\r")  # a CRLF cut between its CR and its LF
    if b"\r" in body and b"\n" not in body:
        raise InputError(f"{path}: its lines end with a carriage return alone (CR, classic Mac OS line ends), so it would "
                         f"read as one line; convert them to LF first ({_convert(path, _CR_TO_LF, 'lf')})")


def text_encoding(head: bytes) -> tuple[str | None, bool]:
    """(``UTF-16LE``/``UTF-16BE``/``UTF-32LE``/``UTF-32BE`` or None, whether a byte order mark says so).

    Without a mark: NUL bytes at one parity of the offsets (UTF-16, ASCII's high byte) or two
    in every four (UTF-32); UTF-8 JSON Lines has no NUL byte at all.

    >>> text_encoding(b"\\xff\\xfe{\\x00"), text_encoding('{"a": 1}'.encode("utf-16-be")), text_encoding(b'{"a": 1}')
    (('UTF-16LE', True), ('UTF-16BE', False), (None, False))
    """
    for mark, name in _BOMS:
        if head.startswith(mark):
            return name, True
    sample = head[:4096]
    if sample.count(0) < 8:
        return None, False
    n4 = [sample[i::4].count(0) for i in range(4)]
    quads = len(sample) // 4
    if n4[2] >= 0.9 * quads and n4[3] >= 0.9 * quads:
        return "UTF-32LE", False
    if n4[0] >= 0.9 * quads and n4[1] >= 0.9 * quads:
        return "UTF-32BE", False
    even, odd = n4[0] + n4[2], n4[1] + n4[3]
    if odd >= 8 and odd >= 4 * even:
        return "UTF-16LE", False
    if even >= 8 and even >= 4 * odd:
        return "UTF-16BE", False
    return None, False


def _convert(path: Path, command: str, tag: str) -> str:
    """``command`` (a filter) as a shell line that writes a converted copy of ``path``, decompressed.

    >>> _convert(Path("a.jsonl"), "iconv -f UTF-16 -t UTF-8", "utf8"), _convert(Path("b.json.gz"), "tr", "lf")
    ('iconv -f UTF-16 -t UTF-8 < a.jsonl > a.utf8.jsonl', 'gzip -dc b.json.gz | tr > b.lf.json')
    """
    name = path.name
    if path.suffix.lower() in (".gz", ".zst"):
        tool = "zstd" if path.suffix.lower() == ".zst" else "gzip"
        return f"{tool} -dc {name} | {command} > {_renamed(name[: -len(path.suffix)], tag)}"
    return f"{command} < {name} > {_renamed(name, tag)}"


def _renamed(name: str, tag: str) -> str:
    """``a.jsonl`` → ``a.utf8.jsonl``."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}.{tag}.{suffix}" if dot and stem else f"{name}.{tag}"
