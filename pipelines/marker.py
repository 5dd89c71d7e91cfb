"""``_SUCCESS``: what a finished stage folder holds, so resume and ``curate verify`` can check it.

The marker records the config hash and input fingerprint (resume decides from them) and every
file the stage wrote: its size, the rows of each Parquet part under ``docs/`` and ``ledger/``
(from the footer) and an xxh3-64 checksum of the bytes of those parts and of every file under
:data:`HASH_LIMIT` (bigger artifacts, e.g. embeddings, are checked by size only).

Resume checks names, sizes and row counts (cheap: ``stat`` and Parquet footers); ``curate verify``
checks the checksums too, so edited document text is seen. The input fingerprints a marker holds
(raw files, by checksums of all their bytes, or the previous stage's marker) are computed here as well.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import xxhash

from curation.config import config_hash
from curation.ingest.inputs import InputError
from curation.mixture.manifest import file_digest
from pipelines import io

MARKER = "_SUCCESS"
#: Written into every marker: a folder is replaced only when its marker says this project wrote it.
WRITER = "curation"
#: Parts whose rows are recorded and which are always checksummed.
PART_DIRS = ("docs", "ledger")
#: Other files larger than this are checked by size only.
HASH_LIMIT = 64 << 20


def read_marker(stage_dir: Path) -> dict[str, Any] | None:
    """The marker of a stage folder, or None (missing, unreadable or not JSON: not ours)."""
    path = Path(stage_dir) / MARKER
    try:
        marker = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def is_stage_output(marker: dict[str, Any] | None) -> bool:
    """True when the marker was written by a stage of this project (today's or an older version)."""
    return bool(marker) and (marker.get("writer") == WRITER or {"stage", "config_hash", "output_fingerprint"} <= set(marker))


def file_records(folder: Path) -> dict[str, dict[str, Any]]:
    """Every file under ``folder`` (the marker excepted): size, rows of parts, checksums where cheap."""
    folder = Path(folder)
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MARKER):
        rel = path.relative_to(folder).as_posix()
        rec: dict[str, Any] = {"size": path.stat().st_size}
        if is_part(rel):
            rec["rows"] = pq.ParquetFile(path).metadata.num_rows
        if is_part(rel) or rec["size"] <= HASH_LIMIT:
            rec["xxh3"] = checksum(path)
        out[rel] = rec
    return out


def checksum(path: Path) -> str:
    """xxh3-64 of a file's bytes (hex)."""
    return file_digest(path, xxhash.xxh3_64())


def check_files(stage_dir: Path, marker: dict[str, Any], checksums: bool = False) -> list[str]:
    """What differs between a stage folder and its marker's file list (empty list = as recorded).

    Names, sizes and the row counts of parts always; ``checksums`` also re-hashes the files.
    """
    stage_dir = Path(stage_dir)
    files = marker.get("files")
    if not isinstance(files, dict):
        return [f"{stage_dir / MARKER} records no files (written by an older version)"]
    problems: list[str] = []
    for rel, rec in sorted(files.items()):
        path = stage_dir / rel
        try:
            size = path.stat().st_size
        except OSError:
            problems.append(f"{path} is missing")
            continue
        if size != rec.get("size"):
            problems.append(f"{path} has {size} bytes, its marker recorded {rec.get('size')}")
            continue
        if "rows" in rec:
            try:
                rows = pq.ParquetFile(path).metadata.num_rows
            except Exception as exc:  # noqa: BLE001 - any reader error means the file is damaged
                problems.append(f"{path} is not readable Parquet ({_first_line(exc)})")
                continue
            if rows != rec["rows"]:
                problems.append(f"{path} has {rows} rows, its marker recorded {rec['rows']}")
                continue
        if checksums and "xxh3" in rec and checksum(path) != rec["xxh3"]:
            problems.append(f"{path}: content differs from what was written (checksum)")
    for rel in unrecorded(stage_dir, marker):
        if is_part(rel):
            problems.append(f"{stage_dir / rel} was not written by the stage")
    return problems


def unrecorded(stage_dir: Path, marker: dict[str, Any]) -> list[str]:
    """Files in the folder that the marker does not list (someone else's files)."""
    files = marker.get("files")
    if not isinstance(files, dict):
        return []
    stage_dir = Path(stage_dir)
    on_disk = (p.relative_to(stage_dir).as_posix() for p in stage_dir.rglob("*") if p.is_file() and p.name != MARKER)
    # .cache/: a single-stage run's sub-step cache, kept in its --output folder (pipelines.stage_cache.cache_dir)
    return sorted(rel for rel in on_disk if rel not in files and not rel.startswith(".cache/"))


