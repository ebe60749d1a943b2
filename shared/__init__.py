"""所有实现共用的课程文件（先读这些）与管道（在下一层目录）。

课程的一部分::

    prompts.py         系统提示词（三篇文章共用，原文照录）
    tools.py           四个 LangChain 工具 + "tools 节点"的一次执行
    tool_functions.py  同样四个工具的纯 Python 函数，以及唯一的工具错误文案
    calculator.py      不用 eval 的 AST 计算器（第二篇"方向 2"）
    market_data.py     工具查询的演示数据（虚构，固定）
    llm.py             模型从哪里来（文章的 config.py）
    step_budget.py     max_steps 与 LangGraph recursion_limit 的换算
    tokens.py          token 估算（滑动窗口和离线模型共用）

不是课程：``harness/``（配置、端点、运行记录、命令行……让各实现可以并排比较的管道）和
``offline_llm/``（内置离线模型：一张确定性的规则表，不是语言模型）。
"""
