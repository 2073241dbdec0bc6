"""clawbot-anthropic: Anthropic models through the official anthropic SDK."""
