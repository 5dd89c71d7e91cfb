"""A stage that finished without everything it asked a service for (annotation requests an LLM
judge did not answer, below ``edu_score.max_transport_failures``): its folder is in place and
usable, and the run says so everywhere a user or a trainer looks.

The stage's ``_SUCCESS`` and ``stats.json`` hold ``incomplete`` (why); ``run.json`` lists such
stages under ``incomplete``, the mixture's manifests too (:func:`pipelines.kit.stage.resolve_lineage`);
the funnel ends in an ``INCOMPLETE:`` line; ``curate export`` refuses the run (:class:`IncompleteExportError`,
exit :data:`EXIT_INCOMPLETE_EXPORT`) unless given ``--allow-incomplete``, and then warns and copies the list
into ``export.json`` (:func:`listed_incomplete`); ``curate verify`` and ``curate stats --check`` exit 1;
and ``curate run`` (or a single-stage command) exits :data:`EXIT_INCOMPLETE` once everything is
written. The same command, re-run, asks again for what is missing and completes the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.errors import read_json_file

#: ``curate``'s exit code for a run that finished with an incomplete stage.
EXIT_INCOMPLETE = 11
#: ``curate export``'s exit code for a run with an incomplete stage that it refuses (nothing written).
EXIT_INCOMPLETE_EXPORT = 12
#: What to do about an incomplete stage.
RERUN = "re-run the same command when the judge answers (it sends only the requests that got no answer)"


def incomplete_stages(stats: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(stage, why) of each stage whose ``stats.json`` says it is incomplete, in run order."""
    return [(str(s.get("stage")), str(s["incomplete"])) for s in stats if s.get("incomplete")]


def incomplete_line(stats: list[dict[str, Any]]) -> str | None:
    """The line under the funnel for incomplete stages, or None.

    >>> incomplete_line([{"stage": "edu_score", "incomplete": "20 annotation requests got no answer"}])[:72]
    'INCOMPLETE: edu_score (20 annotation requests got no answer); re-run the'
    """
    found = incomplete_stages(stats)
    return f"INCOMPLETE: {'; '.join(f'{n} ({why})' for n, why in found)}; {RERUN}" if found else None


def run_incomplete(results: list[Any]) -> list[dict[str, str]]:
    """``run.json``'s ``incomplete``: stage, folder and why, for each incomplete stage of the run."""
    return [
        {"stage": r.name, "folder": r.stage_dir.name, "reason": str(r.stats["incomplete"])}
        for r in results
        if r.stats.get("incomplete")
    ]


def listed_incomplete(run_dir: Path, manifests: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The incomplete stages that ``run.json`` (when the run has one) and the manifests list, each once
    (as :func:`run_incomplete` writes them): what an export repeats in its log and ``export.json``."""
    record = read_json_file(run_dir / "run.json") if (run_dir / "run.json").is_file() else {}
    listed = [*(record.get("incomplete") or []), *(u for m in manifests for u in m.get("incomplete") or [])]
    found: dict[tuple[str, str], dict[str, str]] = {}
    for u in listed:
        found.setdefault(
            (str(u.get("stage")), str(u.get("folder"))), {k: str(u.get(k)) for k in ("stage", "folder", "reason")}
        )
    return list(found.values())


class IncompleteRunError(Exception):
    """A run (or one stage) that finished, every file written, with an incomplete stage: exit 11.
    ``results``: the :class:`pipelines.runner.StageResult` of each stage; ``funnel``: its table."""

    def __init__(self, results: list[Any]) -> None:
        from pipelines.summary import funnel_table

        self.results = results
        self.funnel = funnel_table([r.stats for r in results])
        names = ", ".join(f"{n} ({why})" for n, why in incomplete_stages([r.stats for r in results]))
        super().__init__(
            f"finished, but incomplete: {names}; every stage's output is written and says so (_SUCCESS, "
            f"run.json and the mixture manifests: incomplete), so train on it only knowingly; {RERUN}"
        )


def check_complete(results: list[Any]) -> list[Any]:
    """``results``, or :class:`IncompleteRunError` when a stage among them is incomplete."""
    if any(r.stats.get("incomplete") for r in results):
        raise IncompleteRunError(results)
    return results


class IncompleteExportError(Exception):
    """``curate export`` of a run whose ``run.json`` or manifests list incomplete stages, without
    ``--allow-incomplete``: refused before anything is written, exit :data:`EXIT_INCOMPLETE_EXPORT`.

    >>> str(IncompleteExportError(Path("runs/a"), [{"stage": "edu_score", "reason": "3 requests got no answer"}]))[:74]
    'runs/a is incomplete: edu_score (3 requests got no answer), so the data a '
    """

    def __init__(self, run_dir: Path, incomplete: list[dict[str, str]]) -> None:
        said = "; ".join(f"{u['stage']} ({u['reason']})" for u in incomplete)
        super().__init__(
            f"{run_dir} is incomplete: {said}, so the data a trainer would get lacks what those stages did not "
            "finish (run.json and the mixture manifests list them under incomplete); nothing was written. "
            "Re-run the same `curate run` command when the judge answers (it sends only the requests that got no "
            "answer) and export again, or pass --allow-incomplete to export it as it is (export.json then lists "
            "the stages under incomplete)"
        )
