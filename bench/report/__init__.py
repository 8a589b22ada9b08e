"""The report side: results CSVs → statistics → judging → pages. It never imports torch, nor
any of the measuring side: of the rest of ``bench`` it uses only ``bench.schema`` and the rules
both sides share (``bench.fingerprint``, ``bench.consistency``, ``bench.intervals``,
``bench.sittings``, ``bench.migrations``).

Its rooms, as ``build`` calls them: ``input`` (read and validate every run folder against the
schema's column spec), ``analysis`` (per-cell figures, paired comparisons with their intervals
and verdicts, the studies and the machine tables), ``judge`` (the rules: advice and claims, in
the typed words of ``vocabulary``), ``questions`` (one folder per page: its model, its view and
its template; ``questions.answers`` judges them all, ``questions.site`` renders them) and
``render`` (the Markdown kit, charts, the writer and MkDocs's hooks).
"""
