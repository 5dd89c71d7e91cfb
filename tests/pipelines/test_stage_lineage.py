"""A single stage cites, and reuses the artifacts of, the stages its input was made through (the chain of
input and output fingerprints), not every finished folder beside its input; it says which of the recipe's
earlier stages its input skipped; it refuses an input without a column the runner writes, before any
output; and a folder a killed stage left behind is named as such."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipelines.runner
from curation.ingest.inputs import InputError
from pipelines.cli import main as curate
from pipelines.cluster import open_client
from pipelines.marker import check_input
from pipelines.recipe import load_recipe
from pipelines.runner import run_recipe, run_stage
from pipelines.stages import load_stage
from tests.helpers import only

RECIPE = ["ingest.tokenizer=whitespace", *only("exact_dedup", "minhash_dedup")]


@pytest.fixture(scope="module")
def run3(tmp_path_factory) -> Path:
    """ingest → exact_dedup → minhash_dedup on a small corpus (read, never changed)."""
    raw = tmp_path_factory.mktemp("raw")
    with open(raw / "a.jsonl", "w") as f:
        for i in range(40):
            f.write(json.dumps({"id": f"a{i}", "text": f"document number {i % 15} with some words in it", "source": "web"}) + "\n")
    out = tmp_path_factory.mktemp("lineage") / "run"
    with open_client("synchronous", None) as client:
        run_recipe(load_recipe(None, RECIPE), [str(raw)], out, client=client, quiet=True)
    return out


class _Probe:
    """The mixture stage's declarations, but a build that keeps every row and records what the runner
    resolved for it (its lineage and upstream artifacts) in its stats' ``extra``."""

    requires = ("doc_id", "text", "source")
    produces: dict[str, Any] = {}
    requires_artifacts = {"signatures": ("minhash_dedup", "signatures"), "html": ("ingest", "html")}

    def __init__(self) -> None:
        self._real = load_stage("mixture")

    def __getattr__(self, key: str) -> Any:
        return getattr(self._real, key)

    def build(self, docs, cfg, ctx):
        ctx.extra_stats["lineage"] = [u["folder"] for u in ctx.lineage]
        ctx.extra_stats["stages"] = [u["stage"] for u in ctx.lineage]
        ctx.extra_stats["upstream"] = {k: str(v) if v else None for k, v in ctx.upstream.items()}
        return docs.assign(drop_reason=pd.Series(dtype=object), drop_detail=pd.Series(dtype=object))


def _probe(monkeypatch, input_dir: Path, output: Path) -> dict[str, Any]:
    monkeypatch.setattr(pipelines.runner, "load_stage", lambda name: _Probe())
    with open_client("synchronous", None) as client:
        res = run_stage("mixture", load_recipe(None, RECIPE), stage_dir=output, input_dir=input_dir, client=client, quiet=True)
    return res.stats["extra"]


def test_a_stage_fed_ingest_output_cites_ingest_alone_and_reuses_no_later_artifact(run3, tmp_path, monkeypatch, caplog):
    """The run folder beside its input holds exact_dedup and minhash_dedup: they did not make this input."""
    with caplog.at_level(logging.WARNING):
        extra = _probe(monkeypatch, run3 / "00_ingest", tmp_path / "mx")
    assert extra["lineage"] == ["00_ingest"]
    assert extra["upstream"]["signatures"] is None  # minhash_dedup's signatures are of other documents' input
    assert "has not been through exact_dedup, minhash_dedup (" in caplog.text
    assert "give the folder of minhash_dedup" in caplog.text
    marker = json.loads((tmp_path / "mx" / "_SUCCESS").read_text())
    assert marker["input"] == str((run3 / "00_ingest").resolve())


def test_a_stage_fed_the_last_folder_cites_every_stage_on_its_chain_and_reuses_its_artifacts(run3, tmp_path, monkeypatch, caplog):
    with caplog.at_level(logging.WARNING):
        extra = _probe(monkeypatch, run3 / "20_minhash_dedup", tmp_path / "mx")
    assert extra["lineage"] == ["00_ingest", "10_exact_dedup", "20_minhash_dedup"]
    assert extra["upstream"]["signatures"] == str((run3 / "20_minhash_dedup" / "artifacts" / "signatures").resolve())
    assert "has not been through" not in caplog.text


def test_a_stage_chained_into_another_folder_is_followed_through_its_recorded_input(run3, tmp_path, monkeypatch, caplog):
    """minhash_dedup run by hand into a folder of its own, from the run's exact_dedup: the chain goes back
    through the folder its marker says it read, not only through folders beside it."""
    with open_client("synchronous", None) as client:
        run_stage("minhash_dedup", load_recipe(None, RECIPE), stage_dir=tmp_path / "mine" / "mh", input_dir=run3 / "10_exact_dedup",
                  client=client, quiet=True)
    with caplog.at_level(logging.WARNING):
        extra = _probe(monkeypatch, tmp_path / "mine" / "mh", tmp_path / "mine" / "mx")
    assert extra["stages"] == ["ingest", "exact_dedup", "minhash_dedup"]
    assert "has not been through" not in caplog.text


def _marker(folder: Path, stage: str, inp: str, out: str) -> None:
    folder.mkdir(parents=True)
    (folder / "_SUCCESS").write_text(json.dumps({"writer": "curation", "stage": stage, "config_hash": "h", "input_fingerprint": inp,
                                                 "output_fingerprint": out}))


