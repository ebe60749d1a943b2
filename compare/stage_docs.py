"""每个阶段目录的 README.md：这一层是什么、对应文章哪几节、怎么跑、跑出来什么样，以及图。

    python -m compare.stage_docs --write     # 重新生成 stage*/README.md
    python -m compare.stage_docs --check     # 与代码对不上时退出 1（tests/test_stage_docs.py 也查）

Generated, so the pages cannot drift from the code: the implementations of each folder
come from :data:`compare.implementations.IMPLEMENTATIONS` (a new one there shows up here
with its command and its real output), the output is what each command prints today on
the offline model with the reproducible clock, and the graphs are the ones
``python -m stage1_prebuilt --graph`` and ``python -m stage2_stategraph --graph`` draw, side by
side in both folders' pages so the prebuilt graph and the hand-built one can be compared.

The commands run concurrently (each is a fresh interpreter, most of its time spent importing),
each in an empty temporary directory with ``PYTHONPATH`` at the repository: a developer's
``.env`` in the repository root (read from the current directory) cannot put a real endpoint's
answers into the pages, and no run writes a ``.data`` folder into the repository.

Left out: the repository README (written by hand; it links here).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from compare.implementations import IMPLEMENTATIONS, Implementation
from shared.harness.config import REPRODUCIBLE_CLOCK
from shared.harness.process import exit_status_of

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"
GENERATED = "<!-- 由 python -m compare.stage_docs --write 生成，请勿手改；tests/test_stage_docs.py 检查它与代码一致 -->"
RUN_TIMEOUT = 120

# 每个目录：标题、这一层是什么、对应的文章章节（文章在 README 的「文章章节 ↔ 代码」一节）
FOLDERS = {
    "stage1_prebuilt": ("第 1 阶段：黑盒", "一行 `create_react_agent(llm, tools_node, prompt=SYSTEM_PROMPT, ...)` 得到一个完整的 ReAct agent："
                        "只看得见输入（一句话）和输出（一串消息），循环、状态、终止条件都封装在 LangGraph 的预置图里。"
                        "同目录的 `create_agent.py` 是它今天的继任者 `langchain.agents.create_agent` + middleware。",
                        ["第三篇 §1 三阶段\"去抽象\"：黑盒", "第三篇 §4 等价性验证：同一问题三套实现同一 trace"]),
    "stage2_stategraph": ("第 2 阶段：灰盒", "把预置图亲手搭一遍：`AgentState`（messages + `add_messages`）、agent 节点、"
                          "tools 节点、条件边 `should_continue`、tools → agent 的回流边。和第 1 阶段是同一个循环；"
                          "预置图多一个 `post_model_hook` 节点（强制串行、审批拒绝在这里），路由长在它后面。",
                          ["第三篇 §1 三阶段\"去抽象\"：灰盒",
                           "第三篇 §3 概念映射：State、agent 节点、tools 节点、条件边、recursion_limit"]),
    "stage3_pure_loop": ("第 3 阶段：白盒", "图拆掉以后只剩一个 for 循环和一个消息列表（`agent.py`）；"
                         "同一目录里还有第二篇文章的零框架 agent：工具调用写在文本里的 JSON（`json_loop.py`）"
                         "和修好五个翻车现场的版本（`hardened_loop.py`），以及不用 LangChain、直接用 openai SDK 做 function calling 的"
                         "同一个循环（`fc_loop.py`，第二篇方向 1）。",
                         ["第三篇 §2 内核：`run_agent` 是一个循环加一个消息列表", "第三篇 §1 三阶段\"去抽象\"：白盒",
                          "第二篇 §2 Agent = LLM 推理 × 工具执行 × 循环迭代（50 行核心循环）",
                          "第二篇 §5 五个翻车现场（`hardened_loop.py`）"]),
}
GRAPHS = (("stage1_prebuilt", "第 1 阶段：预置图（create_react_agent）"),
          ("stage2_stategraph", "第 2 阶段：手搭的 StateGraph"))


def folder_of(impl: Implementation) -> str:
    return impl.module.split(".")[0]


Command = tuple[str, ...]   # 命令（README 里写的 python -m ...）和它的参数


def run_command(command: str, *args: str) -> str:
    """What ``command ARGS`` prints on the offline model with the reproducible clock.

    Run in an empty temporary directory, not the repository root: the configuration reads
    ``.env`` from the current directory, and the pages never show a developer's endpoint."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "OFFLINE_LLM_", "AGENT_"))}
    env |= {"AGENT_CLOCK": REPRODUCIBLE_CLOCK, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable if part == "python" else part for part in command.split()]
    with tempfile.TemporaryDirectory(prefix="stage_docs-") as cwd:
        done = subprocess.run([*argv, *args], capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=RUN_TIMEOUT, check=True)
    return done.stdout.strip()


