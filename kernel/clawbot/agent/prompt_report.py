"""What a system prompt is made of and what each part costs (``clawbot context``, ``/context``).

Sizes are characters, with a rough token estimate (``clawbot.tokens``) next to the totals. Tool
schemas are not part of the system prompt but are sent with every request, so they are
reported too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clawbot.agent.models import ModelError, choose_chain
from clawbot.agent.policy import agent_tools
from clawbot.agent.system_prompt import BuiltPrompt, PromptRequest, build_system_prompt
from clawbot.kernel import Kernel
from clawbot.paths import expand_user_path
from clawbot.sessions.keys import resolve_session_key
from clawbot.tokens import estimate_tokens

_SKILL_BLOCK = re.compile(r"<skill>.*?<name>(.*?)</name>.*?</skill>", re.DOTALL)


async def agent_prompt(kernel: Kernel, agent_id: str, session_key: str | None = None, channel: str | None = None) -> BuiltPrompt:
    """The system prompt ``agent_id`` would get in ``session_key`` (its main session by
    default), built as a turn builds it; without a usable model the Runtime line says so."""
    key = resolve_session_key(session_key, agent_id)
    try:
        model = (await choose_chain(kernel, agent_id))[0].ref
    except ModelError:
        model = None
    request = PromptRequest(
        agent_id=agent_id,
        session_key=key,
        workspace=expand_user_path(kernel.config.agent_workspace(agent_id), kernel.env),
        tools=agent_tools(kernel, agent_id),
        model=model,
        channel=channel,
        thinking=kernel.config.agents.defaults.thinking,
    )
    return await build_system_prompt(kernel, request)


def prompt_report(built: BuiltPrompt) -> dict[str, Any]:
    system = built.system
    sections = [{"key": s.key, "chars": len(s.text), "stable": s.stable, "order": s.order} for s in built.sections]
    project = next((s for s in built.sections if s.key == "project_context"), None)
    skills_section = next((s for s in built.sections if s.key == "skills"), None)
    tooling = next((s for s in built.sections if s.key == "tooling"), None)
    blocks = {m.group(1): len(m.group(0)) for m in _SKILL_BLOCK.finditer(skills_section.text)} if skills_section else {}
    tools = []
    for tool in built.context.tools:
        schema = json.dumps(dict(tool.parameters), sort_keys=True)
        tools.append(
            {
                "name": tool.name,
                "summary_chars": len(tool.summary or tool.description),
                "schema_chars": len(schema) + len(tool.description),
                "properties": len(tool.parameters.get("properties", {}) or {}),
            }
        )
    total = len(system.text)
    return {
        "agent": built.context.agent_id,
        "session": built.context.session_key,
        "mode": built.context.mode,
        "system_prompt": {
            "chars": total,
            "tokens_estimate": estimate_tokens(total),
            "stable_chars": len(system.stable),
            "volatile_chars": len(system.volatile),
            "project_context_chars": len(project.text) if project else 0,
        },
        "sections": sections,
        "files": [
            {
                "name": f.name,
                "path": str(f.path),
                "missing": f.missing,
                "raw_chars": f.raw_chars,
                "injected_chars": len(f.content or ""),
                "truncated": f.truncated,
                "not_loaded": getattr(f.content, "reason", None),
            }
            for f in built.context.bootstrap_files
        ],
        "skills": {
            "prompt_chars": len(skills_section.text) if skills_section else 0,
            "entries": [{"name": s.name, "block_chars": blocks[s.name]} for s in built.context.skills if s.name in blocks],
            # offered to the prompt but not in the catalogue (skills.prompt_max_chars)
            "left_out": [s.name for s in built.context.skills if s.name not in blocks] if skills_section else [],
        },
        "tools": {
            "list_chars": len(tooling.text) if tooling else 0,
            "schema_chars": sum(t["schema_chars"] for t in tools),
            "entries": tools,
        },
    }


def report_text(report: dict[str, Any]) -> str:
    """A compact plain-text rendering (chat-friendly: no tables)."""
    system = report["system_prompt"]
    lines = [
        f"System prompt of {report['session']} ({report['mode']} mode): {system['chars']:,} chars "
        f"(~{system['tokens_estimate']:,} tokens); {system['stable_chars']:,} cached, {system['volatile_chars']:,} after the cache boundary.",
        "Sections: " + ", ".join(f"{s['key']} {s['chars']:,}" for s in report["sections"]),
    ]
    if report["files"]:
        parts = []
        for f in report["files"]:
            if f["missing"]:
                parts.append(f"{f['name']} missing")
            elif f["not_loaded"]:
                parts.append(f"{f['name']} not loaded ({f['not_loaded']})")
            else:
                cut = f" (truncated from {f['raw_chars']:,})" if f["truncated"] else ""
                parts.append(f"{f['name']} {f['injected_chars']:,}{cut}")
        lines.append("Workspace files: " + ", ".join(parts))
    skills = report["skills"]
    if skills["entries"]:
        lines.append(f"Skills ({skills['prompt_chars']:,} chars): " + ", ".join(s["name"] for s in skills["entries"]))
    if skills["left_out"]:
        lines.append(f"{len(skills['left_out']):,} more skills left out of the prompt (skills.prompt_max_chars); `clawbot skills list` shows them.")
    tools = report["tools"]
    lines.append(f"Tools: {len(tools['entries'])} ({tools['list_chars']:,} chars listed, {tools['schema_chars']:,} chars of schemas per request)")
    return "\n".join(lines)
