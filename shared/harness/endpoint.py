"""Where the model lives: a real OpenAI-compatible endpoint, or the embedded offline one.

With ``LLM_BASE_URL`` unset, :func:`open_endpoint` starts the embedded server on
127.0.0.1 for the duration of a ``with`` block (and :func:`default_endpoint`, for a Python
shell, for the life of the process). Either way, every implementation talks to
it through the same ``ChatOpenAI(base_url=..., api_key=...)`` (or the raw ``openai``
client): no stage has an offline code path, so what runs offline is what runs on
DeepSeek, vLLM, Ollama or OpenAI.
"""
from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from shared.harness.config import Settings, load_settings
from shared.harness.meter import record_response
from shared.harness.responses import DeadlineTransport, check_response
from shared.offline_llm import OfflineServer
from shared.orders import CURRENT_BOOK, OrderBook, database_path
from shared.tool_functions import FIXED_NOW

# 内置服务器不校验 key，但 OpenAI 客户端要求非空，随便给一个
OFFLINE_API_KEY = "offline-no-key"
# SDK 默认的重试次数，写出来是为了让读者知道：一次 invoke 可能不止一个 HTTP 请求
MAX_RETRIES = 2


class SharedHttp:
    """The endpoint's HTTP clients, built once on first use (thread-safe) and shared by every run.

    A plain ``http://`` endpoint (the embedded server, a local vLLM or Ollama) gets no TLS
    set-up at all: ``verify=False`` keeps httpx from loading the CA bundle into an SSL
    context, which there is nothing to verify with. ``https://`` keeps full verification.
    """

    def __init__(self, transport: httpx.BaseTransport | None = None) -> None:
        self._lock = threading.Lock()
        self._transport = transport       # None: real sockets; a benchmark may answer in-process
        self._sync: httpx.Client | None = None
        self._async: httpx.AsyncClient | None = None

    def sync(self, base_url: str, timeout: float) -> httpx.Client:
        with self._lock:
            if self._sync is None:
                transport = self._transport or DeadlineTransport(deadline=timeout, verify=_verify(base_url))
                self._sync = httpx.Client(timeout=timeout, transport=transport,
                                          event_hooks={"response": [record_response, check_response]})
            return self._sync

    def asynchronous(self, base_url: str, timeout: float) -> httpx.AsyncClient:
        # LangChain builds an async client even for sync use; give it this one instead of
        # letting each ChatOpenAI build its own (and its own SSL context) under an unlocked cache
        with self._lock:
            if self._async is None:
                self._async = httpx.AsyncClient(timeout=timeout, verify=_verify(base_url))
            return self._async


    def close(self) -> None:
        with self._lock:
            if self._sync is not None:
                self._sync.close()
            self._sync = None      # 异步客户端从未发过请求（各阶段都同步调用），不需要 await 关闭


def _verify(base_url: str) -> bool:
    return urlsplit(base_url).scheme == "https"


