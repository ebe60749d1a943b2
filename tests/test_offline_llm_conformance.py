"""The offline model against the official OpenAI Chat Completions schema (the pinned copy in
shared/offline_llm/openai_chat_schema.json): every response shape validates, every request
parameter is honoured or refused with a 400 naming it, broken histories are refused, and the
bodies the schema rejects get a 400 too. Reached the way users reach it: a real server on
127.0.0.1, the ``openai`` SDK and LangChain (raw HTTP only for bodies no SDK would send)."""
from __future__ import annotations

import json
from pathlib import Path

import httpx
import jsonschema
import openai
import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai import ChatOpenAI
from openai import OpenAI
from pydantic import BaseModel

from shared.offline_llm import OfflineServer
from shared.offline_llm.__main__ import ENVIRONMENT, main as offline_main
from shared.tools import TOOLS
from tests.support.offline import client, fixed_clock, server  # noqa: F401 (pytest fixtures)
from tests.support.agents import ARTICLE_QUESTION

SCHEMA = json.loads((Path(__file__).parents[1] / "shared/offline_llm/openai_chat_schema.json").read_text("utf-8"))
TOOL_SCHEMAS = [convert_to_openai_tool(t) for t in TOOLS]
WEATHER_ONLY = [s for s in TOOL_SCHEMAS if s["function"]["name"] == "get_weather"]
USER = [{"role": "user", "content": "北京天气怎么样？"}]
CALL = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{name}"})


RESPONSE, CHUNK, REQUEST = (validator("CreateChatCompletionResponse"), validator("CreateChatCompletionStreamResponse"),
                            validator("CreateChatCompletionRequest"))
ERROR, MODELS, MODEL = validator("ErrorResponse"), validator("ListModelsResponse"), validator("Model")


def post(server, body) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode("utf-8")
    return httpx.post(f"{server.base_url}/chat/completions", content=raw, headers={"Content-Type": "application/json"})


