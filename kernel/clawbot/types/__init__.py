"""The attrs value types plugins and the kernel exchange through hooks."""

from clawbot.types.channels import (
    Channel,
    ChatType,
    InboundEvent,
    InboundMessage,
    InboundSink,
    OutboundEvent,
    OutboundMessage,
)
from clawbot.types.context import ConfigSection, PluginContext
from clawbot.types.events import (
    ChatCommand,
    ChatCommandContext,
    CompactionEvent,
    GatewayEvent,
    SessionEvent,
)
from clawbot.types.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    Role,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from clawbot.types.prompt import (
    ALL_MODES,
    BootstrapContext,
    BootstrapFile,
    InjectedFile,
    PromptContext,
    PromptMode,
    PromptSection,
    RuntimeInfo,
    SessionKind,
    SkillEntry,
    SkillSource,
)
from clawbot.types.providers import (
    CompactionRequest,
    CompactionResult,
    CompactionStrategy,
    LLMProvider,
    MemoryHit,
    MemoryProvider,
    ModelInfo,
    ModelRequest,
    ProviderError,
    ProviderErrorKind,
    SystemPrompt,
    TextSink,
    ToolSpec,
)
from clawbot.types.services import (
    AgentSummary,
    ApprovalCallback,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalTicket,
    ServiceUnavailable,
    SessionStatus,
    SessionSummary,
    ToolServices,
)
from clawbot.types.tools import (
    Tool,
    ToolCall,
    ToolCallDecision,
    ToolCallEvent,
    ToolHandler,
    ToolResult,
    ToolResultEvent,
)

__all__ = [name for name in dir() if not name.startswith("_") and name[0].isupper()]
