"""Chat channels and the messages that cross them."""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Awaitable
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import attrs

from clawbot.types.channel_config import ChannelCapabilities, ChannelConfig

if TYPE_CHECKING:
    from clawbot.types.activity import ActivitySink
    from clawbot.types.control import GatewayControl

ChatType = Literal["direct", "group", "channel", "thread"]
AttachmentKind = Literal["image", "audio", "video", "document"]


@attrs.frozen
class Attachment:
    """A file that came with a message (or goes out with a reply).

    ``path`` is a local copy the channel downloaded (under the state dir), or ``url`` where
    it can be fetched; ``name`` is the file name the sender gave, untrusted like the text.
    """

    kind: AttachmentKind
    path: str | None = None
    url: str | None = None
    mime_type: str | None = None
    name: str | None = None
    size: int | None = None


@attrs.frozen
class InboundMessage:
    """A message a channel received, normalised.

    ``peer_id`` is who the conversation is with (the sender in a DM, the group in a group);
    ``sender_*`` and ``text`` come from outside and are treated as untrusted by the prompt.
    ``system_event`` marks a message clawbot itself queued (an approved command finished, a
    background process ended): it is answered like a message but never shown as the user's.

    ``from_owner`` is for channel authors: set it only when the channel itself has verified
    that the sender is its owner (the terminal's local user; a chat network's account the
    channel is configured to trust, matched on the network's own user id). Never derive it
    from anything a sender chooses (a display name, text). Owners approve commands and use
    chat commands in groups; see ``agents.defaults.owner_ids`` for owners named in config.
    """

    channel: str
    peer_id: str
    text: str
    chat_type: ChatType = "direct"
    account_id: str = "default"
    sender_id: str | None = None
    sender_name: str | None = None
    message_id: str | None = None
    thread_id: str | None = None
    reply_to_id: str | None = None
    timestamp: datetime | None = None
    mentioned: bool = False
    system_event: bool = False
    from_owner: bool = False
    mentions: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    guild_id: str | None = None
    team_id: str | None = None

    def answer(self, text: str, *, quoting: bool = False) -> OutboundMessage:
        """``text`` for the chat (and thread) this message came from; ``quoting``: as a reply to it."""
        return OutboundMessage(
            channel=self.channel,
            peer_id=self.peer_id,
            text=text,
            account_id=self.account_id,
            reply_to_id=self.message_id if quoting else None,
            thread_id=self.thread_id,
        )

    def as_json(self) -> dict[str, Any]:
        """This message as a JSON object, for a state file that must outlive the process."""
        data = attrs.asdict(self)
        data["timestamp"] = self.timestamp.isoformat() if self.timestamp is not None else None
        return data

    @classmethod
    def from_json(cls, data: Any) -> InboundMessage:
        """The message :meth:`as_json` wrote; ``ValueError`` naming the field that is wrong
        (a state file edited by hand or torn)."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        fields: dict[str, Any] = {}
        for name in _TEXT_FIELDS:
            if not isinstance(data.get(name), str):
                raise ValueError(f"{name} is not a string")
            fields[name] = data[name]
        for name in _OPTIONAL_FIELDS:
            value = data.get(name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name} is not a string")
            fields[name] = value
        for name in _FLAGS:
            fields[name] = data.get(name) is True
        stamp = data.get("timestamp")
        fields["timestamp"] = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
        mentions = data.get("mentions") or []
        if not isinstance(mentions, list) or not all(isinstance(m, str) for m in mentions):
            raise ValueError("mentions is not a list of strings")
        fields["mentions"] = tuple(mentions)
        attachments = data.get("attachments") or []
        if not isinstance(attachments, list) or not all(isinstance(a, dict) for a in attachments):
            raise ValueError("attachments is not a list of objects")
        known = {f.name for f in attrs.fields(Attachment)}
        fields["attachments"] = tuple(Attachment(**{k: v for k, v in a.items() if k in known}) for a in attachments)
        return cls(**fields)


_TEXT_FIELDS = ("channel", "peer_id", "text", "chat_type", "account_id")
_OPTIONAL_FIELDS = ("sender_id", "sender_name", "message_id", "thread_id", "reply_to_id", "guild_id", "team_id")
_FLAGS = ("mentioned", "system_event", "from_owner")


@attrs.frozen
class ApprovalOffer:
    """What an approval notice asks, for channels that offer the answers as buttons or keys.

    ``choices`` are the words ``/approve <id> <choice>`` accepts (``allow-once``,
    ``allow-always`` when the tool offers it, ``deny``); a channel answers by handing the
    gateway that text as the owner's message, exactly as if they had typed it. ``summary``
    names what is asked about on one short line (``exec: rm -rf build``, made visible), for
    the question a channel asks next to its buttons or keys: the answer must be tied to what
    it approves, not to whichever notice happens to be on screen.
    """

    id: str
    choices: tuple[str, ...] = ("allow-once", "allow-always", "deny")
    summary: str = ""


@attrs.frozen
class OutboundMessage:
    """A reply or notice a channel should deliver to ``peer_id``.

    ``notice`` marks text clawbot itself wrote (an approval request, an approval's
    confirmation, a ``/stop`` answer, a changed-bootstrap-file report), as opposed to what
    the model or a tool said. Only the kernel sets it: the gateway overwrites whatever a
    plugin put there. A channel should show notices so that a reply cannot imitate them:
    prefix every line with :attr:`NOTICE_MARK` (the kernel breaks up that mark wherever it
    appears in the model's text), and style them where the surface allows it (the model
    cannot produce formatting the channel adds itself). The kernel already shows control
    characters in ``text`` as ``\\uXXXX``; a channel writing to a terminal should do so again
    (``clawbot.safetext.visible``), since it cannot know every sender is the kernel.

    ``approval`` comes with the notice of a pending approval (and only with it: the gateway
    clears it on everything else). ``streamed`` says that the text already reached the
    channel piece by piece (:meth:`Channel.live`): a channel that showed those pieces only
    finishes what it showed, so the reply is not shown twice.

    ``media`` are local paths (already confined to the agent's workspace by the gateway) or
    http(s) URLs to attach; ``text`` then is their caption. ``text`` is never longer than the
    channel's :attr:`ChannelCapabilities.max_text_length`: the gateway sends longer replies
    as several messages.
    """

    NOTICE_MARK: ClassVar[str] = "[clawbot]"

    channel: str
    peer_id: str
    text: str
    account_id: str = "default"
    reply_to_id: str | None = None
    thread_id: str | None = None
    media: tuple[str, ...] = ()
    notice: bool = False
    approval: ApprovalOffer | None = None
    streamed: bool = False
    audio_as_voice: bool = False


class InboundSink(Protocol):
    """The gateway's side of :meth:`Channel.start`.

    Calling it hands a message to the gateway. It returns as soon as the message is
    accepted, with a future that completes once it has been answered: a channel that wants
    strict turn-taking awaits it; others keep receiving, so ``/stop`` can reach a running
    turn. The other two ask about the session a message from that sender lands in: whether
    a turn runs there now (whatever started it: a line, ``/new <text>``, a finished
    command's report), and which approvals still wait there (answered elsewhere or expired:
    gone). ``quit`` is for a channel whose user asks clawbot itself to quit (Ctrl-D at the
    terminal): the whole gateway stops, every channel, and a running turn is cancelled
    rather than waited for. A channel driven by a plain function in a test may find none
    of these three. ``control`` is for a channel that serves the gateway's owner rather
    than a chat (the control API): the whole gateway as :class:`~clawbot.types.GatewayControl`.
    """

    def __call__(self, message: InboundMessage) -> Awaitable[asyncio.Future[None]]: ...

    def busy(self, message: InboundMessage) -> bool: ...

    def approvals_waiting(self, message: InboundMessage) -> frozenset[str]: ...

    def admits(self, message: InboundMessage) -> bool:
        """Whether the gateway's access rules let ``message`` in, without acting on it (no
        pairing code is asked for): check before costly work such as downloading a
        stranger's attachment. Hand the message over anyway, so a stranger still gets a code."""
        ...

    def quit(self) -> None: ...

    @property
    def control(self) -> GatewayControl: ...


