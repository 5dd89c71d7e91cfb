"""Restat: a stage made again whose output comes out byte for byte as before hands on its previous
output fingerprint, so the stages after it are reused (not run, their markers untouched); an output
that changes makes them again. Real runs of the recipe on sample_data/web (pipelines/restat.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.marker import read_marker
from tests.helpers import only

STAGES = only("exact_dedup", "minhash_dedup", "web_quality", "code_quality", "mixture")
RUN = [
    "run",
    "pipelines/configs/glm45.yaml",
    "--input",
    "sample_data/web",
    "--quiet",
    "--scheduler",
    "synchronous",
    *STAGES,
]
#: a setting of the recipe that changes how web_quality works, not what it writes on this corpus: its
#: quantile sketches are exact below 4,096 points per group, and sample_data/web has fewer pages
SAME = "web_quality.sketch_capacity=8192"
LATER = ("50_code_quality", "80_mixture")


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    out = tmp_path_factory.mktemp("restat") / "run"
    assert main([*RUN, "--output", str(out)]) == 0
    return out


def _stages(run: Path) -> dict[str, dict]:
    return {s["folder"]: s for s in json.loads((run / "run.json").read_text())["stages"]}


def _made(run: Path, folder: str) -> tuple[int, str]:
    """When a stage folder's marker was written, and the marker itself."""
    marker = run / folder / "_SUCCESS"
    return marker.stat().st_mtime_ns, marker.read_text()


def _content(run: Path, folder: str) -> dict[str, str]:
    """The checksums its marker recorded of its documents, ledger and shards."""
    files = (read_marker(run / folder) or {})["files"]
    return {rel: rec["xxh3"] for rel, rec in files.items() if rel.split("/")[0] in ("docs", "ledger", "shards")}


