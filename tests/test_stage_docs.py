"""Each stage folder's README.md is what ``python -m compare.stage_docs --write`` makes today, and
both graphs label their conditional edges."""
from __future__ import annotations

from pathlib import Path

import pytest

from compare import stage_docs
from compare.implementations import IMPLEMENTATIONS
from shared.harness.config import REPRODUCIBLE_CLOCK
from stage1_prebuilt.agent import mermaid as prebuilt_graph
from stage2_stategraph.agent import mermaid as stategraph_graph
from tests.support.cli import run_cli


# 第 1 阶段的路由长在 post_model_hook 之后（强制串行、审批拒绝的钩子），第 2 阶段长在 agent 之后
@pytest.mark.parametrize("draw, router", [(prebuilt_graph, "post_model_hook"), (stategraph_graph, "agent")])
def test_both_graphs_label_the_conditional_edge(draw, router):
    drawn = draw()
    assert f"{router} -. &nbsp;有 tool_calls&nbsp; .-> tools;" in drawn
    assert f"{router} -. &nbsp;没有 tool_calls&nbsp; .-> __end__;" in drawn
    assert "tools --> agent;" in drawn


def test_every_implementation_has_a_stage_page():
    assert {stage_docs.folder_of(impl) for impl in IMPLEMENTATIONS.values()} <= set(stage_docs.FOLDERS)


def in_process(commands: list[stage_docs.Command]) -> dict[stage_docs.Command, str]:
    """What each command prints, run in this process as ``python -m`` runs it (runpy, clean environment)."""
    printed = {}
    for command in dict.fromkeys(commands):
        python, flag, module = command[0].split()
        assert (python, flag) == ("python", "-m"), command
        done = run_cli(module, *command[1:], env={"AGENT_CLOCK": REPRODUCIBLE_CLOCK})
        assert done.returncode == 0, (command, done.stderr)
        printed[command] = done.stdout.strip()
    return printed


def test_stage_readmes_are_generated_from_the_code(capsys, monkeypatch):
    # 每条命令在本进程里跑（run_cli：和 python -m 一样经 runpy，干净的环境、空目录），省下九个新解释器的 import。
    # 这些命令在新进程里照样能跑由 tests/test_smoke.py 检查；python -m compare.stage_docs 自己仍是每条命令一个新进程
    monkeypatch.setattr(stage_docs, "run_all", in_process)
    assert stage_docs.main(["--check"]) == 0, capsys.readouterr().err


def test_each_command_runs_once_where_no_env_file_of_the_repository_is_read(tmp_path):
    # 配置从当前目录读 .env：命令在空的临时目录里跑（仓库经 PYTHONPATH 导入），开发者的 .env 进不了页面；
    # 两页都有的命令（两张图）只跑一次
    ran = tmp_path / "ran"
    where = ("python -c", f"import os, shared; open({str(ran)!r}, 'a').write('x'); print(os.getcwd(), sorted(os.listdir()))")
    other = ("python -c", "print('other')")
    printed = stage_docs.run_all([where, other, where])
    assert list(printed) == [where, other] and printed[other] == "other" and ran.read_text() == "x"
    cwd, listing = printed[where].split(" ", 1)
    assert listing == "[]"
    assert stage_docs.ROOT not in [Path(cwd).resolve(), *Path(cwd).resolve().parents]
