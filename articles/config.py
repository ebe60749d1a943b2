"""文章里的 ``config.py``：给原样保存的文章代码提供 ``LLM_BASE_URL`` / ``LLM_API_KEY`` / ``LLM_MODEL``。

The articles' own files (``agent_loop.py`` here) start with ``from config import LLM_BASE_URL,
LLM_API_KEY, LLM_MODEL``. This module answers that import with the repository's own
configuration: the environment and the ``.env`` of the current directory (run from the
repository root, as every command in the README). With ``LLM_BASE_URL`` unset it starts the
embedded offline model in this process (the same :func:`default_endpoint` a Python session
uses) and exposes its address, so the article's ``ChatOpenAI(base_url=..., api_key=...)``
talks to it over HTTP like to any endpoint.

Left out: everything else the articles' config may have held (their model names, their keys).
"""
import sys
from pathlib import Path

# 文章的文件从自己的目录 import config；仓库的代码在上一层。把仓库根目录放进 sys.path，
# 无论从哪里运行 articles/agent_loop.py，shared 都找得到。
REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from shared.harness.config import ConfigError  # noqa: E402  （必须在上面两行之后）
from shared.harness.endpoint import default_endpoint  # noqa: E402

try:
    _endpoint = default_endpoint()      # 没设 LLM_BASE_URL：这里启动内置离线模型
except ConfigError as error:            # 配置写错是用法错误：一行说明，和仓库的命令一样（不是 traceback）
    print(f"配置错误 [{error.variable}]: {error}", file=sys.stderr)
    raise SystemExit(2) from None

LLM_BASE_URL = _endpoint.base_url
LLM_API_KEY = _endpoint.api_key
LLM_MODEL = _endpoint.model
