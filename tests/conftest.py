"""Fixtures only (the helpers themselves live in ``tests/support/``).

- ``agent``: one fixture that runs a scenario through every implementation compare knows;
- ``offline``: the embedded offline model whatever the developer configured;
- ``variants``: the deliberately different implementations of ``tests/variants/``;
- a guard that makes any connection to a non-loopback address fail the test;
- ``sweep`` tests count as ``slow`` too.
"""
from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from tests.support.agents import Agent

# compare (and so every lesson, LangChain and openai) is imported in the fixtures, not here: with
# pytest-xdist the controlling process loads this file too, but never runs a test (seconds of CPU)


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


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """The embedded offline model whatever the developer configured; returns an output dir."""
    from tests.support.compare import CONFIG_VARIABLES

    for name in CONFIG_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)            # 仓库根目录的 .env 不会被读到
    return tmp_path / "out"


@pytest.fixture
def variants(monkeypatch):
    """Register the deliberately different implementations of tests/variants/ for one test."""
    from compare.implementations import IMPLEMENTATIONS
    from shared.harness.implementation import About, Implementation
    from tests.support.compare import VARIANTS

    for name, module in VARIANTS.items():
        about = About(name=name, tier="测试用变体", command=f"python -m {module.__name__}",
                      step_limit=f"{name} 的循环结束")
        monkeypatch.setitem(IMPLEMENTATIONS, name, Implementation(about, module.run_agent))
    return list(VARIANTS)


def pytest_collection_modifyitems(items):
    """A ``sweep`` test is also ``slow``: ``pytest -m "not slow"`` is the quick run, it leaves both out."""
    for item in items:
        if item.get_closest_marker("sweep"):
            item.add_marker(pytest.mark.slow)


def pytest_generate_tests(metafunc):
    """A test that takes ``agent`` runs once per implementation, named after it."""
    if "agent" in metafunc.fixturenames:
        from compare.implementations import IMPLEMENTATIONS

        metafunc.parametrize("agent", list(IMPLEMENTATIONS), ids=list(IMPLEMENTATIONS), indirect=True)


@pytest.fixture
def agent(request) -> Agent:
    from compare.implementations import IMPLEMENTATIONS
    from tests.support.agents import Agent

    return Agent(IMPLEMENTATIONS[request.param])


# 忙碌的 2 核机器上，hypothesis 默认的 200 ms 单例期限会误报：这里不设墙钟期限
settings.register_profile("no_deadline", deadline=None)
settings.load_profile("no_deadline")
