"""Real endpoints misbehave: every run ends with a status and its cause named, in every implementation.

Each case is an endpoint (``tests/support/bad_endpoint.py``) that answers with something a
real proxy or server has been seen to send. The run must end with status ``error`` and a
one-line cause that names what was wrong, never a traceback.
"""
from __future__ import annotations

import socket

import pytest

from compare.implementations import IMPLEMENTATIONS
from shared.harness import responses
from shared.harness.config import load_settings
from shared.harness.endpoint import open_endpoint
from shared.harness.run_record import Status
from shared.harness.runner import RunOptions, run_once
from tests.support.bad_endpoint import BadEndpoint, Raw, completion

KEY = "sk-reliability-test-key"
OK = completion({"content": "好的。"})

BROKEN = {
    "proxy_html_502": (Raw(502, "text/html", b"<html><body>502 Bad Gateway</body></html>"),
                       "端点返回的不是 JSON（HTTP 502, text/html）"),
    "truncated_json": (Raw(body=OK[:40]), "端点返回的不是 JSON（HTTP 200, application/json）"),
    "sse_to_a_plain_request": (Raw(content_type="text/event-stream", body=b"data: " + OK + b"\n\ndata: [DONE]\n\n"),
                               "端点返回的不是 JSON（HTTP 200, text/event-stream）"),
    "json_array": (Raw(body=b"[1, 2]"), "端点返回的 JSON 不是一个对象"),
    "usage_not_a_number": (Raw(body=completion({"content": "x"}, usage={"prompt_tokens": "n/a"})),
                           "端点返回的 usage 不合法：prompt_tokens='n/a'"),
    "no_choices": (Raw(body=completion({"content": "x"}, choices=[])), "端点返回的回复里没有 choices"),
    "numeric_content": (Raw(body=completion({"content": 42})), "端点返回的 message.content 既不是文字也不是 null"),
    "empty_message": (Raw(body=completion({"content": None})), "empty_message: 模型返回了空消息"),
}


def run(impl_name: str, base_url: str, **env) -> object:
    settings = load_settings(env={"LLM_BASE_URL": base_url, "LLM_API_KEY": KEY, "LLM_MODEL": "m", **env},
                             dotenv=None)
    with open_endpoint(settings) as endpoint:
        return run_once(IMPLEMENTATIONS[impl_name], "北京天气怎么样", endpoint, RunOptions())


@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
def test_a_broken_response_is_an_error_with_its_cause(case, impl_name):
    raw, cause = BROKEN[case]
    with BadEndpoint(raw) as url:
        record = run(impl_name, url)
    if case == "empty_message" and impl_name == "hardened_loop":
        # 加固版的修复 5 把空回复当作不合格的答案，追问 3 次后降级：守卫叫停，也是一个点名的结局
        assert record.status == Status.STOPPED and record.stopped_at.startswith("BadAnswerLimit")
        return
    assert record.status == Status.ERROR
    assert cause in record.error and "\n" not in record.error
    assert KEY not in record.error


def test_an_endpoint_that_drips_is_stopped_by_llm_timeout():
    # 一秒一个字节的端点：httpx 的超时是"每次读"的，永远不会触发；LLM_TIMEOUT 是整个响应的期限
    endpoint = BadEndpoint(Raw(body=OK, seconds_per_byte=0.05))
    with endpoint as url:
        record = run("json_loop", url, LLM_TIMEOUT="0.3")
    assert record.status == Status.ERROR and "LLM_TIMEOUT=0.3" in record.error
    assert endpoint.requests == 3            # 一次请求 + 两次重试，然后放弃


def test_a_refused_connection_names_its_cause():
    unused = socket.socket()
    unused.bind(("127.0.0.1", 0))            # 绑定后不 listen 就关掉：连这个端口会被拒绝
    port = unused.getsockname()[1]
    unused.close()
    record = run("pure_loop", f"http://127.0.0.1:{port}/v1")
    assert record.status == Status.ERROR and "连不上模型端点" in record.error and "ConnectError" in record.error


