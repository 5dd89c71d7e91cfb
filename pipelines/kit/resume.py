"""A keyed sub-step that keeps the partitions it finished across a stop: ``ctx.step(..., resume=True)``
with :meth:`StageContext.map_resumable` (SemDeDup's embeddings, ingest's extraction).

A step computed in one go loses all of its work to a Ctrl-C, a SIGTERM (how SLURM and Kubernetes
preempt a job) or a killed process: hours of GPU time for the embeddings of a large corpus. A
resumable step's temporary folder (``.<step>-<key>.tmp`` in the stage's cache) stays when its
stage stops. :func:`map_resumable` writes each partition's file there atomically (temp file, then
rename), then its record ``_parts/part-NNNNN.parquet``: the task's result frame, with the sizes
of the partition's files (its part, and the parts of that name in subfolders) in the schema's metadata. The next run of the same step (the same input and parameters: the
same key, the same folder) keeps the partitions whose record stands and whose file has the size
recorded, removes every other file (a write cut short is never taken) and computes only the
partitions left. Other parameters give another key and another folder, of which nothing is
used. ``_parts/`` is removed once the step finishes, so its folder holds the files of a run that
was never stopped, byte for byte.
"""

from __future__ import annotations

import json
import logging
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from curation.files import read_parquet
from pipelines.kit.artifact import Artifact

log = logging.getLogger(__name__)

#: In a resumable step's temporary folder: one record per finished partition.
PARTS = "_parts"
_FILES = b"curate.files"  #: a record's metadata key: the partition's files and their sizes


def open_folder(tmp: Path, resume: bool) -> Path:
    """The temporary folder ``tmp`` of a step about to be computed: empty; for a resumable step, the
    partitions an earlier run of it finished, and nothing else."""
    if resume and tmp.is_dir():
        records = [rec for _, rec in _records(tmp)]
        keep = {*records, *(tmp / name for rec in records for name in _files(rec))}
        for path in sorted(p for p in tmp.rglob("*") if not p.is_dir()):
            if path not in keep:
                path.unlink(missing_ok=True)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True, exist_ok=True)
    return tmp


def close_folder(tmp: Path) -> None:
    """Remove the records of a finished step: its folder is then what an uninterrupted run writes."""
    shutil.rmtree(tmp / PARTS, ignore_errors=True)


def kept_parts(tmp: Path) -> int:
    """How many partitions a stopped step finished in its temporary folder (0: nothing to keep)."""
    return len(list((tmp / PARTS).glob("part-*.parquet"))) if tmp.is_dir() else 0


def finished(folder: Path) -> dict[int, pd.DataFrame]:
    """The result frames of the partitions finished in ``folder``, by partition number: those whose
    record stands and whose files have the sizes it records."""
    return {number: read_parquet(rec).to_pandas() for number, rec in _records(folder)}


def map_resumable(
    ctx: Any,
    docs: Any,
    out: Artifact,
    fn: Callable[..., pd.DataFrame],
    *args: Any,
    label: str,
    costs: list[int] | None = None,
) -> pd.DataFrame:
    """``fn(number, part, *args)`` (it writes ``out``'s part ``number``, returns a frame) over the
    partitions of ``docs`` that ``out`` has no record of, each recorded as it finishes; the result
    frames of every partition, in partition order, those kept from a stopped run included."""
    from dask import delayed

    nparts = docs.npartitions
    done = finished(out.path)
    todo = [n for n in range(nparts) if n not in done]
    if done:
        log.info(
            "%s: %s: %d of %d partitions kept from a stopped run; computing %d",
            ctx.name,
            label,
            len(done),
            nparts,
            len(todo),
        )
    if todo:
        parts, token = docs.to_delayed(), uuid.uuid4().hex
        graph = [
            delayed(_finish_part)(n, parts[n], out, fn, *args, dask_key_name=(f"resumable-{token}", n)) for n in todo
        ]
        ctx.compute(graph, label, costs=[costs[n] for n in todo] if costs is not None else None)
        done = finished(out.path)
    missing = [n for n in range(nparts) if n not in done]
    if missing:
        raise RuntimeError(
            f"{ctx.name}: {label}: partitions {missing[:5]} have no record in {out.path} although their "
            "tasks finished: another process removed it; re-run the same command"
        )
    return pd.concat([done[n] for n in range(nparts)], ignore_index=True)


def _finish_part(
    number: int, part: pd.DataFrame, out: Artifact, fn: Callable[..., pd.DataFrame], *args: Any
) -> pd.DataFrame:
    from pipelines.io import write_table

    result = fn(number, part, *args)
    path = out.part_path(number)
    # the partition's part and its parts of the same name in subfolders (ingest's code_tags/, code_text/)
    paths = [path, *(p for p in sorted(out.path.glob(f"*/{path.name}")) if p.parent.name != PARTS)]
    files = {p.relative_to(out.path).as_posix(): p.stat().st_size for p in paths if p.exists()}
    table = pa.Table.from_pandas(result, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), _FILES: json.dumps(files).encode()})
    write_table(table, out.path / PARTS / path.name)  # the last file of the partition: it stands for the rest
    return result


def _files(record: Path) -> dict[str, int]:
    import pyarrow.parquet as pq

    return json.loads((pq.read_schema(record).metadata or {}).get(_FILES, b"{}"))


def _records(folder: Path) -> list[tuple[int, Path]]:
    """``(number, record)`` of each partition finished in ``folder``, in order; a record that cannot
    be read or whose files are missing or of another size is left out."""
    out = []
    for rec in sorted((Path(folder) / PARTS).glob("part-*.parquet")):
        try:
            files = _files(rec)
            if all((Path(folder) / name).stat().st_size == size for name, size in files.items()):
                out.append((int(rec.stem.removeprefix("part-")), rec))
        except (OSError, ValueError, pa.ArrowException):
            continue
    return out
