"""Settings refused or said before anything runs (pipelines/plan_checks.py and the stages' checks):
a column a setting reads that no earlier stage makes, language codes, the mixture's seed, settings
that do nothing in the plan (edu bands, learned_model, the order of a file's stage sections),
languages the static embedder cannot prune, and CURATE_WORKER_WAIT_S."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from curation.config import ConfigError
from pipelines.cli import main as curate
from pipelines.recipe import check_configs, load_recipe
from pipelines.stages import enabled_stages, load_stage
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one
from tests.pipelines.test_semdedup_stage import BILINGUAL, TOPICS, template_page

REPO = Path(__file__).resolve().parents[2]
RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")


def _built(overrides: list[str], path: str | None = None) -> tuple[dict, list[str]]:
    """The recipe with ``overrides`` and its stages, every config built and checked."""
    recipe = load_recipe(path, overrides)
    names = enabled_stages(recipe)
    check_configs(recipe, names)
    return recipe, names


def _checked(overrides: list[str], path: str | None = None) -> list[str]:
    """The plan's notes for the recipe with ``overrides`` (every config built and checked first)."""
    from pipelines.plan_checks import check_plan

    return check_plan(*_built(overrides, path))


def _raw_input(tmp_path: Path) -> Path:
    folder = tmp_path / "raw"
    folder.mkdir()
    rows = [{"id": f"p{i}", "text": f"{t} This page is number {i} of a small test crawl.", "source": "web"} for i, t in enumerate(TOPICS)]
    (folder / "pages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


# -- a column a setting reads: refused before anything runs, --dry-run too --------------------------------------

@pytest.mark.parametrize("key", ["semdedup.keep", "minhash_dedup.keep"])
def test_a_keep_column_no_stage_makes_is_refused_before_any_stage_runs(tmp_path, caplog, key):
    raw, out = _raw_input(tmp_path), tmp_path / "run"
    common = ["run", RECIPE, "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet", "--profile", "cpu"]
    assert curate([*common, "--dry-run", f"{key}=highest:nonexist_col"]) == 2
    assert curate([*common, f"{key}=highest:nonexist_col"]) == 2
    assert f"{key} = 'highest:nonexist_col' needs column 'nonexist_col', which no earlier stage or the input provides" in caplog.text
    assert not out.exists()  # ingest, exact_dedup and minhash_dedup did not run first
    # a column of a later stage is said as such: semdedup runs before web_quality
    assert curate([*common, "--dry-run", "semdedup.keep=highest:code_score_structural"]) == 2
    assert ("'code_score_structural', which no earlier stage or the input provides (no stage before semdedup produces it; "
            "code_quality, code_web make it, but run after semdedup)") in caplog.text
    assert curate([*common, "--dry-run", f"{key}=highest:n_tokens"]) == 0  # ingest's column


def test_run_recipe_refuses_a_keep_column_before_ingest(tmp_path):
    from pipelines.runner import run_recipe

    recipe = load_recipe(None, ["minhash_dedup.keep=lowest:perplexity"])
    with pytest.raises(ConfigError, match="minhash_dedup.keep = 'lowest:perplexity' needs column 'perplexity'"):
        run_recipe(recipe, [str(_raw_input(tmp_path))], tmp_path / "run", quiet=True)
    assert not (tmp_path / "run").exists()


def test_a_single_stage_refuses_its_keep_column_from_the_input_folder(tmp_path):
    from pipelines.kit.stage import check_requires
    from pipelines.recipe import stage_config

    stage = load_stage("semdedup")
    cfg = stage_config(load_recipe(None, ["semdedup.keep=highest:edu_score"]), "semdedup", stage.config_cls)
    with pytest.raises(ConfigError, match="semdedup.keep = 'highest:edu_score' needs column 'edu_score', which IN does not"):
        check_requires(stage, Path("IN"), ["doc_id", "text", "source", "n_tokens"], cfg)
    check_requires(stage, Path("IN"), ["doc_id", "text", "source", "n_tokens", "edu_score"], cfg)


def test_a_stage_given_two_input_folders_is_refused_in_dry_run_too(tmp_path, caplog):
    a = make_stage_dir(tmp_path / "a", docs_frame([{"text": "one page"}, {"text": "two page"}]))
    b = make_stage_dir(tmp_path / "b", docs_frame([{"text": "one page"}, {"text": "two page"}]))
    assert curate(["exact-dedup", "--input", str(a), str(b), "--output", str(tmp_path / "out"), "--dry-run", "--quiet"]) == 2
    assert "exact-dedup reads one stage folder; got 2 inputs" in caplog.text


# -- semdedup.prune_languages under a static embedder ------------------------------------------------------------

def test_prune_languages_the_static_embedder_cannot_prune_prune_nothing_and_are_said(tmp_path, caplog):
    rows = [{"doc_id": f"shop-{i}", "text": template_page(i), "source": "web", "lang": "en"} for i in range(4)]
    rows += [{"doc_id": f"topic-{i}", "text": t, "source": "web", "lang": "en"} for i, t in enumerate(TOPICS)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    run_one("semdedup", inp, tmp_path / "de", [*BILINGUAL, "semdedup.prune_languages=[de]"])
    kept, ledger = assert_conservation(inp, tmp_path / "de")
    assert ledger.empty and len(kept) == len(rows)  # [de] is not "every language": the English twins stay
    run_one("semdedup", inp, tmp_path / "en_de", [*BILINGUAL, "semdedup.prune_languages=[en,de]"])
    _, ledger = assert_conservation(inp, tmp_path / "en_de")
    assert len({d for d in ledger["doc_id"] if d.startswith("shop-")}) == 3
    with caplog.at_level(logging.WARNING):
        notes = _checked([*BILINGUAL, "semdedup.prune_languages=[en,de]"])
    assert any("pages of de pass unpruned (pruning en only)" in n for n in notes)
    assert any("(nothing is pruned)" in n for n in _checked([*BILINGUAL, "semdedup.prune_languages=[de]"]))
    assert _checked(["semdedup.prune_languages=[de]"]) == []  # the transformer prunes every language


@pytest.mark.parametrize(("override", "said"), [
    ("semdedup.prune_languages=[english]", "semdedup.prune_languages has 'english', not language codes"),
    ("semdedup.prune_languages=[EN]", "'EN' (did you mean 'en'?)"),
    ("semdedup.eps_by_language={ZH: 0.1}", "semdedup.eps_by_language has 'ZH' (did you mean 'zh'?)"),
    ("mixture.language_repeat={xx: 2}", "mixture.language_repeat has 'xx', not language codes"),
    ("web_quality.scorer_languages={linear: [english]}", "web_quality.scorer_languages.linear has 'english'"),
])
def test_language_codes_that_lang_never_holds_are_refused(override, said):
    with pytest.raises(ConfigError, match=re.escape(said)):
        _built([override])


def test_language_codes_ingest_writes_and_patterns_are_accepted():
    _built(["mixture.language_repeat={zh: 1.5, und: 0.5, ceb: 1, '*': 1}", "semdedup.prune_languages=[en, zh]",
            "web_quality.scorer_languages={linear: [en, de]}"])


def test_the_language_codes_are_the_language_identifiers_own():
    from classifiers.langid import CODES, LID176_LABELS, model_path

    labels = set(re.findall(rb"__label__([a-z_]+)", model_path().read_bytes()))
    assert {x.encode() for x in LID176_LABELS.split()} == labels and len(labels) == 176
    assert {"en", "zh", "und", "ceb"} <= CODES and not {"wuu", "yue"} & CODES  # folded into zh


# -- mixture.seed, and settings that do nothing in the plan --------------------------------------------------------

@pytest.mark.parametrize("seed", ["-3", "99999999999"])
def test_the_mixture_seed_takes_the_range_of_the_recipe_seed(seed):
    with pytest.raises(ConfigError, match=r"mixture.seed = .*: give a whole number from 0 to 4294967295"):
        _built([f"mixture.seed={seed}"])
    _built(["mixture.seed=0"]), _built(["mixture.seed=4294967295"])


def test_edu_bands_the_mixture_names_and_edu_score_does_not_are_said():
    notes = _checked(["edu_score.band_names=[a,b,c]"])
    assert any(n.startswith("mixture.web_edu_bands ['high'] names no band of edu_score.band_names ['a', 'b', 'c']") for n in notes)
    assert any(n.startswith("mixture.repeat has web_edu/high") and "math_science/high" in n for n in notes)
    assert _checked(["edu_score.band_names=[low,mid,high]", "mixture.repeat={math_science/mid: 2.0}"]) == [
        "mixture.repeat has web_edu/medium, math_science/medium, papers/medium: no band of edu_score.band_names ['low', 'mid', "
        "'high'] is named so, so these groups never form and their documents take the repeat of the pattern that matches them ('*')"]
    assert _checked([]) == []


def test_a_repeat_for_a_kind_no_phase_mixes_is_said_before_the_run(tmp_path, caplog):
    """Its documents would all go to the mixture's ledger as no_phase, said only at the run's end."""
    overrides = ["mixture.phases.midtrain_reasoning_32k=null", "+mixture.repeat.reasoning/all=3.0"]
    assert _checked(overrides) == [
        "mixture.repeat reasoning/all: no phase mixes kind reasoning, so its documents enter no shard (the mixture ledgers "
        "them no_phase); add mixture.phases.<phase>.mix.reasoning (a share above 0) to a phase, or leave the group out"]
    # a factor of 0 excludes them anyway, a phase that mixes the kind places them, and so does a glob's kind
    assert _checked(["mixture.phases.midtrain_reasoning_32k=null", "+mixture.repeat.reasoning/all=0"]) == []
    assert _checked(["+mixture.repeat.reasoning/all=3.0"]) == []
    assert _checked(["mixture.phases.midtrain_reasoning_32k=null", "+mixture.repeat.reason*/all=3.0"]) == []
    raw = _raw_input(tmp_path)
    with caplog.at_level(logging.WARNING, logger="curate"):
        assert curate(["run", RECIPE, *overrides, "--input", str(raw), "--output", str(tmp_path / "out"), "--dry-run", "--quiet"]) == 0
    assert "mixture.repeat reasoning/all: no phase mixes kind reasoning" in caplog.text


def test_dropping_the_pretraining_phases_warns_only_for_the_repeats_the_user_wrote():
    """The shipped factors (web/high: 4.0 …) are no setting of the user's: 19 warnings ending "or leave
    the group out" named groups nobody wrote; a factor the user gives a kind no phase mixes still is one."""
    dropped = ["mixture.phases.pretrain_phase1=null", "mixture.phases.pretrain_phase2=null"]
    assert _checked(dropped) == []
    (note,) = _checked([*dropped, "mixture.repeat.web/high=3.0"])
    assert note.startswith("mixture.repeat web/high: no phase mixes kind web")


def test_a_repeat_for_a_kind_listed_as_web_pages_is_said_before_the_run():
    """A source in mixture.web_sources is web pages: its documents form web/<level>, never <source>/all."""
    assert _checked(["mixture.web_sources=[web, social]", "+mixture.repeat.social/all=2.0"]) == [
        "mixture.repeat social/all: social is in mixture.web_sources, so its documents are web pages and form web/<level> "
        "groups (or code_web/… and web_edu/…); social/all never forms: give the repeat to those groups, or take social out "
        "of web_sources"]
    assert _checked(["+mixture.repeat.social/all=2.0"]) == []


def test_a_learned_model_no_scorer_reads_is_said(tmp_path):
    notes = _checked([f"code_quality.learned_model={tmp_path}"])
    assert notes == [f"code_quality.learned_model = {tmp_path} is not used: code_quality.scorers ['structural'] has no learned "
                     "(add it: scorers=[structural,learned])"]


def test_stage_sections_in_another_order_than_the_run_are_an_info_line(tmp_path, caplog):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nstages:\n  mixture:\n    seed: 7\n  semdedup:\n    eps: 0.1\n")
    with caplog.at_level(logging.INFO, logger="curate"):
        notes = _checked([], str(path))
    said = [(r.levelno, r.getMessage()) for r in caplog.records if "stages: section" in r.getMessage()]
    assert said == [(logging.INFO, f"the stages: section of {path} lists mixture, semdedup; stages run in the order of "
                     "pipelines.stages.STAGES (semdedup, mixture), whatever the order of their sections in the file")]
    assert notes == []  # cosmetic: an INFO line, not one of the plan's warnings
    path.write_text("name: mine\nstages:\n  semdedup:\n    eps: 0.1\n  mixture:\n    seed: 7\n")
    assert _checked([], str(path)) == []


# -- CURATE_WORKER_WAIT_S -----------------------------------------------------------------------------------------

def test_a_bad_worker_wait_is_one_line_with_a_scheduler_and_unread_without(tmp_path, monkeypatch, caplog):
    # not read on import: every command, and the handler that turns errors into one line, import pipelines.cluster
    r = subprocess.run([sys.executable, "-c", "import pipelines.cluster, pipelines.exit_codes"], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONPATH": str(REPO), "CURATE_WORKER_WAIT_S": "2m"}, cwd=REPO)
    assert r.returncode == 0, r.stderr[-2000:]
    monkeypatch.setenv("CURATE_WORKER_WAIT_S", "2m")
    inp = make_stage_dir(tmp_path / "in", docs_frame([{"text": "one page"}, {"text": "two page"}]))
    common = ["exact-dedup", "--input", str(inp), "--output", str(tmp_path / "out"), "--quiet"]
    assert curate([*common, "--workers", "2", "--dry-run"]) == 0  # no --scheduler: not read
    assert curate([*common, "--scheduler", "tcp://127.0.0.1:1"]) == 2  # refused before it connects
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "CURATE_WORKER_WAIT_S = '2m': give a whole number of seconds ≥ 1 to wait for a first worker of a --scheduler "
        "(default 120), or unset it"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["-5", "0", "2.5", ""])
def test_the_worker_wait_is_whole_seconds_from_one(monkeypatch, value):
    from pipelines.cluster_env import worker_wait_s

    monkeypatch.setenv("CURATE_WORKER_WAIT_S", value)
    with pytest.raises(ConfigError, match="CURATE_WORKER_WAIT_S"):
        worker_wait_s()
    monkeypatch.setenv("CURATE_WORKER_WAIT_S", "30")
    assert worker_wait_s() == 30
    monkeypatch.delenv("CURATE_WORKER_WAIT_S")
    assert worker_wait_s() == 120
