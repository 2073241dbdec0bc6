"""clawbot memory: MEMORY.md and memory/**/*.md, indexed for search by meaning and by words."""
