"""写报告文件：``report.json``、``report.md``、``report.html`` 放进 ``--out`` 目录。

The one place that knows all three views; the report model (:mod:`compare.report`) knows
none of them, so there is no import cycle. Each file is replaced whole
(:func:`compare.atomic_file.write_atomically`): a kill while writing leaves the previous
report, never half of one.

Left out: what is in the files (the views), the results file of a sweep (:mod:`compare.sweep`).
"""
from __future__ import annotations

import json
from pathlib import Path

from compare.atomic_file import write_atomically
from compare.render_html import render_html
from compare.render_markdown import render_markdown
from compare.report import Report


def write_reports(report: Report, out: Path) -> list[Path]:
    """``report.json``, ``report.md`` and ``report.html`` under ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "report.json": json.dumps(report.to_json(), ensure_ascii=False, indent=1) + "\n",
        "report.md": render_markdown(report),
        "report.html": render_html(report),
    }
    for name, text in files.items():
        write_atomically(out / name, text)
    return [out / name for name in files]
