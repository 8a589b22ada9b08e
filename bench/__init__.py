"""torch-knobs: measure what PyTorch's backend settings and a GPU buy for your model.

``bench.run`` measures (``python -m bench run``): the parent side in ``bench/run/`` never
imports torch, and one process per replicate runs ``bench/run/child/``. ``bench.report``
presents (``python -m bench report``) and never imports torch or ``bench.run``.
``bench.schema`` is the vocabulary both share, and ``bench.cli`` the one parser for both.
"""

__version__ = "0.1.0"
