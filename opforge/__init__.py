"""opforge: operators in the MindSpore primitive style, with kernels selected at run time."""

# isort: skip_file  (the layers in order: device and tensor, kernels, primitives, autodiff, nn, tools)
import importlib.util as _importlib_util
import os as _os

# A checkout imported in place of the installed package (`python -c "import opforge"` in the repository
# root after a non-editable install) has the sources but not the built extension: say so plainly.
if _importlib_util.find_spec("opforge._C") is None:
    raise ImportError(
        f"opforge's C extension (opforge._C) is not built next to the sources in {_os.path.dirname(__file__)}. "
        "This is the source tree, imported instead of the installed package because it is on sys.path (the "
        "current directory is the repository root). Run Python from another directory to use the installed "
        "opforge, or install the checkout in place: pip install -e ."
    )

# Before libgomp loads with opforge._C: OpenMP workers that spin long after a parallel kernel starve
# OpenBLAS's own threads (a 2-thread MLP step ran 10x slower) and, on a shared machine, the thread
# still working (with another process on one of 2 cores, a 2-thread Add on 1M floats took 39x its
# 1-thread time at GOMP_SPINCOUNT=10000, 2.4x at 3000, 1.1-1.2x at 1000 and at 0). Sleeping at once
# (0) made back-to-back small kernels pay a wake-up each: a 2-thread ResNet-50 step took 199 ms at 0,
# 166 ms at 1000. So workers spin briefly, then sleep; OMP_WAIT_POLICY or GOMP_SPINCOUNT set by the
# user win.
if "OMP_WAIT_POLICY" not in _os.environ:
    _os.environ.setdefault("GOMP_SPINCOUNT", "1000")
from opforge import dtype
from opforge.dtype import (
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from opforge.dtype import QuantDtype
from opforge.context import (
    GRAPH_MODE,
    PYNATIVE_MODE,
    get_context,
    get_offload_context,
    set_context,
    set_device,
    set_offload_context,
)
from opforge.context import (
    ParallelMode,
    get_auto_parallel_context,
    get_ps_context,
    reset_auto_parallel_context,
    reset_ps_context,
    set_auto_parallel_context,
    set_ps_context,
)
from opforge.parallel import Layout, get_algo_parameters, reset_algo_parameters, reshard, set_algo_parameters, shard
from opforge.device import memory
from opforge import runtime  # MindSpore's mindspore.runtime (memory counters and runtime settings)
from opforge.tensor import Parameter, Tensor, from_dlpack
from opforge.errors import KernelError, KernelNotFoundError
from opforge import kernels, op_info
from opforge.op_info import cpu as _cpu_op_info
from opforge.op_info import gpu as _gpu_op_info
from opforge.kernels import gpu as _gpu_kernels
from opforge.kernels.cpu import comm as _cpu_comm_kernels
from opforge.kernels.cpu import fused as _cpu_fuser
from opforge import communication
from opforge import ops, primitives
from opforge.bprop import GradOperation, grad, stop_gradient, value_and_grad
from opforge.bprop.forward import hvp, jacfwd, jacrev, jvp, linearize, vjp
from opforge.bprop import grad_array_ops as _grad_array_ops
from opforge.bprop import grad_math_ops as _grad_math_ops
from opforge.bprop import grad_nn_ops as _grad_nn_ops
from opforge.bprop import grad_conv_ops as _grad_conv_ops
from opforge.bprop import grad_attention_ops as _grad_attention_ops
from opforge.bprop import grad_elemwise_ops as _grad_elemwise_ops
from opforge.bprop import grad_nn_activation_ops as _grad_nn_activation_ops
from opforge.bprop import grad_math_ext_ops as _grad_math_ext_ops
from opforge.bprop import grad_linalg_ops as _grad_linalg_ops
from opforge.bprop import grad_ctc_ops as _grad_ctc_ops
from opforge.bprop import grad_detection_ops as _grad_detection_ops
from opforge.bprop import grad_comm_ops as _grad_comm_ops
from opforge import profiler  # opforge.tools.profiler's API and MindSpore's Profiler
from opforge.jit import GraphBreakWarning, JitFunction, TraceError, jit
from opforge.jit_config import JitConfig

__version__ = "0.1.0"

from opforge import nn
from opforge import mint  # MindSpore's mindspore.mint: PyTorch's names over opforge's operators
from opforge.nn import load_checkpoint, load_param_into_net, save_checkpoint
from opforge.nn.checkpoint_convert import ckpt_to_safetensors, safetensors_to_ckpt
from opforge.parallel.checkpoint_transform import (  # MindSpore exports them at the top too
    merge_pipeline_strategys,
    rank_list_for_transform,
    transform_checkpoint_by_rank,
    transform_checkpoints,
    unified_safetensors,
)
from opforge.nn.pipeline import sync_pipeline_shared_parameters  # (mindspore.sync_pipeline_shared_parameters)

# MindSpore's samples reach these as attributes after a plain import (ms.parallel.nn.Pipeline); importing them
# binds them on the package
from opforge.parallel import distributed as _distributed, function as _function, nn as _parallel_nn

del _distributed, _function, _parallel_nn
from opforge import common
from opforge.common import ParameterTuple, RowTensor
from opforge.common.api import lazy_inline, ms_function  # (ms_function: MindSpore 1.x's name of jit)
from opforge.common.recompute import recompute  # MindSpore's mindspore.recompute(block, *args, **kwargs)
from opforge import dataset, numpy, scipy, train
from opforge import log  # MindSpore's mindspore.log (from mindspore import log as logger)
from opforge import amp
from opforge.amp import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager, build_train_network
from opforge.train import *  # noqa: F403 (MindSpore exports mindspore.train's names at the top: ms.LossMonitor)
from opforge.seed import get_seed, set_seed
from opforge.symbol import Symbol
from opforge.generator import Generator, default_generator, get_rng_state, initial_seed, manual_seed, set_rng_state

# Placeholders and the shape-only dry run (docs/dynamic_shape.md).
from opforge.dispatch.abstract import eval_shape
from opforge.tensor import PlaceholderError
from opforge.ops import vmap
from opforge.primitives.batching_array_ops import vmap_report
