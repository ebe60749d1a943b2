"""What comes back from the model endpoint is checked before any tier uses it.

Real endpoints and the proxies in front of them misbehave: a 502 HTML page, truncated JSON,
an SSE body to a non-streaming request, a JSON array, ``usage.prompt_tokens: "n/a"``, no
``choices``. Left alone, each of these crashes somewhere deep in LangChain or the SDK with a
traceback that names neither the endpoint nor the cause. Here, at the transport (the one
HTTP client every tier shares), a response that is not a usable chat completion becomes
:class:`UnusableResponse`, an ``openai.APIError``: the SDK passes it through unchanged (no
retry: asking again rarely mends a broken proxy) and the runner records status ``error``
with the one-line cause, in every implementation alike.

Also here: :class:`DeadlineTransport`, which makes ``LLM_TIMEOUT`` bound one HTTP attempt
end to end. httpx's timeout is per read, so an endpoint sending one byte a second would
never time out; the deadline stops it, as an ``httpx.ReadTimeout`` the SDK retries like
any timeout.

Left out: validating streamed (SSE) responses chunk by chunk (no tier streams).
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import openai

ERR_NOT_JSON = "端点返回的不是 JSON（HTTP {status}, {content_type}）：{preview}"
ERR_NOT_OBJECT = "端点返回的 JSON 不是一个对象（HTTP {status}）：{preview}"
ERR_NO_CHOICES = "端点返回的回复里没有 choices（HTTP {status}）"
ERR_NO_MESSAGE = "端点返回的 choices[0] 里没有 message 对象（HTTP {status}）"
ERR_CONTENT = "端点返回的 message.content 既不是文字也不是 null：{preview}"
ERR_TOOL_CALLS = "端点返回的 tool_calls 不合法：{detail}"
ERR_USAGE = "端点返回的 usage 不合法：{detail}"
PREVIEW_CHARS = 60


class UnusableResponse(openai.APIError):
    """The endpoint answered, but not with a usable chat completion; ``str()`` says why, in one line."""

    def __init__(self, message: str, request: httpx.Request, body: object | None = None) -> None:
        super().__init__(message, request, body=body)   # type: ignore[arg-type]


def check_response(response: httpx.Response) -> None:
    """The shared client's response hook: chat completions are checked, other paths pass."""
    if response.request.url.path.endswith("/chat/completions"):
        response.read()
        check_chat_completion(response)


def check_chat_completion(response: httpx.Response) -> None:
    """Raise :class:`UnusableResponse` unless ``response`` is an error the SDK reports, or a usable completion.

    Error statuses with a JSON body are left to the SDK (it retries 429 and 5xx and keeps
    the server's message); an error status whose body is not JSON (a proxy's HTML page)
    is reported here, with its status and content type.
    """
    status, content_type = response.status_code, response.headers.get("content-type", "?").split(";")[0]
    text = response.content.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
    except ValueError:
        raise UnusableResponse(ERR_NOT_JSON.format(status=status, content_type=content_type,
                                                   preview=_preview(text)), response.request) from None
    if status >= 400:
        return
    problem = completion_problem(body, status)
    if problem:
        raise UnusableResponse(problem, response.request, body)


def completion_problem(body: object, status: int = 200) -> str | None:
    """Why ``body`` is not a usable chat completion, or ``None`` when it is."""
    if not isinstance(body, dict):
        return ERR_NOT_OBJECT.format(status=status, preview=_preview(json.dumps(body, ensure_ascii=False)))
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ERR_NO_CHOICES.format(status=status)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return ERR_NO_MESSAGE.format(status=status)
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        return ERR_CONTENT.format(preview=_preview(repr(content)))
    calls = message.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(_is_call(c) for c in calls)):
        return ERR_TOOL_CALLS.format(detail=_preview(json.dumps(calls, ensure_ascii=False)))
    usage = body.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            return ERR_USAGE.format(detail=_preview(repr(usage)))
        for key in ("prompt_tokens", "completion_tokens"):
            value = usage.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                return ERR_USAGE.format(detail=f"{key}={value!r}")
    return None


def _is_call(call: object) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    return (isinstance(function, dict) and isinstance(function.get("name"), str)
            and isinstance(function.get("arguments"), str))


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS - 1] + "…"


ERR_TIMEOUT = "模型在 LLM_TIMEOUT={timeout:g} 秒内没有答完（共试了 {attempts} 次）"
ERR_CONNECTION = "连不上模型端点（共试了 {attempts} 次）：{cause}"


def failure_line(error: BaseException, *, timeout: float, retries: int) -> str | BaseException:
    """The cause of an expected failure, named: a timeout names LLM_TIMEOUT, a connection error its cause."""
    attempts = retries + 1
    if isinstance(error, UnusableResponse):
        return str(error)
    if isinstance(error, openai.APITimeoutError):
        return ERR_TIMEOUT.format(timeout=timeout, attempts=attempts)
    if isinstance(error, openai.APIConnectionError):
        cause = error
        while cause.__cause__ is not None:
            cause = cause.__cause__
        reason = f"{type(cause).__name__}: {cause}" if cause is not error else str(error)
        return ERR_CONNECTION.format(attempts=attempts, cause=reason)
    return error


RETRY_AFTER_CAP = 10.0     # 秒：服务器要求的等待（Retry-After）最多听从这么久


class DeadlineTransport(httpx.HTTPTransport):
    """An HTTP transport where one request's body must finish within ``deadline`` seconds.

    It also caps a server's ``Retry-After`` at :data:`RETRY_AFTER_CAP` (the SDK would wait
    up to two minutes), so the worst case of one model call is known in advance:
    ``(1 + retries) × LLM_TIMEOUT + retries × RETRY_AFTER_CAP`` seconds.
    """

    def __init__(self, *, deadline: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self._deadline = deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        ends = time.monotonic() + self._deadline
        response = super().handle_request(request)
        response.stream = _DeadlineStream(response.stream, ends, request)   # type: ignore[assignment]
        for header in ("retry-after", "retry-after-ms"):
            if header in response.headers:
                response.headers[header] = _capped(response.headers[header], header)
        return response


def _capped(value: str, header: str) -> str:
    cap = RETRY_AFTER_CAP * (1000 if header.endswith("-ms") else 1)
    try:
        return value if float(value) <= cap else f"{cap:g}"
    except ValueError:
        return value         # an HTTP date: the SDK reads it; leave it alone


class _DeadlineStream(httpx.SyncByteStream):
    def __init__(self, stream: httpx.SyncByteStream, ends: float, request: httpx.Request) -> None:
        self._stream, self._ends, self._request = stream, ends, request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            if time.monotonic() > self._ends:
                raise httpx.ReadTimeout("the response did not finish within LLM_TIMEOUT", request=self._request)
            yield chunk

    def close(self) -> None:
        self._stream.close()
