"""torch-knobs: measure what PyTorch's backend settings and a GPU buy for your model.

``bench`` measures (``python -m bench run``) and ``bench.report`` presents
(``python -m bench report``). The measuring side needs only the standard library, torch and
torchvision; the report side never imports torch.
"""

__version__ = "0.1.0"
