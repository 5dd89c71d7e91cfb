"""Finding the input files of a run, and their formats, without reading them (but the first line of
a ``.json`` file in a folder: a pretty-printed object is metadata, passed over and said): paths,
folders, globs (:mod:`curation.ingest.patterns`) and ``@list`` files, each real file once; FIFOs,
devices and sockets refused."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from curation.ingest.patterns import expand, is_pattern, underscored
from curation.ingest.peek import opens_json_document
from curation.ingest.unread import hint as unread_hint
from curation.ingest.unread import kind, refusal

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson", ".jsonl.gz", ".json.gz", ".ndjson.gz", ".jsonl.zst", ".json.zst", ".ndjson.zst")
WARC_SUFFIXES = (".warc", ".warc.gz", ".wet", ".wet.gz", ".warc.zst", ".wet.zst")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
#: what the errors say ingest reads
READS = ".jsonl/.json/.ndjson[.gz|.zst], .parquet, .warc/.wet[.gz|.zst], .html or a datasets folder"


class InputError(ValueError):
    """The input of a stage is missing or is not what the stage needs."""


class Survey(NamedTuple):
    """What :func:`survey` finds: the files to read and what it passed over or read once."""

    files: list[tuple[Path, str]]  #: each real file once, by its first name, and its format
    other: list[Path]  #: passed over, neither data nor sidecars (said in one warning)
    underscored: list[Path]  #: files of a format ingest reads named ``_…``, passed over (said in one warning)
    repeated: list[tuple[Path, Path]]  #: (a name given again, the name read) of a file named more than once


def find_inputs(paths: Sequence[str | os.PathLike[str]]) -> list[tuple[Path, str]]:
    """The input files (each real file once, by its first name) and their formats, without reading them.

    The runner fingerprints these before it decides whether ingest must run, so an up-to-date
    ingest never pays for :func:`plan_inputs` (which reads each compressed file once to cut it).
    A file in an input folder that looks like data ingest cannot read (``b.jsonl.bz2``, ``c.csv``:
    :func:`curation.ingest.unread.kind`) is an error: skipping it would lose its documents unsaid.
    """
    return survey(paths).files


def scan_inputs(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[tuple[Path, str]], list[Path]]:
    """:func:`find_inputs`' files, and the files of its folders passed over that are neither data nor
    sidecars (README, licences, checksums, ``_SUCCESS``): what the run says it left out."""
    found = survey(paths)
    return found.files, found.other


def survey(paths: Sequence[str | os.PathLike[str]]) -> Survey:
    """:func:`scan_inputs`, with the data files named ``_…`` it passed over and the files named twice.
    An argument is read as a string, never through ``Path()``, which drops a glob's trailing ``/``."""
    files: list[tuple[Path, str]] = []
    passed: dict[str, list[Path]] = {"data": [], "other": [], "underscore": []}  # sidecars are not kept
    args = [str(p) for p in paths]
    rooted = [(q, root) for a in args for q, root in (read_list(Path(a)) if a.startswith("@") else [(a, None)])]
    lists = {Path(a[1:]).resolve() for a in args if a.startswith("@")}  # an @list inside a listed folder
    named = [q for q, _ in rooted]
    for p, root in rooted:
        if is_pattern(p):  # a path that exists is itself, whatever its name holds (data[1].jsonl)
            matches = expand(p)
            if not matches:
                raise InputError(f"{p}: no file matches this pattern")
            found = [x for m in matches for x in _matched(p, m, passed)]
        else:
            found = _discover(Path(p), passed)
        if root is not None:  # files found inside a listed folder stay under the list's root too
            for f, _fmt in found:
                if not f.resolve().is_relative_to(root):
                    raise InputError(f"{f} resolves to {f.resolve()}, outside the input list's root {root}; "
                                     "list only paths (and links) that stay inside it")
        files.extend(found)
    passed = {k: [f for f in v if f.resolve() not in lists] for k, v in passed.items()}
    if not files:
        unread = sorted(str(f) for f in passed["data"] + passed["other"])
        listed = f" (passed over, formats it does not read: {', '.join(unread[:3])}{_more(unread)})" if unread else ""
        under = [str(f) for f in passed["underscore"]]
        listed += f" (passed over, names starting with '_': {', '.join(under[:3])}{_more(under)})" if under else ""
        fixes = "".join(f"; {f.name}: {unread_hint(f.name)}" for f in passed["data"][:3])
        raise InputError(f"no input files found in {', '.join(named)}{listed}; ingest reads {READS}{fixes}")
    if passed["data"]:
        raise InputError(refusal(passed["data"], [f for f, _ in files], [Path(p) for p in named if Path(p).is_dir()]))
    first: dict[Path, tuple[Path, str]] = {}  # the first name of each real file
    repeated: list[tuple[Path, Path]] = []
    for f, fmt in files:
        if (real := f.resolve()) in first:
            repeated.append((f, first[real][0]))
        else:
            first[real] = (f, fmt)
    for f in first.values():
        _check_name(f[0])
    return Survey(list(first.values()), passed["other"], passed["underscore"], repeated)


