"""compare：同一批问题跑过每一个实现，逐轮对比 trace。

Same prompts through every implementation, traces diffed: this package proves the
article's claim (same mechanism, same trace at temperature 0) and separates the two
causes of a difference, the mechanism and the sampling.

- :mod:`compare.matching`: each call reduced to a canonical key; trajectory matching as
  multiset comparisons of keys (agentevals' four modes);
- :mod:`compare.verdicts`: one run against a baseline, the verdict of a protocol group,
  whether a run passes, drift statistics (pass^k, strategy share, guesses per run);
- :mod:`compare.traces`: distinct traces with their letters and short names;
- :mod:`compare.report`: the report's data (dataclasses, JSON by ``asdict``); its views are
  :mod:`compare.render_text`, :mod:`compare.render_markdown`, :mod:`compare.render_html`
  (with :mod:`compare.sequence_svg`), sharing the wording of :mod:`compare.sentences`;
  :mod:`compare.report_files` writes them;
- around them: the command line, the suite (:mod:`compare.suite`), the sweep, cassettes,
  the request-level check (:mod:`compare.wire`), the stage pages (:mod:`compare.stage_docs`).
"""