def test_a_stage_made_again_with_its_output_as_before_leaves_the_later_stages_as_they_are(first, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(first, run)
    before = {f: _made(run, f) for f in LATER}
    old = read_marker(run / "40_web_quality")
    capsys.readouterr()
    assert main([*RUN, "--output", str(run), SAME]) == 0
    assert (
        "reused: code_quality, mixture (their input came out unchanged: web_quality was made again"
        in capsys.readouterr().out
    )
    stages = _stages(run)
    assert stages["40_web_quality"]["skipped"] is False and stages["40_web_quality"]["output_unchanged"] is True
    for folder in LATER:  # not run: their markers are the very files written before
        assert stages[folder]["skipped"] is True and stages[folder]["input_unchanged_after"] == "web_quality"
        assert _made(run, folder) == before[folder]
    new = read_marker(run / "40_web_quality")
    assert new["config_hash"] != old["config_hash"] and new["output_fingerprint"] == old["output_fingerprint"]
    assert new["same_output_as"] == [{"config_hash": old["config_hash"], "input_fingerprint": old["input_fingerprint"]}]
    # the mixture's manifests cite the web_quality run that made its input; the run checks out, manifests included
    assert main(["verify", str(run)]) == 0
    fresh = tmp_path / "fresh"
    assert main([*RUN, "--output", str(fresh), SAME]) == 0
    for folder in ("40_web_quality", *LATER):  # what a fresh run with the new setting writes
        assert _content(run, folder) == _content(fresh, folder), folder
    assert (
        read_marker(run / "50_code_quality")["content_digest"]
        == read_marker(fresh / "50_code_quality")["content_digest"]
    )


def test_a_stage_made_again_with_another_output_makes_the_later_stages_again(first, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(first, run)
    before = {f: _made(run, f) for f in LATER}
    old = read_marker(run / "40_web_quality")
    assert main([*RUN, "--output", str(run), "web_quality.combine=max"]) == 0
    stages = _stages(run)
    assert "output_unchanged" not in stages["40_web_quality"]
    assert read_marker(run / "40_web_quality")["output_fingerprint"] != old["output_fingerprint"]
    for folder in LATER:
        assert stages[folder]["skipped"] is False and "input_unchanged_after" not in stages[folder]
        assert _made(run, folder) != before[folder]
    assert main(["verify", str(run)]) == 0


def test_an_output_of_an_older_curate_without_a_digest_hands_on_a_new_fingerprint(first, tmp_path):
    """A marker that records no content digest (written before restat) cannot be compared: the stage
    after it runs again, as before; its own output, made from the same documents, comes out as before
    (its marker has a digest), so the mixture after it is reused."""
    run = tmp_path / "run"
    shutil.copytree(first, run)
    marker = read_marker(run / "40_web_quality")
    del marker["content_digest"]
    (run / "40_web_quality" / "_SUCCESS").write_text(json.dumps(marker))
    assert main([*RUN, "--output", str(run), SAME]) == 0
    stages = _stages(run)
    assert read_marker(run / "40_web_quality")["output_fingerprint"] != marker["output_fingerprint"]
    assert stages["50_code_quality"]["skipped"] is False and stages["50_code_quality"]["output_unchanged"] is True
    assert stages["80_mixture"]["skipped"] is True and stages["80_mixture"]["input_unchanged_after"] == "code_quality"
    # its manifests cite the web_quality and code_quality runs that made their input: still what they read
    assert main(["verify", str(run)]) == 0


def test_an_output_made_after_a_stage_before_it_turned_incomplete_hands_on_a_new_fingerprint(first, tmp_path):
    """forge_filter made again after edu_score turned incomplete (a judge that stopped answering) writes
    the same files, but a mixture after it says which stages were incomplete: the same files after
    another set of incomplete stages are another output, so the mixture is made again."""
    from pipelines.restat import stage_marker

    run = tmp_path / "run"
    shutil.copytree(first, run)
    chain = [run / f for f in ("00_ingest", "10_exact_dedup", "20_minhash_dedup", "40_web_quality")]
    stage = run / "50_code_quality"
    previous = read_marker(stage)
    args = ("code_quality", previous["version"], previous["config_hash"] + "x", previous["input_fingerprint"])
    assert stage_marker(stage, *args, chain, None, previous)["output_fingerprint"] == previous["output_fingerprint"]
    marker = read_marker(chain[-1])
    (chain[-1] / "_SUCCESS").write_text(json.dumps({**marker, "incomplete": "3 annotation requests got no answer"}))
    again = stage_marker(stage, *args, chain, None, previous)
    assert again["output_fingerprint"] != previous["output_fingerprint"] and "same_output_as" not in again
    # and back: made again once the stage before it is complete, it is the output it replaced
    (chain[-1] / "_SUCCESS").write_text(json.dumps(marker))
    assert stage_marker(stage, *args, chain, None, {**previous, "content_digest": again["content_digest"]})["output_fingerprint"] != previous["output_fingerprint"]


def test_a_judges_request_counts_and_rate_are_not_content():
    """A re-run served from the answer cache, or retried after a timeout, writes the same scores."""
    from pipelines.restat import without_timings

    a = {"extra": {"annotation": {"stats": {"documents": 24, "failures": 0, "requests": 16, "cache_hits": 8, "retries": 1,
                                            "retry_reasons": {"timeout": 1}, "seconds": 1.5, "documents_per_s": 15.9}}}}
    b = {"extra": {"annotation": {"stats": {"documents": 24, "failures": 0, "requests": 23, "cache_hits": 1, "retries": 0,
                                            "retry_reasons": {}, "seconds": 0.7, "documents_per_s": 34.98}}}}
    assert without_timings(a) == without_timings(b) == {"extra": {"annotation": {"stats": {"documents": 24, "failures": 0}}}}


def test_a_single_stage_made_again_with_the_runs_own_settings_leaves_the_run_current(first, tmp_path, caplog):
    """The run reused its later stages when web_quality came out as before under another setting; the
    stage made again alone with the run's recipe settings is, byte for byte, what the run recorded: no
    stage is stale, curate verify passes, and no warning says otherwise."""
    import logging

    run = tmp_path / "run"
    shutil.copytree(first, run)
    assert main([*RUN, "--output", str(run), SAME]) == 0
    recorded = _stages(run)["40_web_quality"]["config_hash"]
    with caplog.at_level(logging.WARNING):
        assert main(["web-quality", "--input", str(run / "20_minhash_dedup"), "--output", str(run / "40_web_quality"),
                     "--quiet", "--scheduler", "synchronous"]) == 0
    marker = read_marker(run / "40_web_quality")
    assert marker["config_hash"] != recorded and {"config_hash": recorded, "input_fingerprint": marker["input_fingerprint"]} in marker["same_output_as"]
    assert not [r for r in caplog.records if "stale" in r.getMessage()]
    assert main(["verify", str(run)]) == 0
