"""A stage whose input folder was replaced while it read it (another command re-ran the stage before
it into that folder) failed with "lost documents … a bug in the stage", exit 70. It is an input
problem, said as such (exit 4); a count that does not add up on an unchanged input is still a bug."""

import json

import pipelines.runner as runner
from pipelines.cli import main


def _short_by_one(monkeypatch, then=None):
    real = runner.with_input_tokens

    def counted(summary, recorded):
        out = real(summary, recorded)
        out["in"]["documents"] -= 1
        if then:
            then()
        return out

    monkeypatch.setattr(runner, "with_input_tokens", counted)


def test_an_input_replaced_while_read_is_an_input_problem(finished_run, tmp_path, monkeypatch, caplog):
    import shutil

    inp = tmp_path / "30_semdedup"
    shutil.copytree(finished_run / "30_semdedup", inp)

    def rewrite():  # what a re-run of semdedup with another eps leaves: another output fingerprint
        marker = json.loads((inp / "_SUCCESS").read_text())
        marker["output_fingerprint"] = "0" * 64
        (inp / "_SUCCESS").write_text(json.dumps(marker))

    _short_by_one(monkeypatch, rewrite)
    args = ["web-quality", "--input", str(inp), "--scheduler", "synchronous", "--quiet", "--profile", "cpu"]
    assert main([*args, "--output", str(tmp_path / "wq")]) == 4
    assert f"{inp} changed while web_quality read it" in caplog.text
    assert not (tmp_path / "wq" / "_SUCCESS").exists() and not (tmp_path / "wq" / "docs").exists()
    # the sub-steps it made hold the replacing data under the old input's key: none is left for a later run to reuse
    assert not list((tmp_path / "wq" / ".cache").rglob("_DONE"))


def test_an_input_replaced_with_as_many_documents_is_refused_too(finished_run, tmp_path, monkeypatch, caplog):
    """Counts that add up do not make the output right: the input's fingerprint is checked at the end."""
    import shutil

    import pipelines.runner as runner_mod

    inp = tmp_path / "30_semdedup"
    shutil.copytree(finished_run / "30_semdedup", inp)
    real = runner_mod.with_input_tokens

    def counted(summary, recorded):
        marker = json.loads((inp / "_SUCCESS").read_text())
        marker["output_fingerprint"] = "1" * 64
        (inp / "_SUCCESS").write_text(json.dumps(marker))
        return real(summary, recorded)

    monkeypatch.setattr(runner_mod, "with_input_tokens", counted)
    args = ["web-quality", "--input", str(inp), "--scheduler", "synchronous", "--quiet", "--profile", "cpu"]
    assert main([*args, "--output", str(tmp_path / "wq")]) == 4
    assert f"{inp} changed while web_quality read it" in caplog.text


def test_a_count_off_on_an_unchanged_input_is_still_a_bug(finished_run, tmp_path, monkeypatch, caplog):
    _short_by_one(monkeypatch)
    args = ["web-quality", "--input", str(finished_run / "30_semdedup"), "--scheduler", "synchronous", "--quiet", "--profile", "cpu"]
    assert main([*args, "--output", str(tmp_path / "wq")]) == 70
    assert "lost documents" in caplog.text
