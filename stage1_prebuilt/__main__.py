"""python -m stage1_prebuilt：运行 agent.py 的 run_agent（交互循环，或 -q 只问一句）；--graph 打印预置图。"""
from shared.harness.cli import main
from stage1_prebuilt.agent import ABOUT, mermaid, run_agent

raise SystemExit(main(run_agent, ABOUT, graph=mermaid))
