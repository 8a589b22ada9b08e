"""The answers first: one line per switch and per machine (its model, view and template)."""
