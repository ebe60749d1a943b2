"""一次运行，一个自己的 thread：一张编好的图跑很多次，各次的状态互不相干。

LangGraph 的 checkpointer 按 ``thread_id`` 存一次运行的状态（审批时暂停、恢复都靠它），编好的图
本身不存任何一次运行的东西。所以图可以编一次、跑很多次，只要每次运行用自己的 ``thread_id``：
这正是 LangGraph 的用法（一个服务一张图，一个会话一个 thread）。第 1、2 阶段的 ``run_agent``
单独运行时现编一张图；compare 用同样的设置跑几百次，编一次、每次传进来（编图比离线模型回答
一次还贵，见 README「成本」）。

跑完就把这个 thread 删掉：共用的 checkpointer 不随运行次数越积越多。

本文件不包含：跨会话的记忆（同一个 thread_id 跨多次运行接着用，正是这里要避免的）。
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def own_thread(app, **config) -> Iterator[dict]:
    """``with own_thread(app) as config:`` 这次运行的 config（一个新的 thread_id，加上 ``config``）；
    结束时（答完、停下或出错）删掉这个 thread 在 checkpointer 里的全部状态。"""
    thread_id = uuid.uuid4().hex
    try:
        yield {**config, "configurable": {"thread_id": thread_id}}
    finally:
        app.checkpointer.delete_thread(thread_id)
