"""One real ``python -m`` per command: the in-process CLI tests tell the truth about a fresh process.

Every other CLI test runs the command in-process (``tests/support/cli.py``) or, for signals
and pipes, in a process forked from the test (``tests/support/forked.py``), which has every
framework imported already; these start a real interpreter, as a user's shell does.
``pytest -m "not slow"`` skips them.
"""
from __future__ import annotations

import json

import pytest

from compare.implementations import IMPLEMENTATIONS
from tests.support.cli import run_command

pytestmark = pytest.mark.slow

# compare 比的每个实现，各自的命令各一个
STAGE_COMMANDS = tuple(impl.about.command.removeprefix("python -m ") for impl in IMPLEMENTATIONS.values())


@pytest.mark.parametrize("command", STAGE_COMMANDS)
def test_a_stage_command_answers_in_a_fresh_process(command):
    done = run_command(command, "-q", "北京天气怎么样", "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "answered" and record["rounds"][0][0]["name"] == "get_weather"


def test_compare_in_a_fresh_process(tmp_path):
    done = run_command("compare", "--impl", "pure_loop", "json_loop", "--prompt", "你好", "--json",
                       "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["prompts"][0]["verdict"] == "equivalent"


def test_the_offline_server_command_explains_itself():
    done = run_command("shared.offline_llm", "--help")
    assert done.returncode == 0 and "--port" in done.stdout
