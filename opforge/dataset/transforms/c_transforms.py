"""MindSpore 1.x's old path ``dataset.transforms.c_transforms``: the same transforms as ``opforge.dataset.transforms``
(same arguments and results on NumPy arrays)."""

from opforge.dataset.transforms import *  # noqa: F403
from opforge.dataset.transforms import __all__  # noqa: F401
