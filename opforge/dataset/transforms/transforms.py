"""MindSpore 2.x's module ``dataset.transforms.transforms`` (the model zoo writes
``de.transforms.transforms.TypeCast``): the same transforms as ``opforge.dataset.transforms``."""

from opforge.dataset.transforms import *  # noqa: F403
from opforge.dataset.transforms import __all__  # noqa: F401
