"""MindSpore 1.x's old path ``dataset.vision.c_transforms``: the same transforms as ``opforge.dataset.vision``
(same arguments and results on NumPy arrays)."""

from opforge.dataset.vision import *  # noqa: F403
from opforge.dataset.vision import __all__  # noqa: F401
