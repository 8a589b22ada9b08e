"""Popular advice, held against the measurements (its model, view and template)."""
