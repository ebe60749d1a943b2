"""The API key never shows: not on stdout or stderr of any command, not in any file a
command writes, not even when the server echoes it inside an error or an answer. A password
written into LLM_BASE_URL is refused before anything is sent.

End to end: an :class:`OfflineServer` started here stands in for a real endpoint (the
commands reach it through ``LLM_BASE_URL``, as they would reach DeepSeek), and every
stage command and ``compare`` runs against it as a user types them. Then every output
and every file under the working directory is searched for the two secrets. A second
server answers every request with a 401 whose body echoes the key, as real providers do
("Incorrect API key provided: sk-..."), so the key reaches the client inside an error.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from shared.offline_llm import ApiError, OfflineServer

KEY = "sk-SECRET-key-123"
PASSWORD = "pw-SECRET-url"
STAGE_COMMANDS = ("stage1_prebuilt", "stage2_stategraph", "stage3_pure_loop",
                  "stage3_pure_loop.json_loop", "stage3_pure_loop.hardened_loop")
STAGE_ARGS = (("-q", "你好"), ("-q", "你好", "--json"), ("--show-config",))
COMPARE = ("compare", "--impl", "pure_loop", "json_loop", "--prompt", "你好", "--record", "c.json", "--out", "d")
COMMANDS = [(stage, *args) for stage in STAGE_COMMANDS for args in STAGE_ARGS] + [COMPARE]
WRITTEN = ("c.json", "d/runs.jsonl", "d/report.json", "d/report.md", "d/report.html")


def echoes_the_key(request: dict) -> dict:
    # 大脑看不到请求头：消息里写死这个 key，模拟服务商把收到的 key 原样写进错误
    raise ApiError(401, f"Incorrect API key provided: {KEY}", error_type="invalid_request_error",
                   code="invalid_api_key")


def run_everything(tmp_path: Path, brain: Callable[[dict], dict] | None = None) -> dict:
    """Every command of :data:`COMMANDS` against a server started here, in ``tmp_path``."""
    with OfflineServer(brain=brain) as server:
        host_and_path = server.base_url.split("://", 1)[1]
        env = {"LLM_BASE_URL": f"http://{host_and_path}", "LLM_API_KEY": KEY, "LLM_MODEL": "offline"}
        done = [run_cli(*argv, env=env, cwd=tmp_path) for argv in COMMANDS]   # 进程内，一个接一个
    return dict(zip(COMMANDS, done))


def leaks(outputs: dict, tmp_path: Path) -> list[str]:
    found = [f"{secret} in the {stream} of python -m {' '.join(argv)}"
             for argv, done in outputs.items() for stream in ("stdout", "stderr")
             for secret in (KEY, PASSWORD) if secret in getattr(done, stream)]
    found += [f"{secret} in {path.relative_to(tmp_path)}"
              for path in sorted(tmp_path.rglob("*")) if path.is_file()
              for secret in (KEY, PASSWORD) if secret in path.read_text(encoding="utf-8", errors="replace")]
    return found


def records(outputs: dict) -> list[dict]:
    """The run records the stage commands printed with ``--json``."""
    return [json.loads(done.stdout) for argv, done in outputs.items() if "--json" in argv]


@pytest.fixture(scope="module")
def answered(tmp_path_factory) -> tuple[dict, Path]:
    where = tmp_path_factory.mktemp("answered")
    return run_everything(where), where


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> tuple[dict, Path]:
    where = tmp_path_factory.mktemp("refused")
    return run_everything(where, brain=echoes_the_key), where


@pytest.mark.parametrize("case", ["answered", "refused"])
def test_no_secret_in_any_output_or_file(request, case):
    outputs, where = request.getfixturevalue(case)
    assert all((where / name).is_file() for name in WRITTEN), sorted(p.name for p in where.rglob("*"))
    assert all("Traceback" not in done.stderr for done in outputs.values())
    assert leaks(outputs, where) == []


def test_the_commands_really_ran_against_the_server(answered):
    outputs, where = answered
    assert all(done.returncode == 0 for done in outputs.values()), \
        {" ".join(argv): done.stderr for argv, done in outputs.items() if done.returncode}
    assert all(r["status"] == "answered" for r in records(outputs))
    shown = [json.loads(done.stdout) for argv, done in outputs.items() if "--show-config" in argv]
    assert all(view["api_key"] == "***" and view["base_url"].startswith("http://") for view in shown)


def test_the_echoed_key_reached_the_client_and_was_scrubbed(refused):
    outputs, where = refused
    assert all(r["status"] == "error" and "401" in r["error"] for r in records(outputs))
    assert all(done.returncode == 1 for argv, done in outputs.items() if "-q" in argv)
    runs = [json.loads(line) for line in (where / "d/runs.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    assert [r["status"] for r in runs] == ["error", "error"] and all("401" in r["error"] for r in runs)


def test_credentials_in_the_url_are_refused_before_anything_is_sent(tmp_path):
    from tests.support.cli import run_cli

    env = {"LLM_BASE_URL": f"http://user:{PASSWORD}@127.0.0.1:9/v1", "LLM_API_KEY": KEY, "LLM_MODEL": "m"}
    for argv in (("stage3_pure_loop", "-q", "你好"), ("compare", "--prompt", "你好", "--out", "d")):
        done = run_cli(*argv, env=env, cwd=tmp_path)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and "LLM_BASE_URL" in done.stderr and "LLM_API_KEY" in done.stderr
        assert PASSWORD not in done.stderr and KEY not in done.stderr


def echoes_the_key_in_its_answer(request: dict) -> dict:
    from tests.support.scripted import answer
    from shared.offline_llm.completion import build_completion
    from shared.offline_llm.conversation import read_conversation

    return build_completion(request, read_conversation(request), answer(f"你的 key 是 {KEY}，别告诉别人。"))


def test_a_key_echoed_in_an_answer_is_scrubbed(tmp_path):
    outputs = run_everything(tmp_path, brain=echoes_the_key_in_its_answer)
    assert leaks(outputs, tmp_path) == []
    assert all("***" in r["answer"] for r in records(outputs))
