"""The report side: results CSVs → statistics → advice → pages. It never imports torch.

Data layer: ``load`` (read and validate), ``analysis`` (per-cell figures and comparisons with
bootstrap CIs), ``advice`` (rules over those answers), ``prices`` (user-supplied machine prices).
Presentation (charts, pages, the MkDocs build) sits on top and owns all formatting.
"""
