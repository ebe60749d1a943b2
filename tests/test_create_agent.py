"""create_agent (stage1_prebuilt/create_agent.py): the facts its lesson states, and the middleware demos.

The facts are checked through public behaviour with a stand-in model, so when langchain
changes a default, this file fails before a reader is misled. The versions they were
checked with are pinned in :func:`test_the_facts_were_checked_with_these_versions`.
"""
from __future__ import annotations

import warnings
from importlib.metadata import version

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10
from packaging.version import Version

from compare.implementations import IMPLEMENTATIONS
from compare.wire import first_difference, requests_of
from shared.calculator import CalculationError
from shared.harness.run_record import PREBUILT_STEP_GUARD_TEXT, Status, outcome_from_messages
from shared.step_budget import recursion_limit_for
from shared.tools import TOOLS
from stage1_prebuilt import create_agent as lesson
from stage1_prebuilt import middleware_demo
from tests.support.agents import ARTICLE_QUESTION, Agent

# [checked, next minor): the lesson's docstring, middleware_demo.py and the README's
# 「库的变化」 were verified against these; a newer minor may change a default
CHECKED = {"langchain": ("1.5.2", "1.6"), "langgraph": ("1.2.24", "1.3"), "langgraph-prebuilt": ("1.1.3", "1.2")}
RECHECK = ("{name} {installed} is outside the range the create_agent facts were checked with [{low}, {high}): "
           "re-check stage1_prebuilt/create_agent.py's docstring, middleware_demo.py and README「库的变化」, "
           "then widen CHECKED")


class StandIn(FakeMessagesListChatModel):
    """A chat model that answers from a list; tools are accepted and ignored."""

    def bind_tools(self, tools, **kwargs):
        return self


def calls_forever(n: int = 40) -> StandIn:
    """A model that always asks for one more calculation (distinct ids, so no message replaces another)."""
    return StandIn(responses=[
        AIMessage(content="", id=f"ai-{i}",
                  tool_calls=[{"name": "calculate", "args": {"expression": f"{i} + 1"}, "id": f"call-{i}"}])
        for i in range(n)])


def ask(app, **config):
    # 这一课的 agent 带 checkpointer（人工审批要暂停、恢复），所以每次运行要一个 thread_id
    return app.invoke({"messages": [HumanMessage(content="一直算下去")]},
                      {"configurable": {"thread_id": "test"}, **config})


@pytest.mark.parametrize("name", CHECKED)
def test_the_facts_were_checked_with_these_versions(name):
    low, high = CHECKED[name]
    installed = version(name)
    assert Version(low) <= Version(installed) < Version(high), RECHECK.format(
        name=name, installed=installed, low=low, high=high)


def test_a_tool_that_raises_crashes_a_plain_create_agent():
    divide = StandIn(responses=[AIMessage(content="", tool_calls=[
        {"name": "calculate", "args": {"expression": "1/0"}, "id": "c1"}])])
    with pytest.raises(CalculationError):
        ask(create_agent(divide, TOOLS))


def test_create_agent_takes_no_tool_node_so_stage_1s_fix_does_not_carry_over():
    with pytest.raises(TypeError):
        create_agent(StandIn(responses=[]), ToolNode(TOOLS))


def test_out_of_steps_is_graph_recursion_error_not_the_prebuilt_reply():
    with pytest.raises(GraphRecursionError):
        ask(create_agent(calls_forever(), TOOLS), recursion_limit=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        prebuilt = create_react_agent(calls_forever(), TOOLS)
    assert ask(prebuilt, recursion_limit=6)["messages"][-1].content == PREBUILT_STEP_GUARD_TEXT


def test_the_default_step_limit_is_9999():
    # create_agent returns graph.compile(...).with_config({"recursion_limit": 9_999, ...});
    # the compiled graph's public ``config`` is what every invoke starts from
    assert create_agent(StandIn(responses=[]), TOOLS).config["recursion_limit"] == 9_999


def test_the_step_budget_middleware_and_2_x_max_steps_is_too_small():
    app = lesson.build_agent(calls_forever(), max_steps=3)
    messages = ask(app)["messages"]
    assert sum(1 for m in messages if m.type == "ai" and m.tool_calls) == 3
    assert sum(1 for m in messages if m.type == "tool") == 2       # 第 3 次调用要的工具没有执行
    assert outcome_from_messages(messages)[0] == Status.MAX_STEPS
    # 第 1、2 阶段的换算不适用：middleware 的钩子也是图里的节点，一轮不止两个超步
    with pytest.raises(GraphRecursionError):
        ask(lesson.build_agent(calls_forever(), max_steps=3), recursion_limit=recursion_limit_for(3))


def test_create_agent_sends_the_same_requests_as_create_react_agent():
    prebuilt = Agent(IMPLEMENTATIONS["prebuilt"])(ARTICLE_QUESTION)
    today = Agent(IMPLEMENTATIONS["create_agent"])(ARTICLE_QUESTION)
    assert len(requests_of(today)) == len(requests_of(prebuilt)) == 4
    assert [first_difference(a, b) for a, b in zip(requests_of(prebuilt), requests_of(today))] == [None] * 4


# ---- middleware_demo：每个演示都演示了它说的那件事 ----

DEMO_SHOWS = {
    "model_call_limit": ["Model call limits exceeded: run limit (3/3)", "⚠️ 达到最大步数"],
    "tool_call_limit": ["Tool call limit reached: run limit exceeded (4/3 calls)."],
    "tool_error": ["💥 run 崩溃：CalculationError: 除数不能为零", "🔧 工具返回: 工具执行出错: 除数不能为零",
                   "🔧 工具返回: Error: search_web is not a valid tool"],
    "tool_retry": ["get_stock_price 被调用了 2 次", "38,560 港元"],
    "model_retry": ["端点收到 7 个请求：前 3 个返回 HTTP 500", "38,560 港元"],
    "human_in_the_loop": ["⏸ 等待批准：calculate({'expression': '385.6 * 100'})", "38,560 港元"],
}


def test_every_demo_is_listed_in_the_lesson_and_checked_here():
    assert set(middleware_demo.DEMOS) == set(DEMO_SHOWS)
    for name in DEMO_SHOWS:
        assert f"python -m stage1_prebuilt.middleware_demo {name}" in lesson.__doc__


@pytest.mark.parametrize("name", DEMO_SHOWS)
def test_each_middleware_demo_shows_what_it_says(name, capsys):
    assert middleware_demo.main([name]) == 0
    out = capsys.readouterr().out
    for expected in DEMO_SHOWS[name]:
        assert expected in out, out


def test_an_unknown_demo_is_a_one_line_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        middleware_demo.main(["summarization"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_apis_the_second_article_names_are_gone_and_their_replacements_are_here():
    import langchain.agents
    import langgraph.prebuilt

    assert not hasattr(langchain.agents, "AgentExecutor")        # langchain 1.0.0 起搬进 langchain-classic
    with pytest.raises(ImportError):
        from langchain.memory import ConversationBufferWindowMemory  # noqa: F401
    assert not hasattr(langgraph.prebuilt, "ToolExecutor")       # langgraph 0.3.0 删除
    assert callable(langchain.agents.create_agent) and callable(langgraph.prebuilt.ToolNode)
