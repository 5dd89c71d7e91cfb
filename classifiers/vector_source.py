"""Where a scorer's document vectors come from: stored ones when compatible, embedded for the rest.

SemDeDup stores a unit vector per document (``30_semdedup/artifacts/embeddings``); a later stage
whose scorer was trained on vectors of the same embedder settings reads them instead of embedding
again, and embeds only the documents missing there. A :class:`VectorSource` is that rule, once:

>>> src = VectorSource.build(None, {"model": "minilm-static"})
>>> src.folders, src.tag()
((), None)

``tag()`` is the provenance of the stored vectors (which run folder, which embeddings, how many):
it goes into the cache keys of whatever is computed from the vectors.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from classifiers.embedding_store import embedding_card, part_path, read_embedding_part
from curation.files import read_parquet

log = logging.getLogger(__name__)

#: Settings that change how fast vectors are made, not what they are.
RUNTIME_KEYS = ("device", "batch_size")


def compatible(folder: Path, embedder: dict[str, Any]) -> bool:
    """Whether the vectors stored in ``folder`` were made with ``embedder``'s settings."""
    stored = embedding_card(folder).get("embedder", {})
    return all(stored.get(k) == v for k, v in embedder.items() if k not in RUNTIME_KEYS)


@dataclasses.dataclass(frozen=True)
class VectorSource:
    """Stored vector folders (looked up in order) and the embedder for the documents they lack."""

    folders: tuple[Path, ...]
    embedder: dict[str, Any]
    upstream: Path | None = None  #: the compatible upstream folder (SemDeDup's), if any
    rejected: Path | None = None  #: an upstream folder left out: its vectors were made with other settings

    @classmethod
    def build(
        cls,
        upstream: Path | str | None,
        embedder: dict[str, Any],
        extra: Sequence[Path | str] = (),
        who: str = "scorer",
        warn: bool = True,
    ) -> VectorSource:
        """``upstream`` when its card matches ``embedder`` (a warning otherwise, when ``warn``: the
        caller will embed; a caller that embeds in a cached step says it there, :meth:`warn_rejected`),
        then ``extra`` folders (vectors this stage stored itself, same settings)."""
        up = Path(upstream) if upstream else None
        rejected = None
        if up is not None and not compatible(up, embedder):
            up, rejected = None, up
        folders = tuple(Path(p) for p in ([up] if up is not None else []) + list(extra))
        source = cls(folders, dict(embedder), up, rejected)
        if warn:
            source.warn_rejected(who)
        return source

    def warn_rejected(self, who: str) -> None:
        """Say that the upstream vectors were left out and why (nothing when none were). An INFO line: the
        upstream stage chose its model (under ``--profile cpu`` SemDeDup's static vectors), embedding again
        is the right answer and there is nothing to change."""
        if self.rejected is not None:
            log.info(
                "%s: stored embeddings use %s, it needs %s; embedding again",
                who,
                embedding_card(self.rejected).get("embedder", {}),
                self.embedder,
            )

    def with_folders(self, *extra: Path | str) -> VectorSource:
        """The same source with more stored folders looked up after these."""
        return dataclasses.replace(self, folders=self.folders + tuple(Path(p) for p in extra))

    def tag(self) -> str | None:
        """What identifies the upstream vectors in cache keys: run stage folder, card name and count."""
        if self.upstream is None:
            return None
        card = embedding_card(self.upstream)
        return f"{self.upstream.parent.parent.name}:{card.get('name')}:{card.get('count')}"

    # -- lookup ---------------------------------------------------------------------------------
    def stored_ids(self, number: int) -> set[str]:
        """The ids with a stored vector in partition ``number`` of any folder."""
        out: set[str] = set()
        for folder in self.folders:
            path = part_path(folder, number)
            if path.exists():
                out.update(read_parquet(path, ["doc_id"]).column("doc_id").to_pylist())
        return out

    def stored(self, number: int, doc_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """doc_id → stored vector for ``doc_ids`` from partition ``number`` of each folder."""
        need = set(doc_ids)
        found: dict[str, np.ndarray] = {}
        for folder in self.folders:
            path = part_path(folder, number)
            if not need or not path.exists():
                continue
            ids, vecs = read_embedding_part(path)
            for i, d in enumerate(ids):
                if d in need:
                    found[d] = vecs[i]
                    need.discard(d)
        return found

    def stored_anywhere(self, doc_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """doc_id → stored vector for ``doc_ids`` from any partition (a sample: small)."""
        need = set(doc_ids)
        found: dict[str, np.ndarray] = {}
        for folder in self.folders:
            for path in sorted(folder.glob("part-*.parquet")):
                ids = pq.read_table(path, columns=["doc_id"]).column("doc_id").to_pylist()
                if not need.intersection(ids):
                    continue
                pid, vecs = read_embedding_part(path)
                for i, d in enumerate(pid):
                    if d in need:
                        found[d] = vecs[i]
                need -= set(found)
        return found

    # -- vectors --------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str], **runtime: Any) -> np.ndarray:
        """Fresh vectors with the source's embedder (``runtime``: device, batch_size)."""
        from classifiers.embedding import get_embedder

        return get_embedder(**{**self.embedder, **runtime}).embed([t if isinstance(t, str) else "" for t in texts])

    def vectors(
        self, doc_ids: Sequence[str], texts: Sequence[str], number: int | None = None, **runtime: Any
    ) -> np.ndarray:
        """One row per document: stored where found (partition ``number``, or any partition when
        ``None``), embedded for the rest."""
        ids = [str(d) for d in doc_ids]
        found = self.stored(number, ids) if number is not None else self.stored_anywhere(ids)
        missing = [i for i, d in enumerate(ids) if d not in found]
        fresh = self.embed([texts[i] for i in missing], **runtime) if missing else None
        dim = fresh.shape[1] if fresh is not None else (len(next(iter(found.values()))) if found else 0)
        out = np.zeros((len(ids), dim), dtype=np.float32)
        for i, d in enumerate(ids):
            if d in found:
                out[i] = found[d]
        if fresh is not None:
            out[missing] = fresh
        if missing or not self.folders:
            log.debug("vectors: %d stored, %d embedded", len(ids) - len(missing), len(missing))
        return out
