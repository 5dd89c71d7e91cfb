"""forge_filter: bot, empty and auto-generated issues/PRs/commits are ledgered with their reason."""

import json
from pathlib import Path

import pytest

from curation.quality.forge import forge_features, forge_flags, forge_score, is_bot
from pipelines.cluster import open_client
from pipelines.recipe import load_recipe
from pipelines.runner import enabled_stages, run_recipe
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, only, read_parts, run_one

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "issues_prs_commits" / "issues_prs_commits.jsonl"
DIFF = "--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-{a}\n+{b}\n"


def _commit(message, author="ann", files=None):
    files = files if files is not None else [{"path": "src/app.py", "diff": DIFF.format(p="src/app.py", a="x = 1", b="x = compute()")}]
    text = f"commit abc1234\nAuthor: {author} <a@x>\nDate:   2024-01-01\n\n    {message}\n\n" + "".join(f"diff --git a/{f['path']} b/{f['path']}\n{f['diff']}" for f in files)
    return {"kind": "commit", "sha": "abc1234", "title": message, "message": message, "author": author, "files": files}, text


def _issue(title, body, author="ann", comments=()):
    text = f"# {title}\n\norg/tool#7 opened by @{author} on 2024-01-01\n\n{body}"
    text += "".join(f"\n\n---\n\n@{who} commented on 2024-01-02:\n\n{what}" for who, what in comments)
    return {"kind": "issue", "number": 7, "title": title, "author": author}, text


GOOD_ISSUE = _issue("Parser drops the last line", "Reading a file without a trailing newline loses its last line:\n\n```\nparse('a\\nb')\n```",
                    comments=[("bob", "I can reproduce this on main.")])
CASES = {
    "bot_pr": ({"kind": "pull_request", "title": "Bump lodash from 4.17.20 to 4.17.21", "author": "dependabot[bot]"}, "# Bump lodash\n\nBumps lodash."),
    "bot_commit": _commit("Update coverage badge", author="github-actions[bot]"),
    "renovate": _issue("Dependency Dashboard", "This issue lists Renovate updates.", author="renovate"),
    "merge": _commit("Merge pull request #12 from ann/fix-parser"),
    "lockfile": _commit("Update deps", files=[{"path": "web/package-lock.json", "diff": DIFF.format(p="web/package-lock.json", a='"v": "1.0.0"', b='"v": "1.0.1"')}]),
    "bump": _commit("chore: release 2.4.1", files=[{"path": "pyproject.toml", "diff": DIFF.format(p="pyproject.toml", a='version = "2.4.0"', b='version = "2.4.1"')}]),
    "dep_pr": ({"kind": "pull_request", "title": "chore(deps): bump serde from 1.0.1 to 1.0.2", "author": "ann"}, "# chore(deps): bump serde\n\nSee changelog."),
    "template": _issue("Bug", "**Describe the bug**\nA clear and concise description of what the bug is.\n\n**To Reproduce**\nSteps to reproduce the behavior:\n1. Go to '...'\n\n<!-- what happened -->\n- [ ]"),
    "title_only": _issue("crash", ""),
    "pr_checklist": ({"kind": "pull_request", "title": "Title", "author": "ann"},
                     "# Title\n\n## Summary\n\n<!-- what and why -->\n\n## Checklist\n\n* [ ] Tests added\n* [ ] Docs updated\n\nEnvironment:\n- OS version:\n<paste here>"),
    "no_diff": _commit("Trigger CI", files=[]),
    "link_spam": _issue("Great project", "Cheap https://a.example/1 https://a.example/2 https://a.example/3 https://a.example/4"),
}
EXPECTED = {"bot_pr": "bot_author", "bot_commit": "bot_author", "renovate": "bot_author", "merge": "auto_generated",
            "lockfile": "auto_generated", "bump": "auto_generated", "dep_pr": "auto_generated", "template": "empty_thread",
            "title_only": "empty_thread", "pr_checklist": "empty_thread", "no_diff": "empty_thread", "link_spam": None}


@pytest.mark.parametrize("name", list(CASES))
def test_rules_name_the_reason(name):
    meta, text = CASES[name]
    assert forge_flags(meta, text)[0] == EXPECTED[name]


