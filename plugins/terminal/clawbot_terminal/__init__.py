"""clawbot-terminal: a chat channel on standard input and output."""
