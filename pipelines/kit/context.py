"""What the runner gives a stage: folders, the Dask client, resolved upstream artifacts, and the
verbs every stage is written with — ``step`` (a cached sub-step that returns its figures; with
``resume``, ``map_resumable`` keeps its finished partitions across a stop), ``map_parts`` (a
per-partition function that knows its partition number), ``write_sliced`` (a heavy row-wise step
over row slices of every partition, written as an artifact; ``sliced_steps``: several such cached
steps in one graph), ``shuffle`` (rows regrouped by a key through a file exchange) and ``compute``
(a graph computed with progress, always returning a pandas object)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd

from curation.config import config_hash
from pipelines.kit.artifact import STEP_STATS, Artifact, link_tree, merge_figures, part_number
from pipelines.kit.resume import close_folder, map_resumable, open_folder
from pipelines.kit.step_lock import step_locks
from pipelines.kit.step_record import DONE, close_record, reusable, step_damage
from pipelines.kit.step_writes import SlicedStep, write_pieces

log = logging.getLogger(__name__)

#: A stage's transient files (``shuffle``'s exchanges), under its work folder; the runner removes
#: it once the stage's output is written, before the marker lists the files.
SCRATCH = "_scratch"
#: Above this many input or output partitions ``shuffle`` hands the work to Dask's own shuffle: the
#: file exchange's output tasks each open every input's file (N x M reads: 16M at 4,096, at
#: ~0.1 ms each), where Dask's staged task shuffle (or its p2p method on a cluster) grows slower.
EXCHANGE_MAX_PARTITIONS = 4096


@dataclasses.dataclass
class StageContext:
    """What a stage may use besides its input."""

    name: str
    work_dir: Path  #: the in-progress folder, renamed into place on success
    cache_dir: Path  #: resumable sub-step artifacts, keyed by their parameters
    input_fingerprint: str
    config_hash: str = ""  #: the hash the runner records for this stage's config (manifests cite it)
    run_dir: Path | None = None
    client: Any = None  #: a ``distributed.Client``, or ``None`` for the synchronous scheduler
    recipe: dict[str, Any] = dataclasses.field(default_factory=dict)
    inputs: list[Any] = dataclasses.field(default_factory=list)
    #: the stage's ``requires_artifacts``, resolved by the runner (``None`` where the upstream
    #: stage did not write it, e.g. it was disabled)
    upstream: dict[str, Path | None] = dataclasses.field(default_factory=dict)
    #: the other stages' config values this stage declares in ``settings`` (pipelines.recipe.stage_settings)
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the finished stages of this run before this one (pipelines.kit.stage.resolve_lineage)
    lineage: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    extra_stats: dict[str, Any] = dataclasses.field(default_factory=dict)
    quiet: bool = False
    #: the stage's input as the runner read it, and its files in partition order
    #: (``write_sliced`` reads row slices of these files in its own tasks)
    input_docs: Any = None
    input_files: list[str] = dataclasses.field(default_factory=list)
    exchanges: int = 0  #: file exchanges (``shuffle``) made so far, to name their scratch folders
    made_steps: list[Path] = dataclasses.field(default_factory=list)  #: made by this run (discarded if its input changed under it)
    #: why this run's output is incomplete for a reason outside curate (a judge that did not answer
    #: every request): the next run re-runs the stage instead of skipping it
    incomplete: str | None = None
    #: kept tokens per source and input partition, from the input stage's stats.json (``costs``)
    input_tokens: dict[str, list[int]] = dataclasses.field(default_factory=dict)

    @staticmethod
    def versions() -> dict[str, str]:
        """The versions of Python and the libraries that shape outputs (recorded in run.json and manifests)."""
        import importlib.metadata as md
        import platform

        import dask

        out = {"python": platform.python_version(), "dask": dask.__version__}
        for pkg in ("curation", "distributed", "pandas", "pyarrow", "datasketch", "sentence-transformers", "faiss-cpu", "torch"):
            try:
                out[pkg] = md.version(pkg)
            except md.PackageNotFoundError:
                continue
        return out

    @property
    def artifacts_dir(self) -> Path:
        path = self.work_dir / "artifacts"
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- sub-steps ----------------------------------------------------------------------------
    def step(self, name: str, params: Any, produce: Callable[[Path], dict[str, Any] | None], resume: bool = False) -> Artifact:
        """Run ``produce(folder)`` once per (input, ``params``); return the finished folder.

        ``produce`` may return a dict of figures: they are stored beside the artifact and merged into
        ``stats.json``'s ``extra`` whether the step ran now or was reused. The folder lives in the stage's
        cache (``<output parent>/.cache/<stage>/``), so an interrupted run or a run with only a changed decision
        parameter reuses it; it is hard-linked into ``artifacts/<name>/``. ``resume``: see :meth:`map_resumable`.
        """
        final, key = self._step_folder(name, params)
        with step_locks(self.cache_dir, [] if step_damage(final) is None else [final.name], self.name):
            # made earlier, or by another run sharing the cache while this one waited, and as it was written
            if not reusable(self.name, name, final):
                tmp = self._open_step(name, key, resume)
                self._close_step(tmp, final, key, produce(tmp))
        return self._use_step(name, final)

    def sliced_steps(self, docs: dd.DataFrame, steps: list[SlicedStep], label: str, sources: Any = None,
                     columns: list[str] | None = None, summaries: dict[str, Any] | None = None) -> list[Artifact]:
        """Several :meth:`step` s, each one ``write_sliced(docs, folder, step.fn, *step.args)``,
        computed as one graph, so the tasks of the second fill the first one's tail. Each keeps its own cache folder,
        figures (``step.figures(rows written)``) and reuse, exactly as :meth:`step`; the
        artifacts come back in the order of ``steps``. ``sources`` and ``columns``: as :meth:`write_sliced`'s.
        ``summaries``: filled with ``step.summarise(frame)`` of each part, in part order, for each
        step with a ``summarise`` that ran now (not for a reused one); with ``step.merge``, their
        :func:`tree_merge` instead, merged on the cluster in the same compute."""
        finals = [self._step_folder(s.name, s.params) for s in steps]
        wanted = [final.name for final, _ in finals if step_damage(final) is not None]
        with step_locks(self.cache_dir, wanted, self.name):  # runs sharing the cache compute a step once
            self._sliced_locked(docs, steps, finals, label, sources, columns, summaries)
        return [self._use_step(s.name, final) for s, (final, _) in zip(steps, finals, strict=True)]

    def _sliced_locked(self, docs: dd.DataFrame, steps: list[SlicedStep], finals: list[tuple[Path, str]], label: str, sources: Any,
                       columns: list[str] | None, summaries: dict[str, Any] | None) -> None:
        todo = []
        for s, (final, key) in zip(steps, finals, strict=True):
            if not reusable(self.name, s.name, final):
                tmp = self._open_step(s.name, key)
                todo.append((s, final, key, tmp, *self._sliced_writes(docs, Artifact(tmp), s.fn, *s.args, sources=sources, columns=columns,
                                                                      summarise=s.summarise)))
        if todo:
            graph: list[Any] = []
            sizes: list[int] = []  # each step's items in the graph
            costs: list[int] | None = []
            for s, *_, writes, step_costs in todo:
                items = s.items(writes)
                graph += items
                sizes.append(len(items))
                costs = None if costs is None or step_costs is None else costs + step_costs + [0] * (len(items) - len(writes))
            done = self.compute(graph, label, costs=costs)
            at = 0
            for (s, final, key, tmp, writes, _), n in zip(todo, sizes, strict=True):
                rows, summary = s.results(writes, done[at:at + n])
                at += n
                if summary is not None and summaries is not None:
                    summaries[s.name] = summary
                self._close_step(tmp, final, key, s.figures(int(sum(rows))) if s.figures is not None else None)

    @staticmethod
    def redo_next_time(step: Path) -> None:
        """Leave a finished sub-step (a :meth:`step`'s folder) to be computed again by the next run,
        which reuses what the step cached on its own (an annotation cache's answers); this run keeps
        using the folder. For a step whose result is incomplete for a reason outside curate (a
        judge's server that did not answer every request)."""
        (Path(step) / DONE).unlink(missing_ok=True)

    def _step_folder(self, name: str, params: Any) -> tuple[Path, str]:
        key = config_hash({"input": self.input_fingerprint, "params": params})[:16]
        return self.cache_dir / f"{name}-{key}", key

    def _open_step(self, name: str, key: str, resume: bool = False) -> Path:
        log.info("%s: computing %s", self.name, name)
        return open_folder(self.cache_dir / f".{name}-{key}.tmp", resume)

    def _close_step(self, tmp: Path, final: Path, key: str, figures: dict[str, Any] | None) -> None:
        if figures:
            (tmp / STEP_STATS).write_text(json.dumps(figures, sort_keys=True, default=str))
        close_folder(tmp)  # a resumable step's records of its partitions
        close_record(tmp, key)  # its files as written: checked before it is reused
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        self.made_steps.append(final)

    def _use_step(self, name: str, final: Path) -> Artifact:
        if (final / STEP_STATS).exists():
            merge_figures(self.extra_stats, json.loads((final / STEP_STATS).read_text()))
        link_tree(final, self.artifacts_dir / name)
        return Artifact(final)

    # -- partitions ---------------------------------------------------------------------------
    @staticmethod
    def map_parts(docs: dd.DataFrame, fn: Callable[..., Any], *args: Any, meta: Any, **kwargs: Any) -> dd.DataFrame:
        """``docs.map_partitions`` where ``fn(number, part, *args, **kwargs)`` gets the partition number."""
        return docs.map_partitions(_numbered, fn, *args, meta=meta, **kwargs)

    def map_resumable(self, docs: dd.DataFrame, out: Artifact, fn: Callable[..., pd.DataFrame], *args: Any, label: str,
                      costs: list[int] | None = None) -> pd.DataFrame:
        """``fn(number, part, *args)`` over the partitions a stopped run of this ``resume`` step left (:mod:`.resume`)."""
        return map_resumable(self, docs, out, fn, *args, label=label, costs=costs)

    def write_sliced(self, docs: dd.DataFrame, out: Artifact, fn: Callable[..., pd.DataFrame], *args: Any, label: str,
                     sources: Any = None, columns: list[str] | None = None) -> int:
        """``fn(number, rows, *args)`` (a row-wise step returning a frame) over every partition,
        each partition cut into row slices that run as tasks of their own
        (:mod:`pipelines.kit.slices`), written as ``out``'s part ``number``; returns the rows
        written. Same files as ``fn`` over whole partitions, on any number of workers.

        ``sources``: the sources ``fn`` works on. A partition without a token of them (the input
        stage's ``costs``) runs as one task, since ``fn`` has nothing to do there and slices
        of it would cost the scheduler more than the work. The files are the same: the step is
        row-wise. ``fn`` must give for rows outside ``sources`` what it gives for none of them: a
        slice that holds no row of them is read by its ``source`` column alone and ``fn`` gets
        none of its rows (a scorer of code never reads the text of a web partition).

        ``columns``: the columns ``fn`` reads (those the input has; ``None``: all), so a scorer
        does not read the columns it does not score."""
        writes, costs = self._sliced_writes(docs, out, fn, *args, sources=sources, columns=columns)
        return int(sum(self.compute(writes, label, costs=costs)))

    def write_sliced_summaries(self, docs: dd.DataFrame, out: Artifact, fn: Callable[..., pd.DataFrame], *args: Any,
                               label: str, summarise: Callable[[pd.DataFrame], Any], sources: Any = None,
                               columns: list[str] | None = None) -> tuple[int, list[Any]]:
        """:meth:`write_sliced`, and ``summarise(frame)`` of each part's frame, taken in the task
        that writes it, in part order: what a later pass would read the parts back for, got
        without that read and without that pass's compute (a barrier fewer on a cluster)."""
        writes, costs = self._sliced_writes(docs, out, fn, *args, sources=sources, columns=columns, summarise=summarise)
        done = self.compute(writes, label, costs=costs)
        return int(sum(rows for rows, _ in done)), [summary for _, summary in done]

    def _sliced_writes(self, docs: dd.DataFrame, out: Artifact, fn: Callable[..., pd.DataFrame], *args: Any,
                       sources: Any, columns: list[str] | None = None,
                       summarise: Callable[[pd.DataFrame], Any] | None = None) -> tuple[list[Any], list[int] | None]:
        """:meth:`write_sliced`'s graph: one delayed write per partition, each giving its rows (its
        key ends with the partition number, as its slices' keys do), and the writes' costs for
        :meth:`compute`: the input stage's tokens of ``sources`` per partition, so the costliest
        partition's slices start first and a short one ends the step; ``None`` for a frame the
        stage derived, whose partitions are not the input's."""
        import uuid

        from dask import delayed

        from pipelines.kit.slices import sliced_pieces

        costs = None
        if docs is self.input_docs and len(self.input_files) == docs.npartitions:
            # the columns fn reads, the rows of its sources; the pieces are put together in the writing task
            costs = self.costs(sources)
            whole = {number for number, cost in enumerate(costs or []) if cost == 0} if sources is not None else set()
            pieces = sliced_pieces(self.input_files, columns, fn, *args, whole=whole, sources=sources)
        else:  # a frame the stage derived: whole partitions, every column it has
            pieces = [[delayed(fn)(number, part, *args)] for number, part in enumerate(docs.to_delayed())]
        token = uuid.uuid4().hex
        writes = [delayed(write_pieces)(out, number, each, summarise, dask_key_name=(f"write_pieces-{token}", number))
                  for number, each in enumerate(pieces)]
        return writes, costs

    def shuffle(self, frames: dd.DataFrame, on: str | list[str], label: str, npartitions: int | None = None,
                costs: list[int] | None = None) -> dd.DataFrame:
        """The partitions ``frames.shuffle(on=on, npartitions=npartitions)`` would give, through a
        file exchange (:mod:`pipelines.kit.exchange`: one task per input and one per output
        partition instead of Dask's one per pair). The routing is computed now, into the stage's
        scratch folder (removed when the stage's output is written), with ``costs`` (one per
        input partition, as :meth:`compute`'s) when computing ``frames`` is the work; the frame
        returned reads it. Without ``costs`` the routing is not computed now but with the frame
        returned: its partitions depend on every routing task (one task that waits for them
        all), so the compute that uses them does both, without a barrier (the workers idle while
        the driver plans the next graph) between the two."""
        from pipelines.kit.exchange import read_after_routing, read_exchanged, route_part

        keys = [on] if isinstance(on, str) else list(on)
        n = max(1, npartitions or frames.npartitions)
        if max(n, frames.npartitions) > EXCHANGE_MAX_PARTITIONS:  # every output reads every input's file: N x M
            return frames.shuffle(on=keys, npartitions=n)
        self.exchanges += 1
        folder = Artifact(self.work_dir / SCRATCH / f"exchange-{self.exchanges:03d}")
        routes = self.map_parts(frames, route_part, keys, n, folder, meta=pd.Series(dtype="int64"))
        if costs is not None:
            self.compute(routes, f"{label} (exchange)", costs)
            return dd.from_map(read_exchanged, list(range(n)), args=[folder, frames._meta], meta=frames._meta, enforce_metadata=False)
        return read_after_routing(routes, n, folder, frames._meta)

    def costs(self, sources: Any = None) -> list[int] | None:
        """Tokens per input partition of ``sources`` (all sources: ``None``) for ``compute``'s
        ``costs``; ``None`` where the input stage recorded none."""
        if not self.input_tokens:
            return None
        chosen = [v for k, v in self.input_tokens.items() if sources is None or k in set(sources)]
        return [int(sum(col)) for col in zip(*chosen, strict=True)] if chosen else [0] * len(self.input_files)

    def compute(self, collection: Any, label: str, costs: list[int] | None = None) -> Any:
        """Compute a Dask collection with progress; a dataframe or series comes back as one
        pandas object (never a list of pieces), anything else as computed. ``costs`` (one per
        partition of a dataframe, e.g. :meth:`costs`) start the costliest partitions first on a
        cluster, where Dask would order them by their keys as strings (9, 8, …, 2, 10, 1, 0)."""
        from pipelines.progress import compute_with_progress

        out = compute_with_progress(collection, self.client, f"{self.name}: {label}", self.quiet, costs)
        if isinstance(out, (list, tuple)) and out and all(isinstance(x, (pd.DataFrame, pd.Series)) for x in out):
            return pd.concat(out)
        return out


def _numbered(df: pd.DataFrame, fn: Callable[..., Any], *args: Any, partition_info: dict | None = None, **kwargs: Any) -> Any:
    return fn(part_number(partition_info), df, *args, **kwargs)
