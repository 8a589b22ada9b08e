"""The measuring side: ``python -m bench run``, ``env`` and ``check``.

This folder is the parent process: profiles into cells, the plan, the launchers, the store.
It needs only the standard library and never imports torch; everything that does lives in
``bench.run.child``, which runs in the processes the parent launches. Neither side imports the
report's libraries (pandas, matplotlib, jinja2, scipy), so a bare PyTorch box can measure.
"""
