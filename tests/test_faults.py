"""The offline model's fault modes: each reproduces one failure of the second article,
breaks the 50-line loop the way the article describes, and is held by the hardened loop;
switching the matching fix off brings the failure back."""
from __future__ import annotations

import json

import pytest
from openai import BadRequestError, OpenAI

from compare.failure_modes import FAULT_OF_FIX
from tests.support.agents import ARTICLE_QUESTION, ROOT, Agent
from tests.support.cli import run_cli
from shared.harness.config import ConfigError, load_settings
from compare.implementations import IMPLEMENTATIONS
from shared.offline_llm import OfflineServer
from shared.offline_llm.faults import FAULT_MODES, GARBLED, HALLUCINATIONS, LONG_CONTEXT_LIMIT
from shared.harness.run_record import Status
from stage3_pure_loop import hardened_loop, json_loop
from stage3_pure_loop.json_extract import extract_tool_call

NAIVE = Agent(IMPLEMENTATIONS["json_loop"])
HARDENED = Agent(IMPLEMENTATIONS["hardened_loop"])
PURE_LOOP = Agent(IMPLEMENTATIONS["pure_loop"])
REAL_TOOLS = set(json_loop.TOOLS)
ARTICLE_CALLS = ["get_current_time", "get_stock_price", "calculate"]


def _correct(record) -> bool:
    return record.status == Status.ANSWERED and "38,560 港元" in (record.answer or "")


def _replies(record) -> list[str]:
    return [e["response"]["choices"][0]["message"]["content"] for e in record.exchanges
            if isinstance(e["response"], dict) and "choices" in e["response"]]


# ---- configuration ----

def test_the_six_modes_of_the_second_article_are_implemented():
    assert {"chatty", "bad_json", "loop", "hallucinate", "garbled", "long"} <= set(FAULT_MODES)
    assert set(FAULT_OF_FIX.values()) <= set(FAULT_MODES)


def test_every_fix_of_the_hardened_loop_has_the_fault_it_answers():
    assert set(FAULT_OF_FIX) == set(hardened_loop.FIXES)


def test_unknown_modes_are_a_configuration_error():
    with pytest.raises(ConfigError) as error:
        load_settings(env={"OFFLINE_LLM_FAULTS": "chatty,nope"}, dotenv=None)
    assert error.value.variable == "OFFLINE_LLM_FAULTS" and "nope" in str(error.value)
    with pytest.raises(ValueError):
        OfflineServer(faults=("sleepy",))                   # 没有实现的模式
    done = run_cli("stage3_pure_loop.json_loop", "-q", "x", "--faults", "nope")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "nope" in done.stderr


# ---- each fault: what the model does, how the 50-line loop breaks, how the hardened loop holds ----

def test_chatty_talks_around_a_valid_call():
    naive, hardened = NAIVE(ARTICLE_QUESTION, faults=("chatty",)), HARDENED(ARTICLE_QUESTION, faults=("chatty",))
    reply = _replies(naive)[0]
    assert not reply.startswith("{") and extract_tool_call(reply).name == "get_current_time"
    # 翻车：整段回复不是以 { 开头 → 文章的循环把它当成了最终答案
    assert naive.status == Status.ANSWERED and naive.rounds == [] and naive.answer == reply
    assert _correct(hardened) and [r[0]["name"] for r in hardened.rounds] == ARTICLE_CALLS


def test_bad_json_breaks_each_call_once():
    naive, hardened = NAIVE(ARTICLE_QUESTION, faults=("bad_json",)), HARDENED(ARTICLE_QUESTION, faults=("bad_json",))
    # 翻车：以 { 开头、以 } 结尾，json.loads 却失败（文章的 JSONDecodeError）→ 坏 JSON 被当成答案
    assert naive.status == Status.ANSWERED and naive.answer.startswith("{") and naive.answer.endswith("}")
    with pytest.raises(json.JSONDecodeError):
        json.loads(naive.answer)
    # 加固：答案校验把它退回，模型下一次写对；每个调用坏一次 → 3 × 2 + 1 次模型调用
    assert _correct(hardened) and [r[0]["name"] for r in hardened.rounds] == ARTICLE_CALLS
    assert hardened.llm_calls == 7


def test_loop_repeats_the_first_call_until_stopped():
    naive, hardened = NAIVE(ARTICLE_QUESTION, faults=("loop",)), HARDENED(ARTICLE_QUESTION, faults=("loop",))
    # 翻车：第 1 轮、第 2 轮……第 10 轮都是 get_current_time，被 MAX_ITER 强行终止
    assert naive.status == Status.MAX_STEPS and naive.llm_calls == 10
    assert {r[0]["name"] for r in naive.rounds} == {"get_current_time"} and len(naive.rounds) == 10
    # 加固：第三次相同调用被硬停，原因写在 error 里
    assert hardened.status == Status.STOPPED and hardened.llm_calls == 3 and "重复工具调用" in hardened.error


def test_hallucinate_calls_tools_that_do_not_exist():
    naive, hardened = NAIVE(ARTICLE_QUESTION, faults=("hallucinate",)), HARDENED(ARTICLE_QUESTION, faults=("hallucinate",))
    # 翻车：文章的循环只回一句错误、不保留模型那条调用，模型看不到自己错在哪 → 一直幻觉到 MAX_ITER
    assert naive.status == Status.MAX_STEPS and all(r[0]["name"] not in REAL_TOOLS for r in naive.rounds)
    # 加固：调用和错误成对留在上下文里，模型看到 HALLUCINATIONS 次之后改用真工具
    fake = [r for r in hardened.rounds if r[0]["name"] not in REAL_TOOLS]
    assert len(fake) == HALLUCINATIONS and all("不是可用工具" in r[0]["result"] for r in fake)
    assert _correct(hardened) and [r[0]["name"] for r in hardened.rounds[HALLUCINATIONS:]] == ARTICLE_CALLS


