"""故障注入的接缝：策略做出决定之后、变成 HTTP 响应之前，经过这里。

The seam where fault modes (``OFFLINE_LLM_FAULTS``) will rewrite the policy's decision:
a chatty prefix, broken JSON, a repeated call, a hallucinated tool... Every decision of
the offline model passes through :func:`apply_faults`, so a mode added here applies to
both protocols (function calling and the JSON protocol) without touching the policy.

So far no mode is implemented: :data:`FAULT_MODES` is empty, configuration rejects every
name (CONTRACT.md: "until an issue adds a mode, naming it is a configuration error"),
and :func:`apply_faults` returns the decision unchanged.

Left out: transport faults (HTTP 500/429, timeouts, truncated bodies): they belong to
the server, not to the decision.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.offline_llm.decision import Decision

if TYPE_CHECKING:
    from shared.offline_llm.conversation import Conversation

# 已实现的故障模式（名字即 OFFLINE_LLM_FAULTS 里可写的值）。目前：无。
FAULT_MODES: tuple[str, ...] = ()

ERR_UNKNOWN_FAULT = "未知的故障模式 {unknown}；已实现: {known}"


@dataclass(frozen=True)
class FaultContext:
    """Everything a fault mode may look at when it rewrites a decision.

    - ``faults``: the enabled modes (a subset of :data:`FAULT_MODES`);
    - ``request``: the chat-completion request body, as received (do not mutate);
    - ``protocol``: ``"function_calling"`` or ``"json"`` (tool calls as plain-content JSON);
    - ``conversation``: the request already read (question, observed calls, offered tools,
      turn number);
    - ``rng``: seeded per conversation *and* turn, so a fault is reproducible and may
      still hit different turns differently.
    """

    faults: tuple[str, ...]
    request: dict
    protocol: str
    conversation: "Conversation"
    rng: random.Random


def check_fault_modes(faults: tuple[str, ...]) -> tuple[str, ...]:
    """Return ``faults`` if every name is implemented; otherwise raise ``ValueError``."""
    unknown = [name for name in faults if name not in FAULT_MODES]
    if unknown:
        raise ValueError(ERR_UNKNOWN_FAULT.format(unknown=", ".join(unknown),
                                                  known=", ".join(FAULT_MODES) or "（暂无）"))
    return tuple(faults)


def apply_faults(decision: Decision, context: FaultContext) -> Decision:
    """Rewrite ``decision`` according to ``context.faults``. No mode yet: unchanged."""
    return decision
