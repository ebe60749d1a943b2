"""fc_loop (stage3_pure_loop/fc_loop.py): function calling with the raw openai SDK, no LangChain.

(That importing it loads no framework is checked with the other zero-framework loops, in test_json_loop.py.)

What it proves is checked at the wire: the requests it sends equal the LangChain tiers'
(what ``bind_tools`` really sends), tool schemas and error texts included.
"""
from __future__ import annotations

from langchain_core.utils.function_calling import convert_to_openai_tool

from compare.implementations import IMPLEMENTATIONS
from compare.wire import first_difference, requests_of
from shared.harness.run_record import Status
from shared.tool_schemas import OPENAI_TOOLS
from shared.tools import TOOLS
from tests.support.agents import ARTICLE_QUESTION, ARTICLE_ROUNDS, Agent
from tests.support.compare import run_compare
from tests.support.scripted import ScriptedBrain, answer, call

FC_LOOP = Agent(IMPLEMENTATIONS["fc_loop"])
PURE_LOOP = Agent(IMPLEMENTATIONS["pure_loop"])


def test_the_tool_schemas_are_what_bind_tools_sends():
    assert OPENAI_TOOLS == [convert_to_openai_tool(t) for t in TOOLS]


def same_requests(brain_factory=None, prompt: str = ARTICLE_QUESTION) -> list:
    """fc_loop's and pure_loop's requests for one prompt, the first differing field of each turn."""
    runs = [agent(prompt, brain=brain_factory() if brain_factory else None) for agent in (PURE_LOOP, FC_LOOP)]
    left, right = (requests_of(r) for r in runs)
    assert len(left) == len(right) >= 1
    return [first_difference(a, b) for a, b in zip(left, right)]


def test_the_articles_question_sends_the_langchain_requests():
    record = FC_LOOP(ARTICLE_QUESTION)
    assert record.status == Status.ANSWERED and record.rounds == ARTICLE_ROUNDS
    assert record.exchanges[0]["request"]["tools"] == OPENAI_TOOLS
    assert same_requests() == [None] * 4


def test_tool_errors_travel_back_in_the_same_words():
    def brain():
        return ScriptedBrain(call("calculate", expr="1+1"), call("send_email", to="boss"),
                             call("calculate", expression="1/0"), answer("好的。"))
    assert same_requests(brain, "算一算") == [None] * 4


def test_unparseable_arguments_end_the_run_with_an_error():
    record = FC_LOOP(ARTICLE_QUESTION, faults=("bad_json",))
    assert record.status == Status.ERROR and record.error.startswith("模型返回了无法解析的工具调用 get_current_time")
    assert PURE_LOOP(ARTICLE_QUESTION, faults=("bad_json",)).status == Status.ERROR


def test_create_agent_and_fc_loop_are_equivalent_on_the_whole_suite(offline, capsys):
    code, data = run_compare(capsys, offline, "--impl", "pure_loop", "create_agent", "fc_loop")
    assert code == 0
    for prompt in data["prompts"]:
        assert prompt["verdict"] == "equivalent", prompt["details"]["first_difference"]
        (wire,) = prompt["wire"]
        assert wire["impls"] == ["pure_loop", "create_agent", "fc_loop"]
        assert wire["identical"] and wire["turns"] >= 1, wire["difference"]
