"""MindSpore 2.x's module path ``dataset.vision.transforms`` (``from mindspore.dataset.vision import transforms``,
as the zoo's nima, pcb_rpp, ssd_inception_v2 and AutoAugment programs write): the same transforms as
``opforge.dataset.vision``."""

from opforge.dataset.vision import *  # noqa: F403
from opforge.dataset.vision import __all__  # noqa: F401
