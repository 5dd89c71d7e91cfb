"""Planning one JSONL file (plain, gzip or zstd): its first record checked, its chunks found, and
a compressed stream that ends early or is damaged said when the run is planned.

A cut stream keeps its complete records; a gzip member (zstd frame) whose data fails to decompress
or fails its check is dropped whole, since gzip checks a member's CRC only at its end: the records
decompressed before the error may be garbled; so is a member whose header is damaged. Reading goes
on at the next member that decompresses (:mod:`curation.ingest.jsonl_resync`). Either way a warning names the file (visible with
``--quiet``), and each damaged member, or the cut, is one ``truncated_input`` ledger row, made by
the chunk that ends before it (the file's last chunk for a cut).
"""

from __future__ import annotations

import logging
from pathlib import Path

from curation.ingest.chat import check_fields, kind, turns_fix
from curation.ingest.chunks import plain_chunks
from curation.ingest.discover import InputError
from curation.ingest.json_line import max_line_bytes
from curation.ingest.jsonl_head import first_record
from curation.ingest.jsonl_resync import Chunk, compressed_chunks, warning
from curation.ingest.records import FieldMap
from curation.ingest.streams import compression

log = logging.getLogger(__name__)


def jsonl_chunks(path: Path, fields: FieldMap, block: int, max_chars: int = 0) -> tuple[list[Chunk], int]:
    """The file's chunks (:data:`~curation.ingest.jsonl_resync.Chunk`: start, end and first line, the
    member a chunk's stream is opened at, the damaged member it ends before) and the (decompressed)
    offset where the last one ends. ``max_chars``: the reader's (0: none): the first line after a
    damaged member is read within its line bound (:func:`~curation.ingest.json_line.max_line_bytes`) too."""
    comp = compression(path)  # a first member whose header is damaged is read past too
    if path.name.endswith((".gz", ".zst")) and comp is None and path.stat().st_size:
        raise InputError(f"{path}: the name says compressed but the content is not gzip or zstd")
    _check_first_record(path, fields)
    if comp is None:
        return [(s, e, n, None, None) for s, e, n in plain_chunks(path, block)], path.stat().st_size
    chunks, end, kept, stops = compressed_chunks(path, block, max_line_bytes(max_chars))
    if stops:
        log.warning("%s", warning(path, stops))
    elif kept == 0:  # as a 0-byte file is said
        log.warning("%s decompresses to nothing (0 bytes): no documents", path)
    return chunks, end


def _check_first_record(path: Path, fields: FieldMap) -> None:
    """A file whose first record has neither the text field nor the HTML field is refused: the
    mapping is most likely wrong (the error names the fields it has, and the chat turns or the
    question/answer pair that hold its text: :mod:`curation.ingest.chat`). So is one whose text field
    holds chat turns."""
    first = first_record(path)
    if first is None:
        return
    kinds = {k: kind(v) for k, v in first.items()}
    check_fields(str(path), kinds, fields)
    chat = [p.strip() for p in fields.chat.split(",")] if fields.chat else []
    if fields.text in first or fields.html in first or (chat and all(p in first for p in chat)):
        return
    nested = "." in fields.text and isinstance(first.get(fields.text.split(".")[0]), dict)
    fix = (f"fields are read at the top level only: flatten the records first (jq -c '{{text: .{fields.text}, source}}')" if nested
           else turns_fix(kinds) or "map it with ingest.fields.text=<field> (or ingest.fields.html=<field> for pages)")
    raise InputError(f"{path}: the first record has no {fields.text!r} field (fields: {sorted(first)[:20]}); {fix}")
