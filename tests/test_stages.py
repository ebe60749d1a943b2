"""Every scenario runs through every implementation (the ``agent`` fixture in conftest.py)."""
from __future__ import annotations

import json
import warnings

from typing import TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps

from tests.support.agents import ARTICLE_QUESTION, ARTICLE_ROUNDS, Agent
from tests.support.cli import run_cli
from tests.support.scripted import ScriptedBrain, answer, call
from compare.implementations import IMPLEMENTATIONS
from shared.offline_llm import CAPABILITY_SENTENCE
from shared.harness.run_record import Status

STAGES = ["stage1_prebuilt", "stage2_stategraph", "stage3_pure_loop"]
STAGE_COMMANDS = [*STAGES, "stage3_pure_loop.json_loop", "stage3_pure_loop.hardened_loop",
                  "stage1_prebuilt.create_agent", "stage3_pure_loop.fc_loop"]
# OFFLINE_LLM_SEED=0：温度 1 时离线模型对文章的问题选了"一轮并行"（下面的测试会先确认这一点）
PARALLEL_SEED = {"OFFLINE_LLM_SEED": "0"}

def test_the_articles_trace(agent):
    record = agent(ARTICLE_QUESTION)
    assert record.status == Status.ANSWERED, record.error
    assert record.rounds == ARTICLE_ROUNDS
    assert "38,560 港元" in record.answer and "2026-11-30 18:04:51" in record.answer
    assert record.flags == [] and record.llm_calls == 4
    assert record.usage["prompt_tokens"] > 0 and record.usage["completion_tokens"] > 0


def test_every_implementation_gives_the_same_trace_and_answer():
    records = [Agent(impl)(ARTICLE_QUESTION) for impl in IMPLEMENTATIONS.values()]
    assert {str(r.rounds) for r in records} == {str(ARTICLE_ROUNDS)}
    assert len({r.answer for r in records}) == 1


def test_a_greeting_needs_no_tool(agent):
    record = agent("你好")
    assert record.status == Status.ANSWERED and record.rounds == [] and record.answer


def test_an_unknown_request_gets_the_capability_sentence(agent):
    record = agent("帮我写一首关于秋天的诗")
    assert record.status == Status.ANSWERED and record.rounds == []
    assert record.answer == CAPABILITY_SENTENCE


def test_a_tool_error_goes_back_to_the_model(agent):
    brain = ScriptedBrain(call("calculate", expression="1/0"), answer("除数不能为零。"))
    record = agent("1/0 等于多少", brain=brain)
    assert record.status == Status.ANSWERED
    assert record.rounds[0][0]["result"] == "工具执行出错: 除数不能为零"


def test_an_unknown_tool_is_answered_with_the_real_tools(agent):
    brain = ScriptedBrain(call("send_email", to="boss"), answer("好的。"))
    record = agent("给老板发邮件", brain=brain)
    result = record.rounds[0][0]["result"]
    assert "send_email" in result
    assert all(name in result for name in ("get_weather", "get_current_time", "calculate", "get_stock_price"))


def test_invalid_arguments_go_back_to_the_model_as_an_error(agent):
    brain = ScriptedBrain(call("calculate", expr="1+1"), answer("好的。"))
    record = agent("1+1", brain=brain)
    result = record.rounds[0][0]["result"]
    assert record.status == Status.ANSWERED and result.startswith("工具执行出错: 工具 calculate 的参数无效")
    if not agent.json_protocol:
        # function calling 的各层都用 pydantic 校验（ToolNode、tool.invoke 或 shared/tool_schemas.py），
        # 措辞逐字相同；JSON loop 用 inspect.signature 校验纯函数，说的是同一件事，措辞是 Python 的
        assert result == "工具执行出错: 工具 calculate 的参数无效: expression: Field required"


