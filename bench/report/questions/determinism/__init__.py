"""What does determinism cost, and is it bitwise? (its view and template)."""
