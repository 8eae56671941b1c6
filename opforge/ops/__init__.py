"""``opforge.ops``: every operator class (``ops.Elu``), signature helpers and the functional ops."""

from opforge.bprop.forward import Jvp, Vjp, hvp, jacfwd, jacrev, jvp, linearize, vjp  # forward mode (bprop/forward.py)
from opforge.bprop.grad_operation import GradOperation, grad, stop_gradient, value_and_grad
from opforge.bprop.gradient_hooks import HookBackward, InsertGradientOf  # gradient hooks on values
from opforge.dispatch import signature as sig
from opforge.dispatch.batching import vmap  # MindSpore's ops.vmap; the batching rules below
from opforge.op_info import CpuRegOp, CustomRegOp, DataType, GpuRegOp, op_info_register
from opforge.ops import composite, functional, operations, signature, tensor_methods
from opforge.ops.composite import HyperMap, Map, MultitypeFuncGraph
from opforge.ops.conv_transpose import Conv3DTranspose  # composed of Conv2DBackpropInput, Pad, AddN, ...
from opforge.ops.custom import Custom
from opforge.ops.deformable_conv import *  # deformable_conv2d, DeformableOffsets (sampling and Conv2D)
from opforge.ops.detection import *  # IOU, BoundingBoxEncode/Decode, CheckValid, CropAndResize
from opforge.ops.dynamic_rnn import DynamicRNN  # Ascend's one-layer LSTM, built from MatMul, Split, Sigmoid, ...
from opforge.ops.float_status import FloatStatus  # IsFinite, ReduceAll and Cast: the GPU overflow flag
from opforge.ops.frontend_array_ext import *  # ArgMaxWithValue, ArgMinWithValue, ScatterNd, Flatten
from opforge.ops.frontend_conv import Conv3D, conv3d, unfold  # composed of Conv2D, StridedSlice, ...
from opforge.ops.frontend_dropout_mask import DropoutDoMask, DropoutGenMask  # RandExt, bits packed in uint8
from opforge.ops.frontend_fold import fold  # unfold's adjoint: StridedSliceGrad per window tap
from opforge.ops.frontend_legacy import *  # MindSpore 1.x: ScalarCast, LinSpace, DiagPart, LpNorm, LRN, tensor_dot, ...
from opforge.ops.frontend_loss import SigmoidCrossEntropyWithLogits  # BCEWithLogitsLoss with unit weights
from opforge.ops.frontend_ops import (
    Depend,
    DType,
    DynamicShape,
    Einsum,
    Eye,
    FusedWeightScaleApplyMomentum,
    GatherD,
    Identity,
    IsInf,
    L2Normalize,
    Lerp,
    Meshgrid,
    Ones,
    Print,
    Rank,
    ResizeBilinear,
    ResizeBilinearV2,
    Roll,
    ScalarToTensor,
    Shape,
    Size,
    TensorShape,
    Tril,
    Triu,
    TupleToArray,
    Unique,
    Zeros,
    depend,
    dyn_shape,
    print_,
    shape,
    unique,
)
from opforge.ops.frontend_pool3d import AvgPool3D, MaxPool3D, MaxPoolWithArgmax  # 2-D pools over (H, W), D
from opforge.ops.frontend_random import *  # StandardNormal, ..., randn, rand, ... (seeded kernels' front ends)
from opforge.ops.frontend_rearrange import *  # DepthToSpace, SpaceToDepth, ReverseSequence, repeat_elements, ...
from opforge.ops.functional import *  # the functional API (functional.__all__)
from opforge.ops.functional import divide as div  # MindSpore\'s ops.div (rounding_mode)
from opforge.ops.functional_ctc import ctc_loss  # MindSpore's ops.ctc_loss: (loss, log_alpha)
from opforge.ops.functional_extra import *  # MindSpore 2.x composite functional ops (max, tril, std, ...)
from opforge.ops.functional_index import *  # scatter, tensor_scatter_elements, index_add, mode, matrix_band_part, ...
from opforge.ops.functional_linalg import *  # inverse, det, slogdet, cholesky, qr, svd
from opforge.ops.fused_cast_adam import FusedCastAdamWeightDecay  # AdamWeightDecay in float32 on float16
from opforge.ops.grid_sample import *  # grid_sample, affine_grid, GridSampler2D/3D, AffineGrid
from opforge.ops.histogram import *  # HistogramFixedWidth, histc
from opforge.ops.lstm import LSTM  # P.LSTM: LSTMLayer per layer and direction, w sliced from the flat Tensor
from opforge.ops.parameter_func import AssignAdd  # Add and Assign
from opforge.ops.primitive import constexpr
from opforge.ops.random_choice import RandomChoiceWithMask  # uniform draws ranked by TopK
from opforge.ops.resize_nearest import ResizeNearestNeighbor  # Gather, indices from the shapes
from opforge.ops.summary_ops import *  # ScalarSummary, ImageSummary, TensorSummary, HistogramSummary
from opforge.primitives import batching_array_ops as _batching_array_ops
from opforge.primitives import batching_math_ops as _batching_math_ops
from opforge.primitives import batching_nn_ops as _batching_nn_ops
from opforge.primitives import sharding_ops as _sharding_ops
from opforge.primitives import sharding_ops_nn as _sharding_ops_nn
from opforge.primitives._grad_ops import *
from opforge.primitives.array_ops import *
from opforge.primitives.attention_ops import *
from opforge.primitives.comm_ops import *
from opforge.primitives.conv_ops import *
from opforge.primitives.ctc_ops import *
from opforge.primitives.detection_ops import *
from opforge.primitives.linalg_ops import *
from opforge.primitives.math_ext_ops import *
from opforge.primitives.math_ops import *
from opforge.primitives.nn_ops import *
from opforge.primitives.primitive import (
    Primitive,
    PrimitiveWithCheck,
    PrimitiveWithInfer,
    prim_attr_register,
)
from opforge.primitives.random_ops import *
