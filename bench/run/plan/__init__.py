"""What a run will measure, before anything runs: profiles (``profiles``) into the matrix's
cells (``matrix``), cells into jobs in the order they run (``jobs``), what each costs
(``estimate``, learned from committed rows in ``learned`` and scaled by the machine's
``pace``), what fits a budget (``budget``), the extra rounds of undecided comparisons
(``adaptive``) and ``--dry-run``'s listing.
Standard library only: a plan is data."""
