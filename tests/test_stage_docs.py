"""Each stage folder's README.md is what ``python -m compare.stage_docs --write`` makes today, and
both graphs label their conditional edges."""
from __future__ import annotations

from pathlib import Path

import pytest

from compare import stage_docs
from compare.implementations import IMPLEMENTATIONS
from stage1_prebuilt.agent import mermaid as prebuilt_graph
from stage2_stategraph.agent import mermaid as stategraph_graph


# 第 1 阶段的路由长在 post_model_hook 之后（强制串行、审批拒绝的钩子），第 2 阶段长在 agent 之后
@pytest.mark.parametrize("draw, router", [(prebuilt_graph, "post_model_hook"), (stategraph_graph, "agent")])
def test_both_graphs_label_the_conditional_edge(draw, router):
    drawn = draw()
    assert f"{router} -. &nbsp;有 tool_calls&nbsp; .-> tools;" in drawn
    assert f"{router} -. &nbsp;没有 tool_calls&nbsp; .-> __end__;" in drawn
    assert "tools --> agent;" in drawn


def test_every_implementation_has_a_stage_page():
    assert {stage_docs.folder_of(impl) for impl in IMPLEMENTATIONS.values()} <= set(stage_docs.FOLDERS)


@pytest.mark.slow
def test_stage_readmes_are_generated_from_the_code(capsys):
    assert stage_docs.main(["--check"]) == 0, capsys.readouterr().err


def test_the_commands_run_where_no_env_file_of_the_repository_is_read():
    # 配置从当前目录读 .env：命令在空的临时目录里跑（仓库经 PYTHONPATH 导入），开发者的 .env 进不了页面
    printed = stage_docs.run_command("python -c", "import os, shared; print(os.getcwd(), sorted(os.listdir()))")
    cwd, listing = printed.split(" ", 1)
    assert listing == "[]"
    assert stage_docs.ROOT not in [Path(cwd).resolve(), *Path(cwd).resolve().parents]