def test_the_step_budget_ends_the_run(agent):
    # 模型永远想再算一步（每次不同的式子，免得触发 hardened_loop 的重复守卫）
    brain = ScriptedBrain(*(call("calculate", expression=f"{i} + 1") for i in range(1, 10)))
    record = agent("一直算下去", brain=brain, max_steps=3)
    assert record.status == Status.MAX_STEPS and record.answer is None
    assert record.llm_calls == 3
    assert record.stopped_at
    # 同一个含义：最多 3 次模型调用，第 3 次要的工具不执行（每个实现都记下同样的 3 轮）
    assert [[c["result"] is not None for c in r] for r in record.rounds] == [[True], [True], [False]]


def test_calling_the_model_past_its_script_is_an_error(agent):
    brain = ScriptedBrain(call("get_current_time"))
    record = agent("几点了", brain=brain)
    assert record.status == Status.ERROR and "ScriptExhausted" in record.error


def test_serial_sends_parallel_tool_calls_false(agent):
    if agent.json_protocol:
        pytest.skip("the JSON protocol has one call per reply by construction")
    record = agent(ARTICLE_QUESTION, serial=True, temperature=1.0, seed=3)
    assert all(e["request"].get("parallel_tool_calls") is False for e in record.exchanges)
    assert all(len(r) == 1 for r in record.rounds)


def test_temperature_above_zero_drifts_by_seed_and_flags_the_guess(agent):
    if agent.json_protocol:
        pytest.skip("the JSON protocol has one call per reply: no parallel round to drift into")
    records = [agent(ARTICLE_QUESTION, temperature=0.7, seed=seed) for seed in range(8)]
    parallel = [r for r in records if len(r.rounds) == 1 and len(r.rounds[0]) == 3]
    serial = [r for r in records if r.rounds == ARTICLE_ROUNDS]
    assert parallel and serial and len(parallel) + len(serial) == len(records)
    assert all(r.flags and r.flags[0]["tool"] == "calculate" for r in parallel)
    assert all(not r.flags for r in serial)
    assert all("38,560 港元" in r.answer for r in records)      # 终答仍然正确：自我纠错


