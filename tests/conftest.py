"""Shared test plumbing.

- ``agent``: one fixture that runs a scenario through every registered implementation
  (prebuilt, stategraph, pure_loop, json_loop, hardened_loop, ...), on the offline model
  or a scripted brain, always over HTTP;
- ``run_cli``: a command as a user types it, in a directory with no ``.env`` and with no
  model variables inherited, so a developer's real endpoint and key can never be reached;
- a guard that makes any connection to a non-loopback address fail the test.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from shared.config import REPRODUCIBLE_CLOCK, load_settings
from shared.endpoint import open_endpoint
from shared.implementations import IMPLEMENTATIONS, JSON_PROTOCOL, Implementation
from shared.run_record import RunRecord
from shared.runner import RunOptions, run_once
from tests.compare_support import CONFIG_VARIABLES, VARIANTS

ROOT = Path(__file__).resolve().parent.parent
CLOCK = REPRODUCIBLE_CLOCK
ARTICLE_QUESTION = "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"
ARTICLE_ROUNDS = [
    [{"name": "get_current_time", "args": {}, "result": "2026-11-30 18:04:51"}],
    [{"name": "get_stock_price", "args": {"symbol": "腾讯"}, "result": "腾讯（0700.HK）当前股价：385.6 港元"}],
    [{"name": "calculate", "args": {"expression": "385.6 * 100"}, "result": "38560.0"}],
]
# 一个空目录：命令行测试在这里运行，读不到任何 .env
_NO_DOTENV_DIR = Path(tempfile.mkdtemp(prefix="agent-cli-tests-"))


def run_cli(*argv: str, env: dict[str, str] | None = None, input: str | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m ARGV`` as a user runs it, but isolated from the developer's configuration."""
    clean = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT),
             "AGENT_CLOCK": CLOCK}
    return subprocess.run([sys.executable, "-m", *argv], cwd=cwd or _NO_DOTENV_DIR,
                          env={**clean, **(env or {})}, input=input, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Tests never touch the network: a connection to anything but loopback fails loudly."""
    real_connect = socket.socket.connect

    def loopback_only(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if sock.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"a test tried to reach the network: {address!r}")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)


class Agent:
    """One implementation, ready to run prompts on the offline model or a scripted brain."""

    def __init__(self, impl: Implementation):
        self.impl = impl
        self.name = impl.name
        self.json_protocol = impl.protocol == JSON_PROTOCOL

    def __call__(self, prompt: str, *, brain: Callable[[dict], dict] | None = None,
                 faults: tuple[str, ...] = (), **options) -> RunRecord:
        settings = load_settings(env={}, dotenv=None, offline_faults=faults or None)
        with open_endpoint(settings, brain=brain) as endpoint:
            return run_once(self.impl, prompt, endpoint, RunOptions(clock=CLOCK, **options))


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """The embedded offline model whatever the developer configured; returns an output dir."""
    for name in CONFIG_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)            # 仓库根目录的 .env 不会被读到
    return tmp_path / "out"


@pytest.fixture
def variants(monkeypatch):
    """Register the deliberately different implementations of tests/variants/ for one test."""
    for name, module in VARIANTS.items():
        monkeypatch.setitem(IMPLEMENTATIONS, name, Implementation(
            name, module, "测试用变体", step_limit=f"{name} 的循环结束"))
    return list(VARIANTS)


@pytest.fixture(params=list(IMPLEMENTATIONS), ids=list(IMPLEMENTATIONS))
def agent(request) -> Agent:
    return Agent(IMPLEMENTATIONS[request.param])
