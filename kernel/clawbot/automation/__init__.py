"""Runs clawbot starts on its own: cron jobs (schedules, their store and the scheduler)."""
