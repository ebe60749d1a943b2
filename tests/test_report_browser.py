"""report.html in a real browser: it loads with no console error and no network request, shows
every implementation and every distinct trace, and its sequence diagrams are drawn.

Runs where Debian's ``chromium`` is installed (``make check-browser`` installs it); skipped,
with the reason, where it is not. The screenshot is kept in the test's tmp directory.
"""
from __future__ import annotations

import json

import pytest

from compare.implementations import IMPLEMENTATIONS
from tests.support.agents import ARTICLE_QUESTION
from tests.support.browser import CHROMIUM, open_page
from tests.support.compare import run_compare

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium 未安装（make check-browser 会装上它）")

HOSTILE = "<script>console.error('ran')</script><img src=x onerror=console.error('img')>你好！"
CHECK = """(() => ({
  text: document.body.innerText,
  diagrams: [...document.querySelectorAll('svg.sequence')].map(svg => {
    const box = svg.getBoundingClientRect();
    return {width: box.width, height: box.height, arrows: svg.querySelectorAll('line[marker-end]').length};
  }),
  scripts: document.scripts.length,
}))()"""


def test_report_html_in_headless_chromium(offline, capsys, tmp_path):
    _, data = run_compare(capsys, offline, "--prompt", ARTICLE_QUESTION, "--prompt", HOSTILE,
                          "--temperature", "0", "0.7", "--runs", "3")
    visit = open_page(offline / "report.html", CHECK, tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert visit.console_errors == []
    assert [url for url in visit.requests if not url.startswith("file://")] == []
    page = visit.value
    assert page["scripts"] == 0 and HOSTILE in page["text"]          # 恶意的题目只是文字
    for name in IMPLEMENTATIONS:
        assert name in page["text"]
    titles = [t["letter"] + " " + t["name"] for p in data["prompts"] for t in p["traces"]]
    assert any("猜参 300" in title for title in titles), json.dumps(titles, ensure_ascii=False)
    for title in titles:
        assert title in page["text"]
    assert len(page["diagrams"]) == sum(len(p["traces"]) for p in data["prompts"])
    assert all(d["width"] > 200 and d["height"] > 100 and d["arrows"] >= 2 for d in page["diagrams"])
