"""clawbot-openai: OpenAI and OpenAI-compatible servers through the official openai SDK."""
