"""python -m stage2_stategraph：运行 agent.py 的 run_agent；--graph 打印 mermaid() 画的图。"""
from shared.harness.cli import main
from stage2_stategraph.agent import ABOUT, mermaid, run_agent

raise SystemExit(main(run_agent, ABOUT, graph=mermaid))
