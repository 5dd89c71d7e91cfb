"""The files of an input folder that ingest does not read: sidecars passed over quietly, data it
cannot read (which stops the run: skipping it would lose documents unsaid), and the rest (said
in one warning).

>>> [kind(n) for n in ("_SUCCESS", "LICENSE.txt", "load.py", "b.jsonl.bz2", "c.csv", "logo.png")]
['sidecar', 'sidecar', 'sidecar', 'data', 'data', 'other']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

#: what a folder may hold beside its data: documentation, licences, checksums, a dataset's own
#: scripts (a Hugging Face dataset repository ships its loading script); README.md among them
_SIDECAR_STEMS = ("readme", "license", "licence", "copying", "notice", "authors", "changelog", "changes", "citation",
                  "contributing", "manifest", "requirements", "checksums", "sha256sums", "sha512sums", "sha1sums", "md5sums")
_SIDECAR_SUFFIXES = (".md", ".rst", ".sha256", ".sha512", ".sha1", ".md5", ".crc", ".py", ".sh", ".ipynb")
#: compressions ingest does not read (it reads gzip and zstd), and the tool that decompresses each
_COMPRESSIONS = {".bz2": "bzip2", ".xz": "xz", ".lzma": "xz", ".lz4": "lz4", ".br": "brotli", ".z": "gzip",
                 ".snappy": None, ".gz": "gzip", ".zst": "zstd", ".zstd": "zstd", ".gzip": "gzip"}
_STREAMS = (".jsonl", ".json", ".ndjson", ".warc", ".wet")  #: read gzip- or zstd-compressed too
_READ = (*_STREAMS, ".parquet", ".html", ".htm", ".xhtml")
#: data formats ingest does not read
_TABLES = (".csv", ".tsv", ".txt", ".arrow", ".feather", ".ipc", ".orc", ".avro", ".tfrecord")
_ARCHIVES = (".zip", ".tar", ".tgz", ".7z", ".rar")


def kind(name: str) -> str:
    """What a file of a format ingest does not read is: ``sidecar`` (passed over quietly), ``data``
    (data ingest cannot read: the run stops) or ``other`` (passed over, said in a warning)."""
    low = name.lower()
    base = low.split(".")[0]
    first = re.split(r"[\-_ ]", base, maxsplit=1)[0]  # LICENSE-APACHE.txt, README_zh: by the first word
    if (low.startswith("_") or first in _SIDECAR_STEMS or low.endswith(_SIDECAR_SUFFIXES)
            or any(w in base for w in ("notice", "license", "licence"))):  # THIRD_PARTY_NOTICES
        return "sidecar"  # `_SUCCESS`, `_committed_*`, Parquet's `_metadata` (Spark, Hadoop), docs, checksums, scripts
    return "data" if hint(name) else "other"


def hint(name: str) -> str | None:
    """What to do with a file that looks like data ingest cannot read; None for any other file.

    >>> hint("b.jsonl.bz2")
    'bzip2: recompress as gzip or zstd, e.g. bzip2 -dc b.jsonl.bz2 | gzip > b.jsonl.gz'
    >>> hint("docs.csv.gz"), hint("page.html.gz"), hint("notes.png")
    ('.csv: convert it to JSON Lines or Parquet, with a text field', 'decompress it, e.g. gzip -d page.html.gz', None)
    """
    low = name.lower()
    comp = next((c for c in _COMPRESSIONS if low.endswith(c)), None)
    base = low[: -len(comp)] if comp else low
    tool = _COMPRESSIONS.get(comp or "")
    if comp in (".zstd", ".gzip") and base.endswith(_STREAMS):  # a spelling ingest does not take
        return f"rename it to {name[: -len(comp)]}{'.zst' if comp == '.zstd' else '.gz'} (ingest reads .zst and .gz)"
    if comp and base.endswith(_STREAMS):  # JSONL or a crawl file, compressed in a way ingest does not read
        how = f", e.g. {tool} -dc {name} | gzip > {name[: -len(comp)]}.gz" if tool else ""
        return f"{tool or comp[1:]}: recompress as gzip or zstd{how}"
    if comp and base.endswith(_READ):  # Parquet and HTML are read uncompressed only
        return f"decompress it{f', e.g. {tool} -d {name}' if tool else ''}"
    table = next((t for t in _TABLES if base.endswith(t)), None)
    if table == ".txt" and not comp:  # a loose .txt is as often notes, a build or robots file as data: said, not refused
        return None
    if table:
        return f"{table}: convert it to JSON Lines or Parquet, with a text field"
    if base.endswith(_ARCHIVES):
        return "an archive: extract it"
    return None


def refusal(data: Sequence[Path], found: Sequence[Path], folders: Sequence[Path]) -> str:
    """The error for files that look like data ingest cannot read (``data``), given the files it
    does read (``found``): what each kind needs, and how to take only the files it reads."""
    shown = ", ".join(f"{p} ({hint(p.name)})" for p in data[:3]) + (f" and {len(data) - 3} more" if len(data) > 3 else "")
    take = ""
    if found and folders:
        suffix = _glob_suffix(found[0].name)
        take = f" (e.g. --input '{folders[0]}/**/*{suffix}')" if suffix else ""
    return (f"{len(data)} file(s) in the input folders look like data ingest cannot read: {shown}; convert them, "
            f"or give only the files to read{take}, so that none is left out unsaid")


#: what a passed-over ``.json`` is (:func:`curation.ingest.peek.opens_json_document`)
_JSON_DOCUMENT = " (one JSON object over many lines, not JSON Lines: metadata?)"


def note(other: Sequence[Path], reads: str) -> str:
    """The warning for files passed over that are neither data nor sidecars (one line); ``reads``:
    the formats ingest reads."""
    shown = ", ".join(f"{p}{_JSON_DOCUMENT if p.name.lower().endswith('.json') else ''}" for p in other[:3])
    shown += f" and {len(other) - 3} more" if len(other) > 3 else ""
    return (f"ingest: passed over {len(other)} file(s) in the input folders, of formats it does not read: {shown}; "
            f"ingest reads {reads} (convert any that hold documents)")


def underscore_note(files: Sequence[Path]) -> str:
    """The warning for files of a format ingest reads passed over because their names start with ``_``
    (a writer's temporary or metadata file, which pyarrow and Spark pass over too; one line)."""
    shown = ", ".join(str(p) for p in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (f"ingest: passed over {len(files)} file(s) in the input folders whose names start with '_': {shown}; "
            "such names are a writer's temporary or metadata files (pyarrow and Spark pass them over too): "
            "rename any that hold documents, or give it by its own name (--input DIR/_NAME)")


def repeated_note(repeated: Sequence[tuple[Path, Path]]) -> str:
    """The line for files named more than once (as they are, in a folder given too, or through a link):
    each is read once, by its first name (one line)."""
    shown = ", ".join(f"{first} (named again as {again})" for again, first in repeated[:3])
    shown += f" and {len(repeated) - 3} more" if len(repeated) > 3 else ""
    return (f"ingest: {len(repeated)} time(s) a file already named is named again, and read once, by its first name: "
            f"{shown}; to repeat documents, give their mixture group a repeat")


def _glob_suffix(name: str) -> str:
    """What a glob for files like ``name`` ends with: ``.jsonl.gz`` for ``a.jsonl.gz``; "" for a folder."""
    low = name.lower()
    return next((s + c for s in _READ for c in ("", ".gz", ".zst") if low.endswith(s + c)), "")
