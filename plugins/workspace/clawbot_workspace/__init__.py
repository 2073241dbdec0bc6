"""clawbot-workspace: the agent's Markdown workspace as prompt material."""
