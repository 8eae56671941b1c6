"""PointNet++ as MindSpore's model zoo runs it (tests/zoo/pointnet2: official/cv/PointNet2 with ``mindspore``
replaced by ``opforge``): its sampling and grouping (``square_distance`` over ``BatchMatMul``, ``index_points``'
``GatherNd`` over ``expand_as``-ed batch indices, ``farthest_point_sample``'s loop assigning ``centroids[i]`` in
place from a ``@constexpr`` random start, ``query_ball_point``'s ``Select`` / ``TopK`` / ``Maximum``) and the
single-scale-grouping classifier (three ``PointNetSetAbstraction`` layers, the last grouping all points, then
``Dense`` / ``BatchNorm1d`` / ``Dropout`` and ``LogSoftmax``) against NumPy; its per-sample ``NLLLoss`` and
``AdamWeightDecay`` on ``MultiStepLR``'s rates through ``TrainOneStepCell`` against NumPy; then train.py's
``run_train()`` (GRAPH_MODE, where the in-place ``centroids[i] = farthest`` is traced; ``GeneratorDataset``, the
``per_batch_map`` of ``RandomInputDropout`` in worker processes, ``Model`` with ``ModelCheckpoint``) and eval.py's
``run_eval()`` (``Model.eval`` with ``Accuracy`` in dataset sink mode) on a ModelNet-style folder written here.
The scripts' platform set-up accepts only Ascend and GPU: the tests point it at the CPU."""

import os
import re
import sys
import types

import numpy as np
import pytest
from zoo.pointnet2 import eval as zoo_eval
from zoo.pointnet2 import train as zoo_train
from zoo.pointnet2.src import pointnet2_utils as utils
from zoo.pointnet2.src.lr_scheduler import MultiStepLR
from zoo.pointnet2.src.pointnet2 import NLLLoss, PointNet2

import opforge
import opforge.dataset as ds
from opforge import ParameterTuple, Tensor, context, nn, ops

NAMES = ["airplane", "bathtub", "bed", "bench", "bookshelf", "bottle", "bowl", "car", "chair", "cone"]


@pytest.fixture(autouse=True)
def _state():
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


def _np(p):
    return p.asnumpy().astype(np.float64)


# ---------------------------------------------------------------------------------------------
# NumPy sampling, grouping and set abstraction


def _fps(xyz, npoint, start):
    b, n, _ = xyz.shape
    chosen = np.zeros((b, npoint), np.int64)
    distance = np.full((b, n), 1e9)
    far = start
    for i in range(npoint):
        chosen[:, i] = far
        d = ((xyz - xyz[np.arange(b), far][:, None]) ** 2).sum(-1)
        distance = np.minimum(distance, d)
        far = distance.argmax(1)
    return chosen


def _ball(radius, nsample, xyz, centres):
    """The zoo's ball query: the nsample largest indices within the radius, largest first, the rest the first."""
    d = ((centres[:, :, None] - xyz[:, None]) ** 2).sum(-1)
    assert np.abs(d - radius**2).min() > 5e-6  # no point on a sphere's boundary: float32 agrees
    out = np.zeros(centres.shape[:2] + (nsample,), np.int64)
    for b in range(d.shape[0]):
        for s in range(d.shape[1]):
            inside = np.nonzero(d[b, s] <= radius**2)[0][::-1][:nsample]
            out[b, s] = np.concatenate([inside, np.full(nsample - len(inside), inside[0])])
    return out


def _sa(layer, xyz, points, start, training):
    """PointNetSetAbstraction: the groups' offsets (and features) through the 1 x 1 convolution MLP, max-pooled."""
    b = xyz.shape[0]
    if layer.group_all:
        new_xyz, grouped = None, np.concatenate([xyz, points.transpose(0, 2, 1)], -1)[:, None]
    else:
        new_xyz = xyz[np.arange(b)[:, None], _fps(xyz, layer.npoint, start)]
        idx = _ball(layer.radius, layer.nsample, xyz, new_xyz)
        grouped = xyz[np.arange(b)[:, None, None], idx] - new_xyz[:, :, None]
        if points is not None:
            grouped = np.concatenate([grouped, points.transpose(0, 2, 1)[np.arange(b)[:, None, None], idx]], -1)
    h = grouped  # [B, S, K, C]
    for conv, bn in ((layer.conv1, layer.bn1), (layer.conv2, layer.bn2), (layer.conv3, layer.bn3)):
        h = _batch_norm(h @ _np(conv.weight)[:, :, 0, 0].T, bn, training)
        h = np.maximum(h, 0)
    return new_xyz, h.max(2).transpose(0, 2, 1)


