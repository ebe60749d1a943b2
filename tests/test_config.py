"""Configuration: defaults, one-line errors naming the variable (exit 2), the key never shown.

End to end, the key is never shown by any command: tests/test_secrets.py.
"""
import pytest

from tests.support.cli import run_cli
from shared.harness.config import ConfigError, load_settings

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
    ({"LLM_BASE_URL": "http://[::1/v1", "LLM_API_KEY": "k", "LLM_MODEL": "m"}, "LLM_BASE_URL"),
    ({"LLM_BASE_URL": "http://localhost:99999/v1", "LLM_API_KEY": "k", "LLM_MODEL": "m"}, "LLM_BASE_URL"),
    ({"LLM_BASE_URL": "http://localhost:abc/v1", "LLM_API_KEY": "k", "LLM_MODEL": "m"}, "LLM_BASE_URL"),
    ({"LLM_BASE_URL": "http://u:p@localhost/v1", "LLM_API_KEY": "k", "LLM_MODEL": "m"}, "LLM_BASE_URL"),
    ({"LLM_BASE_URL": "http://localhost/v1", "LLM_API_KEY": "sk-a\nb", "LLM_MODEL": "m"}, "LLM_API_KEY"),
    ({"LLM_BASE_URL": "http://localhost/v1", "LLM_API_KEY": "ключ", "LLM_MODEL": "m"}, "LLM_API_KEY"),
    ({"OFFLINE_LLM_LATENCY_MS": str(10**17)}, "OFFLINE_LLM_LATENCY_MS"),
])
def test_bad_values_name_the_variable(env, variable):
    with pytest.raises(ConfigError) as caught:
        load_settings(env=env, dotenv=None)
    assert caught.value.variable == variable and variable in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("env, variable", [
    ({"LLM_TEMPERATURE": "hot"}, "LLM_TEMPERATURE"),
    ({"LLM_BASE_URL": "https://example.invalid/v1", "LLM_MODEL": "m"}, "LLM_API_KEY"),
    ({"OFFLINE_LLM_FAULTS": "nonsense"}, "OFFLINE_LLM_FAULTS"),
])
@pytest.mark.parametrize("stage", ["stage1_prebuilt", "stage2_stategraph", "stage3_pure_loop"])
def test_cli_config_errors_are_one_line_exit_2(stage, env, variable):
    done = run_cli(stage, "-q", "你好", env=env)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr and f"[{variable}]" in done.stderr


@pytest.mark.parametrize("argv", [["--temperature", "hot"], ["--max-steps", "0"], ["--bogus"],
                                  ["--faults", "nonsense"]])
def test_cli_usage_errors_are_one_line_exit_2(argv):
    done = run_cli("stage3_pure_loop", "-q", "你好", *argv)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_a_dotenv_that_is_not_utf8_is_one_line(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_bytes(b"LLM_MODEL=\xff\xfe\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(env={}, dotenv=dotenv)
    assert caught.value.variable == ".env" and "UTF-8" in str(caught.value)


def test_a_bad_key_is_named_but_never_shown():
    with pytest.raises(ConfigError) as caught:
        load_settings(env={"LLM_BASE_URL": "http://localhost/v1", "LLM_API_KEY": SECRET[:9] + "\n" + SECRET[9:], "LLM_MODEL": "m"},
                      dotenv=None)
    assert caught.value.variable == "LLM_API_KEY" and SECRET[9:] not in str(caught.value)
