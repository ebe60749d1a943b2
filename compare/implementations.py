"""Every implementation compare knows: each lesson's ``run_agent`` with the facts it declares.

A new implementation (another framework, another protocol) joins the comparison with one
line here. The lessons declare their own facts (``ABOUT`` next to ``run_agent``); this list
lives with compare, its only consumer, so the shared core never imports a lesson.

Importing this module imports every lesson (and so LangChain and LangGraph): compare runs
them all anyway. The zero-framework loops (``json_loop``, ``hardened_loop``, ``fc_loop``) themselves
still import with only ``openai``.
"""
from __future__ import annotations

from shared.harness.implementation import Implementation, Protocol, Sdk
from stage1_prebuilt import agent as prebuilt
from stage1_prebuilt import create_agent
from stage2_stategraph import agent as stategraph
from stage3_pure_loop import agent as pure_loop
from stage3_pure_loop import fc_loop, hardened_loop, json_loop

ERR_UNKNOWN = "未知实现 {name!r}；可用: {known}"

IMPLEMENTATIONS: dict[str, Implementation] = {impl.name: impl for impl in (
    # 三个图：compare 把编好的图留着、每次运行传进去（build）；预置图不依赖 max_steps（run_agent 数步数）
    Implementation(prebuilt.ABOUT, prebuilt.run_agent,
                   build=lambda llm, max_steps, serial: prebuilt.build_agent(llm, serial=serial)),
    Implementation(create_agent.ABOUT, create_agent.run_agent, build=create_agent.build_agent),
    Implementation(stategraph.ABOUT, stategraph.run_agent, build=stategraph.build_graph),
    Implementation(pure_loop.ABOUT, pure_loop.run_agent),
    Implementation(fc_loop.ABOUT, fc_loop.run_agent),
    Implementation(json_loop.ABOUT, json_loop.run_agent),
    Implementation(hardened_loop.ABOUT, hardened_loop.run_agent),
)}

__all__ = ["IMPLEMENTATIONS", "Implementation", "Protocol", "Sdk", "UnknownImplementationError", "get_implementation"]


class UnknownImplementationError(KeyError):
    def __str__(self) -> str:        # KeyError 默认会给消息加引号
        return str(self.args[0])


def get_implementation(name: str) -> Implementation:
    try:
        return IMPLEMENTATIONS[name]
    except KeyError:
        known = ", ".join(IMPLEMENTATIONS)
        raise UnknownImplementationError(ERR_UNKNOWN.format(name=name, known=known)) from None
