"""One page per machine: what it is and what it measured (its view and template)."""
