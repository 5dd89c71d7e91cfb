"""The tasks that write a sliced step's parts (:meth:`StageContext.write_sliced`,
:meth:`StageContext.sliced_steps`), and what they hand back besides their rows.

A later pass that needs something of every part (a histogram, a quantile sketch) would read the
parts back in a compute of its own: a barrier where the workers wait for the driver. Instead the
writing task gives ``summarise(frame)`` of the frame it writes; with a ``merge``, the summaries
are merged 8 at a time on the cluster (:func:`tree_merge`) in the same compute, and only the
result reaches the client.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import Any

import pandas as pd

from pipelines.kit.artifact import Artifact


@dataclasses.dataclass(frozen=True)
class SlicedStep:
    """One of :meth:`StageContext.sliced_steps`: a cached step ``name`` (keyed by ``params``)
    whose artifact is ``fn(number, rows, *args)`` over row slices of every partition."""

    name: str
    params: Any
    fn: Callable[..., pd.DataFrame]
    args: tuple[Any, ...] = ()
    figures: Callable[[int], dict[str, Any]] | None = None  #: the step's figures, from the rows it wrote
    #: of each part's frame, taken in the task that writes it
    summarise: Callable[[pd.DataFrame], Any] | None = None
    #: merges a list of summaries into one: the parts' summaries are then merged on the cluster, in
    #: the same compute (:func:`tree_merge`), and only the result comes back
    merge: Callable[[list[Any]], Any] | None = None

    def items(self, writes: list[Any]) -> list[Any]:
        """What the compute gets for this step's ``writes``: the writes; with ``summarise`` and
        ``merge``, each part's rows (keyed by its partition, as the writes) and then the merged
        summaries, one item more."""
        if not self._merged(writes):
            return writes
        from dask import delayed

        token = uuid.uuid4().hex
        rows = [delayed(_at)(w, 0, dask_key_name=(f"rows-{token}", n)) for n, w in enumerate(writes)]
        return [*rows, tree_merge([delayed(_at)(w, 1) for w in writes], self.merge, delayed)]

    def results(self, writes: list[Any], done: list[Any]) -> tuple[list[int], Any]:
        """The rows of each part and the summaries (``None`` without ``summarise``; a list per part,
        or the merged one) from this step's :meth:`items` computed."""
        if self._merged(writes):
            return done[:-1], done[-1]
        if self.summarise is None:
            return done, None
        return [rows for rows, _ in done], [summary for _, summary in done]

    def _merged(self, writes: list[Any]) -> bool:
        return self.summarise is not None and self.merge is not None and bool(writes)


def tree_merge(items: list[Any], merge: Callable[[list[Any]], Any], wrap: Callable[..., Any] | None = None) -> Any:
    """``items`` merged 8 at a time, level by level, in order; with ``wrap=dask.delayed``, as a graph."""
    call = wrap(merge) if wrap is not None else merge
    while len(items) > 1:
        items = [call(items[i : i + 8]) for i in range(0, len(items), 8)]
    return items[0]


def write_pieces(out: Artifact, number: int, pieces: list[pd.DataFrame | None],
                 summarise: Callable[[pd.DataFrame], Any] | None = None) -> int | tuple[int, Any]:
    """Part ``number`` of ``out`` from a step's pieces in row order; its rows, and with
    ``summarise`` that of the frame written."""
    from pipelines.kit.slices import concat_pieces

    frame = concat_pieces(pieces)
    out.write_part(number, frame)
    return len(frame) if summarise is None else (len(frame), summarise(frame))


def _at(pair: tuple[Any, Any], i: int) -> Any:
    return pair[i]
