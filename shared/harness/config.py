"""配置：从环境变量和当前目录的 ``.env``（README 的命令都在仓库根目录运行）读一次，得到一个不可变的 Settings。

The variables are the README's (``LLM_BASE_URL``, ``LLM_API_KEY``, ``LLM_MODEL``,
...). Settings are read once at start-up and passed down as a value; nothing reads the
environment behind the caller's back, so a test can build any configuration it wants
with ``load_settings(env={...})``.

Bad values raise :class:`ConfigError` naming the variable; command lines turn it into one
line on stderr and exit status 2 (:func:`load_settings_or_exit`). The API key is kept out
of ``repr`` and every message: :meth:`Settings.describe` shows a masked view.

Left out: per-stage settings, config files other than ``.env``, secrets managers.
"""
from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from urllib.parse import urlparse

from dotenv import dotenv_values

from shared.harness.arguments import TEMPERATURE_RANGE

OFFLINE_MODEL = "offline"
# 可复现的"现在"：compare、README 的 failure-mode 表和测试在没有设置 AGENT_CLOCK 时都用它，
# 这样几个实现查到的时间相同，trace 才能逐字比较。
REPRODUCIBLE_CLOCK = "2026-11-30T18:04:51+08:00"

ERR_URL = "LLM_BASE_URL 不是合法的 http(s) 地址（应形如 https://api.deepseek.com/v1）"
ERR_KEY_MISSING = "LLM_API_KEY 未设置：设置了 LLM_BASE_URL 就必须提供它的 key（本地 vLLM/Ollama 可随便填，如 EMPTY）"
ERR_NUMBER = "{variable} 应是数字，收到 {value!r}"
ERR_RANGE = "{variable} 应在 {low} 到 {high} 之间，收到 {value!r}"
ERR_INTEGER = "{variable} 应是非负整数，收到 {value!r}"
ERR_FAULT = "{variable} 含未知故障模式 {unknown}；可用: {known}"
ERR_CLOCK = "AGENT_CLOCK 不是合法的 ISO-8601 时间: {value!r}"
WARN_FAULTS_IGNORED = "注意：故障模式（--faults / OFFLINE_LLM_FAULTS）只作用于内置离线模型；已设置 LLM_BASE_URL，忽略它们。"
ERR_URL_CREDENTIALS = ("LLM_BASE_URL 里不能带用户名或密码（user:password@）：它会作为 HTTP Basic 认证发出去，"
                       "还可能被服务器原样写回；key 请放在 LLM_API_KEY")
ERR_KEY_CHARS = "LLM_API_KEY 含换行、空白或非 ASCII 字符：HTTP 头里放不下（检查是否多复制了一行或一个空格）"
ERR_DOTENV = ".env 不是 UTF-8 文本（{reason}）：用 UTF-8 重新保存它"
ERR_INTEGER_RANGE = "{variable} 应是 0 到 {high} 之间的整数，收到 {value!r}"
MAX_LATENCY_MS = 600_000          # 离线模型最多人为延迟 10 分钟
ERR_MODEL = "LLM_MODEL 未设置：设置了 LLM_BASE_URL 就要给出模型名（如 deepseek-chat、Qwen/Qwen3-8B、qwen3:8b）"


class ConfigError(ValueError):
    """A configuration value is wrong; ``str(error)`` is one line naming the variable."""

    def __init__(self, variable: str, message: str):
        super().__init__(message)
        self.variable = variable


@dataclass(frozen=True)
class Settings:
    base_url: str | None = None            # None: 使用内置离线模型
    api_key: str | None = field(default=None, repr=False)   # 绝不打印、绝不落盘
    model: str = OFFLINE_MODEL
    temperature: float = 0.0
    offline_faults: tuple[str, ...] = ()
    offline_seed: int | None = None
    offline_latency_ms: int = 0
    timeout: float = 60.0
    clock: str | None = None
    data_dir: Path = Path(".data")

    @property
    def offline(self) -> bool:
        return self.base_url is None

    def describe(self) -> dict[str, object]:
        """A printable view: the key (and any password in the URL) masked, never shown."""
        view = {f.name: getattr(self, f.name) for f in fields(self)}
        view["api_key"] = "***" if self.api_key else None
        view["base_url"] = redact_url(self.base_url) if self.base_url else None
        view["data_dir"] = str(self.data_dir)
        return view