def test_prebuilt_step_guard_text_is_the_librarys():
    """If LangGraph changes its 'need more steps' sentence, the record's max_steps detection breaks here.

    Stage 1 no longer relies on that guard (it drops the last reply's calls from the record),
    but a create_react_agent run that hits it must still read as max_steps, not as an answer.
    """
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.prebuilt import create_react_agent
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    from shared.harness.run_record import outcome_from_messages
    from shared.tools import TOOLS

    calls = [AIMessage(content="", tool_calls=[{"name": "get_current_time", "args": {}, "id": f"c{i}"}])
             for i in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        app = create_react_agent(_NeverCalled(responses=calls), TOOLS)
    messages = app.invoke({"messages": [HumanMessage(content="x")]}, {"recursion_limit": 4})["messages"]
    assert outcome_from_messages(messages)[0] == Status.MAX_STEPS


class _StepsState(TypedDict):
    remaining_steps: RemainingSteps
    seen: int


def default_recursion_limit() -> int:
    """The recursion limit a graph gets with no config, read through public behaviour only.

    A ``RemainingSteps`` field (public: ``langgraph.managed``) tells a node how many steps
    are left; the first node runs at step 1, so it sees the limit minus one.
    """
    graph = StateGraph(_StepsState)
    graph.add_node("look", lambda state: {"seen": state["remaining_steps"]})
    graph.add_edge(START, "look")
    graph.add_edge("look", END)
    return graph.compile().invoke({"seen": 0})["seen"] + 1


def test_library_facts_the_readme_states():
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode, create_react_agent
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    from shared.tools import TOOLS

    assert default_recursion_limit() == 10007           # 文章说默认 25；langgraph 1.1.4 起是 10007
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_react_agent(_NeverCalled(responses=[]), TOOLS)
    assert any(issubclass(w.category, LangGraphDeprecatedSinceV10) for w in caught)

    @tool
    def divide_by_zero() -> str:
        """Always fails."""
        return str(1 / 0)

    from langchain_core.messages import AIMessage, HumanMessage

    calls = AIMessage(content="", tool_calls=[{"name": "divide_by_zero", "args": {}, "id": "c1"}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        app = create_react_agent(_NeverCalled(responses=[calls]), ToolNode([divide_by_zero]))
    with pytest.raises(ZeroDivisionError):               # ToolNode 默认把工具内部异常原样抛出
        app.invoke({"messages": [HumanMessage(content="x")]})


@pytest.mark.parametrize("stage, router", [("stage1_prebuilt", "post_model_hook"), ("stage2_stategraph", "agent")])
def test_stages_1_and_2_print_the_same_graph_with_labelled_conditional_edges(stage, router):
    done = run_cli(stage, "--graph")
    assert done.returncode == 0
    for edge in ("__start__ --> agent", f"{router} -. &nbsp;有 tool_calls&nbsp; .-> tools",
                 f"{router} -. &nbsp;没有 tool_calls&nbsp; .-> __end__", "tools --> agent"):
        assert edge in done.stdout


@pytest.mark.parametrize("stage", ["stage1_prebuilt", "stage2_stategraph", "stage3_pure_loop"])
def test_stage_command_prints_the_articles_trace(stage):
    done = run_cli(stage, "-q", ARTICLE_QUESTION)
    assert done.returncode == 0, done.stderr
    assert "[7] 🤖 AI 调用工具: calculate({'expression': '385.6 * 100'})" in done.stdout
    assert "[9] 🤖 AI 回答: " in done.stdout and "38,560 港元" in done.stdout


@pytest.mark.parametrize("command", STAGE_COMMANDS[1:])
def test_every_command_prints_stage_1s_trace_word_for_word(command):
    def trace(module: str) -> str:
        done = run_cli(module, "-q", ARTICLE_QUESTION)
        assert done.returncode == 0, done.stderr
        return done.stdout[done.stdout.index("-- Agent 推理过程 --"):]
    assert trace(command) == trace(STAGE_COMMANDS[0])


def _record(done) -> dict:
    assert done.stdout.count("\n") == 1, done.stdout + done.stderr       # --json：stdout 只有一行运行记录
    return json.loads(done.stdout)


@pytest.mark.parametrize("stage", STAGES)
def test_the_serial_flag_gives_one_call_per_round(stage):
    argv = [stage, "-q", ARTICLE_QUESTION, "--temperature", "1", "--json"]
    free = _record(run_cli(*argv, env=PARALLEL_SEED))
    assert any(len(round_) > 1 for round_ in free["rounds"]), \
        f"{PARALLEL_SEED} no longer goes parallel at temperature 1: pick a seed that does"
    done = run_cli(*argv, "--serial", env=PARALLEL_SEED)
    assert done.returncode == 0, done.stderr
    serial = _record(done)
    assert all(len(round_) == 1 for round_ in serial["rounds"]), serial["rounds"]
    assert serial["rounds"] == ARTICLE_ROUNDS and serial["flags"] == []


@pytest.mark.parametrize("stage", STAGE_COMMANDS)
def test_the_max_steps_flag_ends_the_run_with_exit_1(stage):
    done = run_cli(stage, "-q", ARTICLE_QUESTION, "--max-steps", "2", "--json")
    record = _record(done)
    assert done.returncode == 1
    assert record["status"] == Status.MAX_STEPS and record["llm_calls"] == 2 and record["answer"] is None
    assert record["stopped_at"]


def test_the_repl_reads_until_quit():
    done = run_cli("stage3_pure_loop", input="你好\n\n北京天气\nquit\n")
    assert done.returncode == 0
    assert done.stdout.count("-- 推理结束 --") == 2 and "北京：晴天" in done.stdout and "再见" in done.stdout


class _NeverCalled(FakeMessagesListChatModel):
    """A stand-in model for building (not running) the prebuilt graph."""

    def bind_tools(self, tools, **kwargs):
        return self
