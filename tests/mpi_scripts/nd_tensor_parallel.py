"""Run under ``mpiexec -n N`` (N even): MindSpore's high-dimension tensor parallel sample in its shape (two
MatMuls with ``add_prim_attr("enable_nd_tp", True)`` and Layouts over a (2, N / 2) device matrix, a ReLU between
them), trained 3 steps with Momentum in SEMI_AUTO_PARALLEL (``AutoParallel``, full batch) eagerly and in
GRAPH_MODE; the outputs and the weights equal one process's. Prints "NDTP-OK <max relative difference>" on
rank 0 or exits 1."""

import sys

import numpy as np

import opforge as ms
from opforge import Tensor, nn, ops
from opforge.communication import get_group_size, get_rank, init
from opforge.dispatch.sharding import gather_whole
from opforge.parallel import Layout
from opforge.parallel.auto_parallel import AutoParallel

init()
size = get_group_size()
rng = np.random.default_rng(0)
W1 = (rng.standard_normal((32, 64)) * 0.1).astype(np.float32)
W2 = (rng.standard_normal((64, 32)) * 0.1).astype(np.float32)
X = rng.standard_normal((16, 32)).astype(np.float32)
Y = rng.standard_normal((16, 32)).astype(np.float32)


class Network(nn.Cell):
    def __init__(self, nd_tp: bool):
        super().__init__()
        self.fc1_weight = ms.Parameter(Tensor(W1), name="fc1_weight")
        self.fc2_weight = ms.Parameter(Tensor(W2), name="fc2_weight")
        self.matmul1, self.relu, self.matmul2 = ops.MatMul(), ops.ReLU(), ops.MatMul()
        if nd_tp:  # the sample's strategies
            layout = Layout((2, size // 2), ("x", "y"))
            self.matmul1.add_prim_attr("enable_nd_tp", True)
            self.matmul1.shard(in_strategy=(layout("None", ("x", "y")), layout("x", "y")))
            self.relu.shard(in_strategy=(layout("None", ("y", "x")),))
            self.matmul2.add_prim_attr("enable_nd_tp", True)
            self.matmul2.shard(in_strategy=(layout("None", ("y", "x")), layout("y", "x")))

    def construct(self, x):
        return self.matmul2(self.relu(self.matmul1(x, self.fc1_weight)), self.fc2_weight)


def train(nd_tp: bool, mode) -> tuple:
    ms.set_context(mode=mode)
    net = Network(nd_tp)
    out = net(Tensor(X)) if not nd_tp else None
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    if nd_tp:
        step, forward = AutoParallel(step), AutoParallel(net)
        step.dataset_strategy("full_batch")
        forward.dataset_strategy("full_batch")
        out = gather_whole(forward(Tensor(X)))
    for _ in range(3):
        step(Tensor(X), Tensor(Y))
    return out.asnumpy(), [gather_whole(p).asnumpy() for p in net.trainable_params()]


want_out, want = train(False, ms.PYNATIVE_MODE)
worst = 0.0
for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
    got_out, got = train(True, mode)
    for g, w in zip([got_out, *got], [want_out, *want]):
        worst = max(worst, float(np.abs(g - w).max() / np.abs(w).max()))
if worst > 1e-5:
    sys.exit(f"NDTP-FAIL: max relative difference {worst}")
if get_rank() == 0:
    print("NDTP-OK", worst)
