"""MindSpore's ``ops.operations`` (imported as ``P``): every primitive class, by MindSpore's names."""

from opforge.ops.frontend_ops import Depend, Ones, Print, Zeros  # noqa: F401  (built from other primitives)
from opforge.primitives._grad_ops import *  # noqa: F403
from opforge.primitives.array_ops import *  # noqa: F403
from opforge.primitives.attention_ops import *  # noqa: F403
from opforge.primitives.comm_ops import *  # noqa: F403
from opforge.primitives.conv_ops import *  # noqa: F403
from opforge.primitives.math_ext_ops import *  # noqa: F403
from opforge.primitives.math_ops import *  # noqa: F403
from opforge.primitives.nn_ops import *  # noqa: F403
