"""How many data-loading workers does a step need? (its chart, model, view, words and template)."""
