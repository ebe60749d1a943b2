import json
import re
from openai import OpenAI

client = OpenAI(
    api_key="your-deepseek-api-key",
    base_url="https://api.deepseek.com",
)
MODEL = "deepseek-v4-flash"
MAX_ITER = 10

TOOLS = {
    "get_weather": {
        "function": lambda city: {"北京": "晴天，25°C", "上海": "多云，28°C", "深圳": "阵雨，30°C"}.get(city, "未知城市"),
        "description": "查询城市天气，参数 city: 城市名称",
    },
    "calculator": {
        "function": lambda expr: str(eval(expr)),
        "description": "数学计算，参数 expression: 表达式",
    },
}

SYSTEM_PROMPT = """你是智能助手，可以调用工具完成任务。
需要工具时输出JSON：{"tool":"工具名","args":{"参数":"值"}}
任务完成时直接输出答案。可用工具：
{tools_desc}"""


def agent_loop(query: str) -> str:
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT.format(
            tools_desc="\n".join(f"- {n}: {i['description']}" for n, i in TOOLS.items())
        )},
        {"role": "user", "content": query},
    ]
    last_calls = []

    for _ in range(MAX_ITER):
        resp = client.chat.completions.create(model=MODEL, messages=messages, temperature=0.0)
        reply = resp.choices[0].message.content.strip()

        # JSON 提取（容错）
        m = re.search(r'\{.*\}', reply, re.DOTALL)
        if m:
            try:
                tc = json.loads(m.group())
                name, args = tc.get("tool", ""), tc.get("args", {})
                if name in TOOLS:
                    # 死循环检测
                    call_key = f"{name}:{json.dumps(args, sort_keys=True)}"
                    last_calls.append(call_key)
                    if len(last_calls) >= 3 and len(set(last_calls[-3:])) == 1:
                        return "检测到重复工具调用，任务已终止。请检查工具定义或尝试换个方式提问。"

                    result = TOOLS[name]["function"](**args)
                    messages.append({"role": "assistant", "content": reply})
                    messages.append({"role": "user", "content": f"工具结果：{result}\n请基于此结果给出最终答案，不要再调用工具。"})
                    continue
            except (json.JSONDecodeError, TypeError):
                pass

        return reply if len(reply) > 3 else "抱歉，未能生成有效回答，请重试。"

    return "达到最大循环次数，任务终止。"


if __name__ == "__main__":
    print("测试1:", agent_loop("北京今天天气怎么样？"))
    print("测试2:", agent_loop("365 * 24 等于多少？然后告诉我深圳天气"))
