"""Reading loops that act through commands: select (selective reading with compaction)."""
