"""Fixtures for the offline-model tests: a fixed clock, one running server and an SDK client per module.

Import them into a test module (``from tests.support.offline import client, fixed_clock, server``)."""
from __future__ import annotations

import pytest
from openai import OpenAI

from shared.offline_llm import OfflineServer
from shared.tool_functions import clock_fixed_at

CLOCK = "2025-06-01T10:30:00"
NOW = "2025-06-01 10:30:00"


@pytest.fixture(autouse=True)
def fixed_clock():
    with clock_fixed_at(CLOCK):
        yield


@pytest.fixture(scope="module")
def server():
    with OfflineServer() as running:
        yield running


@pytest.fixture(scope="module")
def client(server):
    with OpenAI(base_url=server.base_url, api_key="unused", max_retries=0) as sdk:
        yield sdk
