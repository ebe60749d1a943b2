"""A compiled LangGraph drawn as Mermaid, with its conditional edges labelled, and no model needed.

LangGraph labels a conditional edge only when the routing function's return value differs
from the target node's name. Both the prebuilt agent (``tools_condition``) and stage 2's
``should_continue`` return the target's own name ("tools" / ``END``), so their pictures
come out with bare dotted arrows. :func:`draw_mermaid` puts the condition back on them,
through the public ``Graph``/``Edge`` objects of ``langchain_core.runnables.graph``, without
changing the routing itself (stage 2 stays a faithful reduction of the prebuilt graph).

Drawing needs a compiled graph, and compiling needs a chat model to bind the tools to; a
placeholder that is never called stands in for it.
"""
from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel


class _Placeholder(FakeMessagesListChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def draw_mermaid(build: Callable, labels: dict[str, str]) -> str:
    """``build(llm)``'s graph in Mermaid; ``labels``: target node -> text on the conditional edge to it."""
    graph = build(_Placeholder(responses=[])).get_graph()
    graph.edges = [edge._replace(data=labels.get(edge.target, edge.data)) if edge.conditional else edge
                   for edge in graph.edges]
    return graph.draw_mermaid()
