"""clawbot's automation: cron jobs and heartbeats, turns clawbot starts on its own schedule."""
