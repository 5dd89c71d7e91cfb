"""Planning one JSONL file (plain, gzip or zstd): its first record checked, its chunks found, and
a compressed stream that ends early or is corrupt said when the run is planned.

A cut stream keeps its complete records (:func:`~curation.ingest.chunks.compressed_chunks`); a
gzip member (zstd frame) whose data fails to decompress or fails its check is dropped whole,
since gzip checks a member's CRC only at its end: the records decompressed before the error may
be garbled. Either way a warning names the file (visible with ``--quiet``) and the file's last
chunk ledgers one ``truncated_input`` row.
"""

from __future__ import annotations

import logging
from pathlib import Path

from curation.ingest.chunks import Stop, compressed_chunks, plain_chunks
from curation.ingest.discover import InputError
from curation.ingest.jsonl_head import first_record
from curation.ingest.records import FieldMap
from curation.ingest.streams import magic_kind

log = logging.getLogger(__name__)


def jsonl_chunks(path: Path, fields: FieldMap, block: int) -> tuple[list[tuple[int, int, int]], int, Stop | None]:
    """(start, end, first line) of the file's chunks, the bytes they hold (decompressed) and, for a
    compressed file that fails its check, where its kept lines end (the last chunk's ledger row)."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    comp = magic_kind(head)
    if path.name.endswith((".gz", ".zst")) and comp is None and head:
        raise InputError(f"{path}: the name says compressed but the content is not gzip or zstd")
    _check_first_record(path, fields)
    if comp is None:
        return plain_chunks(path, block), path.stat().st_size, None
    chunks, size, stop = compressed_chunks(path, block)
    if stop is not None:
        log.warning("%s", stop.warning(path))
    elif size == 0:  # as a 0-byte file is said
        log.warning("%s decompresses to nothing (0 bytes): no documents", path)
    return chunks, size, stop if stop is not None and stop.member is not None else None


def _check_first_record(path: Path, fields: FieldMap) -> None:
    """A file whose first record has neither the text field nor the HTML field is refused: the
    mapping is most likely wrong (the error names the fields it has)."""
    first = first_record(path)
    if first is None or fields.text in first or fields.html in first:
        return
    nested = "." in fields.text and isinstance(first.get(fields.text.split(".")[0]), dict)
    chat = next((k for k, v in first.items() if isinstance(v, list) and v and all(isinstance(t, dict) and "content" in t for t in v)), None)
    fix = (f"fields are read at the top level only: flatten the records first (jq -c '{{text: .{fields.text}, source}}')" if nested
           else f"{chat!r} holds chat turns, which ingest does not read: render each conversation to one text (your "
                f"chat template, or jq -c '{{id, text: ([.{chat}[] | .role + \": \" + .content] | join(\"\\n\\n\")), source}}') "
                "and map that field" if chat
           else "map it with ingest.fields.text=<field> (or ingest.fields.html=<field> for pages)")
    raise InputError(f"{path}: the first record has no {fields.text!r} field (fields: {sorted(first)[:20]}); {fix}")
