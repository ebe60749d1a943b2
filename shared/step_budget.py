"""步数上限：``max_steps`` 次模型调用，换算成 LangGraph 的 ``recursion_limit``。

第 3 阶段的 ``for step in range(max_steps)`` 直接数模型调用；第 1、2 阶段的图数的是
"超步"（super-step）：每执行一个节点算一步。一轮 ReAct = agent 节点 + tools 节点 = 2 步，
所以 max_steps 次模型调用（中间夹着工具执行）需要 2 * max_steps 步。两个图共用这一个换算，
三个阶段的"步数"才是同一个意思。

为什么要显式传：文章写"recursion_limit（默认 25）"，但 langgraph 1.2 的默认值大得多
（见 README「库的变化」），不传的话步数上限形同虚设。
"""


def recursion_limit_for(max_steps: int) -> int:
    """``max_steps`` 次模型调用需要的 ``recursion_limit``。"""
    return 2 * max_steps
