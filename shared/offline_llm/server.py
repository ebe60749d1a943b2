"""内置离线模型的 HTTP 外壳：一个 OpenAI 兼容的 Chat Completions 服务器（只用标准库）。

Every stage talks to a model over HTTP with ``ChatOpenAI(base_url=..., api_key=...)`` or
the ``openai`` SDK. With no ``LLM_BASE_URL`` configured, that model is this server,
started in-process on 127.0.0.1 with a free port: no stage has an offline code path, so
what runs offline is exactly what runs against DeepSeek, vLLM, Ollama or OpenAI.

Routes::

    POST /v1/chat/completions   plain JSON, or server-sent events with "stream": true
    GET  /v1/models             one model, "offline", described as a rule-based policy
    GET  /v1/models/offline

Errors are OpenAI-shaped JSON (``validation.py``), every one of them: 400 bad requests
(JSON nested more than ``MAX_NESTING`` levels included), 404 unknown paths, 405 wrong
methods, 413 bodies over :data:`MAX_BODY_BYTES`, 500 when the brain fails (the server
thread survives), 503 when :data:`MAX_CONNECTIONS` connections are already being served,
and the refusals http.server makes before any route is reached (a garbage request line,
414, 431, 501 for an unknown method...: :meth:`_Handler.send_error`).

The brain is a plain callable, request body -> completion object: by default the
rule-based :class:`~shared.offline_llm.policy.PolicyBrain`; a cassette replayer can be
plugged in instead. The server keeps a thread-safe log of the last :data:`REQUESTS_KEPT`
request bodies it served (:attr:`OfflineServer.requests`, for tests that look at what was
sent); a standalone server that runs for days keeps no more than that.

Concurrency: ``ThreadingHTTPServer``, one thread per connection, at most
:data:`MAX_CONNECTIONS` at once; the connection after that is answered 503 with
``Retry-After`` at once, from the accepting thread, rather than queued (a queue holds
memory just the same, and the SDKs retry on ``Retry-After``). Nothing holds a lock while a
request is handled, so the optional latency (``OFFLINE_LLM_LATENCY_MS``), a slow brain or
a long prompt never holds other requests back, like a real endpoint serving several
clients. Reading a request is linear in its length (see ``policy.py``), and a body is at
most :data:`MAX_BODY_BYTES`.

Request log: with ``log=`` a stream (``python -m shared.offline_llm --log``: stderr), one line
per request: method, path, status, and a short summary of the body and the answer. Only
bodies are summarised, never headers, so an ``Authorization`` key is never written.

Left out: authentication (any ``Authorization`` header is accepted: there is no key to
check), TLS, the legacy ``/v1/completions`` and the Responses API.
"""
from __future__ import annotations

import copy
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from shared.harness.text import shorten
from shared.offline_llm.policy import PolicyBrain
from shared.offline_llm.streaming import DONE_LINE, sse_event, stream_chunks
from shared.offline_llm.transport_faults import (
    BAD_BODY, MSG_429, MSG_500, RETRY_AFTER_SECONDS, TIMEOUT_HOLD_SECONDS, TRANSPORT_FAULT_MODES, TransportFaults,
    empty_completion,
)
from shared.offline_llm.validation import INVALID_REQUEST, MAX_NESTING, SERVER_ERROR, ApiError, json_nesting, \
    parse_chat_request

Brain = Callable[[dict], dict]

MODEL_ID = "offline"
MODEL_DESCRIPTION = ("a deterministic rule-based policy, not a language model "
                     "(确定性的规则策略，不是语言模型): time, weather, stock prices, arithmetic and orders (place_order) "
                     "over the repo's demo data; set LLM_BASE_URL / LLM_API_KEY / LLM_MODEL for a real model")
CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
# 请求体上限：规则表读一遍的时间和长度成正比，512 KiB 以内最坏也就一两秒；更长的请求体直接 413
MAX_BODY_BYTES = 512 * 1024
# 超限的请求体在这个长度以内时先读完再回 413：没读完就关连接，内核会发 RST，客户端看不到 413
MAX_DRAINED_BYTES = 16 * 1024 * 1024
# 同时服务的连接数；再来的连接立刻得到 503 + Retry-After（不排队：排队的连接同样占内存，
# 而 OpenAI SDK、LangChain 都会按 Retry-After 重试）
MAX_CONNECTIONS = 128
BUSY_RETRY_AFTER_SECONDS = "1"
BUSY_READ_SECONDS = 0.2           # 拒绝前最多等这么久把请求读掉（道理同上：不读就关会变成 RST）
# requests 只留最近这么多个请求体：独立运行的服务器一直开着，不能把每个请求体都留在内存里
REQUESTS_KEPT = 256
LOG_PREVIEW_CHARS = 40

