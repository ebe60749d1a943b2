"""A misbehaving OpenAI-compatible endpoint on loopback: every response is exactly the bytes a test asks for.

The embedded offline model always speaks correct JSON; real endpoints and proxies do not.
This server answers every POST with one :class:`Raw` response (status, content type,
body, optional delay between body bytes), so tests can send a 502 HTML page, truncated JSON,
an SSE body to a non-streaming request, or a body that drips one byte at a time.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Raw:
    status: int = 200
    content_type: str = "application/json"
    body: bytes = b""
    seconds_per_byte: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


def completion(message: dict, **extra) -> bytes:
    """A well-formed chat completion around ``message`` (``extra`` replaces top-level fields)."""
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "refusal": None,
                                                                           **message}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    return json.dumps({**body, **extra}, ensure_ascii=False).encode()


class BadEndpoint:
    """``with BadEndpoint(Raw(...)) as url:``: an endpoint that gives that response to every request."""

    def __init__(self, raw: Raw):
        self.raw = raw
        self.requests = 0
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen()
        self._stop = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def __enter__(self) -> str:
        threading.Thread(target=self._serve, daemon=True).start()
        return self.base_url

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._socket.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                request += chunk
            head, _, rest = request.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(rest) < length:
                rest += connection.recv(65536)
            self.requests += 1
            raw = self.raw
            extra = "".join(f"{k}: {v}\r\n" for k, v in raw.headers)
            connection.sendall((f"HTTP/1.1 {raw.status} X\r\nContent-Type: {raw.content_type}\r\n"
                                f"Content-Length: {len(raw.body)}\r\n{extra}Connection: close\r\n\r\n").encode())
            try:
                if not raw.seconds_per_byte:
                    connection.sendall(raw.body)
                    return
                for byte in raw.body:
                    if self._stop.is_set():
                        return
                    connection.sendall(bytes([byte]))
                    time.sleep(raw.seconds_per_byte)
            except OSError:
                return
