"""第 3 阶段（白盒）：纯 Python agent loop（agent.py），以及第二篇文章的零框架 agent
（json_loop.py、hardened_loop.py）。

This package docstring is all there is here on purpose: importing
``stage3_pure_loop.json_loop`` must not load LangChain.
"""
