"""How much of the system prompt the skills catalogue may take (``skills.prompt_*``).

A thousand skills dropped into ``<workspace>/skills`` would otherwise make a prompt of a
million characters that overflows every turn. The section that writes the catalogue reads
the two caps with :func:`prompt_caps` (``clawbot.promptkit.skills_prompt_caps``) and lists
the skills in the order the kernel hands them over, highest precedence first, as many as
fit whole.
"""

from __future__ import annotations

from typing import Any

from clawbot.types.settings import DEFAULT_SKILLS_DESCRIPTION_MAX_CHARS as DEFAULT_DESCRIPTION_MAX_CHARS
from clawbot.types.settings import DEFAULT_SKILLS_PROMPT_MAX_CHARS as DEFAULT_PROMPT_MAX_CHARS


def _positive(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def prompt_caps(config: Any) -> tuple[int, int]:
    """``(skills.prompt_max_chars, skills.prompt_description_max_chars)`` of ``config``, or the
    defaults without one (a bare ``PromptContext`` in a test)."""
    skills = getattr(config, "skills", None)
    return (
        _positive(getattr(skills, "prompt_max_chars", None), DEFAULT_PROMPT_MAX_CHARS),
        _positive(getattr(skills, "prompt_description_max_chars", None), DEFAULT_DESCRIPTION_MAX_CHARS),
    )
