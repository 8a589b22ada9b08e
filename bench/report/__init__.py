"""The report side: results CSVs → statistics → judging → pages. It never imports torch, nor
any of the measuring side: of the rest of ``bench`` it uses only ``bench.schema`` and the rules
both sides share (``bench.fingerprint``, ``bench.consistency``).

The steps, as ``build`` calls them: ``load`` (read and validate against the schema's column
spec), ``analysis`` (per-cell figures, paired comparisons with bootstrap CIs and verdicts, the
studies and the machine tables), ``judge`` (every decision: the advice, the claims and one page
model per page, in the typed words of ``vocabulary``), then ``site``, which formats the answers
through ``views`` (one module per page) with the Markdown kit ``pages``, ``charts`` and ``fmt``
into the folders ``paths`` names, and ``build`` runs MkDocs on the result (whose
``mkdocs_hooks`` splice the large tables in). ``options`` declares the command's options.
"""
