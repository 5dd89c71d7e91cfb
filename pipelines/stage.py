"""The stage contract: what a stage declares and what the runner gives it.

A stage is a small object (usually a module-level instance) with:

- ``name``: snake_case, the folder name, the ledger's ``stage`` value, the CLI subcommand (with dashes);
- ``version``: bump it when outputs change for the same config;
- ``config_cls``: a frozen :class:`curation.config.StageConfig` subclass;
- ``requires``: columns the input must have (checked before any compute);
- ``produces``: columns it adds, name → pandas dtype (used for Dask ``meta``);
- ``build(docs, config, ctx)``: returns a lazy Dask dataframe with every input row, the
  produced columns and ``drop_reason``/``drop_detail``. It may compute sub-steps eagerly
  through :meth:`StageContext.cached` (artifacts keyed by their parameters, so a re-run
  with a changed decision parameter reuses them).

Ingest is the one stage with ``reads_raw = True``: its ``build`` receives the raw input specs
instead of a dataframe.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from curation.config import StageConfig, config_hash

log = logging.getLogger(__name__)


class Stage(Protocol):
    name: str
    version: str
    config_cls: type[StageConfig]
    requires: tuple[str, ...]
    produces: dict[str, Any]

    def build(self, docs: Any, config: Any, ctx: StageContext) -> Any: ...


@dataclasses.dataclass
class StageContext:
    """What a stage may use besides its input: folders, the Dask client, the recipe."""

    name: str
    work_dir: Path  #: the in-progress folder, renamed into place on success
    cache_dir: Path  #: resumable sub-step artifacts, keyed by their parameters
    input_fingerprint: str
    run_dir: Path | None = None
    client: Any = None
    recipe: dict[str, Any] = dataclasses.field(default_factory=dict)
    inputs: list[Any] = dataclasses.field(default_factory=list)
    extra_stats: dict[str, Any] = dataclasses.field(default_factory=dict)
    quiet: bool = False

    @property
    def artifacts_dir(self) -> Path:
        path = self.work_dir / "artifacts"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def cached(self, name: str, params: Any, produce: Callable[[Path], None]) -> Path:
        """Run ``produce(folder)`` once per (input, ``params``); return the finished folder.

        The folder lives in the stage's cache (``<output parent>/.cache/<stage>/``) so an
        interrupted run or a run with only a changed decision parameter reuses it; it is
        hard-linked into ``artifacts/<name>/`` of the stage output.

        >>> # ctx.cached("signatures", {"num_perm": 128}, lambda d: write_signatures(d))
        """
        key = config_hash({"input": self.input_fingerprint, "params": params})[:16]
        final = self.cache_dir / f"{name}-{key}"
        if not (final / "_DONE").exists():
            tmp = self.cache_dir / f".{name}-{key}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            log.info("%s: computing %s", self.name, name)
            produce(tmp)
            (tmp / "_DONE").write_text(key)
            shutil.rmtree(final, ignore_errors=True)
            os.replace(tmp, final)
        else:
            log.info("%s: reusing %s from %s", self.name, name, final)
        _link_tree(final, self.artifacts_dir / name)
        return final

    def upstream_artifact(self, stage: str, name: str) -> Path | None:
        """The folder ``artifacts/<name>`` of an earlier stage of this run, if it exists."""
        if self.run_dir is None:
            return None
        for child in sorted(self.run_dir.iterdir()):
            if child.name.split("_", 1)[-1] == stage and (child / "artifacts" / name).exists():
                return child / "artifacts" / name
        return None


def _link_tree(src: Path, dst: Path) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    for root, _dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            try:
                os.link(Path(root) / f, dst / rel / f)
            except OSError:
                shutil.copy2(Path(root) / f, dst / rel / f)
