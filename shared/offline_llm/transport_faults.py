"""Transport faults: what real endpoints and the proxies in front of them do on a bad day.

The model-behaviour faults (``faults.py``) change *what the model says*; these change *how
the answer arrives*, at the HTTP layer, so that every implementation's error handling can
be tested offline (``OFFLINE_LLM_FAULTS=http_500,timeout`` or ``--faults ...``):

============  ==========================================================  ==============================
mode          what the server does                                          what the client should do
============  ==========================================================  ==============================
``http_500``  answers ``500 server_error``                                  retry (the SDK does), then go on
``http_429``  answers ``429 rate_limit_exceeded`` with ``Retry-After: 1``   wait as told, retry
``timeout``   says nothing for :data:`TIMEOUT_HOLD_SECONDS`, then hangs up  give up after LLM_TIMEOUT, retry
``truncated`` sends the headers and half the body, then hangs up            a connection error, retry
``bad_body``  answers 200 with an HTML page instead of JSON                 stop: status error, cause named
``empty``     answers 200 with an empty assistant message                   stop: not an answer, cause named
============  ==========================================================  ==============================

Each fault hits the *first attempt* of a request only (a retry sends the same body and goes
through), so a client that retries recovers from the first four and a client that does not
is caught; the last two are not transient, and a retry would not help. When several modes
are on, the one a request gets is drawn from the request body and ``OFFLINE_LLM_SEED``:
reproducible, and different turns may get different faults.

Left out: slow-drip bodies (tests use ``tests/support/bad_endpoint.py``), TLS failures.
"""
from __future__ import annotations

import hashlib
import threading
from collections import Counter

TRANSPORT_FAULT_MODES: tuple[str, ...] = ("http_500", "http_429", "timeout", "truncated", "bad_body", "empty")
TIMEOUT_HOLD_SECONDS = 120.0      # timeout：这么久不说话再挂断（客户端的 LLM_TIMEOUT 应该更短）
RETRY_AFTER_SECONDS = "1"

MSG_500 = "The server had an error while processing your request. (离线模型注入的故障 http_500)"
MSG_429 = "Rate limit reached for requests. Please try again in 1s. (离线模型注入的故障 http_429)"
BAD_BODY = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


class TransportFaults:
    """Which transport fault (if any) one request gets; thread-safe, one per server."""

    def __init__(self, faults: tuple[str, ...], seed: int | None = None):
        self.modes = tuple(f for f in faults if f in TRANSPORT_FAULT_MODES)
        self._seed = seed
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fault_for(self, raw: bytes) -> str | None:
        """The fault for this request body: on its first attempt only."""
        if not self.modes:
            return None
        digest = hashlib.sha256(f"{self._seed}|".encode() + raw).hexdigest()
        with self._lock:
            self._seen[digest] += 1
            first = self._seen[digest] == 1
        return self.modes[int(digest[:8], 16) % len(self.modes)] if first else None


def empty_completion(completion: dict) -> dict:
    """``completion`` with its message emptied: no text, no tool calls (``finish_reason: stop``)."""
    choices = [{**choice, "finish_reason": "stop",
                "message": {"role": "assistant", "content": None, "refusal": None}}
               for choice in completion.get("choices", [])]
    return {**completion, "choices": choices}
