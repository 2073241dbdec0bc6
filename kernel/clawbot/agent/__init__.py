"""Running agents: model selection and the turn (the full tool loop lands in stage 2)."""
