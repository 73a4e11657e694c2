"""A real headless Chromium driven over the W3C WebDriver protocol by Debian's chromedriver (installed
by `make test`): the login page test and the frontends test share it."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.waiting import until

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C WebDriver element key
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class WebDriver:
    def __init__(self, base: str, session: str) -> None:
        self.http = httpx.Client(base_url=f"{base}/session/{session}", timeout=60)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        r = self.http.request(method, path, json=body)
        assert r.status_code == 200, r.text
        return r.json()["value"]

    def find(self, css: str) -> str:
        found = self.call("POST", "/element", {"using": "css selector", "value": css})
        assert ELEMENT in found, found
        return str(found[ELEMENT])

    def type(self, css: str, text: str) -> None:
        self.call("POST", f"/element/{self.find(css)}/value", {"text": text})

    def click(self, css: str) -> None:
        self.call("POST", f"/element/{self.find(css)}/click", {})

    def text(self, css: str) -> str:
        return str(self.call("GET", f"/element/{self.find(css)}/text"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def chromium_session(profile: Path) -> Iterator[WebDriver]:
    """chromedriver on a free loopback port, one headless Chromium session with its own profile dir."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail("chromium and chromedriver are missing: `make test` installs them (chromium, chromium-driver)")
    port = _free_port()
    proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    session = None
    try:
        def ready() -> bool:
            try:
                return bool(httpx.get(f"{base}/status", timeout=2).json()["value"]["ready"])
            except (httpx.HTTPError, ValueError, KeyError):
                return False

        until(ready, 30, "chromedriver")
        options = {"binary": chromium, "args": [*CHROMIUM_ARGS, f"--user-data-dir={profile}"]}
        r = httpx.post(f"{base}/session", timeout=120, json={"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}})
        assert r.status_code == 200, r.text
        session = r.json()["value"]["sessionId"]
        yield WebDriver(base, session)
    finally:
        if session:
            httpx.delete(f"{base}/session/{session}", timeout=60)
        proc.terminate()
        proc.wait(30)
