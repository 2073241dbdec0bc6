"""The workspace is read-only to a turn the owner did not start.

What the workspace holds feeds the owner's own turns: the bootstrap files in every system
prompt, HEARTBEAT.md read by the heartbeat, MEMORY.md and memory/ found by memory search,
the workspace skills. A turn started by someone else (``ToolCall.trust``: a group member, a
stranger's chat, a sub-agent or a session message one of them caused) must not change any of
it, or their words would come back later with the owner's powers. So the file tools refuse
to write, and ``exec`` runs its commands with the workspace mounted read-only (only the
command's private temp dir stays writable) and refuses where no sandbox can do that.
"""

from __future__ import annotations

from clawbot import ToolCall, ToolResult, TurnTrust

WHY = (
    "this turn was started by someone other than the owner (a group member, another person's chat, "
    "or a task one of them set going), so the workspace is read-only here: what it holds "
    "(HEARTBEAT.md, MEMORY.md, memory/, skills, AGENTS.md and the other instruction files) feeds the "
    "owner's own turns"
)


def may_write(call: ToolCall) -> bool:
    """Whether ``call``'s turn may change the workspace."""
    return call.trust is TurnTrust.OWNER


def refusal(call: ToolCall) -> ToolResult | None:
    """The error result a writing file tool returns in a turn that may not write, else ``None``."""
    if may_write(call):
        return None
    return ToolResult.error(
        f"{call.tool_name}: refused: {WHY}. Nothing was written. Do not retry it here; answer from what you can read, "
        "or say that the owner can make this change from their own chat.",
        refused=True,
        read_only=True,
    )


def exec_note(call: ToolCall) -> str | None:
    """What ``exec`` tells the model along with a command's output in a turn that may not write."""
    if may_write(call):
        return None
    return f"Note: {WHY}; this command could write only to $TMPDIR."