def load_settings(env: Mapping[str, str] | None = None, *, dotenv: Path | None = Path(".env"),
                  **overrides) -> Settings:
    """Read the configuration variables; ``.env`` fills in what the environment leaves unset.

    ``overrides`` (field names, e.g. ``temperature=0.7``) come from command-line flags and
    win over both. Raises :class:`ConfigError`.
    """
    source: dict[str, str] = {}
    if dotenv is not None and dotenv.is_file():
        try:
            values = dotenv_values(dotenv, encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(".env", ERR_DOTENV.format(reason=error.reason)) from None
        source.update({k: v for k, v in values.items() if v is not None})
    source.update(os.environ if env is None else env)

    def get(name: str) -> str | None:
        value = source.get(name, "").strip()
        return value or None

    settings = Settings(
        base_url=_base_url(get("LLM_BASE_URL")),
        api_key=_api_key(get("LLM_API_KEY")),
        model=get("LLM_MODEL") or OFFLINE_MODEL,
        temperature=_number("LLM_TEMPERATURE", get("LLM_TEMPERATURE"), 0.0, low=TEMPERATURE_RANGE[0], high=TEMPERATURE_RANGE[1]),
        offline_faults=_faults(get("OFFLINE_LLM_FAULTS")),
        offline_seed=_integer("OFFLINE_LLM_SEED", get("OFFLINE_LLM_SEED")),
        offline_latency_ms=_integer("OFFLINE_LLM_LATENCY_MS", get("OFFLINE_LLM_LATENCY_MS"), high=MAX_LATENCY_MS) or 0,
        timeout=_number("LLM_TIMEOUT", get("LLM_TIMEOUT"), 60.0, low=0.001, high=3600),
        clock=_clock(get("AGENT_CLOCK")),
        data_dir=Path(get("AGENT_DATA_DIR") or ".data"),
    )
    settings = replace(settings, **_checked_overrides(overrides))
    if settings.base_url and not settings.api_key:
        raise ConfigError("LLM_API_KEY", ERR_KEY_MISSING)
    if settings.base_url and not get("LLM_MODEL"):
        raise ConfigError("LLM_MODEL", ERR_MODEL)
    return settings


def load_settings_or_exit(**overrides) -> Settings:
    """:func:`load_settings` for command lines: a bad value is one line on stderr, exit 2."""
    try:
        settings = load_settings(**overrides)
    except ConfigError as error:
        print(f"配置错误 [{error.variable}]: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    if settings.offline_faults and not settings.offline:
        print(WARN_FAULTS_IGNORED, file=sys.stderr)
    return settings


def redact_url(url: str) -> str:
    """The URL without a ``user:password@`` part, for anything printed or written."""
    parsed = urlparse(url)
    if "@" not in parsed.netloc:
        return url
    return parsed._replace(netloc="***@" + parsed.netloc.rsplit("@", 1)[1]).geturl()


# ---- 每个变量的解析与校验 ----

def _base_url(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parsed = urlparse(value)
        parsed.port                      # 端口不是数字、方括号不配对……在这里就报错，而不是等到发请求
    except ValueError:
        raise ConfigError("LLM_BASE_URL", ERR_URL) from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ConfigError("LLM_BASE_URL", ERR_URL)
    if parsed.username is not None or parsed.password is not None:
        raise ConfigError("LLM_BASE_URL", ERR_URL_CREDENTIALS)
    return value.rstrip("/")


def _api_key(value: str | None) -> str | None:
    # key 只进 HTTP 头：那里只能放可见的 ASCII；报错时绝不回显 key 本身
    if value is not None and not (value.isascii() and value.isprintable() and " " not in value):
        raise ConfigError("LLM_API_KEY", ERR_KEY_CHARS)
    return value


def _number(variable: str, value: str | float | None, default: float, *, low: float,
            high: float) -> float:
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(variable, ERR_NUMBER.format(variable=variable, value=value)) from None
    if not math.isfinite(number) or not low <= number <= high:
        raise ConfigError(variable, ERR_RANGE.format(variable=variable, low=low, high=high, value=value))
    return number


def _integer(variable: str, value: str | int | None, *, high: int | None = None) -> int | None:
    if value is None:
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigError(variable, ERR_INTEGER.format(variable=variable, value=value)) from None
    if number < 0:
        raise ConfigError(variable, ERR_INTEGER.format(variable=variable, value=value))
    if high is not None and number > high:
        raise ConfigError(variable, ERR_INTEGER_RANGE.format(variable=variable, high=high, value=value))
    return number


def _faults(value: str | None, *, variable: str = "OFFLINE_LLM_FAULTS") -> tuple[str, ...]:
    from shared.offline_llm.faults import ALL_FAULT_MODES as FAULT_MODES   # 故障模式由离线模型自己登记

    if not value:
        return ()
    names = tuple(dict.fromkeys(n.strip() for n in value.split(",") if n.strip()))
    unknown = [n for n in names if n not in FAULT_MODES]
    if unknown:
        known = ", ".join(FAULT_MODES) or "（暂无）"
        raise ConfigError(variable, ERR_FAULT.format(variable=variable, unknown=", ".join(unknown), known=known))
    return names


def _clock(value: str | None) -> str | None:
    if value is None:
        return None
    from datetime import datetime
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError("AGENT_CLOCK", ERR_CLOCK.format(value=value)) from None
    return value


# 命令行参数覆盖变量时，用同样的检查，但错误信息点名用户真正写下的那个参数
_OVERRIDE_CHECKS = {
    "temperature": lambda v: _number("--temperature", v, 0.0, low=TEMPERATURE_RANGE[0], high=TEMPERATURE_RANGE[1]),
    "timeout": lambda v: _number("LLM_TIMEOUT", v, 60.0, low=0.001, high=3600),
    "offline_faults": lambda v: _faults(v if isinstance(v, str) else ",".join(v), variable="--faults"),
}


def _checked_overrides(overrides: dict) -> dict:
    """Flags are validated exactly like the variables they override (same messages)."""
    return {name: _OVERRIDE_CHECKS.get(name, lambda v: v)(value)
            for name, value in overrides.items() if value is not None}
