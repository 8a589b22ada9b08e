"""A run split over a Slurm cluster: the shards of a plan (``shards``, which a local
``bench run --shard K/N`` also reads), their submission and record (``slurm``), what Slurm says
of a job (``squeue``), and ``bench run --executor slurm``'s options and steps (``executor``).

Kept apart from the local runner, which they drive only through ``bench run --shard`` on each
node; nothing here imports torch, and submitit only once a Slurm run is asked for.
"""
