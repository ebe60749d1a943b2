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
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from shared.harness.config import Settings, load_settings
from shared.harness.meter import ExchangeLog
from shared.offline_llm import OfflineServer
from shared.orders import CURRENT_BOOK, OrderBook, database_path
from shared.tool_functions import FIXED_NOW

# 内置服务器不校验 key，但 OpenAI 客户端要求非空，随便给一个
OFFLINE_API_KEY = "offline-no-key"
# SDK 默认的重试次数，写出来是为了让读者知道：一次 invoke 可能不止一个 HTTP 请求
MAX_RETRIES = 2


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    timeout: float
    offline: bool
    server: OfflineServer | None = None
    api_key: str = field(default=OFFLINE_API_KEY, repr=False)
    temperature: float = 0.0          # the configured temperature (LLM_TEMPERATURE), for default models

    def chat_model(self, *, temperature: float, serial: bool = False, seed: int | None = None,
                   log: ExchangeLog | None = None):
        """The ``ChatOpenAI`` every LangChain tier uses (tools are bound by the tier itself)."""
        from langchain_openai import ChatOpenAI   # 延迟导入：json_loop 不该被迫加载 LangChain

        # --serial：每轮最多一个工具调用。放进 model_kwargs，所有请求都带上，
        # 不管哪一层去 bind_tools（prebuilt 会自己 bind，我们碰不到那一行）
        extra = {"parallel_tool_calls": False} if serial else {}
        return ChatOpenAI(
            model=self.model, base_url=self.base_url, api_key=self.api_key,
            temperature=temperature, seed=seed, timeout=self.timeout, max_retries=MAX_RETRIES,
            http_client=(log or ExchangeLog()).http_client(timeout=self.timeout),
            model_kwargs=extra,
        )

    def openai_client(self, *, log: ExchangeLog | None = None):
        """The raw ``openai`` SDK client, for the zero-framework loops."""
        from openai import OpenAI

        return OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout,
                      max_retries=MAX_RETRIES,
                      http_client=(log or ExchangeLog()).http_client(timeout=self.timeout))


@contextmanager
def open_endpoint(settings: Settings, *, brain: Callable[[dict], dict] | None = None
                  ) -> Iterator[Endpoint]:
    """The configured endpoint; the embedded server when no URL is set or a brain is given."""
    if settings.base_url and brain is None:
        yield Endpoint(base_url=settings.base_url, model=settings.model, timeout=settings.timeout,
                       offline=False, api_key=settings.api_key or "")
        return
    server = OfflineServer(faults=settings.offline_faults, seed=settings.offline_seed,
                           latency_ms=settings.offline_latency_ms, brain=brain)
    with server:
        yield Endpoint(base_url=server.base_url, model=settings.model, timeout=settings.timeout,
                       offline=True, server=server)


_default: Endpoint | None = None
_default_lock = threading.Lock()


def default_endpoint() -> Endpoint:
    """The configured endpoint for the whole process, opened on first use.

    What a lesson's ``run_agent`` uses when it is called without a model, as in a Python
    shell or a notebook: the same settings as the command line (environment and ``.env``),
    and so the embedded offline model when ``LLM_BASE_URL`` is unset. The embedded server
    runs on a daemon thread and stops when the process exits.
    """
    global _default
    with _default_lock:
        if _default is None:
            settings = load_settings()
            if settings.clock:          # AGENT_CLOCK：这个线程里 get_current_time 回答固定的"现在"
                FIXED_NOW.set(settings.clock)
            CURRENT_BOOK.set(OrderBook(database_path(settings.data_dir)))   # AGENT_DATA_DIR：订单写到哪里
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
        return _default
