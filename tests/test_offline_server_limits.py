"""The offline server under abuse: huge and malformed requests get a JSON answer, other clients
are still served, and what the server holds on to is bounded. A real OfflineServer on 127.0.0.1,
raw sockets where the request must be malformed, httpx elsewhere."""
from __future__ import annotations

import json
import socket
import threading

import httpx
import pytest

from shared.offline_llm import OfflineServer
from shared.offline_llm.server import MAX_BODY_BYTES
from shared.offline_llm.validation import MAX_NESTING
from stage3_pure_loop.json_loop import SYSTEM_PROMPT as JSON_SYSTEM_PROMPT

HANG_TIMEOUT = 30          # 挂住的判据，不是计时：正常情况下每个回答都远远快于它


def ask(content: str, **extra) -> dict:
    return {"model": "offline", "messages": [{"role": "user", "content": content}], **extra}


def post(server: OfflineServer, body: dict | bytes) -> httpx.Response:
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    return httpx.post(f"{server.base_url}/chat/completions", content=data, timeout=HANG_TIMEOUT,
                      headers={"Content-Type": "application/json"})


def raw_exchange(server: OfflineServer, data: bytes) -> tuple[int, dict[str, str], dict]:
    """Send raw bytes, read one HTTP response: (status, headers, JSON body)."""
    host, port = server.base_url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=HANG_TIMEOUT) as sock:
        sock.sendall(data)
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(65536)
            assert chunk, f"connection closed without an answer: {reply!r}"
            reply += chunk
        head, body = reply.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:])
        while len(body) < int(headers["Content-Length"]):
            chunk = sock.recv(65536)
            assert chunk, "body cut short"
            body += chunk
    return int(lines[0].split()[1]), headers, json.loads(body)


@pytest.fixture
def server():
    with OfflineServer() as running:
        yield running


# ---- http.server 自己发出的错误也是 JSON ----

@pytest.mark.parametrize("request_bytes, status", [
    (b"garbage\r\n\r\n", 400),
    (b"GET /v1/models HTTP/9.9\r\n\r\n", 505),
    (b"BREW /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 501),
    (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414),
    (b"GET /v1/models HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    (b"GET /v1/models HTTP/1.1\r\n" + b"X-Many: a\r\n" * 150 + b"\r\n", 431),
])
def test_what_http_server_refuses_by_itself_is_answered_as_openai_json(server, request_bytes, status):
    answered, headers, body = raw_exchange(server, request_bytes)
    assert answered == status
    assert headers["Content-Type"].startswith("application/json")
    assert set(body["error"]) == {"message", "type", "param", "code"} and body["error"]["message"]


def test_json_nested_too_deeply_is_a_400_not_a_dropped_connection(server):
    for nested in (b"[" * 100_000, b'{"model": "offline", "messages": ' + b"[" * (MAX_NESTING + 1)
                   + b"]" * (MAX_NESTING + 1) + b"}"):
        response = post(server, nested)
        assert response.status_code == 400
        assert "nested" in response.json()["error"]["message"]
    assert post(server, ask("北京天气怎么样？")).status_code == 200      # 服务器照常工作


def test_a_reply_holding_deeply_nested_braces_is_just_text(server):
    body = {"model": "offline", "messages": [
        {"role": "system", "content": JSON_SYSTEM_PROMPT}, {"role": "user", "content": "北京天气怎么样？"},
        {"role": "assistant", "content": '{"a": ' * 10_000}, {"role": "user", "content": "北京天气怎么样？"}]}
    assert post(server, body).status_code == 200


# ---- 大请求：回答或拒绝，不挂住，也不挡住别人 ----

def test_a_body_over_the_limit_is_refused_with_413_and_the_connection_is_not_reset(server):
    response = post(server, ask("腾讯股票多少钱？" * (MAX_BODY_BYTES // 8)))      # 约 1.5 MB
    assert response.status_code == 413
    assert str(MAX_BODY_BYTES) in response.json()["error"]["message"]


def test_a_prompt_over_the_context_window_is_a_400_context_length_exceeded(server):
    response = post(server, ask("腾讯" * (MAX_BODY_BYTES // 8)))                  # 约 13 万个 token
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "context_length_exceeded"


@pytest.mark.parametrize("unit", ["1", "( ", "股价", "订机票", "Hello World ", "100股腾讯", "1,", "纽约和东京的天气",
                                  "sqrt(", "请", "A-"])
def test_a_long_prompt_of_any_shape_gets_an_answer(server, unit):
    # 这些形状曾经让读问题的代价随长度平方（或更快）增长：20 KB 就要几十秒，200 KB 永远等不到
    content = unit * (200_000 // len(unit.encode()))
    response = post(server, ask(content, tools=[{"type": "function", "function": {"name": "get_weather"}}]))
    assert response.status_code in (200, 400), response.text
    assert "choices" in response.json() or response.json()["error"]["code"] == "context_length_exceeded"


def test_other_clients_are_served_while_a_request_is_being_worked_on():
    working, release = threading.Event(), threading.Event()

    def brain(request: dict) -> dict:
        if request["messages"][0]["content"] == "slow":
            working.set()
            release.wait(HANG_TIMEOUT)
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "offline",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}

    with OfflineServer(brain=brain) as server:
        slow = threading.Thread(target=post, args=(server, ask("slow")))
        slow.start()
        assert working.wait(HANG_TIMEOUT)
        try:
            assert post(server, ask("quick")).status_code == 200      # 那个请求还压在大脑里
        finally:
            release.set()
            slow.join()


def test_connections_beyond_the_limit_get_a_quick_503_with_retry_after():
    working, release = threading.Semaphore(0), threading.Event()

    def brain(request: dict) -> dict:
        working.release()
        release.wait(HANG_TIMEOUT)
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "offline",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}

    with OfflineServer(brain=brain, max_connections=2) as server:
        busy = [threading.Thread(target=post, args=(server, ask(f"q{i}"))) for i in range(2)]
        for thread in busy:
            thread.start()
        for _ in busy:
            assert working.acquire(timeout=HANG_TIMEOUT)
        try:
            status, headers, body = raw_exchange(server, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
            assert status == 503 and headers["Retry-After"] and body["error"]["code"] == "server_busy"
        finally:
            release.set()
            for thread in busy:
                thread.join()
        assert httpx.get(f"{server.base_url}/models", timeout=HANG_TIMEOUT).status_code == 200   # 名额还回来了


def test_the_request_log_keeps_only_the_last_bodies():
    with OfflineServer(requests_kept=3) as server:
        for i in range(5):
            assert post(server, ask(f"{i} + 1 等于几？")).status_code == 200
        assert [r["messages"][0]["content"] for r in server.requests] == [f"{i} + 1 等于几？" for i in (2, 3, 4)]
