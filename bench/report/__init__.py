"""The report side: results CSVs → statistics → advice → pages. It never imports torch, nor
any of the measuring side: of the rest of ``bench`` it uses only ``bench.schema``.

Data layer: ``load`` (read and validate against the schema's column spec), ``analysis``
(per-cell figures, paired comparisons with bootstrap CIs, the studies and the machine tables),
``advice`` (rules over those answers), ``prices`` (user-supplied machine prices).

Presentation sits on top and owns all formatting: ``views`` (one module per page) build on the
Markdown kit ``pages``, ``charts`` and ``fmt``, and write through ``writer`` into the folders
``paths`` names; ``site`` renders every page, and ``build`` runs MkDocs on the result (whose
``mkdocs_hooks`` splice the large tables in). ``options`` declares the command's options.
"""
