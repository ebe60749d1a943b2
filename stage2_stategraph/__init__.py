"""第 2 阶段（灰盒）：手写 StateGraph。见 agent.py。"""
