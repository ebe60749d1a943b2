"""``python -m shared.offline_llm [--port N] [--host 127.0.0.1] [--log] [--fixed-ids]``：把离线模型当独立服务器跑。

The embedded model as a standalone OpenAI-compatible server, for curl, the ``openai``
SDK or any other client. Runs in the foreground until Ctrl-C. Reads the variables listed
in :data:`ENVIRONMENT` (environment or ``.env``) through
:func:`shared.harness.config.load_settings_or_exit`; ``--help`` lists them. A bad value or a
bad flag is one line on stderr and exit status 2. ``--log`` prints one line per request on
stderr (method, path, status, a short summary; never a header, so never a key);
``--fixed-ids`` makes completion and tool-call ids deterministic (for replays).

Left out: daemonising, TLS, log files and rotation.
"""
from __future__ import annotations

import argparse
import sys
import threading

from shared.harness.arguments import OneLineParser
from shared.harness.process import exit_status_of
from shared.harness.config import load_settings_or_exit
from shared.offline_llm.faults import ALL_FAULT_MODES as FAULT_MODES
from shared.offline_llm.server import OfflineServer

DEFAULT_PORT = 8000
READY_LINE = ("离线模型已启动 (offline model, a rule-based policy, not an LLM): {base_url}  "
              "试试 / try: curl {base_url}/chat/completions -H 'Content-Type: application/json' "
              "-d '{{\"model\": \"offline\", \"messages\": [{{\"role\": \"user\", \"content\": \"北京天气怎么样？\"}}], "
              "\"tools\": [{{\"type\": \"function\", \"function\": {{\"name\": \"get_weather\", \"parameters\": "
              "{{\"type\": \"object\", \"properties\": {{\"city\": {{\"type\": \"string\"}}}}}}}}}}]}}'")
# --help 列出的环境变量（也可以写在仓库根目录的 .env 里）
ENVIRONMENT = (
    ("OFFLINE_LLM_FAULTS", f"fault modes, comma-separated: {', '.join(FAULT_MODES)} "
                           "(故障模式，见 shared/offline_llm/faults.py)"),
    ("OFFLINE_LLM_SEED", "integer seed for temperature > 0 when a request has no seed (采样的种子)"),
    ("OFFLINE_LLM_LATENCY_MS", "milliseconds to wait before each answer (模拟延迟), default 0"),
)
ERR_PORT = "--port 应是 0 到 65535 之间的整数，收到 {value!r}"
ERR_BIND = "无法在 {host}:{port} 上启动: {reason}"


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(ERR_PORT.format(value=value)) from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(ERR_PORT.format(value=value))
    return port


def environment_help() -> str:
    """The ``--help`` epilog: every environment variable the server reads."""
    width = max(len(name) for name, _ in ENVIRONMENT)
    lines = [f"  {name.ljust(width)}  {meaning}" for name, meaning in ENVIRONMENT]
    return "environment variables (or a .env file in the current directory):\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m shared.offline_llm",
                            description="The embedded offline model as an OpenAI-compatible server "
                                        "(a deterministic rule-based policy, not a language model).",
                            epilog=environment_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--log", action="store_true",
                        help="one line per request on stderr: method, path, status, short summary (never a key)")
    parser.add_argument("--fixed-ids", action="store_true",
                        help="deterministic completion and tool-call ids (default: unique per response)")
    args = parser.parse_args(argv)
    settings = load_settings_or_exit()
    server = OfflineServer(host=args.host, port=args.port, faults=settings.offline_faults,
                           seed=settings.offline_seed, latency_ms=settings.offline_latency_ms,
                           fixed_ids=args.fixed_ids, log=sys.stderr if args.log else None)
    try:
        server.start()
    except OSError as error:
        print(ERR_BIND.format(host=args.host, port=args.port, reason=error.strerror or error), file=sys.stderr)
        return 2
    print(READY_LINE.format(base_url=server.base_url), flush=True)
    try:
        threading.Event().wait()          # 前台阻塞，直到 Ctrl-C
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status_of(main))