def test_human_records_pass_the_rules_and_score_over_the_link_spam():
    human_commit = _commit("Fix the parser's last line")
    release_with_code = _commit("Release 2.5: new parser", files=[{"path": "src/p.py", "diff": DIFF.format(p="src/p.py", a="def parse(s):", b="def parse(s, strict=False):")}])
    for meta, text in (GOOD_ISSUE, human_commit, release_with_code):
        assert forge_flags(meta, text) == (None, None)
        assert forge_score(forge_features(meta, text)) > 0.7
    assert forge_score(forge_features(*CASES["link_spam"])) < 0.5
    api_style = {"kind": "issue", "title": "Stale", "user": {"login": "stale[bot]"}}
    assert forge_flags(api_style, "# Stale\n\nThis issue has been automatically marked as stale.") == ("bot_author", "author stale[bot]")
    assert is_bot("ci-bot") and is_bot("Dependabot[bot]") and not is_bot("rbotha") and not is_bot(None)


def _input(tmp_path):
    rows = [{"doc_id": f"ipc-{name}", "text": text, "meta": json.dumps(meta), "source": "issues_prs_commits"} for name, (meta, text) in CASES.items()]
    rows.append({"doc_id": "ipc-good", "text": GOOD_ISSUE[1], "meta": json.dumps(GOOD_ISSUE[0]), "source": "issues_prs_commits"})
    rows.append({"doc_id": "web-bot", "text": "Bumps lodash.", "meta": json.dumps({"author": "dependabot[bot]"}), "source": "web"})
    return make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=3)


def test_stage_on_a_local_cluster_ledgers_each_drop_with_its_reason(tmp_path):
    inp = _input(tmp_path)
    with open_client(workers=2) as client:
        res = run_one("forge_filter", inp, tmp_path / "runs" / "a", client=client)
    kept, ledger = assert_conservation(inp, tmp_path / "runs" / "a")
    reasons = dict(zip(ledger["doc_id"], ledger["reason"], strict=True))
    assert reasons == {f"ipc-{n}": (r or "low_forge_score") for n, r in EXPECTED.items()}
    assert set(ledger["stage"]) == {"forge_filter"}
    detail = json.loads(ledger.set_index("doc_id").loc["ipc-merge", "detail"])
    assert detail["forge_rule"] == "auto_generated" and detail["forge_evidence"] == "merge commit" and 0 <= detail["forge_score"] <= 1
    assert json.loads(ledger.set_index("doc_id").loc["ipc-link_spam", "detail"])["forge_rule"] is None
    kept = kept.set_index("doc_id")
    assert list(kept.index.sort_values()) == ["ipc-good", "web-bot"]  # web is not a source of the stage
    assert kept.loc["ipc-good", "forge_score"] > 0.7 and kept["forge_score"].isna()["web-bot"]
    assert res.stats["dropped_by_reason"]["bot_author"]["documents"] == 3
    # a lower score cut decides again from the cached scores
    res = run_one("forge_filter", inp, tmp_path / "runs" / "b", ["forge_filter.min_score=0.2"])
    assert "low_forge_score" not in res.stats["dropped_by_reason"]
    assert len(list((tmp_path / "runs" / ".cache" / "forge_filter").glob("scores-*"))) == 1


def test_stage_is_on_in_the_recipe_before_the_mixture_and_drops_the_sample_bots(tmp_path):
    assert "forge_filter" in enabled_stages(load_recipe(None))
    recipe = load_recipe(None, ["ingest.tokenizer=whitespace", *only("forge_filter")])
    with open_client(workers=2) as client:
        results = run_recipe(recipe, [str(SAMPLE)], tmp_path / "run", client=client, quiet=True)
    assert [r.stage_dir.name for r in results] == ["00_ingest", "75_forge_filter"]
    ledger = read_parts(tmp_path / "run" / "75_forge_filter" / "ledger")
    assert dict(ledger["reason"].value_counts()) == {"auto_generated": 8, "bot_author": 4, "empty_thread": 2, "low_forge_score": 1}
    kept = read_parts(tmp_path / "run" / "75_forge_filter" / "docs")
    assert len(kept) == 90 - 15 and kept["forge_score"].min() >= 0.5
