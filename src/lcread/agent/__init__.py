"""Reading loops that act through commands: base.py is the loop (limits, accounted calls, repeats, the
answer's sufficiency gate), handed a context strategy: select.py's compacting conversation or sac.py's
written state; handoff.py is the state both write."""
