"""Configuration: defaults, one-line errors naming the variable (exit 2), the key never shown."""
import subprocess
import sys
from pathlib import Path

import pytest

from shared.config import ConfigError, load_settings

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-test-DO-NOT-PRINT-1234567890"


def test_defaults_are_the_offline_model():
    settings = load_settings(env={}, dotenv=None)
    assert settings.offline and settings.model == "offline"
    assert settings.temperature == 0 and settings.timeout == 60 and settings.offline_faults == ()


def test_a_real_endpoint_needs_key_and_model():
    env = {"LLM_BASE_URL": "https://api.deepseek.com/v1", "LLM_API_KEY": SECRET, "LLM_MODEL": "deepseek-chat"}
    settings = load_settings(env=env, dotenv=None)
    assert not settings.offline and settings.model == "deepseek-chat"
    assert SECRET not in repr(settings) and SECRET not in str(settings.describe())


def test_dotenv_fills_what_the_environment_leaves_unset(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("LLM_TEMPERATURE=0.5\nLLM_TIMEOUT=30\n")
    settings = load_settings(env={"LLM_TIMEOUT": "5"}, dotenv=dotenv)
    assert settings.temperature == 0.5 and settings.timeout == 5


@pytest.mark.parametrize("env, variable", [
    ({"LLM_BASE_URL": "not a url", "LLM_API_KEY": "k", "LLM_MODEL": "m"}, "LLM_BASE_URL"),
    ({"LLM_BASE_URL": "ftp://x/v1", "LLM_API_KEY": "k", "LLM_MODEL": "m"}, "LLM_BASE_URL"),
    ({"LLM_BASE_URL": "https://api.deepseek.com/v1", "LLM_MODEL": "m"}, "LLM_API_KEY"),
    ({"LLM_BASE_URL": "https://api.deepseek.com/v1", "LLM_API_KEY": "k"}, "LLM_MODEL"),
    ({"LLM_TEMPERATURE": "hot"}, "LLM_TEMPERATURE"),
    ({"LLM_TEMPERATURE": "nan"}, "LLM_TEMPERATURE"),
    ({"LLM_TEMPERATURE": "5"}, "LLM_TEMPERATURE"),
    ({"LLM_TIMEOUT": "-1"}, "LLM_TIMEOUT"),
    ({"OFFLINE_LLM_FAULTS": "no_such_fault"}, "OFFLINE_LLM_FAULTS"),
    ({"OFFLINE_LLM_SEED": "x"}, "OFFLINE_LLM_SEED"),
    ({"OFFLINE_LLM_LATENCY_MS": "-5"}, "OFFLINE_LLM_LATENCY_MS"),
    ({"AGENT_CLOCK": "yesterday"}, "AGENT_CLOCK"),
])
def test_bad_values_name_the_variable(env, variable):
    with pytest.raises(ConfigError) as caught:
        load_settings(env=env, dotenv=None)
    assert caught.value.variable == variable and variable in str(caught.value)
    assert "\n" not in str(caught.value)


def _cli(*args, env):
    clean = {"PATH": "/usr/bin:/bin", "AGENT_CLOCK": "2026-11-30T18:04:51"}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env={**clean, **env},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("env", [
    {"LLM_TEMPERATURE": "hot"},
    {"LLM_BASE_URL": "https://example.invalid/v1", "LLM_MODEL": "m"},
    {"OFFLINE_LLM_FAULTS": "nonsense"},
])
@pytest.mark.parametrize("stage", ["stage1_prebuilt", "stage2_stategraph", "stage3_pure_loop"])
def test_cli_config_errors_are_one_line_exit_2(stage, env):
    done = _cli(stage, "-q", "你好", env=env)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr and next(iter(env)) in done.stderr


@pytest.mark.parametrize("argv", [["--temperature", "hot"], ["--max-steps", "0"], ["--bogus"],
                                  ["--faults", "nonsense"]])
def test_cli_usage_errors_are_one_line_exit_2(argv):
    done = _cli("stage3_pure_loop", "-q", "你好", *argv, env={})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_the_key_never_appears_in_any_output():
    # 一个连不上的真实端点（本机 9 号端口没人监听）：运行失败，但 key 不能出现在任何输出里
    env = {"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_API_KEY": SECRET, "LLM_MODEL": "m", "LLM_TIMEOUT": "2"}
    for args in (["-q", "你好"], ["-q", "你好", "--json"], ["--show-config"]):
        done = _cli("stage3_pure_loop", *args, env=env)
        assert SECRET not in done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    failed = _cli("stage3_pure_loop", "-q", "你好", "--json", env=env)
    assert failed.returncode == 1 and '"status": "error"' in failed.stdout