ERR_NOT_FOUND = "Invalid URL ({method} {path}) (没有这个地址)."
ERR_METHOD = "Method {method} not allowed for {path}; use {allowed} (请求方法不对)."
ERR_NO_MODEL = "The model '{model}' does not exist; this server has only '{known}' (没有这个模型)."
ERR_TOO_LARGE = ("Request body too large: {length} bytes, the offline model reads at most {limit} "
                 "(请求体过大，上限 {limit} 字节；更长的对话请接真实模型：LLM_BASE_URL).")
ERR_BUSY = ("The offline model is serving {limit} connections already; retry in a moment "
            "(离线模型同时服务的连接已满 {limit} 个，请稍后重试).")
ERR_HTTP = "{reason} ({hint})"
# http.server 自己拒绝的请求（到不了路由）：状态码 -> 中文说明
HTTP_LIBRARY_HINTS = {
    400: "请求行或请求头不合 HTTP 格式",
    408: "请求没有及时发完",
    414: "URL 太长",
    431: "请求头太大或太多",
    501: "服务器不支持这个请求方法",
    505: "不支持这个 HTTP 版本",
}
ERR_LENGTH = "Content-Length required (需要 Content-Length)."
ERR_BRAIN = "The offline model failed on this request (离线模型内部出错): {error}"
ERR_NOT_STARTED = "OfflineServer is not started: call start() or use it as a context manager."
ERR_STARTED = "OfflineServer is already started."


