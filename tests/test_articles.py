"""The articles' own files, as published, next to the repository (``articles/``).

- article 3's stage-3 file, saved verbatim as ``articles/agent_loop.py``, runs against the
  offline model with ``.venv/bin/python articles/agent_loop.py`` and prints stage 3's trace;
- article 2's final listing (``articles/agent_50_lines.py``) shows its two bugs through its
  own public behaviour: the prompt template raises ``KeyError: '"tool"'``, and the calculator
  takes ``expr`` while its description (and so the model) says ``expression``.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from shared.harness.config import load_settings
from shared.harness.endpoint import open_endpoint
from tests.support.agents import ARTICLE_QUESTION, ROOT
from tests.support.cli import NO_DOTENV_DIR, Completed, clean_environment, run_cli
from tests.support.forked import PIPE, start_forked
from tests.support.scripted import ScriptedBrain, answer, call

ARTICLES = ROOT / "articles"
TRACE_START, TRACE_END = "-- Agent 推理过程 --", "-- 推理结束 --"


def trace_of(output: str) -> list[str]:
    lines = output.splitlines()
    return lines[lines.index(TRACE_START):lines.index(TRACE_END) + 1]


def run_article_file(name: str, stdin: str, env: dict[str, str] | None = None, *, forked: bool = False) -> Completed:
    """``python articles/NAME`` as the README says, no .env, no real endpoint: in a fresh interpreter,
    or (``forked``) in a process forked from this one, which has imported LangChain already."""
    env = {**(env or {}), "PYTHONPATH": ""}
    argv = [str(ARTICLES / name)]
    if forked:
        process = start_forked(*argv, env=env, stdin=PIPE)
        out, err = process.communicate(stdin, timeout=120)
        return Completed(argv, process.returncode, out, err)
    done = subprocess.run([sys.executable, *argv], cwd=NO_DOTENV_DIR, input=stdin, env=clean_environment(env),
                          capture_output=True, text=True, timeout=120)
    return Completed(argv, done.returncode, done.stdout, done.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [None, "2"], ids=["no-seed", "OFFLINE_LLM_SEED=2"])
def test_article_3_file_verbatim_prints_stage_3s_trace(seed):
    env = {"OFFLINE_LLM_SEED": seed} if seed else {}
    # 一个全新的解释器就证明了文件照原样能跑；换种子那一次只差模型的抽样，在 fork 出来的进程里跑（省几秒 CPU）
    article = run_article_file("agent_loop.py", f"{ARTICLE_QUESTION}\nquit\n", env, forked=bool(seed))
    assert article.returncode == 0, article.stderr
    assert "纯 Python Agent Loop 已就绪" in article.stdout and article.stdout.rstrip().endswith("再见！")
    # 文章的文件写死了 temperature=0.7：和它比的是第 3 阶段在同一温度下的 trace
    stage3 = run_cli("stage3_pure_loop", "-q", ARTICLE_QUESTION, "--temperature", "0.7", env=env)
    assert stage3.returncode == 0, stage3.stderr
    # 唯一的差别：仓库的 print_trace 还会打印运行记录的标记（⚠️ guessed_argument），文章的不会
    expected = [line for line in trace_of(stage3.stdout) if not line.startswith("⚠️ guessed_argument")]
    assert trace_of(article.stdout) == expected
    parallel = any(line.startswith("[3] 🤖 AI 调用工具: get_stock_price") for line in expected)
    assert parallel == (seed == "2")       # 无种子：串行链；OFFLINE_LLM_SEED=2：文章第 5 节的一轮并行


def load_listing(name: str):
    spec = importlib.util.spec_from_file_location(f"article_listing_{name}", ARTICLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)      # 不是 __main__：文件末尾那两个真实请求不会发出
    return module


def test_article_2_prompt_template_raises_key_error_before_any_request():
    listing = load_listing("agent_50_lines.py")
    with pytest.raises(KeyError) as raised:
        listing.agent_loop("北京今天天气怎么样？")
    assert str(raised.value) == "'\"tool\"'"        # 打印出来就是 KeyError: '"tool"'


def run_listing_on(brain, question: str):
    """Article 2's final listing with its braces escaped, its client pointed at ``brain``."""
    listing = load_listing("agent_50_lines.py")
    listing.SYSTEM_PROMPT = listing.SYSTEM_PROMPT.replace("{", "{{").replace("}", "}}") \
        .replace("{{tools_desc}}", "{tools_desc}")
    with open_endpoint(load_settings(env={}, dotenv=None), brain=brain) as endpoint:
        listing.client = endpoint.openai_client()
        return listing.agent_loop(question)


def test_article_2_calculator_rejects_the_argument_its_description_asks_for():
    brain = ScriptedBrain(call("calculator", expression="365 * 24"), answer("365 * 24 = 8760"))
    reply = run_listing_on(brain, "365 * 24 等于多少？")
    # lambda expr: ... 收到 expression= → TypeError，被 except (..., TypeError): pass 吞掉，
    # 于是模型的工具调用 JSON 原样成了"最终答案"，工具一次也没执行
    assert reply == '{"tool": "calculator", "args": {"expression": "365 * 24"}}'
    assert len(brain.requests) == 1
    described = brain.requests[0]["messages"][0]["content"]
    assert "- calculator: 数学计算，参数 expression: 表达式" in described


def test_article_2_calculator_works_only_when_called_with_expr():
    brain = ScriptedBrain(call("calculator", expr="365 * 24"), answer("365 * 24 = 8760"))
    assert run_listing_on(brain, "365 * 24 等于多少？") == "365 * 24 = 8760"
    assert "工具结果：8760" in brain.requests[1]["messages"][-1]["content"]
