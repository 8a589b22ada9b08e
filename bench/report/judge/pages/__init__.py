"""One frozen model per page, built by the judging step from :class:`~bench.report.judge.facts.
Facts`: the counts, verdicts, rows and figures a page states, so its view only formats them.

``cudnn``, ``compiled`` (torch.compile), ``studies`` (precision, dynamic shapes, determinism,
CPU vs GPU), ``machines`` (machine pages, Compare, Data), ``claims``, ``home``; ``common`` holds
what several share (the advice list of a setting, the claims a page answers, a summary's scope).
"""