def test_retry_after_is_capped():
    from shared.harness.responses import RETRY_AFTER_CAP, _capped

    assert _capped("1000", "retry-after") == f"{RETRY_AFTER_CAP:g}"
    assert _capped("2", "retry-after") == "2"
    assert _capped("999999", "retry-after-ms") == f"{RETRY_AFTER_CAP * 1000:g}"
    assert _capped("Wed, 21 Oct 2015 07:28:00 GMT", "retry-after") == "Wed, 21 Oct 2015 07:28:00 GMT"


# ---- 离线模型的传输层故障：每个实现都要接得住 ----

RECOVERED = ("http_500", "truncated")               # 第一次失败、重试就好：SDK 的重试接得住
NAMED = {"bad_body": "端点返回的不是 JSON（HTTP 200, text/html）", "empty": "empty_message"}


def run_offline(impl_name: str, fault: str, question: str = "北京天气怎么样", *, timeout: str = "1"):
    settings = load_settings(env={"LLM_TIMEOUT": timeout}, dotenv=None, offline_faults=(fault,))
    with open_endpoint(settings) as endpoint:
        return run_once(IMPLEMENTATIONS[impl_name], question, endpoint, RunOptions()), endpoint.server


@pytest.mark.parametrize("fault", [*RECOVERED, *NAMED])
@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
def test_every_implementation_survives_each_transport_fault(impl_name, fault):
    record, server = run_offline(impl_name, fault)
    if fault in RECOVERED:
        assert record.status == Status.ANSWERED and "北京" in record.answer, record.error
        assert record.llm_calls == 2 and len(server.requests) == 4        # 每轮第一次失败、重试成功
        return
    if impl_name == "hardened_loop" and fault == "empty":
        assert record.status == Status.STOPPED              # 修复 5 追问，三次都空就降级
        return
    assert record.status == Status.ERROR and NAMED[fault] in record.error


@pytest.mark.parametrize("fault", ["http_429", "timeout"])
@pytest.mark.parametrize("impl_name", ["pure_loop", "json_loop"])
def test_rate_limits_and_timeouts_are_retried(impl_name, fault, monkeypatch):
    # 每个请求的第一次尝试被拒（429，Retry-After: 1）或不回话（timeout）。等多久用项目自己的两个上限缩短：
    # Retry-After 截到 RETRY_AFTER_CAP（这里 0.1 秒，截断这条路也走到了），不回话的尝试等 LLM_TIMEOUT（0.5 秒）
    monkeypatch.setattr(responses, "RETRY_AFTER_CAP", 0.1)
    record, server = run_offline(impl_name, fault, "现在几点了？", timeout="0.5")
    assert record.status == Status.ANSWERED, record.error
    assert len(server.requests) >= 2 * record.llm_calls        # 每次调用的第一次尝试都失败：都重试过


def test_transport_fault_names_are_configuration():
    settings = load_settings(env={"OFFLINE_LLM_FAULTS": "http_500,timeout,truncated,bad_body,empty,http_429"},
                             dotenv=None)
    assert len(settings.offline_faults) == 6


@pytest.mark.parametrize("impl_name", ["prebuilt", "stategraph", "pure_loop", "fc_loop", "create_agent"])
def test_a_run_that_fails_midway_keeps_the_rounds_it_made(impl_name):
    # long 故障：前三轮正常，第四次请求超出上下文 -> HTTP 400。之前的三轮不能随异常一起丢掉
    settings = load_settings(env={}, dotenv=None, offline_faults=("long",))
    with open_endpoint(settings) as endpoint:
        record = run_once(IMPLEMENTATIONS[impl_name], "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？",
                          endpoint, RunOptions())
    assert record.status == Status.ERROR and "400" in record.error
    assert [r[0]["name"] for r in record.rounds] == ["get_current_time", "get_stock_price", "calculate"]
    assert all(call["result"] for round_ in record.rounds for call in round_)
