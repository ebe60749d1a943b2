"""步数上限：每一层同一个意思——最多 ``max_steps`` 次模型调用。

含义只有一个：模型最多被调用 ``max_steps`` 次；第 ``max_steps`` 次调用如果还要工具，这些工具
**不执行**（执行了也没有模型会读它的结果，只剩一个白白发生的副作用——比如一笔订单），运行以
status ``max_steps`` 结束。于是每一层在同一个 N 下停在同一个地方，记下同样的轮次。

各层怎么做到：
    第 1 阶段（预置）  run_agent 驱动图：图每轮停在 tools 之前（interrupt_before），最多恢复 N−1 次。
                      预置图自带的 remaining_steps 守卫不用：它会把最后一次回复整个换成
                      "Sorry, need more steps…"，模型要的调用从记录里消失，比别的层少一轮
    第 2 阶段（图）    should_continue 数 state 里的 AI 消息，到 N 就导向 END
    第 3 阶段与 JSON 循环  for step in range(max_steps)，最后一步不执行工具

LangGraph 自己的 ``recursion_limit`` 数的是"超步"（每执行一个节点算一步，一轮 = agent + tools），
而且按每次 invoke 计数：人工审批一暂停、一恢复，计数就从头开始。所以它在这里只做后备上限——
文章写"默认 25"，langgraph 1.2 的默认值大得多（见 README「库的变化」），不传的话连后备都没有。
"""


def recursion_limit_for(max_steps: int) -> int:
    """后备上限：``max_steps`` 轮（agent 节点 + tools 节点）需要的超步数。正常运行碰不到它。"""
    return 2 * max_steps
