"""clawbot-tools: the core tools agents use, each group in its own subpackage."""
