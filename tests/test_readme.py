"""The traces shown in the README are what the commands print today (no hand-written output)."""
import re

import pytest

from tests.support.agents import ARTICLE_QUESTION, ROOT
from tests.support.cli import run_cli

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```\n(-- Agent 推理过程 --\n.*?-- 推理结束 --)\n```", README, flags=re.S)


@pytest.mark.parametrize("extra_env, flags, block", [
    ({}, [], 0),
    ({"OFFLINE_LLM_SEED": "2"}, ["--temperature", "0.7"], 1),
])
def test_readme_traces_are_real_output(extra_env, flags, block):
    done = run_cli("stage3_pure_loop", "-q", ARTICLE_QUESTION, *flags, env=extra_env)
    trace = done.stdout[done.stdout.index("-- Agent 推理过程 --"):].strip()
    assert BLOCKS[block] == trace