def _batch_norm(h, bn, training):
    axes = tuple(range(h.ndim - 1))  # channels last here
    mean, var = (h.mean(axes), h.var(axes)) if training else (_np(bn.moving_mean), _np(bn.moving_variance))
    return (h - mean) / np.sqrt(var + 1e-5) * _np(bn.gamma) + _np(bn.beta)


def _pointnet2_numpy(net, xyz, starts):
    """PointNet2 in evaluation mode (moving statistics, no dropout)."""
    l1_xyz, l1 = _sa(net.sa1, xyz, None, starts[0], False)
    l2_xyz, l2 = _sa(net.sa2, l1_xyz, l1, starts[1], False)
    _, l3 = _sa(net.sa3, l2_xyz, l2, None, False)
    x = l3.reshape(-1, 1024)
    for dense, bn in ((net.fc1, net.bn1), (net.fc2, net.bn2)):
        x = np.maximum(_batch_norm(x @ _np(dense.weight).T + _np(dense.bias), bn, False), 0)
    x = x @ _np(net.fc3.weight).T + _np(net.fc3.bias)
    x = x - x.max(1, keepdims=True)
    return x - np.log(np.exp(x).sum(1, keepdims=True))


def _starts(seed, b, n_points):
    """The random first points farthest_point_sample draws (np.random.randint(N, size=(B,))), sa1's then sa2's."""
    np.random.seed(seed)
    return [np.random.randint(n, size=(b,)) for n in n_points]


def _randomize(net, rng):
    for name, p in net.parameters_and_names():
        if name.endswith(("gamma", "moving_variance")):
            p.set_data(Tensor(rng.uniform(0.5, 1.5, p.shape).astype(np.float32)))
        elif name.endswith(("beta", "moving_mean", "bias")):
            p.set_data(Tensor(rng.normal(0, 0.2, p.shape).astype(np.float32)))


def test_sampling_and_grouping_match_numpy(rng):
    xyz = rng.uniform(-1, 1, (2, 64, 3)).astype(np.float32)
    dst = rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    want = ((xyz[:, :, None].astype(np.float64) - dst[:, None]) ** 2).sum(-1)
    np.testing.assert_allclose(utils.square_distance(Tensor(xyz), Tensor(dst)).asnumpy(), want, atol=1e-5)
    idx = rng.integers(0, 64, (2, 5, 3)).astype(np.int32)
    got = utils.index_points(Tensor(xyz), Tensor(idx)).asnumpy()
    np.testing.assert_array_equal(got, xyz[np.arange(2)[:, None, None], idx])
    np.testing.assert_array_equal(utils.index_points(Tensor(xyz), Tensor(idx[:, :, 0])).asnumpy(),
                                  xyz[np.arange(2)[:, None], idx[:, :, 0]])  # fmt: skip

    (start,) = _starts(3, 2, [64])
    np.random.seed(3)
    centroids = utils.farthest_point_sample(Tensor(xyz), 16).asnumpy()
    np.testing.assert_array_equal(centroids, _fps(xyz.astype(np.float64), 16, start))
    centres = xyz[np.arange(2)[:, None], centroids]
    groups = utils.query_ball_point(0.5, 8, Tensor(xyz), Tensor(centres)).asnumpy()
    np.testing.assert_array_equal(groups, _ball(0.5, 8, xyz.astype(np.float64), centres.astype(np.float64)))


