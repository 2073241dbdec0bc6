"""The ``[plugins.example_tool]`` configuration table.

clawbot validates the table with this attrs class (strictly: wrong types and unknown keys
are errors that name their key path) and hands the instance to the hooks as ``ctx.settings``.
Every setting needs a default, so the plugin works without any table at all::

    [plugins.example_tool]
    top_words = 3
    case_sensitive = false
    reminder_check_seconds = 30
"""

import attrs
from clawbot.types import InRange


@attrs.frozen(kw_only=True)
class ExampleToolConfig:
    # Every number gets a range: a value outside is reported by its key path.
    top_words: int = attrs.field(default=5, validator=InRange(0, 1000))
    """How many of the most frequent words ``example_tool_text_stats`` lists by default
    (a call may ask for another number with its ``top`` argument); 0 lists none."""

    case_sensitive: bool = False
    """Whether ``Word`` and ``word`` count as different words."""

    reminder_check_seconds: float = attrs.field(default=30.0, validator=InRange(0.01, 3600))
    """How often the reminder service looks for due reminders (seconds): a reminder arrives
    at most this late."""