def _matched(pattern: str, match: str, passed: dict[str, list[Path]]) -> list[tuple[Path, str]]:
    """A glob's match, taken as a folder walk takes what it finds (:func:`_child`): a name its wildcards
    matched that starts with ``_`` is passed over (:func:`~curation.ingest.patterns.underscored`)."""
    path = Path(match)
    if underscored(pattern, match):
        if path.name.startswith("_") and path.is_file() and _format(path):
            passed["underscore"].append(path)
        return []
    return _child(path, passed, set(), underscore_ok=True)


def _check_name(path: Path) -> None:
    """Refuse a file name that is not UTF-8, before any output: a file's name goes into its
    documents' labels and ids (it crashed ingest with exit 70 as it reached the fingerprint)."""
    try:
        str(path).encode()
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode(errors="backslashreplace")
        raise InputError(f"{shown}: the file name is not UTF-8; rename it (e.g. convmv -f latin1 -t utf8 --notest FILE): "
                         "a file's name goes into its documents' labels and ids") from None


def _more(items: list[str]) -> str:
    return f" and {len(items) - 3} more" if len(items) > 3 else ""


def read_list(arg: Path) -> list[tuple[str, Path]]:
    """``@inputs.txt``: one path (or glob) a line, relative to the list's folder, never outside it
    (symlinks resolved; a trailing ``/`` kept); each entry comes with that root, which files found
    inside listed folders must keep."""
    listing = Path(str(arg)[1:])
    if listing.is_dir():
        raise InputError(f"input list {listing} is a folder, not a list file: give it without '@' to read the files in it")
    if not listing.is_file():
        raise InputError(f"input list {listing} does not exist")
    root = listing.parent.resolve()
    out = []
    for n, raw in enumerate(listing.read_bytes().splitlines(), 1):
        try:
            line = raw.decode().strip()
        except UnicodeDecodeError:
            raise InputError(f"{listing} line {n}: {raw.decode(errors='backslashreplace')!r} is not UTF-8; write the list "
                             "in UTF-8 and rename files whose names are not (convmv -f latin1 -t utf8 --notest FILE)") from None
        if not line or line.startswith("#"):
            continue
        target = (root / line).resolve()
        if not target.is_relative_to(root):
            raise InputError(f"{listing} line {n}: {line!r} is outside the input root {root}; list only paths inside it")
        out.append((str(target) + ("/" if line.endswith("/") else ""), root))
    if not out:
        raise InputError(f"input list {listing} names no file (only blank lines and # comments); list one path a line")
    return out


def _datasets_splits(folder: Path) -> list[Path] | None:
    """The Dataset folders of a ``save_to_disk`` folder: itself (a Dataset: ``dataset_info.json`` and
    ``state.json``), its splits (a DatasetDict: ``dataset_dict.json``), or None (not one)."""
    if (folder / "dataset_info.json").is_file() and (folder / "state.json").is_file():
        return [folder]
    if (folder / "dataset_dict.json").is_file():
        try:
            splits = json.loads((folder / "dataset_dict.json").read_text()).get("splits") or []
        except (OSError, ValueError, AttributeError):
            raise InputError(f"{folder / 'dataset_dict.json'} cannot be read; re-save the DatasetDict") from None
        return [folder / str(name) for name in splits]
    return None


