"""MindSpore's ``mindspore.dataset.vision.utils`` (``from mindspore.dataset.vision.utils import Inter``): the
enumerations the vision transforms take, ``Inter`` (interpolation modes), ``Border`` (padding modes) and
``SliceMode`` (``SlicePatches``)."""

from opforge.dataset.vision.random_crop import Border
from opforge.dataset.vision.resize import Inter
from opforge.dataset.vision.slice_patches import SliceMode

__all__ = ["Inter", "Border", "SliceMode"]
