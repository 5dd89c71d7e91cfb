"""Turning raw records into schema rows, with a ledger reason for every record that cannot be used.

Pure functions: :func:`parse_jsonl_lines` for JSONL bytes, :func:`rows_from_records` for
records already decoded (Parquet, datasets). Nothing is skipped silently: a bad record
becomes a row whose ``drop_reason`` says why and whose ``drop_detail`` names file and line.

>>> df = parse_jsonl_lines([b'{"text": "hi"}', b'{bad'], "f.jsonl", 1, FieldMap(), "web")
>>> df["drop_reason"].tolist()
[None, 'malformed_json']
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Iterable
from typing import Any

import pandas as pd

from curation.errors import nearest
from curation.ingest.chat import CHAT_JSON, chat_text, is_turns, json_turns, missing_text_advice, null_chat
from curation.ingest.json_line import max_line_bytes, plain
from curation.ingest.jsonl_decode import REPEATED, REPEATED_KEYS, decode_jsonl_lines, repeated_text
from curation.ingest.language_field import MOVED, moved_to_meta
from curation.ingest.record_meta import LEFT_OUT, bounded_meta, id_field, id_text, merged_meta
from curation.ingest.source_field import MOVED as SOURCE_MOVED
from curation.ingest.source_field import resolved_source
from curation.schema import DOC_COLUMNS, DROP_DETAIL, DROP_REASON, SOURCES, DropReason, detail_json
from curation.text import content_id, drop_format

#: Columns added at ingest for ledger details and duplicate-id resolution; removed before output.
LOCATION_COLUMNS = ("_file", "_line")
#: The page HTML of a record (its ``html`` field, or a WARC response): kept apart as an artifact.
HTML_COLUMN = "_html"


@dataclasses.dataclass(frozen=True)
class FieldMap:
    """Which input field fills which schema column (e.g. ``text: content`` for code corpora)."""

    text: str = "text"
    id: str = "id"
    source: str = "source"
    url: str = "url"
    repo: str = "repo"
    path: str = "path"
    language: str = "language"
    meta: str = "meta"
    html: str = "html"
    chat: str = ""  #: chat turns (or ``question,answer`` fields) rendered to the text (curation/ingest/chat.py); "": none

    @classmethod
    def from_dict(cls, data: dict[str, str] | None, where: str = "ingest.fields") -> FieldMap:
        """The mapping of ``data`` (column → input field name); a ValueError naming ``where`` for a key
        that is no column or a value that is no field name."""
        data = {} if data is None else data
        if not isinstance(data, dict):
            raise ValueError(f"{where} is {str(data)[:80]!r}; give a mapping of column to input field, e.g. {{text: body}}")
        names = sorted(f.name for f in dataclasses.fields(cls))
        for key, value in data.items():
            if key not in names:
                near = nearest(key, names)
                raise ValueError(f"{where} has unknown column {key!r}{f' (did you mean {near!r}?)' if near else ''}; "
                                 f"valid: {', '.join(names)}")
            if not isinstance(value, str) or not value:
                raise ValueError(f"{where}.{key} = {str(value)[:80]!r}; give the name of an input field (a string)")
            if key == "chat" and (value.count(",") > 1 or not all(p.strip() for p in value.split(","))):
                raise ValueError(f"{where}.chat = {value[:80]!r}; give the field of chat turns (messages) or a question "
                                 "field and its answer field joined by a comma (prompt,response)")
        return cls(**data)


def parse_jsonl_lines(
    lines: Iterable[bytes], file: str, first_line: int, fields: FieldMap, source: str | None, max_chars: int = 0,
    max_meta_chars: int = 0,
) -> pd.DataFrame:
    """Decode JSONL lines (bytes, with or without their newline) into rows; blank lines are ignored."""
    records, errors, numbers = decode_jsonl_lines(lines, first_line, max_line_bytes(max_chars))
    return rows_from_records(records, errors, file, numbers, fields, source, max_chars, max_meta_chars)


def rows_from_records(
    records: list[dict[str, Any] | None],
    errors: list[tuple[str, str] | None] | None,
    file: str | list[str],
    lines: list[int],
    fields: FieldMap,
    source: str | None,
    max_chars: int = 0,
    max_meta_chars: int = 0,
) -> pd.DataFrame:
    """Map decoded records to schema rows and validate them.

    ``errors[i]`` (reason, message[, extra detail]) marks a record that could not be decoded. A record's HTML
    field goes to :data:`HTML_COLUMN` (never to ``meta``); a record with HTML and no text keeps a
    null text for the extract step to fill. ``meta`` over ``max_meta_chars`` leaves its largest fields out
    (:func:`~curation.ingest.record_meta.bounded_meta`), named in the private column ``LEFT_OUT``; a record's
    repeated keys are in ``REPEATED`` (:mod:`curation.ingest.jsonl_decode`).
    """
    cols: dict[str, list[Any]] = {c: [] for c in DOC_COLUMNS}
    reasons: list[str | None] = []
    details: list[str | None] = []
    pages: list[str | None] = []
    moved: list[str | None] = []  # a natural-language ``language`` field kept in meta (curation/ingest/language_field.py)
    sources: list[str | None] = []  # a source field naming no source, on an input with one (curation/ingest/source_field.py)
    left_out: list[str | None] = []  # meta fields left out, over max_meta_chars (curation/ingest/record_meta.py)
    repeated: list[str | None] = []  # keys a JSON line wrote twice (curation/ingest/jsonl_decode.py)
    errors = errors or [None] * len(records)
    mapped = {v for v in dataclasses.asdict(fields).values() if v} | {p.strip() for p in fields.chat.split(",") if p.strip()}
    chat_json: list[str | None] = []  # a kept text that is a conversation written as JSON (curation/ingest/chat.py)
    files = [file] * len(records) if isinstance(file, str) else file  # one file, or one per record (small files read together)
    for rec, err, line, f in zip(records, errors, lines, files, strict=True):
        location = f"{f}:{line}"
        repeated.append(repeated_text(rec.pop(REPEATED_KEYS)) if rec is not None and REPEATED_KEYS in rec else None)
        row, reason, message = _map_record(rec, err, fields, source, mapped, max_chars, max_meta_chars)
        chat_json.append(fields.text if reason is None and json_turns(row["text"]) is not None else None)
        html = row.pop(HTML_COLUMN, None)
        moved.append(row.pop(MOVED, None))
        sources.append(row.pop(SOURCE_MOVED, None))
        left_out.append(row.pop(LEFT_OUT, None) if reason is None else None)  # a document, whose meta is kept
        if not row["doc_id"]:
            row["doc_id"] = content_id(row["text"] if isinstance(row["text"], str) else (html or ""), location)
        pages.append(html if reason is None else None)
        for c in DOC_COLUMNS:
            cols[c].append(row.get(c))
        reasons.append(reason)
        details.append(detail_json(file=f, line=line, error=message, **(err[2] if err and len(err) > 2 else {})) if reason else None)
    df = pd.DataFrame(cols)
    df["n_tokens"] = pd.Series([0] * len(df), dtype="int64")
    df[DROP_REASON] = pd.Series(reasons, dtype=object)
    df[DROP_DETAIL] = pd.Series(details, dtype=object)
    df[HTML_COLUMN] = pd.Series(pages, dtype=object)
    df[MOVED] = pd.Series(moved, dtype=object)
    df[SOURCE_MOVED] = pd.Series(sources, dtype=object)
    df[LEFT_OUT] = pd.Series(left_out, dtype=object)
    df[REPEATED] = pd.Series(repeated, dtype=object)
    df[CHAT_JSON] = pd.Series(chat_json, dtype=object)
    df["_file"] = file
    df["_line"] = pd.Series(lines, dtype="int64")
    return df


def _map_record(
    rec: dict[str, Any] | None,
    err: tuple[str, str] | None,
    fields: FieldMap,
    default_source: str | None,
    mapped: set[str],
    max_chars: int,
    max_meta_chars: int,
) -> tuple[dict[str, Any], str | None, str | None]:
    row: dict[str, Any] = {c: None for c in DOC_COLUMNS}
    row["doc_id"] = None
    if rec is None:
        row["text"] = None
        row["source"] = default_source or "unknown"
        assert err is not None
        return row, err[0], err[1]
    raw_id = _utf8(rec.get(ids := id_field(rec, fields.id)))  # `doc_id` (curate's own column) for a record with no `id`
    row["doc_id"] = id_text(raw_id) if not isinstance(raw_id, (dict, list, bool)) else None
    source, row[SOURCE_MOVED] = resolved_source(_utf8(rec.get(fields.source)), default_source)  # "c4" on a --source web file: web
    row["source"] = source if isinstance(source, str) else (default_source or "unknown")
    for col in ("url", "repo", "path", "language"):
        v = _utf8(rec.get(getattr(fields, col)))
        row[col] = None if v is None or isinstance(v, (dict, list, bool)) else v.decode(errors="replace") if isinstance(v, bytes) else str(v)
    for name in (ids, fields.source, fields.url, fields.repo, fields.path, fields.language):  # not str()'d to "{'a': 1}"
        v = plain(_utf8(rec.get(name))) if name == fields.source else _utf8(rec.get(name))
        if isinstance(v, (dict, list, bool)) or (name == fields.source and v is not None and not isinstance(v, str) and row[SOURCE_MOVED] is None):
            return row, DropReason.WRONG_TYPE.value, f"{name!r} is {_JSON_KIND.get(type(v), 'a ' + type(v).__name__)}, not a string"
    extra = {k: v for k, v in rec.items() if k not in mapped and k != ids} | ({fields.source: row[SOURCE_MOVED]} if row[SOURCE_MOVED] else {})
    if moved_to_meta(row["language"], row["source"]):  # "zh", "cmn_Hani" on a web page: the text's language, kept in meta
        extra[fields.language], row[MOVED], row["language"] = row["language"], row["language"], None
    row["meta"], row[LEFT_OUT] = bounded_meta(merged_meta(rec.get(fields.meta), extra), max_meta_chars)
    text, html = plain(rec.get(fields.text)), plain(rec.get(fields.html))  # a long number is a number, not text
    for name, value in ((fields.text, text), (fields.html, html)):
        if isinstance(value, bytes) and isinstance(_utf8(value), bytes):
            return row, DropReason.INVALID_UTF8.value, f"{name!r} is binary and not valid UTF-8"
    text, html = _utf8(text), _utf8(html)  # a binary column (Parquet BYTE_ARRAY without the UTF8 annotation) of UTF-8 is text
    if fields.chat:  # a conversation (or a question and its answer) rendered to one text
        rendered, reason, bad = chat_text(rec, fields.chat, fields.text)
        if reason is not None:
            return row, reason, bad
        text = rendered if rendered is not None else text
    if isinstance(text, str) and blank(text) and isinstance(html, str) and html.strip():
        text = None  # an empty text beside the page's HTML is no text: it is extracted from the HTML
    row["text"] = text if isinstance(text, str) else None
    if isinstance(html, str) and html.strip():
        row[HTML_COLUMN] = html.replace("\x00", "")
        if max_chars and len(html) > max_chars:
            row[HTML_COLUMN] = None  # a record with its own text keeps it, without the page
            if text is None:
                return row, DropReason.TOO_LARGE.value, f"{len(html)} characters of HTML > max_chars {max_chars}"
        if text is None:
            return row, *_check_source(source)  # text comes from the extract step
    if text is None and html is not None:  # a page field that holds no page, and no text
        if isinstance(html, str):
            return row, DropReason.EMPTY_TEXT.value, f"no {fields.text!r} and {fields.html!r} is empty or whitespace only"
        return row, DropReason.WRONG_TYPE.value, f"{fields.html!r} is {_JSON_KIND.get(type(html), 'a ' + type(html).__name__)}, not a string"
    if text is None and fields.chat and (null := null_chat(rec, fields.chat)) is not None:
        return row, DropReason.MISSING_TEXT.value, null  # the chat field is there, with nothing in it
    if text is None:  # no text field, or a null one (a rendered conversation is text)
        return row, DropReason.MISSING_TEXT.value, (f"no {fields.text!r} field{missing_text_advice(rec)}" if fields.text not in rec
                                                    else f"{fields.text!r} {NULL_TEXT}")
    if not isinstance(text, str):
        turns = f": it holds chat turns, which ingest.fields.chat={fields.text} renders to the text" if is_turns(text) else ""
        return row, DropReason.WRONG_TYPE.value, f"{fields.text!r} is {_JSON_KIND.get(type(text), 'a ' + type(text).__name__)}, not a string{turns}"
    if "\x00" in text:
        row["text"] = text.replace("\x00", "")
        return row, DropReason.NUL_BYTE.value, "text contains a NUL byte"
    if blank(text):
        return row, DropReason.EMPTY_TEXT.value, ("text is empty or whitespace only" if not text.strip() else
                                                  "text is only whitespace and invisible format characters (Unicode Cf: a "
                                                  "byte order mark, zero-width spaces or joiners)")
    if max_chars and len(text) > max_chars:
        row["text"] = text[:1000]
        return row, DropReason.TOO_LARGE.value, f"{len(text)} characters > max_chars {max_chars}"
    return row, *_check_source(source)


_JSON_KIND = {list: "an array", dict: "an object", int: "a number", float: "a number", bool: "a boolean", bytes: "binary and not UTF-8"}
#: how a ``missing_text`` row's detail ends when the record has the text field, with no value in it
NULL_TEXT = "is null"


def blank(text: str) -> bool:
    """Whether ``text`` shows nothing: empty, or only whitespace and Unicode format characters
    (category Cf: byte order mark, zero-width space and joiners, word joiner, soft hyphen), which
    ``str.isspace`` does not count. Only the invisible characters it starts with are looked at.

    >>> blank(" \\ufeff\\u200b\\u200c\\u200d\\u2060 "), blank("\\u200bx"), blank(" \\n"), blank("a")
    (True, False, True, False)
    """
    stripped = text.strip()
    if not stripped or stripped.isascii() or unicodedata.category(stripped[0]) != "Cf":
        return not stripped
    return not drop_format(stripped).strip()


def _utf8(value: Any) -> Any:
    r"""``value`` decoded if it is bytes of valid UTF-8, else unchanged.

    >>> _utf8(b"caf\xc3\xa9"), _utf8(b"\xff"), _utf8(3)
    ('café', b'\xff', 3)
    """
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def _check_source(source: str | None) -> tuple[str | None, str | None]:
    if source is None:
        return DropReason.UNKNOWN_SOURCE.value, "no source: give --source, a recipe input entry or a source field"
    if source not in SOURCES:
        return DropReason.UNKNOWN_SOURCE.value, f"source {source!r} is not one of {list(SOURCES)}"
    return None, None
