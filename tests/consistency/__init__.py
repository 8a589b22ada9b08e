"""The rules both sides keep, and both sides keeping them alike."""
