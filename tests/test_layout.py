"""The layout a learner reads: lessons in front, plumbing behind, and bugs that show where they are.

- the layering ``shared`` <- stages <- ``compare`` has no cycle (checked on the import
  statements of every file);
- a lesson's ``run_agent`` works with one argument, as in the articles;
- a bug in a lesson file is a traceback with its file and line, not a one-line "error"
  record; in a compare sweep it is recorded with that file and line and the sweep goes on.
"""
from __future__ import annotations

import ast
import re
import shutil
import sys
from pathlib import Path

import pytest

from compare.implementations import IMPLEMENTATIONS
from shared.harness.cli import main
from shared.harness.implementation import About, Implementation
from shared.harness.run_record import Status
from stage3_pure_loop.agent import ABOUT as PURE_LOOP
from tests.support.agents import ARTICLE_QUESTION, ROOT
from tests.support.cli import clean_environment
from tests.support.compare import run_compare
from tests.support.forked import start_forked

STAGES = ("stage1_prebuilt", "stage2_stategraph", "stage3_pure_loop")
LESSON_FILES = ("prompts.py", "tools.py", "tool_functions.py", "calculator.py", "market_data.py")


def imported_packages(path: Path) -> set[str]:
    """The top-level packages a file imports (``from shared.x import y`` -> ``shared``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
    return found


def python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_shared_imports_no_lesson_and_no_compare():
    offenders = {str(p.relative_to(ROOT)): imported_packages(p) & {*STAGES, "compare"}
                 for p in python_files("shared")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_a_stage_imports_no_other_stage_and_not_compare():
    offenders = {}
    for stage in STAGES:
        for path in python_files(stage):
            bad = imported_packages(path) & ({*STAGES, "compare"} - {stage})
            if bad:
                offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}


def test_the_harness_sits_one_folder_down_and_the_lesson_files_in_front():
    top = {p.name for p in (ROOT / "shared").glob("*.py")} - {"__init__.py"}
    assert set(LESSON_FILES) <= top
    for plumbing in ("config.py", "endpoint.py", "meter.py", "run_record.py", "runner.py", "trace.py", "cli.py"):
        assert plumbing not in top and (ROOT / "shared" / "harness" / plumbing).is_file()


def test_the_registry_lives_with_compare_and_names_each_lessons_own_function():
    from stage3_pure_loop import agent, hardened_loop

    assert IMPLEMENTATIONS["pure_loop"].run_agent is agent.run_agent
    assert IMPLEMENTATIONS["hardened_loop"].about.fixes == hardened_loop.FIXES
    assert not (ROOT / "shared" / "implementations.py").exists()


def test_a_bug_in_a_lesson_raises_through_the_command_line(offline):
    # offline: the command runs in the test's own directory, so its order book is not a .data/ in the checkout
    def run_agent(user_input, max_steps=10, *, llm=None, **controls):
        return respo  # noqa: F821 — the learner's typo

    with pytest.raises(NameError, match="respo"):
        main(run_agent, PURE_LOOP, ["-q", "你好"])


def test_a_model_endpoint_failure_is_a_record_not_a_traceback(capsys, offline):
    # 离线模型的 long 故障让上下文超长：HTTP 400。这是端点的错，不是 lesson 的 bug
    from stage3_pure_loop.json_loop import ABOUT, run_agent

    code = main(run_agent, ABOUT, ["-q", ARTICLE_QUESTION, "--faults", "long", "--json"])
    assert code == 1 and '"status": "error"' in capsys.readouterr().out


def test_compare_records_a_bug_with_its_file_and_line_and_goes_on(capsys, offline, monkeypatch):
    from stage3_pure_loop.agent import run_agent as pure_loop

    def buggy(user_input, max_steps=10, *, llm, **controls):
        if "天气" in user_input:
            raise KeyError("city")              # a bug in this file, on this line
        return pure_loop(user_input, max_steps, llm=llm, **controls)

    about = About(name="buggy", tier="test", command="-", step_limit="-")
    monkeypatch.setitem(IMPLEMENTATIONS, "buggy", Implementation(about, buggy))
    code, data = run_compare(capsys, offline, "--impl", "pure_loop", "buggy", "--prompt", "北京天气", "--prompt", "你好")
    by_prompt = {(r["impl"], r["prompt"]): r for r in data["results"]}
    broken = by_prompt[("buggy", "北京天气")]
    assert broken["status"] == Status.ERROR and "KeyError" in broken["error"]
    assert "tests/test_layout.py:" in broken["error"]
    assert by_prompt[("buggy", "你好")]["status"] == Status.ANSWERED       # the sweep went on
    assert by_prompt[("pure_loop", "北京天气")]["status"] == Status.ANSWERED


@pytest.mark.slow
def test_a_typo_in_a_stage_file_shows_its_file_and_line(tmp_path):
    """What a learner sees after editing stage 3: Python's own traceback, pointing at the line."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "reports", ".data", "__pycache__"))
    lesson = copy / "stage3_pure_loop" / "agent.py"
    text = lesson.read_text(encoding="utf-8")
    assert "        messages.append(resp)\n" in text
    lesson.write_text(text.replace("        messages.append(resp)\n", "        messages.append(respo)\n"),
                      encoding="utf-8")
    line = lesson.read_text(encoding="utf-8").splitlines().index("        messages.append(respo)") + 1

    # 在自己的进程里跑（从测试 fork 出来，不用再导入一遍 LangChain），仓库的模块从副本重新导入
    done = start_forked("-m", "stage3_pure_loop", "-q", "你好", env={"PYTHONPATH": str(copy)}, cwd=tmp_path)
    _, err = done.communicate(timeout=120)
    assert done.returncode == 1
    assert f'{copy}/stage3_pure_loop/agent.py", line {line}, in run_agent' in err
    assert "NameError: name 'respo' is not defined" in err


@pytest.mark.slow
def test_the_python_session_of_the_readme(tmp_path):
    """The README's Python session, run as written in a fresh interpreter, prints the article's trace."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("<!-- python-session:begin -->", 1)[1].split("<!-- python-session:end -->", 1)[0]
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)
    assert len([line for line in code.splitlines() if line.strip()]) <= 4
    import subprocess
    env = clean_environment(None)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "\n" + shown          # print_trace 先空一行；其余逐字相同


def test_a_forked_process_opens_its_own_default_endpoint(offline):
    """A process forked after a lesson ran (multiprocessing, a notebook's worker) has none of the
    parent's threads: it opens its own embedded model instead of talking to the parent's."""
    from shared.harness.endpoint import default_endpoint

    parent = default_endpoint().base_url
    child = start_forked("-c", "from shared.harness.endpoint import default_endpoint\n"
                               "print(default_endpoint().base_url)")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.startswith("http://127.0.0.1:") and out.strip() != parent


def test_the_one_argument_run_keeps_the_configured_clock_in_another_thread():
    """AGENT_CLOCK holds for every run of the default endpoint, not only in the thread that opened it:
    a notebook or a user's thread pool sees the same settings (the order book of AGENT_DATA_DIR is
    set on the same line of ``default_endpoint``)."""
    code = ("import threading\n"
            "from stage3_pure_loop.agent import run_agent\n"
            "run_agent('你好')\n"                                     # 主线程里打开默认端点
            "answers = []\n"
            "worker = threading.Thread(target=lambda: answers.append(run_agent('现在几点了？')[-1].content))\n"
            "worker.start(); worker.join()\n"
            "print(answers[0])")
    child = start_forked("-c", code)                                   # 干净的默认端点：自己的进程
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert "2026-11-30 18:04:51" in out                               # AGENT_CLOCK（clean_environment 设的）
