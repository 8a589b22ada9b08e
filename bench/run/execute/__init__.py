"""Running a plan: one sitting of a run (``session``), the runner that launches one child per
job (``runner``, ``launch``, ``outcome``), the probe that asks a child what this machine is,
the pace probes at each end of a sitting (``pacing``), signals, progress and the named
instants where a test can act (``hooks``)."""