def is_part(rel: str) -> bool:
    head, _, name = rel.partition("/")
    return head in PART_DIRS and "/" not in name and name.endswith(".parquet")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


#: the file in a reading stage's cache that keeps its input files' checksums (:func:`raw_fingerprint`)
INPUT_CHECKSUMS = "input-checksums.json"


def raw_fingerprint(files: list[Path], memo: Path | None = None) -> str:
    """Fingerprint raw input files by path, size and an xxh3-64 checksum of all their bytes.

    A file's checksum is kept in ``memo`` (JSON: resolved path → [size, mtime_ns, ctime_ns, inode,
    xxh3]) and reused while the file's size, times and inode are those recorded: a re-run reads no
    unchanged file; a file edited in place (any byte, even at the same size), or replaced by another
    whose modification time was set back (``cp -p``, ``rsync -t``, ``touch -r``), is read again.
    Without a memo every file is read. The memo is written where its folder exists (the stage's
    cache, once it has run), else kept until :func:`save_checksums` after the stage finished."""
    h = hashlib.sha256()
    expanded: set[Path] = set()
    for f in files:
        expanded.update(p for p in Path(f).rglob("*") if p.is_file()) if Path(f).is_dir() else expanded.add(Path(f))
    known = _read_memo(memo)
    seen: dict[str, list[Any]] = {}
    for f in sorted(expanded):
        st, where = f.stat(), str(f.resolve())
        rec, stamp = known.get(where), stat_stamp(st)
        if not (isinstance(rec, list) and len(rec) == 5 and rec[:4] == stamp):
            rec = [*stamp, checksum(f)]
        seen[where] = rec
        h.update(f"{where}\0{st.st_size}\0{rec[4]}\0".encode())
    if memo is not None and seen != known:
        if memo.parent.is_dir():
            _write_memo(memo, {**known, **seen})
        else:
            _PENDING[memo] = {**known, **seen}
    return h.hexdigest()


