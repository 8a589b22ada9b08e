"""Should I turn on torch.compile? (its model, view and template)."""