class OfflineServer:
    """The embedded OpenAI-compatible server; ``with OfflineServer() as server: server.base_url``."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, faults: tuple[str, ...] = (),
                 seed: int | None = None, latency_ms: int = 0, brain: Brain | None = None,
                 fixed_ids: bool = False, log: TextIO | None = None, max_connections: int = MAX_CONNECTIONS,
                 requests_kept: int = REQUESTS_KEPT):
        # brain 为空时用规则策略；故障模式在这里就校验，名字写错启动即失败
        model_faults = tuple(f for f in faults if f not in TRANSPORT_FAULT_MODES)
        self.brain: Brain = brain if brain is not None else PolicyBrain(seed=seed, faults=model_faults,
                                                                        fixed_ids=fixed_ids)
        self.transport_faults = TransportFaults(tuple(faults), seed)
        self.host, self.port, self.latency_ms = host, port, latency_ms
        self.log = log                   # 每个请求一行（方法、路径、状态、摘要）；None = 安静
        self.max_connections = max_connections
        self._log: deque[dict] = deque(maxlen=requests_kept)
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> "OfflineServer":
        """Bind (port 0 = a free port) and serve in a daemon thread; returns ``self``."""
        if self._httpd is not None:
            raise RuntimeError(ERR_STARTED)
        self._httpd = _HTTPServer((self.host, self.port), self)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"offline-llm:{self._httpd.server_address[1]}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd, self._thread = None, None

    def __enter__(self) -> "OfflineServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what ``OpenAI(base_url=...)`` wants."""
        if self._httpd is None:
            raise RuntimeError(ERR_NOT_STARTED)
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[dict]:
        """A copy of the last ``requests_kept`` chat-completion request bodies served, in arrival order."""
        with self._lock:
            return copy.deepcopy(list(self._log))

    def _record(self, request: dict) -> None:
        with self._lock:
            self._log.append(copy.deepcopy(request))

    def _write_log(self, line: str) -> None:
        if self.log is not None:
            with self._lock:
                print(line, file=self.log, flush=True)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True            # 退出时不等仍在读 keep-alive 连接的线程

    def __init__(self, address: tuple[str, int], owner: OfflineServer):
        self.owner = owner
        self.slots = threading.BoundedSemaphore(owner.max_connections)
        super().__init__(address, _Handler)

    def process_request(self, request: socket.socket, client_address: object) -> None:
        """One thread per connection, at most ``max_connections`` at once; beyond that a quick 503."""
        if not self.slots.acquire(blocking=False):
            self._refuse_busy(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: socket.socket, client_address: object) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def _refuse_busy(self, request: socket.socket) -> None:
        # 在接受连接的线程里直接回答，不为它开线程：满载时不再多占一个线程
        error = ApiError(503, ERR_BUSY.format(limit=self.owner.max_connections), error_type=SERVER_ERROR,
                         code="server_busy")
        data = _encode(error.body())
        head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
                f"Content-Length: {len(data)}\r\nRetry-After: {BUSY_RETRY_AFTER_SECONDS}\r\n"
                f"Connection: close\r\n\r\n").encode("ascii")
        try:
            request.settimeout(BUSY_READ_SECONDS)
            try:
                request.recv(64 * 1024)
            except OSError:
                pass
            request.sendall(head + data)
        except OSError:
            pass                                     # 客户端已经走了
        finally:
            self.shutdown_request(request)
        self.owner._write_log(log_line("-", "-", 503, "busy: connection refused"))


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1：连接可复用（SDK 的连接池），JSON 响应都带 Content-Length
    protocol_version = "HTTP/1.1"
    server_version = "offline-llm/1"
    timeout = 60                     # 空闲连接 60 秒后关闭，线程随之结束
    # 响应头和响应体是两次小写入：不关 Nagle 算法，每个请求会白等 ~40ms 的延迟确认
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 — 基类的参数名
        """Silent: the default handler logs every request to stderr, over the agent's output."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The errors http.server sends itself (a garbage request line, 414, 431, 501...), as OpenAI-shaped JSON.

        The base class answers them with an HTML page; a client of this server expects
        ``{"error": {...}}`` for every failure.
        """
        try:
            reason = HTTPStatus(code).phrase
        except ValueError:
            reason = "Error"
        error = ApiError(code, ERR_HTTP.format(reason=shorten(message or reason, 200),
                                               hint=HTTP_LIBRARY_HINTS.get(code, reason)),
                         error_type=SERVER_ERROR if code >= 500 else INVALID_REQUEST)
        data = _encode(error.body())
        self.close_connection = True                 # 请求没读明白：这条连接上的后续字节也不可信
        if self.request_version == "HTTP/0.9":       # 请求行没读懂时基类当它是 HTTP/0.9：那样连状态行都不发
            self.request_version = self.protocol_version
        self._status = code
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (204, 205, 304):
            self.wfile.write(data)
        path = urlsplit(getattr(self, "path", "") or "").path
        self.server.owner._write_log(log_line(self.command or "-", path or "-", code, error.message))

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_OPTIONS(self) -> None:
        self._dispatch("OPTIONS")

    def _dispatch(self, method: str) -> None:
        self._status, self._summary = 0, ""
        path = urlsplit(self.path).path
        try:
            self._handle(method)
        finally:
            self.server.owner._write_log(log_line(method, path, self._status, self._summary))

    def _handle(self, method: str) -> None:
        try:
            body = self._read_body()    # 先把请求体读完，keep-alive 连接上的下一个请求才不会错位
            path = urlsplit(self.path).path.rstrip("/")
            if path == CHAT_PATH:
                self._allow(method, path, "POST")
                self._chat(body)
            elif path == MODELS_PATH or path.startswith(MODELS_PATH + "/"):
                self._allow(method, path, "GET")
                self._models(path[len(MODELS_PATH) + 1:])
            else:
                raise ApiError(404, ERR_NOT_FOUND.format(method=method, path=path or "/"))
        except ApiError as error:
            refused = f"{error.param or 'error'}: {shorten(error.message, LOG_PREVIEW_CHARS * 2)}"
            self._summary = " -> ".join(part for part in (self._summary, refused) if part)
            self._send_json(error.status, error.body(), headers=error.headers, head_only=method == "HEAD")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True            # 客户端先走了：没有人可以回答

    def _allow(self, method: str, path: str, allowed: str) -> None:
        if method != allowed:
            raise ApiError(405, ERR_METHOD.format(method=method, path=path, allowed=allowed),
                           headers={"Allow": allowed})

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self.close_connection = True
            raise ApiError(411, ERR_LENGTH)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise ApiError(400, ERR_LENGTH) from None
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            if length <= MAX_DRAINED_BYTES:
                self._discard(length)
            raise ApiError(413, ERR_TOO_LARGE.format(length=length, limit=MAX_BODY_BYTES),
                           code="request_too_large")
        return self.rfile.read(length) if length > 0 else b""

    def _discard(self, length: int) -> None:
        """Read and drop ``length`` bytes in small pieces (never the whole body in memory)."""
        while length > 0 and (piece := self.rfile.read(min(length, 64 * 1024))):
            length -= len(piece)

    def _chat(self, raw: bytes) -> None:
        self._summary = request_summary(raw)
        request = parse_chat_request(raw)
        owner = self.server.owner
        owner._record(request)
        if owner.latency_ms > 0:
            time.sleep(owner.latency_ms / 1000)   # 只睡本线程：别的请求照常被服务
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        fault = owner.transport_faults.fault_for(raw)
        if fault is not None:
            self._summary += f" -> fault {fault}"
            if self._transport_fault(fault):
                return
        try:
            completion = owner.brain(request)
            if fault == "empty":
                completion = empty_completion(completion)
            # 响应（流式的每个分片）在发响应头之前就编码好：大脑交回的东西有问题，还来得及回 500
            if request.get("stream"):
                events = [sse_event(c) for c in stream_chunks(completion, include_usage=include_usage)]
            else:
                data = _encode(completion)
        except ApiError:
            raise
        except Exception as error:  # noqa: BLE001 — 大脑出错只影响这一个请求，服务器线程不能死
            raise ApiError(500, ERR_BRAIN.format(error=f"{type(error).__name__}: {error}"),
                           error_type=SERVER_ERROR) from None
        self._summary += " -> " + completion_summary(completion)
        if request.get("stream"):
            self._send_stream(events)
        else:
            self._send_encoded_json(200, data)

    def _transport_fault(self, fault: str) -> bool:
        """Act out a transport fault; ``True`` when the request is thereby answered (or abandoned)."""
        if fault == "http_500":
            raise ApiError(500, MSG_500, error_type=SERVER_ERROR)
        if fault == "http_429":
            raise ApiError(429, MSG_429, error_type="requests", code="rate_limit_exceeded",
                           headers={"Retry-After": RETRY_AFTER_SECONDS})
        if fault == "timeout":
            time.sleep(TIMEOUT_HOLD_SECONDS)         # 客户端早该放弃了；然后挂断，不回答
            self.close_connection = True
            return True
        if fault == "truncated":
            data = _encode({"id": "chatcmpl-cut", "object": "chat.completion", "choices": []})
            self._status = 200
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])  # 只发一半就挂断
            self.close_connection = True
            return True
        if fault == "bad_body":
            self._status = 200
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(BAD_BODY)))
            self.end_headers()
            self.wfile.write(BAD_BODY)
            return True
        return False                                 # empty：照常让大脑回答，再把消息掏空

    def _models(self, model_id: str) -> None:
        model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "react-agent-from-scratch",
                 "description": MODEL_DESCRIPTION, "rule_based": True, "language_model": False}
        if not model_id:
            self._send_json(200, {"object": "list", "data": [model]})
        elif model_id == MODEL_ID:
            self._send_json(200, model)
        else:
            raise ApiError(404, ERR_NO_MODEL.format(model=model_id, known=MODEL_ID), param="model",
                           code="model_not_found")

    def _send_json(self, status: int, body: dict, *, headers: dict[str, str] | None = None,
                   head_only: bool = False) -> None:
        self._send_encoded_json(status, _encode(body), headers=headers, head_only=head_only)

    def _send_encoded_json(self, status: int, data: bytes, *, headers: dict[str, str] | None = None,
                    head_only: bool = False) -> None:
        self._status = status
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head_only:
            self.wfile.write(data)

    def _send_stream(self, events: list[bytes]) -> None:
        # SSE 一条条事件陆续写出，不声明总长度、也不用 chunked 编码：发完即关连接（SSE 的常见做法）
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for event in events:
            self.wfile.write(event)
            self.wfile.flush()
        self.wfile.write(DONE_LINE)
        self.wfile.flush()