def test_set_abstraction_layer_matches_numpy(rng):
    layer = utils.PointNetSetAbstraction(npoint=16, radius=0.6, nsample=8, in_channel=3 + 4, mlp=[8, 8, 16],
                                         group_all=False)  # fmt: skip
    _randomize(layer, rng)
    layer.set_train(True)
    xyz = rng.uniform(-1, 1, (2, 64, 3)).astype(np.float32)
    feats = rng.normal(0, 1, (2, 4, 64)).astype(np.float32)
    (start,) = _starts(5, 2, [64])
    np.random.seed(5)
    new_xyz, new_points = layer(Tensor(xyz), Tensor(feats))
    want_xyz, want = _sa(layer, xyz.astype(np.float64), feats.astype(np.float64), start, True)
    np.testing.assert_allclose(new_xyz.asnumpy(), want_xyz, rtol=1e-6)
    assert new_points.shape == (2, 16, 16)
    np.testing.assert_allclose(new_points.asnumpy(), want, rtol=1e-4, atol=1e-4)


def test_pointnet2_matches_numpy(rng):
    net = PointNet2(10, normal_channel=False)
    _randomize(net, rng)
    net.set_train(False)
    xyz = rng.uniform(-1, 1, (2, 512, 3)).astype(np.float32)
    starts = _starts(11, 2, [512, 512])
    np.random.seed(11)
    got = net(Tensor(xyz)).asnumpy()
    assert got.shape == (2, 10)
    np.testing.assert_allclose(got, _pointnet2_numpy(net, xyz.astype(np.float64), starts), rtol=1e-4, atol=1e-4)


