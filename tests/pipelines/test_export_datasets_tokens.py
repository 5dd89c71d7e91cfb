"""`curate export datasets`: export.json's figures are in the manifest's unit, EOD aside, for best-fit bins too."""

import json

from pipelines.cli import main as curate

MIDTRAIN = ["midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k"]


def test_a_best_fit_phase_counts_its_documents_tokens_not_their_eods(finished_run, tmp_path):
    import datasets

    out = tmp_path / "datasets"
    args = ["export", "datasets", str(finished_run), "--output", str(out), "--scheduler", "synchronous", "--quiet"]
    assert curate([*args, *(a for p in MIDTRAIN for a in ("--phase", p))]) == 0
    phases = json.loads((out / "export.json").read_text())["phases"]
    for phase in MIDTRAIN:
        m = json.loads((finished_run / "80_mixture" / "manifests" / f"{phase}.json").read_text())
        replay = {g["name"]: g["replay_tokens"] for g in m["groups"] if g["replay_tokens"]}
        assert {g: v["tokens"] for g, v in phases[phase]["groups"].items()} == replay  # as docs/export.md says
        assert phases[phase]["tokens"] == m["budget"]["replay_tokens"] == sum(replay.values())  # the phase's too (it had none)
        rows = datasets.load_from_disk(str(out / phase)).to_pandas()
        if len(rows):  # the bins hold those tokens and one EOD per document shown
            held = rows.groupby("group")["input_ids"].apply(lambda x: int(x.map(len).sum())).to_dict()
            shown = {g["name"]: g["replay_documents"] for g in m["groups"] if g["replay_tokens"]}
            assert held == {g: replay[g] + shown[g] for g in replay}
