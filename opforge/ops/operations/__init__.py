"""MindSpore's ``ops.operations`` (imported as ``P``): every primitive class, by MindSpore's names."""

from opforge.ops.frontend_conv import Conv3D  # noqa: F401  (Conv2D over its depth taps)
from opforge.ops.frontend_ops import (  # noqa: F401  (built from other primitives)
    Depend,
    Ones,
    Print,
    ResizeBilinear,
    ResizeBilinearV2,
    Zeros,
)
from opforge.primitives._grad_ops import *  # noqa: F403
from opforge.primitives.array_ops import *  # noqa: F403
from opforge.primitives.attention_ops import *  # noqa: F403
from opforge.primitives.comm_ops import *  # noqa: F403
from opforge.primitives.conv_ops import *  # noqa: F403
from opforge.primitives.math_ext_ops import *  # noqa: F403
from opforge.primitives.math_ops import *  # noqa: F403
from opforge.primitives.nn_ops import *  # noqa: F403