def implementations_in(folder: str) -> list[Implementation]:
    return [impl for impl in IMPLEMENTATIONS.values() if folder_of(impl) == folder]


def commands_of(folder: str) -> list[Command]:
    """Every command whose output ``folder``'s page shows."""
    graphs = [(f"python -m {graph}", "--graph") for graph, _ in GRAPHS] if folder in dict(GRAPHS) else []
    return graphs + [(impl.about.command, "-q", QUESTION) for impl in implementations_in(folder)]


def run_all(commands: list[Command]) -> dict[Command, str]:
    """What each command prints, each run once, several at a time (they are independent)."""
    unique = list(dict.fromkeys(commands))
    with ThreadPoolExecutor(max_workers=max(1, min(len(unique), os.cpu_count() or 1))) as pool:
        return dict(zip(unique, pool.map(lambda command: run_command(*command), unique)))


def graph_table(printed: Mapping[Command, str]) -> list[str]:
    """The two graphs side by side (an HTML table GitHub renders, a Mermaid block in each cell)."""
    cells = []
    for folder, title in GRAPHS:
        drawn = printed[(f"python -m {folder}", "--graph")]
        cells.append(f"<td valign=\"top\">\n\n**{title}**（`.venv/bin/python -m {folder} --graph`）\n\n```mermaid\n{drawn}\n```\n\n</td>")
    return ["## 图：预置的和手搭的，同一个循环", "",
            "两张图都从编译好的图画出来；虚线是条件边，上面写着条件（模型的回复里有没有 tool_calls）。"
            "预置图在 agent 和路由之间多一个 `post_model_hook` 节点：强制串行、审批拒绝都在这里写进消息，"
            "调用都已有结果时它直接回到 agent。", "",
            "<table><tr>", *cells, "</tr></table>", ""]


def render(folder: str, printed: Mapping[Command, str]) -> str:
    """``folder``'s page; ``printed`` holds what its commands print (:func:`run_all` of :func:`commands_of`)."""
    title, what, sections = FOLDERS[folder]
    impls = implementations_in(folder)
    lines = [f"# {title}", "", GENERATED, "", "## 这一层是什么", "", what, "",
             "## 对应文章的章节", "", *(f"- {s}" for s in sections), "",
             "## 这个目录里的实现", "", "| compare 里的名字 | 文件 | 是什么 | 协议 | 步数用完时 |", "|---|---|---|---|---|"]
    for impl in impls:
        path = impl.module.replace(".", "/") + ".py"
        lines.append(f"| `{impl.name}` | [`{path.split('/', 1)[1]}`]({path.split('/', 1)[1]}) | {impl.about.tier} | "
                     f"{impl.protocol} | {impl.about.step_limit} |")
    lines.append("")
    if folder in dict(GRAPHS):
        lines += graph_table(printed)
    lines += ["## 跑一遍（离线模型，固定时钟；在仓库根目录运行，`make demo` 或 `make test` 建好的 `.venv`）", ""]
    for impl in impls:
        command = impl.about.command.replace("python -m", ".venv/bin/python -m", 1)
        lines += [f"```bash\nAGENT_CLOCK={REPRODUCIBLE_CLOCK} {command} -q \"{QUESTION}\"\n```", "",
                  f"```\n{printed[(impl.about.command, '-q', QUESTION)]}\n```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compare.stage_docs", description="生成或检查 stage*/README.md")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="重新生成")
    mode.add_argument("--check", action="store_true", help="与代码对不上时退出 1")
    args = parser.parse_args(argv)
    stale = []
    # 每条命令只跑一次（两张图出现在两个目录的页里），几条同时跑
    printed = run_all([command for folder in FOLDERS for command in commands_of(folder)])
    for folder in FOLDERS:
        path, text = ROOT / folder / "README.md", render(folder, printed)
        if args.write:
            path.write_text(text, encoding="utf-8")
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(str(path.relative_to(ROOT)))
    if stale:
        print(f"过期: {', '.join(stale)}；运行 python -m compare.stage_docs --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(exit_status_of(main))