def stat_stamp(st: os.stat_result) -> list[int]:
    """What a file is taken to be unchanged by, without reading it: size, modification and change
    times (ns) and inode. Setting the modification time back (``cp -p``, ``rsync -t``, ``touch -r``)
    still changes the change time or the inode. Ingest's memo of checksums and the config hash of a
    model folder the recipe names (:func:`pipelines.kit.preflight.files_stamp`) both use it."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


#: checksums computed for a memo whose folder did not exist yet (a first run): written once the stage finished
_PENDING: dict[Path, dict[str, Any]] = {}


def save_checksums(memo: Path) -> None:
    """Write the checksums :func:`raw_fingerprint` kept for ``memo`` (a stage's first run, which made
    its cache folder), so that the next run reads no unchanged file."""
    data = _PENDING.pop(memo, None)
    if data is not None and memo.parent.is_dir():
        _write_memo(memo, data)


def _read_memo(memo: Path | None) -> dict[str, Any]:
    try:
        data = json.loads(memo.read_text()) if memo is not None else {}
    except (OSError, ValueError):  # none yet, or unreadable: every file is read again
        return {}
    return data if isinstance(data, dict) else {}


def _write_memo(memo: Path, data: dict[str, Any]) -> None:
    """Written whole under a name of this process, then renamed: runs sharing a cache never read half
    a file. Only into a folder that exists (the stage's cache, once it has run): a stage that fails
    before its first sub-step leaves no folder behind for this file."""
    if not memo.parent.is_dir():
        return
    try:
        tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, memo)
    except OSError:  # a cache that cannot be written (read-only): the next run reads the files again
        pass


def output_fingerprint(chash: str, fingerprint: str, incomplete: str | None = None) -> str:
    """What a stage made with config hash ``chash`` from input ``fingerprint`` hands the next stage; an
    incomplete output is another output, so the stages after it re-run once it is completed."""
    return config_hash({"config": chash, "input": fingerprint, **({"incomplete": incomplete} if incomplete else {})})


def stage_fingerprint(input_dir: Path) -> str:
    """Fingerprint of a finished stage's output (from its marker), for the next stage."""
    marker = read_marker(input_dir)
    if marker is not None:
        return marker["output_fingerprint"]
    # A bare docs/ folder: fingerprint the part files by name and size.
    folder = io.docs_dir(input_dir)
    parts = [f"{p.name}:{p.stat().st_size}" for p in sorted(folder.glob("part-*.parquet"))]
    return config_hash(parts)


def check_unchanged(name: str, input_dir: Path | None, fingerprint: str, made: list[Path]) -> None:
    """Refuse, as an input problem, a stage whose input folder was replaced while it read it (another
    command re-ran the stage before it into that folder): its counts cannot add up, and that is no
    bug of the stage (it said so, exit 70). The sub-steps it ``made`` hold rows of the replacing
    data under the old input's key: they are removed (a later run reused them, wrong and silent)."""
    if input_dir is None:
        return
    try:
        now = stage_fingerprint(Path(input_dir))
    except (OSError, InputError, KeyError):
        now = None
    if now != fingerprint:
        for step in made:
            shutil.rmtree(step, ignore_errors=True)
        raise InputError(f"{input_dir} changed while {name} read it (another command wrote it): nothing of {name} was kept; "
                         f"run {name} again once that command has finished")


def unfinished_stage(path: Path) -> str | None:
    """What to say of a folder a stage was writing when it was stopped (killed: nothing removed its
    traces), or None: its sub-step cache (``.cache/<stage>``, kept in a single stage's --output) or
    its ``.<name>.inprogress`` beside it, and no ``_SUCCESS``. A run folder, which has a cache
    too, is not one."""
    from pipelines.stages import STAGES, folder_name

    path = Path(path)
    if not path.is_dir() or (path / MARKER).exists() or any((path / f).exists() for f in ("run.json", "run.progress.json")):
        return None
    if any((p / MARKER).is_file() for p in path.iterdir() if p.is_dir()):
        return None  # a folder of stage folders
    cached = sorted(p.name for p in (path / ".cache").glob("*") if p.name in STAGES) if (path / ".cache").is_dir() else []
    work = path.parent / f".{path.name}.inprogress"
    if not cached and not work.is_dir():
        return None
    named = [n for n in STAGES if path.name == folder_name(n)]
    stage = (cached or named or [None])[0]
    traces = " and ".join([f"the sub-step cache .cache/{n}/" for n in cached] + ([f"{work.name} beside it"] if work.is_dir() else []))
    command = f"curate {stage.replace('_', '-')} --input … --output {path}" if stage else f"the command whose --output was {path}"
    return (f"{path} is the output of {stage or 'a stage'}, which did not finish: it holds no {MARKER} but {traces} (the "
            f"stage was stopped while writing it, or is still writing it); re-run that stage ({command}; its finished "
            "sub-steps are reused), then give this folder")


def check_input(input_dir: Path) -> None:
    """Refuse a previous-stage folder whose files are not what its marker recorded, and one a stage
    did not finish (``.<name>.inprogress``, or a stage's folder whose ``_SUCCESS`` is gone or
    unreadable). A bare folder of parts that no stage wrote (your own ``docs/``) is read as it is."""
    input_dir = Path(input_dir)
    if input_dir.name == "docs" and read_marker(input_dir.parent) is not None:
        input_dir = input_dir.parent  # RUN/NN_stage/docs: its stage's marker lists it
    marker = read_marker(input_dir)
    if not is_stage_output(marker):
        if input_dir.name.endswith(".inprogress"):
            raise InputError(f"{input_dir} is the unfinished output of a stage that was stopped while writing it; "
                             f"re-run that stage (its folder is {input_dir.name[1:].removesuffix('.inprogress')}) and give its folder")
        if not input_dir.exists() and (input_dir.parent / f".{input_dir.name}.inprogress").is_dir():
            raise InputError(f"{input_dir} does not exist: the stage writing it was stopped before it finished (its "
                             f".{input_dir.name}.inprogress is there); re-run that stage, then give its folder")
        if (input_dir / "docs").is_dir() and ((input_dir / "ledger").is_dir() or (input_dir / "stats.json").exists()):
            raise InputError(f"{input_dir} is a stage's output without a readable {MARKER} (the stage did not finish, or "
                             "the marker was removed or edited); re-run the stage that writes it")
        unfinished = unfinished_stage(input_dir)  # a killed stage's folder, parts or not
        if unfinished:
            raise InputError(unfinished)
        io.docs_dir(input_dir)  # a missing folder, or one without parts, is said here
        return
    assert marker is not None
    if "files" not in marker:
        return
    damage = check_files(input_dir, marker)
    if damage:
        more = f" (and {len(damage) - 1} more)" if len(damage) > 1 else ""
        raise InputError(
            f"input {input_dir} is damaged: {damage[0]}{more}; re-run the stage that wrote it (the same command "
            "with `curate run` re-runs it by itself)"
        )
