"""What a run leaves: append-only rows written whole (``store``, ``durable``), what the folder
measures (``identity``), which code measured it (``source``), how a stopped run resumes
(``resume``, ``runid``), where its wall time went (``breakdown``), why cells of it were not
measured (``reasons``) and the plausibility checks of a finished run (``check``)."""
