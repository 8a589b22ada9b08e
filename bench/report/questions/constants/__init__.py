"""The constants every page states (δ, the confidence level) (its view and template)."""
