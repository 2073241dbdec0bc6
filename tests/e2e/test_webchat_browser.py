"""The web chat in a real browser: headless Debian chromium (driven by Playwright) on the
page that ``clawbot run`` serves through its control API, the real OpenAI SDK answering from
the fake LLM, the real exec tool and its approval.

Signed in with the gateway's token, a message gets its reply streamed in piece by piece, a
tool call shows as its own line, the approval notice offers buttons and "Allow once" runs the
command. Without the token, or with a wrong one, the socket is closed with 4401 and the page
asks for the token again. The token never appears in a URL or in clawbot's output.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clawbot.testing.cli import subprocess_env
from clawbot.testing.fake_llm import Reply, ToolCallSpec

CHROMIUM = "/usr/bin/chromium"
READY_S = 30.0
WAIT_MS = 60_000

CLOSE_CODE = """async ([token, first]) => await new Promise((resolve) => {
    const ws = new WebSocket(`ws://${location.host}/chat/ws`);
    ws.addEventListener("open", () => ws.send(JSON.stringify(first === "auth" ? {type: "auth", token} : {type: "hello", chat: "web-x"})));
    ws.addEventListener("close", (event) => resolve(event.code));
})"""


def _start_gateway(home: Path, base_url: str, workspace: Path) -> subprocess.Popen[bytes]:
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
        "[gateway]\nport = 0\n\n[channels.terminal]\nenabled = false\n"
    )
    return subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=home,
        env=subprocess_env(home),
        stdin=subprocess.DEVNULL,
        stdout=(home / "run.out").open("wb"),
        stderr=(home / "run.err").open("wb"),
    )


def _address(home: Path, process: subprocess.Popen[bytes]) -> str:
    """The control API's address, once the gateway says where it listens."""
    endpoint = home / "gateway" / "endpoint.json"
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        assert process.poll() is None, (home / "run.err").read_text()
        try:
            data = json.loads(endpoint.read_text())
            return f"http://{data['host']}:{data['port']}"
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    raise AssertionError(f"the gateway never listened: {(home / 'run.err').read_text()}")


@pytest.mark.hook_emission("clawbot_web_routes")
def test_the_web_chat_streams_replies_shows_tool_calls_and_approves_with_a_button(tmp_path: Path, fake_llm_thread) -> None:
    from playwright.sync_api import expect, sync_playwright

    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    reply = "Hello from the web chat! " + "It streams in as it is written. " * 6
    fake_llm_thread.queue(
        reply,
        Reply(text="Let me make it.", tool_calls=[ToolCallSpec("exec", {"command": "touch approved.txt"})]),
        "That needs your approval.",
        "Done: approved.txt exists now.",
    )
    process = _start_gateway(home, fake_llm_thread.base_url, workspace)
    try:
        address = _address(home, process)
        token = (home / "gateway" / "token").read_text().strip()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page()
            page.set_default_timeout(WAIT_MS)
            expect.set_options(timeout=WAIT_MS)  # its own default is 5 s
            frames: list[dict] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(json.loads(data))))
            page.goto(f"{address}/chat/")

            # no token, or a wrong one: the socket is refused before anything answers
            assert page.evaluate(CLOSE_CODE, [None, "hello"]) == 4401
            assert page.evaluate(CLOSE_CODE, ["not-" + token, "auth"]) == 4401
            page.fill("#token", "wrong-token")
            page.click("#login-form button")
            expect(page.locator("#login-error")).to_contain_text("not accepted")
            assert not [f for f in frames if f.get("type") == "welcome"]

            page.fill("#token", token)
            page.click("#login-form button")
            expect(page.locator("#status")).to_have_text("connected")
            assert token not in page.url and page.evaluate("sessionStorage.getItem('clawbot.token')") == token

            page.fill("#text", "hello")
            page.press("#text", "Enter")
            expect(page.locator("#log li.user")).to_have_text("hello")
            expect(page.locator("#log li.reply").first).to_have_text(reply)
            deltas = [f["text"] for f in frames if f.get("type") == "delta"]
            assert len(deltas) > 1 and "".join(deltas) == reply.rstrip()  # it came in pieces, as written (a trailing space is never shown)
            expect(page.locator("#sessions")).to_contain_text("agent:main:main")

            page.fill("#text", "make the file")
            page.press("#text", "Enter")
            expect(page.locator("#log li.tool")).to_contain_text("exec")
            expect(page.locator("#log li.tool")).to_contain_text("touch approved.txt")
            notice = page.locator("#log li.notice", has_text="Approval needed")
            expect(notice.locator(".question")).to_contain_text("touch approved.txt")
            assert not (workspace / "approved.txt").exists()
            notice.get_by_role("button", name="Allow once").click()
            expect(page.locator("#log li.notice", has_text="Approved (once); exec is running")).to_be_visible()
            expect(page.locator("#log li.reply").last).to_have_text("Done: approved.txt exists now.")
            assert (workspace / "approved.txt").exists()
            assert all(b.is_disabled() for b in notice.get_by_role("button").all())
            browser.close()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    output = (home / "run.out").read_text() + (home / "run.err").read_text()
    assert "Traceback" not in output and token not in output
    assert not re.search(re.escape(token), "\n".join(p.read_text(errors="replace") for p in home.rglob("*.log")))


def test_hook_web_routes_the_page_and_its_files_are_served_with_a_strict_policy(tmp_path: Path, fake_llm_thread) -> None:
    import urllib.request

    home = tmp_path / "home"
    home.mkdir()
    process = _start_gateway(home, fake_llm_thread.base_url, tmp_path / "ws")
    try:
        address = _address(home, process)
        with urllib.request.urlopen(f"{address}/chat/", timeout=10) as response:
            page, headers = response.read().decode(), response.headers
        assert "gateway/token" in page and headers["Content-Type"].startswith("text/html")
        policy = headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "unsafe" not in policy  # the page works without inline code
        with urllib.request.urlopen(f"{address}/chat/app.js", timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/javascript")
            assert b"textContent" in response.read()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