def sse_chunks(response: httpx.Response) -> list[dict]:
    lines = [line[len("data: "):] for line in response.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def chat(server, **body) -> dict:
    response = post(server, {"model": "offline", "messages": USER, **body})
    assert response.status_code == 200, response.text
    return response.json()


def refused(server, body, param: str) -> dict:
    response = post(server, body)
    assert response.status_code == 400, response.text
    ERROR.validate(response.json())
    error = response.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error", error
    return error


# ---- every response shape validates ----

@pytest.mark.parametrize("body", [
    {"messages": USER, "tools": TOOL_SCHEMAS},                                   # a tool call
    {"messages": [{"role": "user", "content": "你好"}], "tools": TOOL_SCHEMAS},   # text with tools
    {"messages": [{"role": "user", "content": "你好"}]},                          # text without tools
    {"messages": [{"role": "user", "content": ARTICLE_QUESTION}], "tools": TOOL_SCHEMAS, "temperature": 1, "seed": 2,
     "n": 3},
    {"messages": USER, "response_format": {"type": "json_object"}, "tools": WEATHER_ONLY, "tool_choice": "none",
     "max_tokens": 5, "stop": ["。"]},
], ids=["tool_call", "text_with_tools", "text_without_tools", "n3_parallel", "limits"])
@pytest.mark.parametrize("stream", [False, True])
def test_every_response_and_chunk_validates_against_the_official_schema(server, body, stream):
    body = {"model": "offline", **body}
    if body.get("response_format"):
        body["messages"] = [{"role": "user", "content": "北京天气怎么样？用 JSON 回答"}]
    if stream:
        response = post(server, {**body, "stream": True, "stream_options": {"include_usage": True}})
        chunks = sse_chunks(response)
        for chunk in chunks:
            CHUNK.validate(chunk)
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
        assert {c["choices"][0]["index"] for c in chunks if c["choices"]} == set(range(body.get("n", 1)))
    else:
        completion = post(server, body).json()
        RESPONSE.validate(completion)
        assert all(choice["message"]["refusal"] is None for choice in completion["choices"])
        assert len(completion["choices"]) == body.get("n", 1)


def test_model_list_model_and_errors_validate(server):
    MODELS.validate(httpx.get(f"{server.base_url}/models").json())
    MODEL.validate(httpx.get(f"{server.base_url}/models/offline").json())
    for response in (httpx.get(f"{server.base_url}/models/gpt-9"), httpx.post(f"{server.base_url}/nowhere"),
                     httpx.get(f"{server.base_url}/chat/completions"), post(server, b"{")):
        assert response.status_code >= 400
        ERROR.validate(response.json())


# ---- bodies the schema rejects get a 400 that names the parameter ----

SCHEMA_REJECTS = [
    ({"messages": USER}, "model"),
    ({"model": "offline", "messages": [{"role": "user", "content": 42}]}, "messages[0].content"),
    ({"model": "offline", "messages": [*USER, {"role": "assistant", "content": None, "tool_calls": [
        {**CALL, "function": {"name": "get_weather", "arguments": {"city": "北京"}}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "晴"}]}, "messages[1].tool_calls[0].function.arguments"),
    ({"model": "offline", "messages": USER, "tools": TOOL_SCHEMAS, "tool_choice": "sometimes"}, "tool_choice"),
    ({"model": "offline", "messages": USER, "n": 0}, "n"),
    ({"model": "offline", "messages": USER, "max_tokens": "ten"}, "max_tokens"),
    ({"model": "offline", "messages": USER, "stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"model": "offline", "messages": USER, "stream_options": "yes", "stream": True}, "stream_options"),
    ({"model": "offline", "messages": USER, "response_format": {"type": "yaml"}}, "response_format.type"),
    ({"model": "offline", "messages": USER, "seed": 1.5}, "seed"),
    ({"model": "offline", "messages": USER, "top_p": 3}, "top_p"),
    ({"model": "offline", "messages": [{"role": "tool", "content": "晴"}]}, "messages[0].tool_call_id"),
]


@pytest.mark.parametrize("body, param", SCHEMA_REJECTS, ids=[p for _, p in SCHEMA_REJECTS])
def test_a_body_the_schema_rejects_gets_400_naming_the_parameter(server, body, param):
    assert not REQUEST.is_valid(body)            # the official schema rejects it too
    refused(server, body, param)


def test_a_literal_nan_is_not_json(server):
    error = post(server, b'{"model": "offline", "messages": [{"role": "user", "content": "hi"}], "temperature": NaN}')
    assert error.status_code == 400 and "NaN" in error.json()["error"]["message"]


@pytest.mark.parametrize("body", [
    {"model": "offline", "messages": USER, "tools": TOOL_SCHEMAS, "tool_choice": {"type": "function",
                                                                                  "function": {"name": "get_weather"}}},
    {"model": "offline", "messages": USER, "max_tokens": None, "stop": None, "n": None, "seed": None},
    {"model": "x", "messages": [{"role": "system", "content": [{"type": "text", "text": "hi"}]}, *USER],
     "user": "u1", "metadata": {"k": "v"}, "top_p": 0.5, "presence_penalty": 1, "max_completion_tokens": 50},
])
def test_a_body_the_schema_accepts_is_served(server, body):
    assert REQUEST.is_valid(body)
    assert post(server, body).status_code == 200


# ---- each parameter honoured ----

def test_tool_choice_none_never_calls_and_says_why(server):
    reply = chat(server, tools=TOOL_SCHEMAS, tool_choice="none")["choices"][0]
    assert "tool_calls" not in reply["message"] and reply["finish_reason"] == "stop"
    assert "tool_choice" in reply["message"]["content"] and "北京" in reply["message"]["content"]


def test_tool_choice_required_calls_even_for_small_talk(server):
    reply = post(server, {"model": "offline", "messages": [{"role": "user", "content": "你好"}],
                          "tools": WEATHER_ONLY, "tool_choice": "required"}).json()["choices"][0]
    assert reply["finish_reason"] == "tool_calls" and reply["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_a_named_function_is_the_one_called(server):
    named = {"type": "function", "function": {"name": "get_current_time"}}
    calls = chat(server, tools=TOOL_SCHEMAS, tool_choice=named)["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_current_time"]
    weather = chat(server, tools=TOOL_SCHEMAS, tool_choice={"type": "function", "function": {"name": "get_weather"}})
    assert json.loads(weather["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == {"city": "北京"}


@pytest.mark.parametrize("body, param", [
    ({"model": "offline", "messages": USER, "tool_choice": "auto"}, "tool_choice"),
    ({"model": "offline", "messages": USER, "parallel_tool_calls": False}, "parallel_tool_calls"),
    ({"model": "offline", "messages": USER, "tools": WEATHER_ONLY,
      "tool_choice": {"type": "function", "function": {"name": "send_email"}}}, "tool_choice"),
    ({"model": "offline", "messages": USER, "stream_options": {"include_usage": True}}, "stream_options"),
    ({"model": "offline", "messages": USER, "response_format": {"type": "json_object"}}, "messages"),
    ({"model": "offline", "messages": USER, "logprobs": True}, "logprobs"),
    ({"model": "offline", "messages": USER, "modalities": ["text", "audio"]}, "modalities"),
    ({"model": "offline", "messages": USER, "functions": [{"name": "f"}]}, "functions"),
    ({"model": "offline", "messages": USER, "tools": [{"type": "custom", "custom": {"name": "x"}}]}, "tools[0].type"),
    ({"model": "offline", "messages": USER, "max_tokens": 0}, "max_tokens"),
], ids=["tool_choice_without_tools", "parallel_without_tools", "named_not_offered", "stream_options_without_stream",
        "json_object_without_json", "logprobs", "audio", "functions", "custom_tool", "max_tokens_0"])
def test_what_it_cannot_honour_is_refused_like_a_real_endpoint(server, body, param):
    refused(server, body, param)


def test_parallel_tool_calls_false_is_honoured(server):
    for seed in range(12):
        calls = chat(server, messages=[{"role": "user", "content": ARTICLE_QUESTION}], tools=TOOL_SCHEMAS,
                     temperature=1, seed=seed, parallel_tool_calls=False)["choices"][0]["message"]["tool_calls"]
        assert len(calls) == 1


def test_n_gives_n_choices_and_seed_makes_them_reproducible(server):
    body = {"messages": [{"role": "user", "content": ARTICLE_QUESTION}], "tools": TOOL_SCHEMAS, "temperature": 1,
            "n": 6, "seed": 3}
    first, second = chat(server, **body), chat(server, **body)
    shape = lambda c: [len(choice["message"]["tool_calls"]) for choice in c["choices"]]
    assert [choice["index"] for choice in first["choices"]] == list(range(6))
    assert shape(first) == shape(second) and set(shape(first)) == {1, 3}    # serial and parallel both drawn
    cold = chat(server, **{**body, "temperature": 0})
    assert set(shape(cold)) == {1}


@pytest.mark.parametrize("limit", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_truncates_and_says_length(server, limit):
    full = chat(server, messages=[{"role": "user", "content": "你是谁"}])
    cut = chat(server, messages=[{"role": "user", "content": "你是谁"}], **{limit: 5})
    text, short = full["choices"][0]["message"]["content"], cut["choices"][0]["message"]["content"]
    assert cut["choices"][0]["finish_reason"] == "length" and full["choices"][0]["finish_reason"] == "stop"
    assert text.startswith(short) and len(short) < len(text) and cut["usage"]["completion_tokens"] <= 5


def test_stop_cuts_before_the_first_stop_sequence(server):
    full = chat(server, messages=[{"role": "user", "content": "你是谁"}])["choices"][0]["message"]["content"]
    cut = chat(server, messages=[{"role": "user", "content": "你是谁"}], stop=["：", "。"])["choices"][0]
    assert cut["finish_reason"] == "stop" and cut["message"]["content"] == full[:full.index("：")]


def test_stream_options_include_usage_adds_the_usage_chunk_only_when_asked(server):
    plain = sse_chunks(post(server, {"model": "offline", "messages": USER, "stream": True}))
    assert all("usage" not in c for c in plain)
    counted = sse_chunks(post(server, {"model": "offline", "messages": USER, "stream": True,
                                       "stream_options": {"include_usage": True}}))
    assert counted[-1]["usage"]["prompt_tokens"] > 0


class Weather(BaseModel):
    city: str
    summary: str


class Calculation(BaseModel):
    expression: str
    result: float


def test_response_format_json_schema_works_with_the_sdks_parse(client):
    weather = client.chat.completions.parse(model="offline", messages=USER, response_format=Weather)
    assert weather.choices[0].message.parsed == Weather(city="北京", summary=weather.choices[0].message.parsed.summary)
    assert "get_weather" in weather.choices[0].message.parsed.summary          # honest: no tool was offered
    calc = client.chat.completions.parse(model="offline", messages=[{"role": "user", "content": "算一下 365 * 24"}],
                                         response_format=Calculation)
    assert calc.choices[0].message.parsed.expression == "365 * 24"


def test_response_format_after_tool_results_carries_the_observed_number(client):
    tools = [s for s in TOOL_SCHEMAS if s["function"]["name"] == "calculate"]
    messages = [{"role": "user", "content": "算一下 365 * 24"}]
    first = client.chat.completions.create(model="offline", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "8760"}]
    schema = {"type": "json_schema", "json_schema": {"name": "Calculation", "schema": Calculation.model_json_schema()}}
    final = client.chat.completions.create(model="offline", messages=messages, tools=tools, response_format=schema)
    parsed = Calculation.model_validate_json(final.choices[0].message.content)
    assert parsed == Calculation(expression="365 * 24", result=8760)


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_langchain_with_structured_output(server, method):
    llm = ChatOpenAI(model="offline", base_url=server.base_url, api_key="unused", temperature=0, max_retries=0)
    structured = llm.with_structured_output(Weather, method=method)
    for question, city in (("北京天气怎么样？", "北京"), ("What's the weather in Shanghai?", "Shanghai")):
        answer = structured.invoke(question)
        assert isinstance(answer, Weather) and answer.city == city and answer.summary


def test_json_object_answers_with_a_json_object(server):
    reply = chat(server, messages=[{"role": "user", "content": "你是谁？用 JSON 回答"}],
                 response_format={"type": "json_object"})
    assert isinstance(json.loads(reply["choices"][0]["message"]["content"]), dict)


# ---- broken histories are refused like a real endpoint ----

ASKED = {"role": "assistant", "content": None, "tool_calls": [CALL]}
ANSWER = {"role": "tool", "tool_call_id": "call_a", "content": "北京：晴"}


@pytest.mark.parametrize("messages, param, words", [
    ([*USER, ANSWER], "messages[1].role", "must be a response to a preceding message with 'tool_calls'"),
    ([*USER, ASKED, {**ANSWER, "tool_call_id": "call_b"}], "messages[2].tool_call_id", "call_b"),
    ([*USER, ASKED, *USER], "messages[1].tool_calls", "did not have response messages: call_a"),
    ([*USER, {**ASKED, "tool_calls": [CALL, {**CALL, "id": "call_b"}]}, ANSWER, *USER], "messages[1].tool_calls",
     "call_b"),
    ([*USER, {"role": "tool", "content": "北京：晴"}], "messages[1].tool_call_id", "tool_call_id"),
    ([*USER, ASKED, ANSWER, {"role": "assistant", "content": "晴"}, ANSWER], "messages[4].role", "preceding"),
], ids=["result_without_call", "unknown_id", "call_without_result", "one_of_two_unanswered", "no_tool_call_id",
        "result_after_the_answer"])
def test_a_broken_history_gets_400_with_a_message_a_learner_can_act_on(client, messages, param, words):
    with pytest.raises(openai.BadRequestError) as refused_error:
        client.chat.completions.create(model="offline", messages=messages, tools=TOOL_SCHEMAS)
    error = refused_error.value.body
    assert error["param"] == param and words in error["message"]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in error["message"])      # and says what to fix, in Chinese


def test_a_well_formed_history_is_served(client):
    reply = client.chat.completions.create(model="offline", messages=[*USER, ASKED, ANSWER], tools=TOOL_SCHEMAS)
    assert reply.choices[0].message.content == "北京：晴。"


# ---- the command line ----

def test_help_lists_the_environment_variables(capsys):
    with pytest.raises(SystemExit) as done:
        offline_main(["--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert all(name in shown for name, _ in ENVIRONMENT) and "--log" in shown and "--fixed-ids" in shown


def test_the_log_has_one_line_per_request_and_never_the_key(tmp_path):
    log_file = (tmp_path / "log.txt").open("w+", encoding="utf-8")
    secret = "sk-never-printed-123"
    with OfflineServer(log=log_file) as srv, OpenAI(base_url=srv.base_url, api_key=secret, max_retries=0) as sdk:
        sdk.chat.completions.create(model="offline", messages=USER, tools=TOOL_SCHEMAS)
        with pytest.raises(openai.BadRequestError):
            sdk.chat.completions.create(model="offline", messages=USER, n=0)
        sdk.models.list()
    log_file.seek(0)
    lines = log_file.read().splitlines()
    assert [line.split()[:3] for line in lines] == [["POST", "/v1/chat/completions", "200"],
                                                    ["POST", "/v1/chat/completions", "400"],
                                                    ["GET", "/v1/models", "200"]]
    assert "get_weather" in lines[0] and "北京" in lines[0] and "n:" in lines[1]
    assert all(secret not in line for line in lines)