class Channel(abc.ABC):
    """A connection to one chat surface.

    ``start`` runs until the channel stops; inbound messages go to ``sink``. The gateway
    restarts a channel whose ``start`` *raises*, with backoff, and never lets one channel
    take the others down. A channel whose ``start`` *returns* is considered finished and is
    not restarted (right for the terminal at end of input). So a network channel must
    raise when its connection drops (a ``ConnectionError``, say), never return, or it stays
    down until the gateway restarts. A channel that cannot run at all where clawbot runs
    says so in :meth:`available` and is not started; the others run on.
    """

    name: str
    capabilities: ChannelCapabilities = ChannelCapabilities()
    default_access: ClassVar[ChannelConfig] = ChannelConfig()
    """Who gets in when no ``[channels.<name>]`` table of a :class:`ChannelConfig` class
    configures the channel: pairing for direct chats, no groups (the safe defaults). Only a
    channel nobody outside can reach (a test channel) should open it; a network channel
    claims its table with a ChannelConfig-derived class instead, so the user decides."""

    def available(self) -> str | None:
        """``None`` (the default) when the channel can run here; else why it cannot, in a
        few words (``"no terminal: standard input is /dev/null"``). The gateway then does not
        start it, logs the reason and shows the channel as stopped with it in
        ``clawbot status``, and serves its other channels."""
        return None

    @abc.abstractmethod
    async def start(self, sink: InboundSink) -> None: ...

    @abc.abstractmethod
    async def send(self, message: OutboundMessage) -> str | None:
        """Deliver ``message``; return the network's id of the (last) message sent, if any."""

    async def edit(self, message: OutboundMessage, message_id: str) -> None:
        """Replace the text of the sent message ``message_id`` (channels whose capabilities
        say ``edit``)."""
        raise NotImplementedError(f"channel {self.name!r} cannot edit messages")

    async def typing(self, message: InboundMessage) -> None:  # noqa: B027 - optional
        """Show that a reply to ``message`` is being written (channels whose capabilities say
        ``typing``); the gateway calls it again every ``typing_interval_s`` while the turn runs."""

    async def stop(self) -> None:  # noqa: B027 - optional
        """Ask ``start`` to return; default: nothing to release."""

    def live(self, message: InboundMessage) -> ActivitySink | None:
        """Where to show the turn answering ``message`` while it runs (its text as it is
        written, its tool calls as they start: :mod:`clawbot.types.activity`), or ``None``,
        the default, for the final reply only. Called once per turn, when it starts."""
        return None

    def interrupt(self) -> bool:
        """The user pressed Ctrl-C in the terminal ``clawbot run`` runs in. Return ``True``
        when the channel took it (stopped its running turn, or is ending its chat); with the
        default, ``False`` from every channel, clawbot stops."""
        return False


@attrs.frozen
class InboundEvent:
    """Passed to ``clawbot_message_received``."""

    message: InboundMessage
    agent_id: str
    session_key: str


@attrs.frozen
class OutboundEvent:
    """Passed to ``clawbot_message_sending``."""

    message: OutboundMessage
    agent_id: str | None = None
    session_key: str | None = None
