"""clawbot compaction: the older part of a long conversation summarised or trimmed, identifiers kept."""