def test_garbled_final_answers_until_sent_back():
    naive, hardened = NAIVE(ARTICLE_QUESTION, faults=("garbled",)), HARDENED(ARTICLE_QUESTION, faults=("garbled",))
    # 翻车：工具调用都对，最终答案却是空串 / 一个标点 / 英文 / JSON
    assert naive.status == Status.ANSWERED and naive.answer in GARBLED
    assert [r[0]["name"] for r in naive.rounds] == ARTICLE_CALLS
    # 加固：两次乱答被退回，第三次是正常答案
    assert _correct(hardened) and hardened.llm_calls == 4 + 2


def test_long_thoughts_outgrow_a_small_context_window():
    naive, hardened = NAIVE(ARTICLE_QUESTION, faults=("long",)), HARDENED(ARTICLE_QUESTION, faults=("long",))
    # 模型每次调用都带一大段"思考"：整段仍是合法 JSON，文章的循环原样塞回上下文
    first = json.loads(_replies(naive)[0])
    assert first["tool"] == "get_current_time" and len(first["thought"]) > 1000
    # 翻车：第 4 次请求超出上下文窗口，服务器回 400 context_length_exceeded
    assert naive.status == Status.ERROR and "maximum context length" in naive.error and naive.llm_calls == 4
    # 加固：历史里只存读懂的调用，每次请求都远在窗口之内
    assert _correct(hardened)
    assert max(e["response"]["usage"]["prompt_tokens"] for e in hardened.exchanges) < LONG_CONTEXT_LIMIT / 4


def test_the_context_limit_is_a_400_like_a_real_server():
    with OfflineServer(faults=("long",)) as server:
        client = OpenAI(base_url=server.base_url, api_key="offline", max_retries=0)
        short = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "你好"}])
        assert short.choices[0].message.content
        with pytest.raises(BadRequestError) as error:
            client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "字" * LONG_CONTEXT_LIMIT}])
    assert error.value.status_code == 400 and error.value.code == "context_length_exceeded"


# ---- each fix switched off brings its failure back ----

@pytest.mark.parametrize("fix", list(FAULT_OF_FIX))
def test_switching_a_fix_off_brings_its_failure_back(fix):
    fault = FAULT_OF_FIX[fix]
    held = HARDENED(ARTICLE_QUESTION, faults=(fault,))
    broken = HARDENED(ARTICLE_QUESTION, faults=(fault,), disabled_fixes=frozenset({fix}))
    naive = NAIVE(ARTICLE_QUESTION, faults=(fault,))
    assert held.status in (Status.ANSWERED, Status.STOPPED) and (_correct(held) or fault == "loop")
    assert not _correct(broken)
    # 关掉修复后，加固版以文章那一版的方式翻车（同样的 status）
    assert broken.status == naive.status


# ---- both protocols, reproducibility ----

def test_faults_apply_to_function_calling_too():
    chatty = PURE_LOOP(ARTICLE_QUESTION, faults=("chatty",))
    assert _correct(chatty)                                   # function calling 不怕废话：调用在 tool_calls 里
    assert all(e["response"]["choices"][0]["message"]["content"] for e in chatty.exchanges[:3])
    bad = PURE_LOOP(ARTICLE_QUESTION, faults=("bad_json",))
    arguments = bad.exchanges[0]["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(arguments)
    assert PURE_LOOP(ARTICLE_QUESTION, faults=("loop",)).status == Status.MAX_STEPS
    hallucinated = PURE_LOOP(ARTICLE_QUESTION, faults=("hallucinate",))
    assert _correct(hallucinated) and len(hallucinated.rounds) == 3 + HALLUCINATIONS
    assert PURE_LOOP(ARTICLE_QUESTION, faults=("long",)).status == Status.ERROR


@pytest.mark.parametrize("fault", FAULT_MODES)
def test_every_fault_is_reproducible(fault):
    first, second = NAIVE(ARTICLE_QUESTION, faults=(fault,)), NAIVE(ARTICLE_QUESTION, faults=(fault,))
    assert _replies(first) == _replies(second) and first.status == second.status


def test_faults_combine_without_crashing_the_model():
    record = HARDENED(ARTICLE_QUESTION, faults=("chatty", "hallucinate", "garbled"))
    assert _correct(record)
    assert all("离线模型内部出错" not in (r.error or "") for r in
               (HARDENED(ARTICLE_QUESTION, faults=FAULT_MODES), NAIVE(ARTICLE_QUESTION, faults=FAULT_MODES)))


def test_without_faults_the_decision_passes_unchanged():
    from random import Random

    from shared.offline_llm.conversation import read_conversation
    from shared.offline_llm.decision import Decision, ToolCall
    from shared.offline_llm.faults import FaultContext, apply_faults

    request = {"messages": [{"role": "user", "content": ARTICLE_QUESTION}]}
    decision = Decision(tool_calls=(ToolCall("get_current_time", {}),))
    context = FaultContext(faults=(), request=request, protocol="function_calling",
                           conversation=read_conversation(request), rng=Random(0))
    assert apply_faults(decision, context) is decision
    assert apply_faults(decision, FaultContext(("hallucinate",), request, "function_calling",
                                               context.conversation, Random(0))) != decision
