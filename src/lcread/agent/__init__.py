"""Reading loops that act through commands: select (selective reading with compaction) and sac (one
action per fresh context with a written state); base.py holds what they share, including the answer's
sufficiency gate."""
