"""What clawbot does on its own schedule: heartbeats and cron jobs."""
