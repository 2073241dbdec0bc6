"""Tool calling for models that take no ``tools`` parameter (``ModelInfo.native_tools = False``)."""

from __future__ import annotations

import abc

from clawbot.types.messages import Message
from clawbot.types.providers import ModelRequest

#: The tags of prompt-based tool calling, reserved by the kernel whichever adapter is
#: installed: a model without native tools runs the ``<tool_call>`` blocks it writes,
#: including one it repeats from text it read, so untrusted text never carries them
#: (they are among ``clawbot.promptkit.TRUSTED_MARKERS``).
TOOL_CALL_TAGS = ("<tool_call>", "</tool_call>")


class ToolCallAdapter(abc.ABC):
    """Lets a model without native tool calling use tools: the tools go into the prompt and
    the calls are read back from the reply text (``clawbot_tool_call_adapters``).

    The kernel hands every call to a model whose :class:`~clawbot.types.ModelInfo` says
    ``native_tools=False`` through the installed adapter: :meth:`encode` before the provider
    sees the request, :meth:`decode` on the reply. The turn itself only ever sees
    :class:`~clawbot.types.ToolCallBlock`, whichever way the model called. An adapter that
    writes calls as :data:`TOOL_CALL_TAGS` blocks gets for free that untrusted text (a
    message, a tool result, a summary) never carries them.
    """

    #: the adapter's name, shown when two plugins offer one (only one may be installed)
    name: str

    @abc.abstractmethod
    def encode(self, request: ModelRequest) -> ModelRequest:
        """``request`` as the model can take it: ``tools`` empty, the tools and how to call
        them in the system prompt, earlier calls and results written as text."""

    @abc.abstractmethod
    def decode(self, reply: Message) -> Message:
        """``reply`` with the calls its text makes as tool-call blocks (stop reason
        ``tool_use``); a reply that makes none, unchanged."""
