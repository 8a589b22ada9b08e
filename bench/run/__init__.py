"""The measuring side: ``python -m bench run``, ``env`` and ``check``.

The parent process, in the order a run flows through it:

- ``plan``: profiles into cells, cells into jobs, what each costs and what fits the budget;
- ``execute``: one run's session, the runner that launches one child per job, and how each
  child ended;
- ``store``: the rows, written whole, the run folder's identity, resuming it, and the checks
  of a finished run;
- ``child``: the processes the parent launches, the only ones that import torch;
- ``cluster``: a plan split into shards over Slurm.

``protocol`` (the task a child runs and the record it leaves) and ``caches`` (each
replicate's kernel-cache folders) are what ``execute`` and ``child`` share. The
parent needs only the standard library and never imports torch. Neither side imports the
report's libraries (pandas, matplotlib, jinja2, scipy), so a bare PyTorch box can measure.
"""
