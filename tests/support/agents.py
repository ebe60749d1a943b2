"""What most tests share: the article's question and trace, and one implementation as a callable.

``Agent(impl)("question")`` runs one prompt on the embedded offline model, or on a scripted
brain, always over HTTP, exactly as the command line and compare do.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shared.harness.config import REPRODUCIBLE_CLOCK, load_settings
from shared.harness.endpoint import open_endpoint
from shared.harness.implementation import Implementation, Protocol
from shared.harness.run_record import RunRecord
from shared.harness.runner import RunOptions, run_once

ROOT = Path(__file__).resolve().parents[2]
CLOCK = REPRODUCIBLE_CLOCK
ARTICLE_QUESTION = "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"
ARTICLE_ROUNDS = [
    [{"name": "get_current_time", "args": {}, "result": "2026-11-30 18:04:51"}],
    [{"name": "get_stock_price", "args": {"symbol": "腾讯"}, "result": "腾讯（0700.HK）当前股价：385.6 港元"}],
    [{"name": "calculate", "args": {"expression": "385.6 * 100"}, "result": "38560.0"}],
]


class Agent:
    """One implementation, ready to run prompts on the offline model or a scripted brain."""

    def __init__(self, impl: Implementation):
        self.impl = impl
        self.name = impl.name
        self.json_protocol = impl.protocol is Protocol.JSON

    def __call__(self, prompt: str, *, brain: Callable[[dict], dict] | None = None,
                 faults: tuple[str, ...] = (), **options) -> RunRecord:
        settings = load_settings(env={}, dotenv=None, offline_faults=faults or None)
        with open_endpoint(settings, brain=brain) as endpoint:
            return run_once(self.impl, prompt, endpoint, RunOptions(clock=CLOCK, **options))
