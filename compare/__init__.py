"""compare：同一批问题跑过每一个实现，逐轮对比 trace。

Same prompts through every implementation, traces diffed: this package proves the
article's claim (same mechanism, same trace at temperature 0) and separates the two
causes of a difference, the mechanism and the sampling.

The pure logic (no I/O, no model calls) lives in two modules:
- :mod:`compare.matching`: a run's normalised trace, argument comparison
  (exact / by value / ignored) and the four call-match modes of agentevals
  (strict / unordered / subset / superset), with a best pairing of calls;
- :mod:`compare.verdicts`: the verdict per prompt and temperature
  (``equivalent`` / ``strategy_differs`` / ``diverged``) with its first difference, and the
  drift statistics over several runs (distinct traces, parallel share, pass^k).

The harness around them (command line, suite, concurrency, cassettes, reports) is the
rest of the package.
"""
