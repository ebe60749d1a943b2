"""One fixture, ``agent``, runs a scenario through every registered implementation.

Each test that takes ``agent`` runs once per implementation (prebuilt, stategraph,
pure_loop, json_loop, hardened_loop, ...): the tiers are checked by the very same
scenarios, on the offline model or on a scripted brain, always over HTTP.
"""
from __future__ import annotations

from collections.abc import Callable

import pytest

from shared.config import load_settings
from shared.endpoint import open_endpoint
from shared.implementations import IMPLEMENTATIONS, JSON_PROTOCOL, Implementation
from shared.run_record import RunRecord
from shared.runner import RunOptions, run_once

CLOCK = "2026-11-30T18:04:51+08:00"
ARTICLE_QUESTION = "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    """Every test sees the same "now", so traces are reproducible."""
    monkeypatch.setenv("AGENT_CLOCK", CLOCK)


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
            return run_once(self.impl, prompt, endpoint, RunOptions(**options))


@pytest.fixture(params=list(IMPLEMENTATIONS), ids=list(IMPLEMENTATIONS))
def agent(request) -> Agent:
    return Agent(IMPLEMENTATIONS[request.param])