def _walk(folder: Path, passed: dict[str, list[Path]], seen: set[Path] | None = None) -> list[tuple[Path, str]]:
    """The inputs under ``folder``, in name order: files of the formats ingest reads, and datasets
    folders (a DatasetDict's splits) as one input each; hidden files and folders (``.cache``,
    ``.git``, an earlier output's own) are passed over, other files noted in ``passed`` by their
    :func:`~curation.ingest.unread.kind`."""
    seen = set() if seen is None else seen
    real = folder.resolve()
    if real in seen:  # a link back to a folder already walked
        return []
    seen.add(real)
    splits = _datasets_splits(folder)
    if splits is not None:
        return [(split, "datasets") for split in splits]
    out: list[tuple[Path, str]] = []
    for child in sorted(folder.iterdir(), key=str):
        if not child.name.startswith("."):
            out.extend(_child(child, passed, seen))
    return out


def _child(child: Path, passed: dict[str, list[Path]], seen: set[Path], underscore_ok: bool = False) -> list[tuple[Path, str]]:
    """What a folder walk takes of ``child``: a file of a format ingest reads, a folder's inputs; a
    name starting with ``_`` (unless ``underscore_ok``) is passed over as pyarrow and Spark pass it
    over: a folder (Spark's ``_temporary``, Delta's ``_delta_log``) or sidecar quietly, a data file
    (a writer's ``_tmp.parquet``) said in one warning."""
    _check_special(child)
    under = child.name.startswith("_") and not underscore_ok
    if child.is_dir():
        return [] if under else _walk(child, passed, seen)
    if child.is_file() and (fmt := _format(child)):
        if under:
            passed["underscore"].append(child)
        elif opens_json_document(child):  # a pretty-printed .json (a dataset's metadata.json): no records
            passed["other"].append(child)
        else:
            return [(child, fmt)]
    elif child.is_symlink() and not child.exists() and (_format(child) or kind(child.name) == "data"):
        if _loops(child):
            raise InputError(f"{child}: symlink loop (it links to {os.readlink(child)}, and the links go round without reaching a file); "
                             "point the link at a real file or remove it")
        # a git-annex or Hugging Face cache folder whose data was not fetched: its documents would be lost unsaid
        raise InputError(f"{child} is a link to {os.readlink(child)}, which does not exist: fetch the data it points "
                         "to (git annex get, huggingface-cli download) or remove the link")
    elif child.is_file() and (k := kind(child.name)) != "sidecar":
        passed[k].append(child)
    return []


def _loops(path: Path) -> bool:
    """Whether resolving the link ``path`` goes round in a loop (ELOOP), rather than to nothing."""
    try:
        path.stat()
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _discover(path: Path, passed: dict[str, list[Path]]) -> list[tuple[Path, str]]:
    """A path named as an input (not a glob's match): a folder is walked, a file is read whatever
    its name (``_part.parquet`` too) or refused as an unknown format."""
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{path}: symlink loop; point the link at a real file or folder") from exc
        raise InputError(f"{path} does not exist{' (a dangling symlink)' if path.is_symlink() else ''}") from exc
    if path.is_dir():
        return _walk(path, passed)
    _check_special(path)
    fmt = _format(path)
    if fmt is None:
        why = unread_hint(path.name)
        raise InputError(f"{path}: unknown format{f' ({why})' if why else ''}; ingest reads {READS}")
    return [(path, fmt)]


def input_label(path: Path) -> str:
    """How ledgers and artifacts name an input file, whatever its spelling on the command line or
    the scheduler (which gets absolute paths): relative to the working folder when inside it, else
    absolute (not resolved: a link keeps its name).

    >>> import os; input_label(Path("a/b.jsonl")) == input_label(Path(os.getcwd()) / "a" / "b.jsonl") == "a/b.jsonl"
    True
    """
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(os.getcwd()))
    except ValueError:
        return str(absolute)


def _check_special(path: Path) -> None:
    """Refuse a FIFO, device or socket: reading one blocks or never ends, and skipping it would hide it."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # a dangling link inside a folder: not an input
    kinds = {"a FIFO (named pipe)": stat.S_ISFIFO, "a character device": stat.S_ISCHR, "a block device": stat.S_ISBLK,
             "a socket": stat.S_ISSOCK}
    for what, test in kinds.items():
        if test(mode):
            raise InputError(f"{path} is {what}, not a regular file; ingest reads only regular files: "
                             "copy the data into a file, or move it out of the input folder")


def _format(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    if name.endswith(HTML_SUFFIXES):
        return "html"
    return None
