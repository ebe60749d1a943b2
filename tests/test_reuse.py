"""The harness builds a chat model once per settings and reuses it across runs: nothing changes.

Against the alternative (a fresh ``ChatOpenAI`` per run), over the same prompts at temperature 0
and above it with several seeds: the requests on the wire, the rounds, the answers and the
statuses are the same. At temperature > 0 the seed decides what the offline model samples, so a
model reused across seeds would show here. Compiled graphs are not reused: the approval pause
keeps a run's state in the graph's checkpointer.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from compare.implementations import IMPLEMENTATIONS
from compare.suite import load_suite
from compare.sweep import plan_jobs
from shared.harness.config import load_settings
from shared.harness.endpoint import Reuse, open_endpoint
from shared.harness.implementation import Sdk
from shared.harness.runner import RunOptions, run_once
from tests.support.agents import CLOCK

PROMPTS = [p.prompt for p in load_suite()[:4]]
TEMPERATURES = [0.0, 0.9]
RUNS = 3
CALL_ID = re.compile(r"call_[0-9a-f]{8,}")
LANGCHAIN = [impl for impl in IMPLEMENTATIONS.values() if impl.sdk is Sdk.LANGCHAIN]


def what_a_run_shows(record) -> dict:
    return {"status": record.status, "answer": record.answer, "rounds": record.rounds,
            "llm_calls": record.llm_calls, "requests": without_call_ids([e["request"] for e in record.exchanges])}


def without_call_ids(requests: list[dict]) -> str:
    """The requests, each tool-call id (random per response) replaced by its order of appearance."""
    text = json.dumps(requests, ensure_ascii=False)
    ids: dict[str, str] = {}
    return CALL_ID.sub(lambda m: ids.setdefault(m.group(0), f"call_{len(ids)}"), text)


@pytest.mark.parametrize("impl", LANGCHAIN, ids=lambda impl: impl.name)
def test_a_reused_model_gives_the_same_runs_as_fresh_ones(impl):
    settings = load_settings(env={}, dotenv=None)
    jobs = plan_jobs([impl], PROMPTS, TEMPERATURES, RUNS)
    base = RunOptions(clock=CLOCK)
    with open_endpoint(settings) as endpoint:
        reused = [run_once(impl, job.prompt, endpoint, job.options(base)) for job in jobs]
        fresh = [run_once(impl, job.prompt, replace(endpoint, reuse=Reuse()), job.options(base)) for job in jobs]
    built = {key for key in endpoint.reuse._built if isinstance(key, tuple) and key[0] == "chat_model"}
    assert len(built) == len({(job.temperature, job.options(base).seed) for job in jobs}), \
        "one chat model per temperature and seed, reused across prompts"
    assert [what_a_run_shows(r) for r in reused] == [what_a_run_shows(r) for r in fresh]
    # 温度 > 0 时不同 seed 真的让离线模型采样出不同的东西：否则上面的比较对 seed 是瞎的
    hot = {what_a_run_shows(r)["requests"] for r, job in zip(reused, jobs) if job.temperature > 0}
    assert len(hot) > len(PROMPTS)
