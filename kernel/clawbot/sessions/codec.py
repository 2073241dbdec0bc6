"""JSON for conversation data (transcripts, the session index) through one cattrs converter.

Defaults are left out to keep transcript lines short; content blocks always carry their
``type`` so a line can be read back without guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn

from clawbot.types import ContentBlock, ImageBlock, TextBlock, ThinkingBlock, ToolCallBlock

BLOCK_TYPES: dict[str, type[Any]] = {attrs.fields(cls).type.default: cls for cls in (TextBlock, ImageBlock, ToolCallBlock, ThinkingBlock)}


def _tagged(unstructure: Callable[[Any], dict[str, Any]]) -> Callable[[Any], dict[str, Any]]:
    """``unstructure`` with the block's ``type`` first, which says how to read it back."""
    return lambda block: {"type": block.type, **unstructure(block)}


def make_data_converter() -> cattrs.Converter:
    conv = cattrs.Converter(omit_if_default=True)
    for cls in BLOCK_TYPES.values():
        conv.register_unstructure_hook(cls, _tagged(make_dict_unstructure_fn(cls, conv, _cattrs_omit_if_default=True)))

    def structure_block(value: Any, _: Any) -> ContentBlock:
        if not isinstance(value, dict) or value.get("type") not in BLOCK_TYPES:
            raise ValueError(f"not a content block: {value!r}"[:200])
        return conv.structure(value, BLOCK_TYPES[value["type"]])

    # A predicate, not the Union object itself: cattrs' own union handling would win otherwise.
    conv.register_structure_hook_func(lambda t: t == ContentBlock, structure_block)
    return conv
