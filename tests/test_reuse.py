"""The harness builds a chat model (and, for the graph lessons, a compiled graph) once per settings
and reuses it across runs: nothing changes.

Against the alternative (a fresh ``ChatOpenAI`` and graph per run), over the same prompts at
temperature 0 and above it with two seeds: the requests on the wire, the rounds, the answers
and the statuses are the same. At temperature > 0 the seed decides what the offline model samples,
so a model reused across seeds would show here. A compiled graph keeps each run's state in a
thread of its own: concurrent runs on one graph, approval pauses included, are the runs they would
be alone, and the checkpointer is empty once they end.
"""
from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
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
RUNS = 2
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
    # 温度 0 不带 seed：那里的第 2、3 次运行只是第 1 次的重复，跑一次；温度 > 0 的每个 seed 都跑
    jobs = plan_jobs([impl], PROMPTS, TEMPERATURES[:1], 1) + plan_jobs([impl], PROMPTS, TEMPERATURES[1:], RUNS)
    base = RunOptions(clock=CLOCK)
    with open_endpoint(settings) as endpoint:
        reused = [run_once(impl, job.prompt, endpoint, job.options(base)) for job in jobs]
        fresh = [run_once(impl, job.prompt, replace(endpoint, reuse=Reuse()), job.options(base)) for job in jobs]
    settings_used = {(job.temperature, job.options(base).seed) for job in jobs}
    for kind in ("chat_model", "app") if impl.build else ("chat_model",):
        built = [key for key in endpoint.reuse._built if isinstance(key, tuple) and key[0] == kind]
        assert len(built) == len(settings_used), f"one {kind} per temperature and seed, reused across prompts"
    assert [what_a_run_shows(r) for r in reused] == [what_a_run_shows(r) for r in fresh]
    # 温度 > 0 时不同 seed 真的让离线模型采样出不同的东西：否则上面的比较对 seed 是瞎的
    hot = {what_a_run_shows(r)["requests"] for r, job in zip(reused, jobs) if job.temperature > 0}
    assert len(hot) > len(PROMPTS)


GRAPHS = [impl for impl in LANGCHAIN if impl.build is not None]
ORDER = "帮我买 100 股腾讯"          # 危险调用：图暂停、问审批（这里一律拒绝），再恢复


@pytest.mark.parametrize("impl", GRAPHS, ids=lambda impl: impl.name)
def test_one_compiled_graph_serves_concurrent_runs_and_keeps_nothing_after(impl):
    settings = load_settings(env={}, dotenv=None)
    jobs = plan_jobs([impl], [*PROMPTS, ORDER], [0.0], 2)
    base = RunOptions(clock=CLOCK)
    with open_endpoint(settings) as endpoint:
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:      # 全部同时跑在同一张图上
            together = list(pool.map(lambda job: run_once(impl, job.prompt, endpoint, job.options(base)), jobs))
        alone = [run_once(impl, job.prompt, replace(endpoint, reuse=Reuse()), job.options(base)) for job in jobs]
    (app,) = [built for key, built in endpoint.reuse._built.items() if isinstance(key, tuple) and key[0] == "app"]
    assert [what_a_run_shows(r) for r in together] == [what_a_run_shows(r) for r in alone]
    assert any(r.rounds and r.rounds[-1][0]["name"] == "place_order" for r in together), "the order prompt paused"
    assert list(app.checkpointer.list(None)) == [], "every run deleted its thread"