def test_nll_loss_adam_weight_decay_step_matches_numpy(rng):
    """The per-sample NLLLoss (no reduction: TrainOneStepCell's sens of ones takes the gradient of the sum) and
    AdamWeightDecay as train.py builds them, on MultiStepLR's rates: two steps against NumPy's AdamW (no bias
    correction; weight decay on all but the BatchNorm gammas and betas). Evaluation mode: no dropout masks."""
    lr = MultiStepLR(0.001, list(range(20, 201, 20)), 0.7, 1, 200).get_lr()
    want_lr = [0.001 * 0.7 ** sum(e >= m for m in range(20, 201, 20)) for e in range(200)]
    np.testing.assert_allclose(lr, want_lr, rtol=1e-6)
    net = PointNet2(10, False)
    loss_fn = NLLLoss()
    logits = np.log(rng.dirichlet(np.ones(10), 3)).astype(np.float32)
    labels = np.array([0, 7, 3], np.int32)
    np.testing.assert_allclose(loss_fn(Tensor(logits), Tensor(labels)).asnumpy(), -logits[np.arange(3), labels],
                               rtol=1e-6)  # fmt: skip

    opt = nn.AdamWeightDecay(net.trainable_params(), learning_rate=Tensor(lr), beta1=0.9, beta2=0.999, eps=1e-08,
                             weight_decay=1e-4)  # fmt: skip
    with_loss = nn.WithLossCell(net, loss_fn)
    step = nn.TrainOneStepCell(with_loss, opt)
    net.set_train(False)
    params = list(opt.parameters)
    xyz = Tensor(rng.uniform(-1, 1, (2, 512, 3)).astype(np.float32))
    label = Tensor(np.array([1, 8], np.int32))
    grad_fn = ops.GradOperation(get_by_list=True)(lambda x, y: with_loss(x, y).sum(), ParameterTuple(params))
    m = [np.zeros(p.shape) for p in params]
    v = [np.zeros(p.shape) for p in params]
    for t in range(2):
        np.random.seed(t)  # the same sampling starts for the gradients and the step
        grads = [g.asnumpy().astype(np.float64) for g in grad_fn(xyz, label)]
        before = [_np(p) for p in params]
        np.random.seed(t)
        step(xyz, label)
        for j, p in enumerate(params):
            m[j] = 0.9 * m[j] + 0.1 * grads[j]
            v[j] = 0.999 * v[j] + 0.001 * grads[j] ** 2
            update = m[j] / (np.sqrt(v[j]) + 1e-8)
            if "beta" not in p.name and "gamma" not in p.name:
                update = update + 1e-4 * before[j]
            np.testing.assert_allclose(_np(p) - before[j], -1e-3 * update, rtol=1e-3, atol=4e-7, err_msg=p.name)


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def _write_modelnet(root, per_class=(4, 2), points=600, seed=0):
    """modelnet40_normal_resampled's layout for ModelNet10: the shape names, modelnet10_{train,test}.txt and a folder
    per class of <name>_<id>.txt files (x, y, z and the normal, comma separated); flat airplanes and round chairs."""
    rng = np.random.default_rng(seed)
    os.makedirs(root)
    with open(os.path.join(root, "modelnet10_shape_names.txt"), "w") as f:
        f.write("\n".join(NAMES) + "\n")
    for split, count in zip(("train", "test"), per_class):
        ids = []
        for name, scale in (("airplane", [1.0, 1.0, 0.1]), ("chair", [0.6, 0.6, 0.6])):
            os.makedirs(os.path.join(root, name), exist_ok=True)
            for i in range(count // 2):
                shape_id = f"{name}_{split}{i:03d}"
                pts = rng.normal(0, 1, (points, 3)) * scale
                normals = pts / np.linalg.norm(pts, axis=1, keepdims=True)
                rows = np.concatenate([pts, normals], 1)
                np.savetxt(os.path.join(root, name, shape_id + ".txt"), rows, delimiter=",", fmt="%.6f")
                ids.append(shape_id)
        with open(os.path.join(root, f"modelnet10_{split}.txt"), "w") as f:
            f.write("\n".join(ids) + "\n")
    return str(root)


def _on_the_cpu(args, device_id, device_num):
    """train.py's content_init for one device, its GPU branch with the CPU as the target."""
    context.set_context(mode=context.GRAPH_MODE, device_target="CPU", max_call_depth=2048)


def test_run_train_then_run_eval(tmp_path, monkeypatch, capsys):
    root = _write_modelnet(tmp_path / "modelnet")
    save_dir = str(tmp_path / "save")
    argv = ["--batch_size", "2", "--num_category", "10", "--num_point", "512", "--data_path", root]
    monkeypatch.setattr(sys, "argv", ["train.py", *argv, "--epoch", "2", "--save_dir", save_dir, "--platform", "GPU"])
    with pytest.raises(ValueError, match="Unsupported platform"):
        zoo_train.content_init(types.SimpleNamespace(platform="CPU"), 0, 1)
    monkeypatch.setattr(zoo_train, "content_init", _on_the_cpu)
    opforge.set_seed(1)
    zoo_train.run_train()
    out = capsys.readouterr().out
    assert "The size of train data is 4" in out and "End of training." in out
    losses = [float(v) for v in re.findall(r"epoch: \d step: \d, loss is ([0-9.]+)", out)]
    assert len(losses) == 4 and np.all(np.isfinite(losses)), out  # LossMonitor every step (2 a epoch)
    assert sorted(os.listdir(save_dir)) == ["ckpt_pointnet2-1_2.ckpt", "ckpt_pointnet2-2_2.ckpt"]

    # eval.py on the last checkpoint; its GPU branch pointed at the CPU. The sampling starts drawn at the trace
    # (a constant of the compiled graph, as @constexpr in MindSpore) are fixed here to the first point
    checkpoint = os.path.join(save_dir, "ckpt_pointnet2-2_2.ckpt")
    monkeypatch.setattr(sys, "argv", ["eval.py", *argv, "--pretrained_ckpt", checkpoint, "--platform", "GPU"])
    monkeypatch.setattr(zoo_eval, "context", types.SimpleNamespace(
        GRAPH_MODE=context.GRAPH_MODE, set_context=lambda **kw: context.set_context(**{**kw, "device_target": "CPU"})
    ))  # fmt: skip
    monkeypatch.setattr(utils, "generate_tensor_fps", lambda b, n: Tensor(np.zeros(b, np.int32)))
    zoo_eval.run_eval()
    out = capsys.readouterr().out
    accuracy = float(re.search(r"result : \{'Accuracy': ([0-9.]+)\}", out).group(1))
    # the same by hand: the checkpoint's network in evaluation mode on the two test shapes (their first 512 points)
    context.set_context(mode=context.PYNATIVE_MODE)
    net = PointNet2(10, False)
    opforge.load_param_into_net(net, opforge.load_checkpoint(checkpoint))
    net.set_train(False)
    shapes = [("airplane", "airplane_test000"), ("chair", "chair_test000")]
    xyz = np.stack([np.loadtxt(os.path.join(root, c, f + ".txt"), delimiter=",")[:512, :3] for c, f in shapes])
    pred = net(Tensor(xyz.astype(np.float32))).asnumpy().argmax(1)
    assert accuracy == np.mean(pred == [NAMES.index("airplane"), NAMES.index("chair")])
