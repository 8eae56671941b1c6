"""MindSpore's ``ops.operations`` (imported as ``P``): every primitive class, by MindSpore's names."""

from opforge.bprop.gradient_hooks import HookBackward, InsertGradientOf  # noqa: F401  (gradient hooks)
from opforge.ops.deformable_conv import DeformableOffsets  # noqa: F401  (corner gathers, opforge/ops/sampling.py)
from opforge.ops.detection import (  # noqa: F401  (composed of other primitives)
    IOU,
    BoundingBoxDecode,
    BoundingBoxEncode,
    CheckValid,
    CropAndResize,
)
from opforge.ops.dynamic_rnn import DynamicRNN  # noqa: F401  (Ascend's LSTM, built from MatMul, Split, ...)
from opforge.ops.float_status import FloatStatus  # noqa: F401  (IsFinite, ReduceAll and Cast)
from opforge.ops.frontend_array_ext import ArgMaxWithValue, ArgMinWithValue, Flatten, ScatterNd  # noqa: F401
from opforge.ops.frontend_conv import Conv3D  # noqa: F401  (Conv2D over its depth taps)
from opforge.ops.frontend_dropout_mask import DropoutDoMask, DropoutGenMask  # noqa: F401  (RandExt, packed bits)
from opforge.ops.frontend_legacy import (  # noqa: F401  (MindSpore 1.x operators, built from other primitives)
    LRN,
    DiagPart,
    Gelu,
    InplaceAdd,
    KLDivLoss,
    LinSpace,
    LpNorm,
    MaskedSelect,
    Pack,
    PReLU,
    ScalarCast,
    ScalarToArray,
)
from opforge.ops.frontend_loss import SigmoidCrossEntropyWithLogits  # noqa: F401  (BCEWithLogitsLoss)
from opforge.ops.frontend_ops import (  # noqa: F401  (built from other primitives)
    Depend,
    DType,
    DynamicShape,
    Eye,  # composite (functional_extra)
    FusedWeightScaleApplyMomentum,  # Mul, Add and ApplyMomentum
    GatherD,  # composite (functional_extra)
    Identity,  # composite (functional_extra)
    IsInf,  # composite (functional_extra)
    L2Normalize,  # composite (functional_extra)
    Lerp,  # composite (functional_extra)
    Ones,
    Print,
    Rank,  # composite (functional_extra)
    ResizeBilinear,
    ResizeBilinearV2,
    Roll,  # composite (functional_extra)
    ScalarToTensor,  # composite (functional_extra)
    Shape,
    Size,  # composite (functional_extra)
    TensorShape,
    Tril,  # composite (functional_extra)
    Triu,  # composite (functional_extra)
    TupleToArray,  # composite (functional_extra)
    Unique,  # on the host
    Zeros,
)
from opforge.ops.frontend_pool3d import AvgPool3D, MaxPool3D, MaxPoolWithArgmax  # noqa: F401  (2-D pools)
from opforge.ops.frontend_random import StandardNormal, UniformInt, UniformReal  # noqa: F401  (seeded kernels)
from opforge.ops.frontend_rearrange import (  # noqa: F401  (Reshape/Transpose, GatherD, the BCE function)
    BinaryCrossEntropy,
    DepthToSpace,
    ReverseSequence,
    SpaceToDepth,
)
from opforge.ops.functional_index import IndexAdd, RandomCategorical  # noqa: F401  (TensorScatterAdd; multinomial)
from opforge.ops.fused_cast_adam import FusedCastAdamWeightDecay  # noqa: F401  (AdamWeightDecay, float32)
from opforge.ops.lstm import LSTM  # noqa: F401  (LSTMLayer per layer and direction)
from opforge.ops.parameter_func import AssignAdd, identity  # noqa: F401  (Add and Assign; x itself)
from opforge.ops.random_choice import RandomChoiceWithMask  # noqa: F401  (UniformReal and TopK)
from opforge.ops.resize_nearest import ResizeNearestNeighbor  # noqa: F401  (Gather, indices from the shapes)
from opforge.ops.summary_ops import (  # noqa: F401  (values kept for SummaryRecord)
    HistogramSummary,
    ImageSummary,
    ScalarSummary,
    TensorSummary,
)
from opforge.primitives._grad_ops import *  # noqa: F403
from opforge.primitives.array_ops import *  # noqa: F403
from opforge.primitives.array_ops import Gather as GatherV2  # noqa: F401  (MindSpore 1.x's name of Gather)
from opforge.primitives.attention_ops import *  # noqa: F403
from opforge.primitives.comm_ops import *  # noqa: F403
from opforge.primitives.conv_ops import *  # noqa: F403
from opforge.primitives.ctc_ops import *  # noqa: F403
from opforge.primitives.detection_ops import *  # noqa: F403
from opforge.primitives.linalg_ops import *  # noqa: F403
from opforge.primitives.math_ext_ops import *  # noqa: F403
from opforge.primitives.math_ops import *  # noqa: F403
from opforge.primitives.nn_ops import *  # noqa: F403
from opforge.primitives.random_ops import *  # noqa: F403
