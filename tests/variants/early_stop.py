"""变体：比步数上限早一步停下（off-by-one），其余与纯 loop 相同。"""
from __future__ import annotations

from stage3_pure_loop.agent import run_agent as pure_loop


def run_agent(user_input: str, max_steps: int = 10, *, llm, **controls):
    return pure_loop(user_input, max_steps - 1, llm=llm, **controls)
