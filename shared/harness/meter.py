"""Every request a run sent to the model and every response it got, seen at the HTTP layer.

Counting at the transport, not in the agent code, is what keeps the tiers comparable:
LangGraph's prebuilt agent, a hand-built graph, a plain loop and the raw ``openai`` SDK all
end in the same ``POST /chat/completions``. One :class:`ExchangeLog` per run gives

- ``llm_calls`` and token ``usage`` as the server reported them;
- ``exchanges``: the request and response bodies, for compare's wire-level diff and for
  recording cassettes.

The endpoint keeps one HTTP client for the whole process (a new ``httpx.Client`` per run
used to cost ~11 ms of TLS set-up even for ``http://127.0.0.1``); its response hook
records into the log of the run that is current in this context (:meth:`ExchangeLog.recording`,
a ``ContextVar``, so concurrent runs in compare's worker threads never mix their logs).

Only bodies are kept, never headers: the API key travels in a header. And because a
server may still echo the key inside a body (an "Incorrect API key: sk-..." error), every
body is scrubbed of it here, the one place every log, report and cassette comes from.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpx

REDACTED = "***"


class ExchangeLog:
    """The request/response bodies of one run's chat-completion calls, in order."""

    def __init__(self, *, secret: str | None = None) -> None:
        self._secret = secret
        self._lock = threading.Lock()
        self._exchanges: list[dict] = []

    @property
    def exchanges(self) -> list[dict]:
        with self._lock:
            return list(self._exchanges)

    @property
    def llm_calls(self) -> int:
        """Model calls the agent made: an attempt refused as transient (429, 5xx), which the client
        retries, is not another model call; any other answer, a 400 included, is one."""
        return sum(1 for exchange in self.exchanges if exchange["status"] != 429 and exchange["status"] < 500)

    @property
    def usage(self) -> dict[str, int]:
        total = {"prompt_tokens": 0, "completion_tokens": 0}
        for exchange in self.exchanges:
            response = exchange.get("response")
            reported = response.get("usage") if isinstance(response, dict) else None
            for key in total:
                value = reported.get(key) if isinstance(reported, dict) else None
                total[key] += value if isinstance(value, int) and not isinstance(value, bool) else 0
        return total

    @contextmanager
    def recording(self) -> Iterator["ExchangeLog"]:
        """Within the block, chat completions sent by this context are recorded here."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def _record(self, response: httpx.Response) -> None:
        exchange = {"request": self._parse(response.request.content),
                    "response": self._parse(response.content),
                    "status": response.status_code}
        with self._lock:
            self._exchanges.append(exchange)


    def _parse(self, body: bytes) -> dict | str:
        text = body.decode("utf-8", errors="replace")
        if self._secret:
            text = text.replace(self._secret, REDACTED)
        try:
            return json.loads(text)
        except ValueError:
            return text


_CURRENT: ContextVar[ExchangeLog | None] = ContextVar("exchange_log", default=None)


def record_response(response: httpx.Response) -> None:
    """The shared client's response hook: the chat completion goes to the current run's log."""
    log = _CURRENT.get()
    if log is None or not response.request.url.path.endswith("/chat/completions"):
        return
    response.read()   # event hook 里必须先 read，才能拿到 body（之后 SDK 读的是缓存）
    log._record(response)
