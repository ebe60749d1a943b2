"""The embedded offline model, tested the way users reach it: a real OfflineServer on
127.0.0.1 and the real ``openai`` SDK (raw HTTP only for malformed requests)."""
from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool
from openai import OpenAI

from tests.support.agents import ARTICLE_QUESTION
from shared.offline_llm import CAPABILITY_SENTENCE, OfflineServer, PolicyBrain
from shared.offline_llm.__main__ import main as offline_main
from shared.prompts import SYSTEM_PROMPT
from shared.tool_functions import FUNCTIONS, run_tool
from shared.tools import TOOLS
from tests.support.offline import NOW, client, fixed_clock, server  # noqa: F401 (pytest fixtures)

SCHEMAS = [convert_to_openai_tool(t) for t in TOOLS]
SERIAL_TRACE = [
    [("get_current_time", {})],
    [("get_stock_price", {"symbol": "腾讯"})],
    [("calculate", {"expression": "385.6 * 100"})],
]
# 第二篇文章的 JSON 协议 system prompt（工具清单是 "- name: description" 行）
JSON_SYSTEM_PROMPT = (
    "你是一个智能助手，可以调用工具来完成任务。\n"
    "当你需要调用工具时，请严格按以下JSON格式输出，不要输出任何其他内容：\n"
    '{"tool": "工具名", "args": {"参数名": "参数值"}}\n'
    "当你不需要调用工具、任务已完成时，请直接输出最终答案，不要使用JSON格式。\n"
    "可用工具：\n" + "\n".join(f"- {name}: {f.__doc__.strip()}" for name, f in FUNCTIONS.items())
)
JSON_RESULT = "工具 {name} 的执行结果：{result}\n\n请根据这个结果继续完成任务。如果任务已完成，请给出最终答案。"


