"""模型从哪里来：文章里 ``config.py`` 那几行 ``llm = ChatOpenAI(model=..., base_url=..., api_key=...)``。

每个 lesson 的 ``run_agent`` 都可以只传一个问题，就像文章里那样::

    from stage3_pure_loop.agent import run_agent
    messages = run_agent("现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？")

没传模型时，它们从这里拿：配置的端点（环境变量或 ``.env`` 里的 ``LLM_BASE_URL`` /
``LLM_API_KEY`` / ``LLM_MODEL``），什么都没配就是内置离线模型（进程里第一次用到时启动）。
命令行和 compare 不走这里：它们每次运行显式传入模型，好按运行计量请求。

本文件不包含：端点的解析与校验、离线服务器本身（都在 ``shared/harness/``）。
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from shared.harness.endpoint import default_endpoint

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI
    from openai import OpenAI


def chat_model() -> ChatOpenAI:
    """第 1-3 阶段用的 ``ChatOpenAI``（工具由各阶段自己 ``bind_tools``）。"""
    endpoint = default_endpoint()
    return endpoint.chat_model(temperature=endpoint.temperature)


def openai_client() -> OpenAI:
    """零框架 loop 用的原生 ``openai.OpenAI`` 客户端。"""
    return default_endpoint().openai_client()


def model_name() -> str:
    """发给端点的模型名（``LLM_MODEL``；离线时是 ``offline``）。"""
    return default_endpoint().model


def temperature() -> float:
    """配置的采样温度（``LLM_TEMPERATURE``，默认 0）。"""
    return default_endpoint().temperature
