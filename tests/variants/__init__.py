"""故意做错一处的实现，给 compare 的测试用：每个都是纯 Python loop 只改了一个地方。

Each module here is a ``run_agent(user_input, max_steps, *, llm)`` of the function-calling
protocol, registered in a test (``monkeypatch.setitem(IMPLEMENTATIONS, ...)``) so that
compare must catch it with the right verdict and the right first difference:

- :mod:`tests.variants.reversed_calls`: executes a round's calls in reverse order;
- :mod:`tests.variants.english_errors`: words tool errors differently;
- :mod:`tests.variants.early_stop`: stops one step before its budget.
"""