def test_the_chain_follows_fingerprints_and_prefers_the_stages_own_folder(tmp_path):
    from pipelines.kit.stage import upstream_chain

    _marker(tmp_path / "copy_of_ingest", "ingest", "raw", "i")
    _marker(tmp_path / "00_ingest", "ingest", "raw", "i")
    _marker(tmp_path / "10_exact_dedup", "exact_dedup", "i", "e")
    _marker(tmp_path / "20_minhash_dedup", "minhash_dedup", "i", "m")  # made from ingest directly
    _marker(tmp_path / "30_semdedup", "semdedup", "e", "s")
    _marker(tmp_path / "loop_a", "exact_dedup", "b", "a")
    _marker(tmp_path / "loop_b", "exact_dedup", "a", "b")
    assert [p.name for p in upstream_chain(tmp_path / "20_minhash_dedup")] == ["00_ingest", "20_minhash_dedup"]
    assert [p.name for p in upstream_chain(tmp_path / "30_semdedup" / "docs")] == ["00_ingest", "10_exact_dedup", "30_semdedup"]
    assert [p.name for p in upstream_chain(tmp_path / "loop_a")] == ["loop_b", "loop_a"]  # a cycle ends
    assert upstream_chain(tmp_path) == [] and upstream_chain(None) == []


def _no_tokens(folder: Path) -> Path:
    folder.mkdir(parents=True)
    table = pa.table({"doc_id": [f"d{i}" for i in range(30)], "text": [f"some text number {i % 7} here" for i in range(30)],
                      "source": ["web"] * 30})
    pq.write_table(table, folder / "part-00000.parquet")
    return folder


@pytest.mark.parametrize("stage", ["exact_dedup", "minhash_dedup", "repeated_lines", "semdedup"])
def test_an_input_without_n_tokens_is_refused_before_any_output(tmp_path, stage):
    """The runner's writer puts n_tokens in every ledger row: an input without it crashed after the stage's
    work (exit 70) and left an output folder holding only .cache/."""
    src = _no_tokens(tmp_path / "in")
    with open_client("synchronous", None) as client, pytest.raises(InputError, match=r"requires columns \['n_tokens'\].*n_tokens: ingest"):
        run_stage(stage, load_recipe(None, []), stage_dir=tmp_path / "out", input_dir=src, client=client, quiet=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_the_cli_exits_4_on_an_input_without_n_tokens(tmp_path, caplog):
    src = _no_tokens(tmp_path / "in")
    assert curate(["minhash-dedup", "--input", str(src), "--output", str(tmp_path / "out"), "--quiet"]) == 4
    assert "requires columns ['n_tokens']" in caplog.text and not (tmp_path / "out").exists()


@pytest.mark.parametrize("inprogress", [True, False])
def test_a_folder_a_killed_stage_left_says_the_stage_did_not_finish(tmp_path, inprogress):
    half = tmp_path / "10_exact_dedup"
    (half / ".cache" / "exact_dedup").mkdir(parents=True)
    if inprogress:
        (tmp_path / ".10_exact_dedup.inprogress").mkdir()
    with pytest.raises(InputError, match=r"output of exact_dedup, which did not finish.*curate exact-dedup --input … --output") as err:
        check_input(half)
    assert "Raw files must go through ingest" not in str(err.value)


def test_a_run_folder_given_as_input_is_not_taken_for_a_killed_stage(run3):
    with pytest.raises(InputError) as err:
        check_input(run3)
    assert "did not finish" not in str(err.value)


def test_artifacts_and_lineage_come_from_the_chain_alone(tmp_path):
    """A folder counts only when it is on the input's chain (test_kit checks a run folder's)."""
    from pipelines.kit import resolve_artifacts, resolve_lineage, upstream_chain

    class Needs:
        name = "web_quality"
        requires_artifacts = {"embeddings": ("semdedup", "embeddings"), "html": ("ingest", "html")}

    _marker(tmp_path / "00_ingest", "ingest", "raw", "i")
    _marker(tmp_path / "10_exact_dedup", "exact_dedup", "i", "e")
    _marker(tmp_path / "30_semdedup", "semdedup", "i", "s")  # made from ingest, beside exact_dedup
    (tmp_path / "00_ingest" / "artifacts" / "html").mkdir(parents=True)
    (tmp_path / "30_semdedup" / "artifacts" / "embeddings").mkdir(parents=True)
    (tmp_path / "00_ingest" / "stats.json").write_text(json.dumps({"config": {"k": 1}}))
    chain = upstream_chain(tmp_path / "10_exact_dedup")
    assert resolve_artifacts(Needs(), chain) == {"embeddings": None, "html": tmp_path.resolve() / "00_ingest" / "artifacts" / "html"}
    assert resolve_artifacts(Needs(), upstream_chain(tmp_path / "30_semdedup"))["embeddings"] == (
        tmp_path.resolve() / "30_semdedup" / "artifacts" / "embeddings")
    assert resolve_artifacts(Needs(), []) == {"embeddings": None, "html": None}
    got = resolve_lineage("web_quality", chain)
    assert [(g["stage"], g["folder"], g["config"]) for g in got] == [("ingest", "00_ingest", {"k": 1}), ("exact_dedup", "10_exact_dedup", None)]


def test_a_chain_whose_first_folder_was_replaced_says_where_it_stops(tmp_path):
    """30_semdedup was made from a minhash_dedup output that is no longer here: its lineage stops there, and
    the warning says so rather than that the data skipped dedup."""
    from pipelines.kit.stage import skipped_warning, upstream_chain

    _marker(tmp_path / "20_minhash_dedup", "minhash_dedup", "e", "m2")  # re-run since with another threshold
    _marker(tmp_path / "30_semdedup", "semdedup", "m1", "s")
    chain = upstream_chain(tmp_path / "30_semdedup")
    assert [p.name for p in chain] == ["30_semdedup"]
    got = skipped_warning("web_quality", load_recipe(None, []), tmp_path / "30_semdedup", chain)
    assert got is not None and "stops at" in got and "whether it went through ingest, exact_dedup, minhash_dedup is not known here" in got
