"""The figures the hand-written Methodology page quotes, judged from the data (its page model,
view and templates)."""
