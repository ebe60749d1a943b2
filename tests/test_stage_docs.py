"""Each stage folder's README.md is what ``python -m compare.stage_docs --write`` makes today, and
both graphs label their conditional edges."""
from __future__ import annotations

import pytest

from compare import stage_docs
from compare.implementations import IMPLEMENTATIONS
from stage1_prebuilt.agent import mermaid as prebuilt_graph
from stage2_stategraph.agent import mermaid as stategraph_graph


@pytest.mark.parametrize("draw", [prebuilt_graph, stategraph_graph])
def test_both_graphs_label_the_conditional_edge(draw):
    drawn = draw()
    assert "agent -. &nbsp;有 tool_calls&nbsp; .-> tools;" in drawn
    assert "agent -. &nbsp;没有 tool_calls&nbsp; .-> __end__;" in drawn
    assert "tools --> agent;" in drawn


def test_every_implementation_has_a_stage_page():
    assert {stage_docs.folder_of(impl) for impl in IMPLEMENTATIONS.values()} <= set(stage_docs.FOLDERS)


@pytest.mark.slow
def test_stage_readmes_are_generated_from_the_code(capsys):
    assert stage_docs.main(["--check"]) == 0, capsys.readouterr().err
