"""MindSpore's ``mindspore.dataset.vision.utils`` (``from mindspore.dataset.vision.utils import Inter``): the
enumerations the vision transforms take, ``Inter`` (interpolation modes) and ``Border`` (padding modes)."""

from opforge.dataset.vision.random_crop import Border
from opforge.dataset.vision.resize import Inter

__all__ = ["Inter", "Border"]
