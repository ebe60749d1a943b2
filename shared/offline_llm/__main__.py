"""``python -m shared.offline_llm [--port N] [--host 127.0.0.1]``：把离线模型当独立服务器跑。

The embedded model as a standalone OpenAI-compatible server, for curl, the ``openai``
SDK or any other client. Runs in the foreground until Ctrl-C. Reads ``OFFLINE_LLM_FAULTS``,
``OFFLINE_LLM_SEED`` and ``OFFLINE_LLM_LATENCY_MS`` (environment or ``.env``) through
:func:`shared.harness.config.load_settings_or_exit`; a bad value or a bad flag is one line on
stderr and exit status 2.

Left out: daemonising, TLS, access logs (the server is silent on purpose).
"""
from __future__ import annotations

import argparse
import sys
import threading

from shared.harness.arguments import OneLineParser
from shared.harness.config import load_settings_or_exit
from shared.offline_llm.server import OfflineServer

DEFAULT_PORT = 8000
READY_LINE = ("离线模型已启动 (offline model, a rule-based policy, not an LLM): {base_url}  "
              "试试 / try: curl {base_url}/chat/completions -H 'Content-Type: application/json' "
              "-d '{{\"model\": \"offline\", \"messages\": [{{\"role\": \"user\", \"content\": \"北京天气怎么样？\"}}], "
              "\"tools\": [{{\"type\": \"function\", \"function\": {{\"name\": \"get_weather\", \"parameters\": "
              "{{\"type\": \"object\", \"properties\": {{\"city\": {{\"type\": \"string\"}}}}}}}}}}]}}'")
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


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m shared.offline_llm",
                            description="The embedded offline model as an OpenAI-compatible server.")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    args = parser.parse_args(argv)
    settings = load_settings_or_exit()
    server = OfflineServer(host=args.host, port=args.port, faults=settings.offline_faults,
                           seed=settings.offline_seed, latency_ms=settings.offline_latency_ms)
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
    raise SystemExit(main())
