"""clawbot-setup: the commands that set clawbot up (``onboard``, ``plugins new``, the gateway's service files)."""
