"""clawbot CLI, Self-Update and Documentation: how the model talks about clawbot itself."""

from __future__ import annotations

from pathlib import Path

from clawbot.types import PromptContext

from clawbot_workspace.sections._text import block, display_path

CLI_COMMANDS = (
    ("clawbot run", "start the gateway and its channels"),
    ('clawbot agent -m "<text>"', "one agent turn from the shell"),
    ("clawbot onboard", "set up a provider: key, base URL, default model"),
    ("clawbot init [--workspace DIR]", "write the starter workspace files"),
    ("clawbot doctor [--live]", "check the installation and suggest fixes"),
    ("clawbot config validate|show", "check or print the configuration"),
    ("clawbot plugins list", "installed plugins"),
    ("clawbot sessions list|show|reset", "sessions, their transcripts, a fresh start"),
    ("clawbot skills list|check", "skills, and why any are unavailable"),
    ("clawbot context", "what goes into an agent's prompt, with sizes"),
)


def cli(ctx: PromptContext) -> str:
    lines = ["## clawbot CLI", "Never invent commands or flags. The ones that exist:"]
    lines += [f"- `{command}`: {what}" for command, what in CLI_COMMANDS]
    lines += [
        (
            "Chat commands the user types (not tools; clawbot answers them itself, you never see them): /new or /reset "
            "starts a fresh session, /status shows the model, usage and cost, /model switches this session's model, "
            "/stop aborts the run, /approve and /deny answer an approval, /context shows your prompt, /help lists them."
        ),
        "Start, stop or restart the gateway only when the user asks.",
    ]
    return "\n".join(lines)


def self_update(ctx: PromptContext) -> str | None:
    if not ctx.has_tool("gateway"):
        return None
    return block(
        "## clawbot Self-Update",
        "Change clawbot's configuration, restart or update it only through the `gateway` tool, and only when "
        "the user explicitly asks. Read the current configuration first, change only the keys needed, and tell "
        "the user what changed; a restart interrupts running work.",
    )


def docs_dir() -> Path | None:
    """The ``docs/`` folder next to the installed kernel (present in a source checkout)."""
    import clawbot

    candidate = Path(clawbot.__file__).resolve().parents[2] / "docs"
    return candidate if candidate.is_dir() else None


def documentation(ctx: PromptContext) -> str:
    found = docs_dir()
    where = f"`{display_path(found)}`" if found else "the docs/ folder of the clawbot source"
    return block(
        "## Documentation",
        f"clawbot's documentation is in {where} (configuration.md lists every config key; architecture.md, "
        "plugins/) and in `clawbot --help` / `clawbot <command> --help`.",
        "For questions about clawbot itself, read those first; if they do not answer it, say so instead of guessing.",
    )
