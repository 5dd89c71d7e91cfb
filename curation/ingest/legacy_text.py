"""A JSONL file written in a legacy encoding, told from its first bytes: GB18030 (GBK, GB2312: Chinese
corpora written on Windows) or Windows-1252 (Latin-1 text). Read as UTF-8 its every line with a
non-ASCII character is an ``invalid_utf8`` row that does not say why; the file is refused instead,
with the ``iconv`` command that converts it (:func:`~curation.ingest.jsonl_head.check_head`).

A UTF-8 file with a few damaged lines is read as it is (one row each): a file is refused only when
most of its first lines (more than half of those not blank) are not UTF-8, and its first bytes decode
strictly in one of the two encodings. GB18030 decodes nearly any run of bytes over 0x7F in twos, so
it is named only when those bytes come in runs (Chinese characters: two bytes each), not alone between
ASCII letters as accented letters of Windows-1252 do.

>>> legacy_encoding('{"text": "中文文本"}\\n{"text": "另一行"}\\n'.encode("gb18030"))
('GB18030', [1, 2])
>>> legacy_encoding('{"text": "café au lait"}\\n'.encode("cp1252")), legacy_encoding('{"text": "中文"}\\n'.encode())
(('CP1252', [1]), None)
"""

from __future__ import annotations

import codecs
import re

#: a byte over 0x7F with none beside it: an accented letter of a single-byte encoding
_ALONE = re.compile(rb"(?<![\x80-\xff])[\x80-\xff](?![\x80-\xff])")
#: the encodings tried, in order, by their ``iconv`` names and Python codecs
_LEGACY = (("GB18030", "gb18030"), ("CP1252", "cp1252"))


def legacy_encoding(head: bytes, ended: bool = True) -> tuple[str, list[int]] | None:
    """(the encoding, by its ``iconv`` name; the lines of ``head`` that are not UTF-8, 1-based) of a file
    whose first lines are mostly not UTF-8 and whose first bytes ``head`` decode strictly as GB18030 or Windows-1252;
    None for any other. ``ended``: ``head`` is the whole file (else its last line may be cut)."""
    if head.isascii():
        return None
    lines = head.split(b"\n")
    bad = [
        n
        for n, line in enumerate(lines, 1)
        if not line.isascii() and not _decodes(line, "utf-8", ended or n < len(lines))
    ]
    if len(bad) * 2 <= sum(1 for line in lines if line.strip()):
        return None
    for name, codec in _LEGACY:
        if _decodes(head, codec, ended) and (codec != "gb18030" or _paired(head)):
            return name, bad
    return None


def _decodes(data: bytes, codec: str, final: bool) -> bool:
    """Whether ``data`` decodes strictly as ``codec`` (a sequence cut at its end passes unless ``final``)."""
    try:
        codecs.getincrementaldecoder(codec)("strict").decode(data, final)
    except UnicodeDecodeError:
        return False
    return True


def _paired(head: bytes) -> bool:
    """Whether nearly all (90 %) of the bytes over 0x7F in ``head`` have another beside them.

    >>> _paired("中文".encode("gb18030")), _paired("résumé".encode("cp1252"))
    (True, False)
    """
    high = sum(1 for b in head if b > 0x7F)
    return len(_ALONE.findall(head)) * 10 <= high
