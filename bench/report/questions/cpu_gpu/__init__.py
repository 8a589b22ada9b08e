"""How much does a GPU buy over this CPU? (its view and template)."""