class Reuse:
    """What a run builds that does not change between runs (a chat model, a compiled graph), built once per key.

    The key must hold everything the built thing depends on (temperature, seed, serial,
    max_steps...): a run then gets exactly what it would have built itself, without paying
    for the build again. Thread-safe; one per endpoint, so nothing outlives the endpoint.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: dict[Hashable, object] = {}

    def get(self, key: Hashable, build: Callable[[], object]):
        with self._lock:           # 建一次就够：并发的第一批运行不各建一份
            if key not in self._built:
                self._built[key] = build()
            return self._built[key]


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    timeout: float
    offline: bool
    server: OfflineServer | None = None
    api_key: str = field(default=OFFLINE_API_KEY, repr=False)
    temperature: float = 0.0          # the configured temperature (LLM_TEMPERATURE), for default models
    _http: SharedHttp = field(default_factory=lambda: SharedHttp(), repr=False, compare=False)
    reuse: Reuse = field(default_factory=Reuse, repr=False, compare=False)

    def http_client(self) -> httpx.Client:
        """The one HTTP client of this endpoint; every run shares it (see :mod:`shared.harness.meter`)."""
        return self._http.sync(self.base_url, self.timeout)

    def chat_model(self, *, temperature: float, serial: bool = False, seed: int | None = None):
        """The ``ChatOpenAI`` every LangChain tier uses (tools are bound by the tier itself)."""
        from langchain_openai import ChatOpenAI   # 延迟导入：json_loop 不该被迫加载 LangChain

        # --serial：每轮最多一个工具调用。放进 model_kwargs，所有请求都带上，
        # 不管哪一层去 bind_tools（prebuilt 会自己 bind，我们碰不到那一行）
        extra = {"parallel_tool_calls": False} if serial else {}
        return ChatOpenAI(
            model=self.model, base_url=self.base_url, api_key=self.api_key,
            temperature=temperature, seed=seed, timeout=self.timeout, max_retries=MAX_RETRIES,
            http_client=self.http_client(), http_async_client=self._http.asynchronous(self.base_url, self.timeout),
            model_kwargs=extra,
        )

    def openai_client(self):
        """The raw ``openai`` SDK client, for the zero-framework loops."""
        from openai import OpenAI

        return OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout,
                      max_retries=MAX_RETRIES,
                      http_client=self.http_client())


def endpoint_at(base_url: str, settings: Settings, *, transport: httpx.BaseTransport | None = None,
                offline: bool = True) -> Endpoint:
    """An endpoint for a server that is already running (the offline model in its own process),
    or, with ``transport``, one whose requests never leave the process (a benchmark's floor)."""
    return Endpoint(base_url=base_url, model=settings.model, timeout=settings.timeout, offline=offline,
                    api_key=OFFLINE_API_KEY if offline else settings.api_key or "", temperature=settings.temperature,
                    _http=SharedHttp(transport))


@contextmanager
def open_endpoint(settings: Settings, *, brain: Callable[[dict], dict] | None = None
                  ) -> Iterator[Endpoint]:
    """The configured endpoint; the embedded server when no URL is set or a brain is given."""
    if settings.base_url and brain is None:
        endpoint = Endpoint(base_url=settings.base_url, model=settings.model, timeout=settings.timeout,
                            offline=False, api_key=settings.api_key or "", temperature=settings.temperature)
        try:
            yield endpoint
        finally:
            endpoint._http.close()
        return
    server = OfflineServer(faults=settings.offline_faults, seed=settings.offline_seed,
                           latency_ms=settings.offline_latency_ms, brain=brain)
    with server:
        endpoint = Endpoint(base_url=server.base_url, model=settings.model, timeout=settings.timeout,
                            offline=True, server=server, temperature=settings.temperature)
        try:
            yield endpoint
        finally:
            endpoint._http.close()


_default: Endpoint | None = None
_default_run_settings: tuple[str | None, OrderBook] | None = None     # AGENT_CLOCK、订单簿
_default_lock = threading.Lock()


def default_endpoint() -> Endpoint:
    """The configured endpoint for the whole process, opened on first use.

    What a lesson's ``run_agent`` uses when it is called without a model, as in a Python
    shell or a notebook: the same settings as the command line (environment and ``.env``),
    and so the embedded offline model when ``LLM_BASE_URL`` is unset. The embedded server
    runs on a daemon thread and stops when the process exits.
    """
    global _default, _default_run_settings
    with _default_lock:
        if _default is None:
            settings = load_settings()
            _default_run_settings = settings.clock, OrderBook(database_path(settings.data_dir))
            if settings.base_url:
                _default = Endpoint(base_url=settings.base_url, model=settings.model,
                                    timeout=settings.timeout, offline=False, api_key=settings.api_key or "",
                                    temperature=settings.temperature)
            else:
                server = OfflineServer(faults=settings.offline_faults, seed=settings.offline_seed,
                                       latency_ms=settings.offline_latency_ms)
                server.start()
                atexit.register(server.stop)
                _default = Endpoint(base_url=server.base_url, model=settings.model, timeout=settings.timeout,
                                    offline=True, server=server, temperature=settings.temperature)
        # 每次都设：ContextVar 只管调用者自己的上下文，另一个线程里第一次用到时也得拿到同样的设置
        clock, book = _default_run_settings
        if clock:                       # AGENT_CLOCK：get_current_time 回答固定的"现在"
            FIXED_NOW.set(clock)
        CURRENT_BOOK.set(book)          # AGENT_DATA_DIR：订单写到哪里
        return _default


def _forget_the_default_endpoint() -> None:
    """In a forked child: the embedded server's thread and the HTTP connections stayed with the
    parent, so the child opens its own default endpoint on first use (and a fresh lock: another
    thread may have held the parent's when it forked)."""
    global _default, _default_run_settings, _default_lock
    _default, _default_run_settings, _default_lock = None, None, threading.Lock()


if hasattr(os, "register_at_fork"):        # 没有 fork 的平台（Windows）也就没有这回事
    os.register_at_fork(after_in_child=_forget_the_default_endpoint)
