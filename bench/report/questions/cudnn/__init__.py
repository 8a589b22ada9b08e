"""Should I turn on cudnn.benchmark? (its model, view and template)."""
