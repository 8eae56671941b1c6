"""Run under ``mpiexec -n N``: ``Model.infer_train_layout`` and ``Model.infer_predict_layout`` of a tensor-parallel
network (``Primitive.shard``) in GRAPH_MODE and SEMI_AUTO_PARALLEL mode.

A Megatron-style MLP (column- then row-parallel Dense). Checked: each parameter's entry, (device matrix, tensor
map, block shape, 0, True, "") from its strategy (the optimizer's states as their weights); the
parameters laid out (split) with their values unchanged; the training after ``infer_train_layout`` and the
prediction after ``infer_predict_layout`` equal those of a twin network that was not asked (max relative
difference 1e-6). Prints "LAYOUT-OK" or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/infer_layout.py
"""

import numpy as np
from megatron import MLP, whole
from mpi4py import MPI

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.dataset import GeneratorDataset
from opforge.dispatch.sharding import is_sharded
from opforge.train import Model

init()
rank, size = get_rank(), get_group_size()
IN, HIDDEN, OUT, BATCH = 6, 4 * size, 3, 8


def fail(message: str):
    print(f"LAYOUT-FAIL rank {rank}: {message}", flush=True)
    MPI.COMM_WORLD.Abort(1)


def model():
    nn.set_seed(0)
    net = MLP(IN, HIDDEN, OUT, size, "he_uniform", "normal")
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9)), net


rng = np.random.default_rng(7)
batches = [
    (rng.standard_normal((BATCH, IN)).astype(np.float32), rng.integers(0, OUT, BATCH).astype(np.int32))
    for _ in range(3)
]


def dataset():
    return GeneratorDataset(lambda: iter(batches), ["x", "y"], shuffle=False)


opforge.set_context(mode=opforge.GRAPH_MODE)
opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", device_num=size, full_batch=True)
split = HIDDEN // size
expected = {
    "fc1.weight": ([size], [0, -1], [split, IN], 0, True, ""),  # column parallel: output rows split
    "fc1.bias": ([size], [0], [split], 0, True, ""),
    "fc2.weight": ([size], [-1, 0], [OUT, split], 0, True, ""),  # row parallel: input columns split
    "fc2.bias": ([size], [-1], [OUT], 0, True, ""),
    "moments.fc1.weight": ([size], [0, -1], [split, IN], 0, True, ""),  # a state: its weight's layout
    "moments.fc2.weight": ([size], [-1, 0], [OUT, split], 0, True, ""),
    "moments.fc2.bias": ([size], [-1], [OUT], 0, True, ""),
    "global_step": ([size], [], [], 0, True, ""),
}

trained, net = model()
before = {p.name: p.asnumpy().copy() for p in trained.train_network.get_parameters()}
layout = trained.infer_train_layout(dataset())
for name, entry in expected.items():
    if layout.get(name) != entry:
        fail(f"infer_train_layout's {name}: {layout.get(name)}, expected {entry}")
if set(layout) != set(before):
    fail(f"infer_train_layout lists {sorted(layout)}, the training network's parameters are {sorted(before)}")
if not is_sharded(net.fc1.weight) or not is_sharded(net.fc2.weight):
    fail("infer_train_layout did not lay the parameters out")
for p in trained.train_network.get_parameters():
    if not np.array_equal(whole(p), before[p.name]):
        fail(f"infer_train_layout changed the value of {p.name}")

twin, twin_net = model()  # trained without being asked for its layout
trained.train(2, dataset(), dataset_sink_mode=True)
twin.train(2, dataset(), dataset_sink_mode=True)
for p, q in zip(net.trainable_params(), twin_net.trainable_params()):
    a, b = whole(p), whole(q)
    if np.max(np.abs(a - b)) > 1e-6 * max(float(np.max(np.abs(b))), 1.0):
        fail(f"{p.name} after training differs from the twin's")

predicting, predict_net = model()
x = opforge.Tensor(batches[0][0])
predict_layout = predicting.infer_predict_layout(x)
if set(predict_layout) != {p.name for p in predict_net.get_parameters()}:
    fail(f"infer_predict_layout lists {sorted(predict_layout)}")
for name in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"):
    if predict_layout[name] != expected[name]:
        fail(f"infer_predict_layout's {name}: {predict_layout[name]}, expected {expected[name]}")
predicted = predicting.predict(x).asnumpy()
reference = model()[0].predict(x).asnumpy()
if not np.allclose(predicted, reference, rtol=1e-6, atol=1e-6):
    fail("the prediction after infer_predict_layout differs from a fresh network's")
if rank == 0:
    print("LAYOUT-OK", flush=True)
