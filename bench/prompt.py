"""Cost of building the system prompt, and its size next to OpenClaw's structure.

Run:  cd /work/main && env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/prompt.py [--builds 300] [--cold 15]

The workspace: all eight bootstrap files at the per-file cap (20,000 characters each, so the
60,000-character total cap cuts the later ones) and 100 skills in ``<workspace>/skills``
(YAML frontmatter, a third of them needing a binary that is present), the example ``coder``
agent's six tools (read, write, edit, ls, exec, message) and the real clawbot-workspace
and clawbot-tools plugins.

* warm (target <= 5 ms median): ``build_system_prompt`` again for the same session — what
  every turn pays: the bootstrap hook and caps (the files are read each time), the skill
  catalog's change check, the 26 section hooks, sorting and joining.
* cold (target <= 50 ms median): the same on a freshly booted kernel, so the skill catalog
  discovers and parses all 100 SKILL.md files; the first cold build of the process also pays
  for importing PyYAML and is shown separately.

Then the prompt's size: characters and an estimate of tokens (chars / 4) per part, and the
same inputs laid out the way OpenClaw does (OpenClaw's full prompt for a coding agent:
6,735 characters of fixed text for these six tools, one ``<skill>`` element of five lines
per skill, the same capped files).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

SIX = ["read", "write", "edit", "ls", "exec", "message"]
FILES = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md"]
OPENCLAW_FIXED_CHARS = 6_735  # OpenClaw's coding-agent prompt without its skills block


def make_workspace(root: Path, bin_dir: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    line = "Keep notes short, check facts live, and say what you did and why. " * 3 + "\n"
    for name in FILES:
        (ws / name).write_text(f"# {name}\n" + line * (20_000 // len(line) + 1), encoding="utf-8")
    bin_dir.mkdir()
    (bin_dir / "gemini").write_text("#!/bin/sh\n")
    (bin_dir / "gemini").chmod(0o755)
    for n in range(100):
        folder = ws / "skills" / f"skill-{n:03d}"
        folder.mkdir(parents=True)
        requires = '\nmetadata: {"clawbot": {"requires": {"bins": ["gemini"]}}}' if n % 3 == 0 else ""
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{n:03d}\ndescription: Do task number {n} the way this team likes it, step by step.{requires}\n---\n"
            f"# skill-{n:03d}\n\n1. Look first.\n2. Then act.\n",
            encoding="utf-8",
        )
    return ws


async def boot(home: Path, ws: Path, bin_dir: Path):  # noqa: ANN201
    import clawbot_tools.plugin
    import clawbot_workspace.plugin
    from clawbot.testing.kernels import boot_kernel

    config = f'[[agents.list]]\nid = "coder"\ndefault = true\nworkspace = "{ws}"\ntools = {{ allow = ["read", "write", "edit", "ls", "exec", "message"] }}\n'
    return await boot_kernel(
        home,
        plugins={"tools": clawbot_tools.plugin, "workspace": clawbot_workspace.plugin},
        config=config,
        env={"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )


def request(kernel, ws: Path):  # noqa: ANN001, ANN201
    from clawbot.agent.policy import allowed_tools
    from clawbot.agent.system_prompt import PromptRequest

    return PromptRequest(
        agent_id="coder",
        session_key="agent:coder:main",
        workspace=ws,
        tools=allowed_tools(kernel.tools, kernel.config, "coder"),
        model="anthropic/claude-sonnet-4-6",
        channel="feishu",
    )


def openclaw_chars(built) -> int:  # noqa: ANN001
    skills = sum(
        len(f"<skill>\n<name>{s.name}</name>\n<description>{s.description}</description>\n<location>./skills/{s.name}/SKILL.md</location>\n</skill>\n")
        for s in built.context.skills
    ) + len("<available_skills>\n</available_skills>")
    files = sum(len(f"## {f.name}\n\n{f.content or ''}\n\n") for f in built.context.bootstrap_files) + len("# Project Context\n\n")
    return OPENCLAW_FIXED_CHARS + skills + files


async def main(builds: int, colds: int) -> None:
    from clawbot.agent.prompt_report import prompt_report
    from clawbot.agent.system_prompt import build_system_prompt

    print(f"clawbot prompt bench, {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bin_dir = root / "bin"
        ws = make_workspace(root, bin_dir)

        cold = []
        first_ever = None
        for n in range(colds + 1):
            kernel = await boot(root / f"home{n}", ws, bin_dir)
            started = time.perf_counter()
            built = await build_system_prompt(kernel, request(kernel, ws))
            elapsed = (time.perf_counter() - started) * 1000
            if first_ever is None:
                first_ever = elapsed
            else:
                cold.append(elapsed)
            await kernel.aclose()

        kernel = await boot(root / "warm", ws, bin_dir)
        req = request(kernel, ws)
        for _ in range(20):
            await build_system_prompt(kernel, req)
        warm = []
        for _ in range(builds):
            started = time.perf_counter()
            built = await build_system_prompt(kernel, req)
            warm.append((time.perf_counter() - started) * 1000)
        again = await build_system_prompt(kernel, req)
        assert again.system == built.system, "the prompt changed between two builds"
        report = prompt_report(built)
        await kernel.aclose()

    warm.sort()
    print(f"warm build ({builds} runs)          median {statistics.median(warm):6.2f} ms   p90 {warm[int(0.9 * len(warm))]:6.2f} ms")
    print(f"cold build, fresh kernel ({colds} runs) median {statistics.median(cold):6.2f} ms   (first of the process, importing PyYAML: {first_ever:.1f} ms)")
    system = report["system_prompt"]
    print(
        f"\nprompt: {system['chars']:,} chars (~{system['tokens_estimate']:,} tokens); "
        f"{system['stable_chars']:,} before the cache boundary, {system['volatile_chars']:,} after"
    )
    files = sum(f["injected_chars"] for f in report["files"])
    print(
        f"  workspace files {files:,} chars ({sum(f['truncated'] for f in report['files'])} of {len(report['files'])} truncated); "
        f"skills {report['skills']['prompt_chars']:,} chars for {len(report['skills']['entries'])} skills; "
        f"the rest {system['chars'] - files - report['skills']['prompt_chars']:,} chars"
    )
    ours_fixed = system["chars"] - report["system_prompt"]["project_context_chars"] - report["skills"]["prompt_chars"]
    theirs = openclaw_chars(built)
    print(f"  tool schemas sent with each request: {report['tools']['schema_chars']:,} chars")
    print(
        f"\nsame inputs in OpenClaw's structure: ~{theirs:,} chars (~{(theirs + 3) // 4:,} tokens); "
        f"clawbot/OpenClaw {system['chars'] / theirs:.2f}x; fixed text clawbot {ours_fixed:,} vs OpenClaw {OPENCLAW_FIXED_CHARS:,}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--builds", type=int, default=300)
    parser.add_argument("--cold", type=int, default=15)
    args = parser.parse_args()
    asyncio.run(main(args.builds, args.cold))
