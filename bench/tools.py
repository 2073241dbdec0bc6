"""Cost of tool calls: the kernel's dispatch overhead, and ``grep`` over a large workspace.

Run:  cd /work/main && env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/tools.py [--calls 3000] [--runs 7]

Part 1, dispatch overhead (target <= 100 us median). A no-op tool goes through everything a
real call does: lookup among the policy-filtered tools, the JSON check of the raw
arguments, schema validation, a ``before_tool_call`` hook (a plugin that lets it through)
and an ``after_tool_call`` hook (a plugin that counts), the timeout scope and the result
message. Measured three ways: an ``async def`` tool (runs on the loop), a plain ``def`` tool
(runs in a worker thread, so a slow handler cannot freeze the gateway), and for reference
the async tool with no hook plugins installed. Median, p90 and p99 per call.

Part 2, ``grep`` over a 10,000-file workspace (about 20 MB of Python-like text in 100
folders, two matching lines per hundred files): clawbot's ``grep`` tool against ``grep -rn``
and, when installed, ``rg -n``, side by side in one run; median wall time of N runs after
one warm-up each, and the number of matches each found (the tool stops at its result cap).

Part 3, ``apply_patch`` against crafted hunks (a patch built to burn CPU): each is a
~6 KB patch whose hunk is made of lines the file repeats thousands of times, so a scan of
every position costs file lines x hunk lines comparisons (4-6 s each before the index).
Wall time of the tool call and how it ended; every one must end well under 2 s, and on an
error nothing is written. A normal 10-hunk patch of a 20,000-line file is timed alongside.

Part 4, the ``exec`` gate (allowlist mode, default safe bins): how long deciding run / ask
takes for everyday lines, and for adversarial ones near the 8,000-character cap (a
destructive-pattern regex once took a minute on 82 characters).

Part 5, a whole ``exec`` call of ``true`` through the real tool (gate, sandbox set-up,
spawn, wait, result), without a sandbox (``sandbox = "off"``: resource limits only) and in
each sandbox usable here, the modes taking turns so machine load hits them alike. Median
and p90, and the median cost the sandbox adds (target: at most 10 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clawbot import Tool, ToolCallBlock, ToolCallDecision, ToolResult, hookimpl
from clawbot.agent.toolrun import ToolRunContext, run_tool_call

SCHEMA = {
    "type": "object",
    "properties": {"note": {"type": "string"}},
    "required": ["note"],
    "additionalProperties": False,
}


class Guard:
    @hookimpl
    def clawbot_before_tool_call(self, event):  # noqa: ANN001, ANN201
        return ToolCallDecision() if event.tool_name != "forbidden" else ToolCallDecision.block("no")


class Counter:
    calls = 0

    @hookimpl
    def clawbot_after_tool_call(self, event):  # noqa: ANN001, ANN201
        Counter.calls += 1


async def _noop_async(call):  # noqa: ANN001, ANN202
    return ToolResult.text("ok")


def _noop_sync(call):  # noqa: ANN001, ANN202
    return ToolResult.text("ok")


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return f"median {statistics.median(ordered):7.1f} us   p90 {pick(0.9):7.1f} us   p99 {pick(0.99):7.1f} us"


async def _kernel(home: Path, with_hooks: bool):  # noqa: ANN202
    from clawbot.testing.kernels import build_kernel

    plugins = {"guard": Guard(), "counter": Counter()} if with_hooks else {}
    return await build_kernel(home=home, plugins=plugins)


async def dispatch(calls: int) -> None:
    print(f"Part 1: dispatching a no-op tool, {calls} calls each after 200 warm-up calls")
    with tempfile.TemporaryDirectory() as tmp:
        for label, handler, hooks in (
            ("async tool, before+after hooks", _noop_async, True),
            ("sync tool (worker thread), hooks", _noop_sync, True),
            ("async tool, no hook plugins", _noop_async, False),
        ):
            kernel = await _kernel(Path(tmp) / label.replace(" ", "_"), hooks)
            tool = Tool("noop", "does nothing", SCHEMA, handler, summary="no-op", group="bench")
            ctx = ToolRunContext(kernel, {"noop": tool}, "main", "agent:main:main", Path(tmp))
            block = ToolCallBlock(id="c1", name="noop", arguments={"note": "x"}, raw_arguments='{"note": "x"}')
            for _ in range(200):
                await run_tool_call(ctx, block)
            samples = []
            for _ in range(calls):
                started = time.perf_counter()
                await run_tool_call(ctx, block)
                samples.append((time.perf_counter() - started) * 1e6)
            print(f"  {label:36s} {_percentiles(samples)}")
            await kernel.aclose()


def make_workspace(root: Path, files: int = 10_000) -> None:
    body = "".join(f"    value_{i} = compute({i}) + offset  # keep the lines realistic\n" for i in range(40))
    for n in range(files):
        folder = root / f"pkg{n % 100:03d}"
        folder.mkdir(exist_ok=True)
        marker = f"def handler_{n}(event):\n    return TODO_FIX_ME\n" if n % 100 == 0 else ""
        (folder / f"module_{n}.py").write_text(f'"""Module {n}."""\n\n{marker}def main():\n{body}')


def _median_ms(run, runs: int) -> tuple[float, object]:  # noqa: ANN001
    outcome = run()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        outcome = run()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), outcome


def grep_comparison(runs: int) -> None:
    from clawbot import ToolCall
    from clawbot_tools.config import ToolsSettings
    from clawbot_tools.fs import tools as fs_tools

    grep_tool = next(t for t in fs_tools(ToolsSettings()) if t.name == "grep")
    pattern = r"TODO_FIX_ME|def handler_[0-9]+"
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        make_workspace(ws)
        size = sum(p.stat().st_size for p in ws.rglob("*.py")) / 1e6
        print(f"\nPart 2: grep {pattern!r} over 10,000 files ({size:.1f} MB), {runs} runs each after one warm-up")

        def tool() -> int:
            call = ToolCall("c1", "grep", {"pattern": pattern, "max_results": 1000}, "main", "agent:main:main", ws)
            result = grep_tool.handler(call)
            return int(result.details.get("matches", len(result.content[0].text.splitlines())))

        def external(argv: list[str]):  # noqa: ANN202
            return lambda: subprocess.run(argv, cwd=ws, capture_output=True, text=True).stdout.count("\n")

        rows = [("clawbot grep tool", tool), ("grep -rnE", external(["grep", "-rnE", pattern, "."]))]
        if shutil.which("rg"):
            rows.append(("rg -n", external(["rg", "-n", pattern, "."])))
        else:
            print("  (rg is not installed here: compared with grep only)")
        results = {}
        for label, run in rows:
            median, found = _median_ms(run, runs)
            results[label] = median
            print(f"  {label:20s} median {median:8.1f} ms   matches {found}")
        base = results["grep -rnE"]
        print(f"  ratio clawbot/grep: {results['clawbot grep tool'] / base:.2f}x")


def patch_adversarial(runs: int) -> None:
    from clawbot import ToolCall
    from clawbot_tools.config import ToolsSettings
    from clawbot_tools.fs import tools as fs_tools

    patch_tool = next(t for t in fs_tools(ToolsSettings()) if t.name == "apply_patch")
    context = lambda lines: [" " + line for line in lines]  # noqa: E731
    normal_file = "".join(f"    value_{i} = compute({i}) + offset\n" for i in range(20_000))
    normal_body: list[str] = []
    for k in range(1, 11):
        i = k * 1800
        normal_body += ["@@", f"     value_{i - 1} = compute({i - 1}) + offset", f"-    value_{i} = compute({i}) + offset", f"+    changed_{i} = 0"]
    cases = [
        ("20k 'a' lines, hunk 1999 'a' + 'b'", "a\n" * 20_000, context(["a"] * 1999 + ["b"])),
        ("20k 'a' lines, hunk 299 'a' + 'b'", "a\n" * 20_000, context(["a"] * 299 + ["b"])),
        ("40k 'a ' lines (loose), 1999 'a' + 'b'", "a \n" * 40_000, context(["a"] * 1999 + ["b"])),
        ("40k 'a' lines, hunk 2000 'a' (all match)", "a\n" * 40_000, context(["a"] * 2000)),
        ("40k a/b lines, hunk (a b)x1000 + a a", "a\nb\n" * 20_000, context(["a", "b"] * 1000 + ["a", "a"])),
        ("40k a/'a ' lines, hunk 2000 'a'", "a\na \n" * 20_000, context(["a"] * 2000)),
        ("40k '  x' lines, 1200 '@@ x' anchors", "  x\n" * 40_000, ["@@ x"] * 1200 + [" y"]),
        ("normal: 20k-line file, 10 hunks", normal_file, normal_body),
    ]
    print(f"\nPart 3: apply_patch on crafted hunks, median of {runs} runs (the file is rewritten before each)")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        for label, content, body in cases:
            text = "\n".join(["*** Begin Patch", "*** Update File: f.txt", *body, "*** End Patch"])
            samples, outcome = [], ""
            for _ in range(runs):
                (ws / "f.txt").write_text(content)
                call = ToolCall("c1", "apply_patch", {"input": text}, "main", "agent:main:main", ws)
                started = time.perf_counter()
                result = patch_tool.handler(call)
                samples.append((time.perf_counter() - started) * 1000)
                message = result.content[0].text
                outcome = (
                    "applied"
                    if not result.is_error
                    else ("budget error" if "too much work" in message else "ambiguous" if "places" in message else "not found")
                )
            print(f"  {label:42s} {statistics.median(samples):8.1f} ms   {outcome} ({len(text)} B patch)")


def exec_gate(runs: int) -> None:
    from clawbot_tools.runtime.config import ExecSettings
    from clawbot_tools.runtime.exec_policy import PolicyInput, decide

    lines = {
        "ls -la ./src | head -20": "ls -la ./src | head -20",
        "git status && pytest -q tests": "git status && pytest -q tests",
        "grep -rn TODO . | sort | uniq -c": "grep -rn TODO . | sort | uniq -c",
        "7,900 chars of 'a=b '": "a=b " * 1975 + "rm -rf x",
        "7,900 chars of nested ${": "echo " + "${x-" * 1974 + "}",
        "7,900 chars of '; ls'": "ls" + "; ls" * 1974,
    }
    print(f"\nPart 4: exec gate decisions (allowlist mode), median of {runs * 30} runs")
    with tempfile.TemporaryDirectory() as tmp:
        ws = os.path.realpath(tmp)
        (Path(ws) / "src").mkdir()
        given = PolicyInput(ExecSettings(), cwd=ws, workspace=ws, path_value=os.environ.get("PATH", os.defpath), home=None)
        for label, line in lines.items():
            median, verdict = _median_ms(lambda line=line: decide(line, given), runs * 30)
            print(f"  {label:42s} {median * 1000:9.1f} us   {verdict.action}")


def exec_true(runs: int) -> None:
    from clawbot import ToolCall
    from clawbot.types import PluginContext
    from clawbot_tools.config import ToolsSettings
    from clawbot_tools.runtime import tools
    from clawbot_tools.runtime.config import ExecSettings
    from clawbot_tools.runtime.sandbox.choose import probe

    modes = ["off"] + [name for name in ("landlock", "bwrap") if probe(name)[0] is not None]
    count = runs * 15
    print(f"\nPart 5: exec of `true` through the tool, {count} calls per mode after 10 warm-up calls, modes taking turns")

    async def measure() -> dict[str, list[float]]:
        closers: list = []
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            ws.mkdir()
            env = {"PATH": "/usr/bin:/bin", "HOME": str(Path(tmp) / "home"), "LANG": "C.UTF-8"}
            handlers = {}
            for mode in modes:
                ctx = PluginContext(plugin_name="tools", state_dir=Path(tmp) / "state", env=env, on_close=closers.append)
                found = {t.name: t for t in tools(ToolsSettings(exec=ExecSettings(security="full", sandbox=mode)), ctx)}
                handlers[mode] = found["exec"].handler
            samples: dict[str, list[float]] = {mode: [] for mode in modes}
            for index in range(count + 10):
                for mode in modes:
                    call = ToolCall("c1", "exec", {"command": "true"}, "main", "agent:main:bench", ws)
                    started = time.perf_counter()
                    result = await handlers[mode](call)
                    elapsed = (time.perf_counter() - started) * 1000
                    assert result.details.get("status") == "exited", result
                    if index >= 10:
                        samples[mode].append(elapsed)
            for close in closers:
                await close()
        return samples

    samples = asyncio.run(measure())
    base = statistics.median(samples["off"])
    for mode, values in samples.items():
        values.sort()
        median = statistics.median(values)
        added = "" if mode == "off" else f"   +{median - base:.2f} ms over no sandbox"
        print(f"  {'sandbox = ' + repr(mode):24s} median {median:6.2f} ms   p90 {values[int(len(values) * 0.9)]:6.2f} ms{added}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--dispatch-only", action="store_true")
    parser.add_argument("--exec-only", action="store_true", help="only part 5 (exec of true with and without the sandbox)")
    args = parser.parse_args()
    print(f"clawbot tools bench, {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}")
    if args.exec_only:
        exec_true(args.runs)
        return
    asyncio.run(dispatch(args.calls))
    if not args.dispatch_only:
        grep_comparison(args.runs)
        patch_adversarial(args.runs)
        exec_gate(args.runs)
        exec_true(args.runs)


if __name__ == "__main__":
    main()
