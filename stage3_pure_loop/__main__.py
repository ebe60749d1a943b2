"""python -m stage3_pure_loop：运行 agent.py 的 run_agent（交互循环，或 -q 只问一句）。"""
from shared.harness.cli import main
from stage3_pure_loop.agent import ABOUT, run_agent

raise SystemExit(main(run_agent, ABOUT))