def converse(client, question, *, tools=SCHEMAS, stream=False, max_turns=8, **params):
    """Drive one question turn by turn like an agent loop; return (rounds, answer, responses)."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    rounds, responses = [], []
    for _ in range(max_turns):
        extra = {"tools": tools} if tools else {}
        if stream:
            reply = collect_stream(client.chat.completions.create(
                model="offline", messages=messages, stream=True, stream_options={"include_usage": True},
                **extra, **params))
        else:
            completion = client.chat.completions.create(model="offline", messages=messages, **extra, **params)
            message = completion.choices[0].message
            reply = {"content": message.content, "usage": completion.usage,
                     "tool_calls": [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                                    for c in message.tool_calls or []]}
        responses.append(reply)
        if not reply["tool_calls"]:
            return rounds, reply["content"], responses
        messages.append({"role": "assistant", "content": reply["content"], "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in reply["tool_calls"]]})
        rounds.append([(c["name"], json.loads(c["arguments"])) for c in reply["tool_calls"]])
        for call in reply["tool_calls"]:
            result = run_tool(call["name"], json.loads(call["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    raise AssertionError(f"no final answer after {max_turns} turns: {rounds}")


def collect_stream(stream):
    """Reassemble SSE chunks the way a client must: content joined, tool calls by index."""
    content, calls, usage, pieces = "", {}, None, {}
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": None, "name": "", "arguments": ""})
                call["id"] = delta.id or call["id"]
                if delta.function is not None:
                    call["name"] += delta.function.name or ""
                    call["arguments"] += delta.function.arguments or ""
                    pieces[delta.index] = pieces.get(delta.index, 0) + bool(delta.function.arguments)
    return {"content": content or None, "usage": usage, "pieces": pieces,
            "tool_calls": [calls[i] for i in sorted(calls)]}


def converse_json_protocol(client, question, *, max_turns=8):
    """The 50-line agent of the second article: no tools, calls as JSON in plain content."""
    messages = [{"role": "system", "content": JSON_SYSTEM_PROMPT}, {"role": "user", "content": question}]
    rounds = []
    for _ in range(max_turns):
        reply = client.chat.completions.create(model="offline", messages=messages, temperature=0)
        content = reply.choices[0].message.content.strip()
        assert not reply.choices[0].message.tool_calls
        if not (content.startswith("{") and content.endswith("}")):
            return rounds, content
        call = json.loads(content)
        assert content == json.dumps(call, ensure_ascii=False)          # exactly the documented form
        rounds.append([(call["tool"], call["args"])])
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": JSON_RESULT.format(
            name=call["tool"], result=run_tool(call["tool"], call["args"]))})
    raise AssertionError(f"no final answer after {max_turns} turns: {rounds}")


# ---- the articles' question ----

def test_article_question_at_temperature_0_is_the_serial_chain(client):
    rounds, answer, _ = converse(client, ARTICLE_QUESTION, temperature=0)
    assert rounds == SERIAL_TRACE
    assert NOW in answer and "385.6 港元" in answer and "38,560 港元" in answer


def test_absent_temperature_behaves_like_0(client):
    rounds, answer, _ = converse(client, ARTICLE_QUESTION)
    assert rounds == SERIAL_TRACE and "38,560 港元" in answer


def test_streaming_reassembles_to_the_same_calls_answer_and_usage(client):
    plain_rounds, plain_answer, plain = converse(client, ARTICLE_QUESTION, temperature=0)
    rounds, answer, streamed = converse(client, ARTICLE_QUESTION, temperature=0, stream=True)
    assert (rounds, answer) == (plain_rounds, plain_answer)
    assert [r["usage"].prompt_tokens for r in streamed] == [r["usage"].prompt_tokens for r in plain]
    assert [r["usage"].completion_tokens for r in streamed] == [r["usage"].completion_tokens for r in plain]
    # arguments arrive in several deltas that the client must concatenate
    assert any(count > 1 for r in streamed for count in r["pieces"].values())


def test_ids_are_unique_per_response_like_a_real_endpoint(client):
    completions = [client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "北京天气"}],
                                                  tools=SCHEMAS, temperature=0) for _ in range(30)]
    assert len({c.id for c in completions}) == 30
    assert len({c.choices[0].message.tool_calls[0].id for c in completions}) == 30


def test_fixed_ids_are_stable_across_replays_when_asked_for():
    with OfflineServer(fixed_ids=True) as srv, OpenAI(base_url=srv.base_url, api_key="x", max_retries=0) as sdk:
        _, _, first = converse(sdk, ARTICLE_QUESTION, temperature=0)
        _, _, second = converse(sdk, ARTICLE_QUESTION, temperature=0)
    ids = [c["id"] for r in first for c in r["tool_calls"]]
    assert ids == [c["id"] for r in second for c in r["tool_calls"]]
    assert len(set(ids)) == len(ids) == 3


# ---- temperature > 0 ----

def test_parallel_tool_calls_false_never_gives_more_than_one_call(client):
    for seed in range(30):
        rounds, answer, _ = converse(client, ARTICLE_QUESTION, temperature=1.0, seed=seed,
                                     parallel_tool_calls=False)
        assert all(len(r) == 1 for r in rounds), (seed, rounds)
        assert "38,560 港元" in answer


def test_some_seed_fires_one_parallel_round_with_the_guess_and_the_answer_corrects_it(client):
    for seed in range(30):
        rounds, answer, _ = converse(client, ARTICLE_QUESTION, temperature=1.0, seed=seed)
        if len(rounds[0]) > 1:
            break
    else:
        pytest.fail("no seed in 0..29 chose the parallel round at temperature 1.0")
    assert rounds == [[("get_current_time", {}), ("get_stock_price", {"symbol": "腾讯"}),
                       ("calculate", {"expression": "300 * 100"})]]
    assert "38,560 港元" in answer and "300" in answer and "猜" in answer


def test_the_same_seed_gives_the_same_decisions_and_seeds_differ(client):
    traces = {}
    for seed in range(20):
        first = converse(client, ARTICLE_QUESTION, temperature=0.7, seed=seed)[:2]
        assert converse(client, ARTICLE_QUESTION, temperature=0.7, seed=seed)[:2] == first
        traces[seed] = json.dumps(first, ensure_ascii=False)
    assert len(set(traces.values())) == 2           # serial and parallel both occur


def test_server_seed_is_reproducible_without_a_request_seed():
    def trace(seed):
        with OfflineServer(seed=seed) as srv, OpenAI(base_url=srv.base_url, api_key="x", max_retries=0) as sdk:
            return converse(sdk, ARTICLE_QUESTION, temperature=0.7)[:2]

    assert trace(7) == trace(7)
    assert len({json.dumps(trace(seed), ensure_ascii=False) for seed in range(8)}) == 2


# ---- what it understands ----

def test_unknown_request_gets_the_capability_sentence_and_no_tool_call(client):
    rounds, answer, _ = converse(client, "帮我写一首关于秋天的诗")
    assert rounds == [] and answer == CAPABILITY_SENTENCE
    assert "LLM_BASE_URL" in answer and "不是语言模型" in answer


def test_greeting_gets_a_direct_answer(client):
    rounds, answer, _ = converse(client, "你好")
    assert rounds == [] and answer and answer != CAPABILITY_SENTENCE


@pytest.mark.parametrize("question, expected", [
    ("北京和上海的天气怎么样？", [[("get_weather", {"city": "北京"})], [("get_weather", {"city": "上海"})]]),
    ("What's the weather in Beijing and Shanghai?",
     [[("get_weather", {"city": "Beijing"})], [("get_weather", {"city": "Shanghai"})]]),
    ("帮我算一下 365 * 24，然后告诉我上海天气",
     [[("calculate", {"expression": "365 * 24"})], [("get_weather", {"city": "上海"})]]),
    ("What is the value of 100 shares of Tencent?",
     [[("get_stock_price", {"symbol": "Tencent"})], [("calculate", {"expression": "385.6 * 100"})]]),
    ("买 10 股英伟达要多少钱", [[("get_stock_price", {"symbol": "英伟达"})],
                                [("calculate", {"expression": "131.8 * 10"})]]),
])
def test_several_requests_are_handled_in_the_order_asked(client, question, expected):
    rounds, answer, _ = converse(client, question, temperature=0)
    assert rounds == expected
    assert answer != CAPABILITY_SENTENCE


def test_arithmetic_answer_shows_expression_and_result(client):
    rounds, answer, _ = converse(client, "算一下 (3+5)*2 等于多少", temperature=0)
    assert rounds == [[("calculate", {"expression": "(3+5)*2"})]]
    assert "(3+5)*2 = 16" in answer


def test_a_tool_error_is_relayed_honestly(client):
    rounds, answer, _ = converse(client, "1/0", temperature=0)
    assert rounds == [[("calculate", {"expression": "1/0"})]]
    assert "工具执行出错: 除数不能为零" in answer


def test_unknown_city_still_gets_the_call_and_the_answer_relays_not_found(client):
    rounds, answer, _ = converse(client, "纽约的天气怎么样", temperature=0)
    assert rounds == [[("get_weather", {"city": "纽约"})]]
    assert "未找到" in answer and "纽约" in answer


def test_a_tool_that_is_not_offered_is_never_called(client):
    only_weather = [s for s in SCHEMAS if s["function"]["name"] == "get_weather"]
    rounds, answer, _ = converse(client, ARTICLE_QUESTION, tools=only_weather, temperature=0)
    assert rounds == []
    assert "get_current_time" in answer and "get_stock_price" in answer


def test_json_protocol_gives_the_same_calls_and_the_same_answer(client):
    fc_rounds, fc_answer, _ = converse(client, ARTICLE_QUESTION, temperature=0)
    json_rounds, json_answer = converse_json_protocol(client, ARTICLE_QUESTION)
    assert json_rounds == fc_rounds == SERIAL_TRACE
    assert json_answer == fc_answer


def test_json_protocol_feedback_on_an_answer_is_not_a_new_question(client):
    # 加固版循环拒收一个答案后追加的反馈：模型应重答原问题，而不是把反馈当成新问题
    messages = [
        {"role": "system", "content": JSON_SYSTEM_PROMPT},
        {"role": "user", "content": "帮我算一下 365 * 24"},
        {"role": "assistant", "content": '{"tool": "calculate", "args": {"expression": "365 * 24"}}'},
        {"role": "user", "content": JSON_RESULT.format(name="calculate", result="8760")},
        {"role": "assistant", "content": "8760"},
        {"role": "user", "content": "你的上一条回复不能作为最终答案：回复里没有中文。请给出完整的最终答案。"},
    ]
    reply = client.chat.completions.create(model="offline", messages=messages, temperature=0)
    assert reply.choices[0].message.content == "计算结果：365 * 24 = 8760。"


def test_usage_is_counted_not_constant(client):
    short = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "你好"}])
    long = client.chat.completions.create(model="offline", messages=[
        {"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "你好，" * 20}])
    assert 0 < short.usage.prompt_tokens < long.usage.prompt_tokens
    for reply in (short, long):
        assert reply.usage.completion_tokens > 0
        assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


# ---- the HTTP surface ----

@pytest.mark.parametrize("body, param", [
    (b"{not json", None),
    (b"[1, 2]", None),
    (b'{"model": "offline"}', "messages"),
    (b'{"messages": "hello"}', "messages"),
    (b'{"messages": []}', "messages"),
    (b'{"messages": [{"role": "robot", "content": "hi"}]}', "messages[0].role"),
    (b'{"messages": [{"content": "hi"}]}', "messages[0].role"),
    (b'{"model": "offline", "messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}', "temperature"),
    (b'{"model": "offline", "messages": [{"role": "user", "content": "hi"}], "temperature": 3}', "temperature"),
])
def test_malformed_requests_get_400_with_an_openai_style_error(server, body, param):
    response = httpx.post(f"{server.base_url}/chat/completions", content=body,
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"] and error["param"] == param


def test_the_sdk_raises_its_typed_error_for_a_bad_request(client):
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}],
                                       temperature=9)


def test_unknown_path_is_404_and_wrong_method_is_405(server):
    missing = httpx.post(f"{server.base_url}/completions", json={"prompt": "hi"})
    assert missing.status_code == 404 and "error" in missing.json()
    wrong = httpx.get(f"{server.base_url}/chat/completions")
    assert wrong.status_code == 405 and wrong.headers["Allow"] == "POST" and "error" in wrong.json()


def test_models_lists_one_model_that_says_it_is_not_a_language_model(client):
    models = client.models.list().data
    assert [m.id for m in models] == ["offline"]
    assert "not a language model" in models[0].model_dump()["description"]


def test_any_model_name_and_any_key_are_accepted(server):
    with OpenAI(base_url=server.base_url, api_key="sk-anything", max_retries=0) as sdk:
        reply = sdk.chat.completions.create(model="deepseek-chat", messages=[{"role": "user", "content": "你好"}])
    assert reply.model == "deepseek-chat" and reply.choices[0].message.content


def test_the_server_keeps_a_copy_of_every_request_it_served():
    with OfflineServer() as srv, OpenAI(base_url=srv.base_url, api_key="x", max_retries=0) as sdk:
        converse(sdk, ARTICLE_QUESTION, temperature=0)
        served = srv.requests
        served[0]["messages"].clear()                      # a copy: the log itself is untouched
        assert [len(r["messages"]) for r in srv.requests] == [2, 4, 6, 8]
        assert all(r["tools"] == SCHEMAS and r["temperature"] == 0 for r in srv.requests)


def test_a_failing_brain_is_a_500_and_the_server_keeps_serving():
    def brain(request):
        if "boom" in json.dumps(request, ensure_ascii=False):
            raise RuntimeError("boom")
        return PolicyBrain()(request)

    with OfflineServer(brain=brain) as srv, OpenAI(base_url=srv.base_url, api_key="x", max_retries=0) as sdk:
        with pytest.raises(openai.InternalServerError) as failure:
            sdk.chat.completions.create(model="offline", messages=[{"role": "user", "content": "boom"}])
        assert "boom" in failure.value.response.json()["error"]["message"]
        assert sdk.chat.completions.create(model="offline", messages=[{"role": "user", "content": "你好"}])


def test_two_requests_can_be_in_flight_at_once():
    # 一个要等"另一个请求也到了"才肯回答的大脑：串行服务器会在这里卡住直到 barrier 超时（500）
    barrier = threading.Barrier(2, timeout=10)

    def brain(request):
        barrier.wait()
        return PolicyBrain()(request)

    with OfflineServer(brain=brain, latency_ms=50) as srv, \
            OpenAI(base_url=srv.base_url, api_key="x", max_retries=0) as sdk:
        ask = lambda: sdk.chat.completions.create(model="offline", messages=[{"role": "user", "content": "你好"}])
        with ThreadPoolExecutor(max_workers=2) as pool:
            replies = [f.result() for f in [pool.submit(ask), pool.submit(ask)]]
    assert all(r.choices[0].message.content for r in replies)


def test_unknown_fault_modes_are_refused_at_construction():
    with pytest.raises(ValueError, match="no_such_mode"):
        OfflineServer(faults=("no_such_mode",))


@pytest.mark.parametrize("port", ["abc", "70000", "-1"])
def test_a_bad_port_is_one_line_and_exit_2(capsys, port):
    with pytest.raises(SystemExit) as stopped:
        offline_main(["--port", port])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--port" in err and "Traceback" not in err