def log_line(method: str, path: str, status: int, summary: str) -> str:
    """One ``--log`` line: ``POST /v1/chat/completions 200 <summary>`` (bodies only: never a header, never a key)."""
    return f"{method} {path} {status or '-'} {summary}".rstrip()


def request_summary(raw: bytes) -> str:
    """``stream n=4 tools=4 «腾讯股票多少钱？»``: the shape of a request and its last user message."""
    if json_nesting(raw) > MAX_NESTING:
        return f"{len(raw)} bytes, nested too deeply"
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return f"{len(raw)} bytes, not JSON"
    if not isinstance(body, dict):
        return "not a JSON object"
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    last_user = next((m.get("content") for m in reversed(messages)
                      if isinstance(m, dict) and m.get("role") == "user"), None)
    parts = ["stream" if body.get("stream") is True else "", f"messages={len(messages)}",
             f"tools={len(body['tools'])}" if isinstance(body.get("tools"), list) else "",
             f"«{shorten(last_user, LOG_PREVIEW_CHARS)}»" if isinstance(last_user, str) else ""]
    return " ".join(p for p in parts if p)


def completion_summary(completion: dict) -> str:
    """``get_weather({"city": "北京"})`` or ``answer «北京：晴天…»`` (first choice), and its finish_reason."""
    choice = (completion.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    calls = ", ".join(f"{c['function']['name']}({shorten(c['function']['arguments'], LOG_PREVIEW_CHARS)})"
                      for c in message.get("tool_calls") or [])
    said = calls or f"answer «{shorten(message.get('content') or '', LOG_PREVIEW_CHARS)}»"
    return f"{said} [{choice.get('finish_reason')}]"


def _encode(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8")
