"""``curate help`` lists the commands, and ``curate help COMMAND`` prints what ``curate COMMAND --help`` does."""

from __future__ import annotations

import pytest

from pipelines.cli import main


def _out(capsys, *words: str) -> str:
    with pytest.raises(SystemExit) as done:
        main(list(words))
    assert done.value.code == 0
    return capsys.readouterr().out


def test_help_lists_the_commands(capsys):
    out = _out(capsys, "help")
    assert out == _out(capsys, "--help")
    for command in ("run", "code-quality", "stats", "export", "help"):
        assert f"\n    {command} " in out


@pytest.mark.parametrize("command", ["code-quality", "stats", "run"])
def test_help_command_is_the_commands_own_help(capsys, command):
    out = _out(capsys, "help", command)
    assert out.startswith(f"usage: curate {command} ") and out == _out(capsys, command, "--help")
