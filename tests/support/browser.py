"""Open a page in headless Chromium and watch it through the DevTools protocol (no driver to install).

:func:`open_page` starts Debian's ``chromium`` with a fresh profile and every background
service off, loads a ``file://`` page, and returns what a test checks: console errors and
uncaught exceptions, every network request the page made, the value of a JavaScript
expression evaluated in it, and a PNG screenshot. The DevTools socket is on 127.0.0.1, so
the tests' loopback-only guard lets it through.
"""
from __future__ import annotations

import base64
import itertools
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from websockets.sync.client import connect

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--window-size=1400,1000")
TIMEOUT = 60


@dataclass
class PageVisit:
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    value: object = None


def open_page(path: Path, expression: str, screenshot: Path) -> PageVisit:
    """Load ``path``, evaluate ``expression`` (JSON-serialisable result) and save a full-page screenshot."""
    with tempfile.TemporaryDirectory() as profile:
        browser = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                   stderr=subprocess.PIPE, text=True)
        try:
            url = _devtools_url(browser)
            with connect(url, max_size=None, open_timeout=TIMEOUT) as socket:
                return _visit(_Session(socket), path, expression, screenshot)
        finally:
            browser.terminate()
            browser.wait(timeout=TIMEOUT)


def _devtools_url(browser: subprocess.Popen) -> str:
    for line in browser.stderr:
        if found := re.search(r"DevTools listening on (ws://\S+)", line):
            return found.group(1)
    raise RuntimeError("chromium exited before opening its DevTools socket")


class _Session:
    def __init__(self, socket):
        self.socket, self.ids, self.events, self.session = socket, itertools.count(1), [], None

    def call(self, method: str, **params):
        message = {"id": next(self.ids), "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv(timeout=TIMEOUT))
            if reply.get("id") == message["id"]:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.socket.recv(timeout=TIMEOUT)))


def _visit(cdp: _Session, path: Path, expression: str, screenshot: Path) -> PageVisit:
    target = cdp.call("Target.createTarget", url="about:blank")["targetId"]
    cdp.session = cdp.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        cdp.call(f"{domain}.enable")
    cdp.call("Page.navigate", url=path.resolve().as_uri())
    cdp.wait_for("Page.loadEventFired")
    result = cdp.call("Runtime.evaluate", expression=expression, returnByValue=True)
    shot = cdp.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    visit = PageVisit(value=result["result"].get("value"))
    for event in cdp.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            visit.console_errors.append(json.dumps(params.get("args"), ensure_ascii=False))
        elif method == "Runtime.exceptionThrown":
            visit.console_errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            visit.console_errors.append(params["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            visit.requests.append(params["request"]["url"])
    return visit
