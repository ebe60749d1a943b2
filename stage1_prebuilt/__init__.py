"""第 1 阶段（黑盒）：LangGraph 预置的 create_react_agent。见 agent.py。"""
