"""Tools: what a plugin offers the model, and what a call carries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import attrs

from clawbot.types.messages import ContentBlock, TextBlock
from clawbot.types.trust import TurnTrust

if TYPE_CHECKING:
    from clawbot.types.services import ToolServices


@attrs.frozen
class ToolResult:
    """What a tool hands back.

    ``content`` goes to the model (trimmed to the context budget by the loop); ``details``
    is structured data for programs (UIs, audit hooks) and never reaches the model.
    """

    content: tuple[ContentBlock, ...]
    details: Mapping[str, Any] = attrs.field(factory=dict)
    is_error: bool = False

    @classmethod
    def text(cls, text: str, **details: Any) -> ToolResult:
        return cls((TextBlock(text),), details)

    @classmethod
    def error(cls, text: str, **details: Any) -> ToolResult:
        return cls((TextBlock(text),), details, is_error=True)


@attrs.frozen
class ToolCall:
    """One invocation of a tool: the arguments plus everything that differs per run.

    ``services`` reaches sessions, channels, approvals and the clock (see
    :class:`~clawbot.types.services.ToolServices`); ``None`` outside an agent turn.

    ``trust`` is whose word the turn carries (:class:`~clawbot.types.trust.TurnTrust`), set
    by the kernel for every call of a turn. A tool that changes what later turns read (files
    in the workspace, commands that could write there) must refuse, with an error result,
    when it is not :attr:`TurnTrust.OWNER`. Outside an agent turn (a program calling a
    handler itself) the caller is the user, so it defaults to the owner.
    """

    call_id: str
    tool_name: str
    arguments: Mapping[str, Any]
    agent_id: str
    session_key: str
    workspace: Path
    services: ToolServices | None = attrs.field(default=None, repr=False, eq=False)
    trust: TurnTrust = TurnTrust.OWNER


ToolHandler = Callable[[ToolCall], "Awaitable[ToolResult] | ToolResult"]

#: The base sets ``tools.profile`` chooses from; ``full`` offers every tool.
ToolProfile = Literal["minimal", "coding", "messaging", "full"]
TOOL_PROFILES: tuple[str, ...] = get_args(ToolProfile)


def _known_profiles(tool: Tool, attribute: attrs.Attribute, value: tuple[str, ...]) -> None:
    unknown = [p for p in value if p not in TOOL_PROFILES]
    if unknown:
        raise ValueError(f"tool {tool.name!r} names unknown profile(s) {', '.join(map(repr, unknown))}; the profiles are {', '.join(TOOL_PROFILES)}")


@attrs.frozen
class Tool:
    """A tool as plugins declare it.

    ``parameters`` is a JSON schema (an object schema); ``summary`` is the one line shown in
    the system prompt's Tooling section.

    What the user's tool policy sees (the kernel knows no tool by name; this is all it goes by):

    * ``group`` places the tool in a policy group such as ``fs`` or ``runtime``, so
      ``tools.allow = ["group:fs"]`` takes it. Any name works; a group exists while a tool
      in it is installed.
    * ``profiles`` are the base sets (``tools.profile``) that offer it: ``minimal``,
      ``coding``, ``messaging``. ``full`` offers every tool, so it need not be listed; a tool
      that lists none is offered only under ``full`` (the default).
    * ``order`` places it in the tool list the model reads (the prompt's Tooling section
      and the request): tools with an order come first, lowest first, then the rest A-Z.
      The bundled tools use 100-799 by group (fs 100s, runtime 200s, web 300s, messaging
      400s, sessions 500s, memory 600s, automation 700s); leave it ``None`` to be listed
      after them alphabetically.
    * ``needs_memory``: the tool only passes calls on to the active memory provider
      (``ToolServices.memory_search``), so it is offered only while one is active.

    ``concurrent`` says whether a call may run while other calls of the same model reply
    run. Leave it ``False`` (the default) for anything that changes state: files, processes,
    messages sent. Such a call runs alone, after every call before it in the reply has
    finished, so two edits of one file both land and a read after a write sees it. Set it
    ``True`` only for a tool that changes nothing another call could see (reading files,
    fetching a page, listing sessions): consecutive calls of such tools run together.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: ToolHandler = attrs.field(repr=False)
    summary: str = ""
    group: str | None = None
    timeout_s: float | None = None
    concurrent: bool = False
    profiles: tuple[str, ...] = attrs.field(default=(), converter=tuple, validator=_known_profiles)
    order: int | None = None
    needs_memory: bool = False


@attrs.frozen
class ToolCallEvent:
    """Passed to ``clawbot_before_tool_call``."""

    call_id: str
    tool_name: str
    arguments: Mapping[str, Any]
    agent_id: str
    session_key: str


@attrs.frozen
class ToolCallDecision:
    """The answer of a ``before_tool_call`` hook: block the call or rewrite its arguments."""

    blocked: bool = False
    reason: str = ""
    arguments: Mapping[str, Any] | None = None

    @classmethod
    def block(cls, reason: str) -> ToolCallDecision:
        return cls(blocked=True, reason=reason)

    @classmethod
    def rewrite(cls, arguments: Mapping[str, Any]) -> ToolCallDecision:
        return cls(arguments=dict(arguments))


@attrs.frozen
class ToolResultEvent:
    """Passed to ``clawbot_after_tool_call``."""

    call: ToolCallEvent
    result: ToolResult
    duration_ms: float
