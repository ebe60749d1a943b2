"""所有实现共用的课程文件（先读这些）与管道（在下一层目录）。

课程的一部分::

    prompts.py         系统提示词（三篇文章共用，原文照录）
    tools.py           五个 LangChain 工具 + "tools 节点"的一次执行（含拒绝、串行的工具消息）
    tool_functions.py  同样五个工具的纯 Python 函数、唯一的危险工具标记，以及回给模型的全部文案
    approval.py        人工审批：审批人 approve(tool_name, args) -> bool（第二篇方向 3）
    orders.py          place_order 写下的订单簿（SQLite）与 python -m shared.orders
    calculator.py      不用 eval 的 AST 计算器（第二篇"方向 2"）
    market_data.py     工具查询的演示数据（虚构，固定）
    llm.py             模型从哪里来（文章的 config.py）
    step_budget.py     步数上限在每一层的同一个含义（以及 LangGraph 的后备 recursion_limit）
    tokens.py          token 估算（滑动窗口和离线模型共用）

不是课程：``harness/``（配置、端点、运行记录、命令行……让各实现可以并排比较的管道）和
``offline_llm/``（内置离线模型：一张确定性的规则表，不是语言模型）。
"""
