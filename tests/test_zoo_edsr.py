"""EDSR as MindSpore's model zoo runs it (tests/zoo/edsr: official/cv/EDSR with ``mindspore`` replaced by
``opforge``) on DIV2K-style folders written here: the network (``RgbNormal``, the residual blocks scaled by
``res_scale``, ``Upsampler``'s convolutions and ``PixelShuffle`` over ``ops.DepthToSpace``) against a NumPy
EDSR; ``load_pre_trained_param_dict`` across scales; the ``PSNR`` metric (``Quantizer``'s ``clip_by_value``
and ``astype("Int32")``, the shaved border) and eval.py's ``BenchmarkPSNR`` on the luma; the numpy
``SelfEnsembleWrapperNumpy``; ``create_dataset_DIV2K``'s ``GeneratorDataset`` with its aligned random LR/HR
patches, flips and transposes; then train.py's ``run_train()`` (GRAPH_MODE; ``Model`` with ``L1Loss``, ``Adam``
on the step learning rates and ``amp_level="O3"`` in dataset sink mode, ``ModelCheckpoint``, the zoo's
``EvalCallBack`` and ``do_eval``) and eval.py's ``run_eval()`` on its checkpoint, on DIV2K (self-ensemble,
``SaveSrHr``). (eval.py's benchmark branch stops at its
``BenchmarkPSNR``'s ``eval(sync=True)`` on one device, in MindSpore too: the metric's ``ReduceSum``, kept as
``self.sum``, is what ``_DistMetric.eval`` takes for the distributed sum.)"""

import copy
import os
import re

import numpy as np
import pytest
from PIL import Image
from zoo.edsr import eval as zoo_eval
from zoo.edsr import train as zoo_train
from zoo.edsr.model_utils.config import config
from zoo.edsr.src.dataset import create_dataset_DIV2K
from zoo.edsr.src.edsr import EDSR
from zoo.edsr.src.metric import PSNR, SaveSrHr, SelfEnsembleWrapperNumpy
from zoo.edsr.src.utils import init_net

import opforge
import opforge.dataset as ds
from opforge import ParameterTuple, Tensor, context, nn, ops
from opforge.train.model import Model

SAVED = ["0000_hr.png", "0000_sr.png", "0001_hr.png", "0001_sr.png"]  # SaveSrHr's files for two images


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(config))
    opforge.set_seed(2021)  # as train.py and eval.py at import: the patches' and flips' draws (Python's random)
    yield
    vars(config).clear()
    vars(config).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_div2k(root, counts=(4, 2), size=16, seed=0):
    """DIV2K's layout: DIV2K_{train,valid}_HR/0000.png and DIV2K_{...}_LR_bicubic/X2/0000x2.png; each HR image the
    LR image enlarged 2 x by repetition (so an aligned HR patch is its LR patch repeated)."""
    rng = np.random.default_rng(seed)
    for split, count in zip(("train", "valid"), counts):
        hr_dir = os.path.join(root, f"DIV2K_{split}_HR")
        lr_dir = os.path.join(root, f"DIV2K_{split}_LR_bicubic", "X2")
        os.makedirs(hr_dir, exist_ok=True)
        os.makedirs(lr_dir, exist_ok=True)
        for i in range(count):
            coarse = np.clip(rng.normal(128, 50, (4, 4, 3)), 0, 255).astype(np.uint8)
            lr = np.asarray(Image.fromarray(coarse).resize((size, size), Image.BILINEAR))
            Image.fromarray(lr).save(os.path.join(lr_dir, f"{i:04d}x2.png"))
            Image.fromarray(lr.repeat(2, 0).repeat(2, 1)).save(os.path.join(hr_dir, f"{i:04d}.png"))
    return str(root)


def _dataset_config(root, patch_size=16):
    return {
        "dataset_path": root,
        "scale": config.scale,
        "lr_type": "bicubic",
        "batch_size": 2,
        "patch_size": patch_size,
        "eval_type": "",
    }


# ---------------------------------------------------------------------------------------------
# A NumPy EDSR


def _np(p):
    return p.asnumpy().astype(np.float64)


def _conv_same(x, conv):
    w = _np(conv.weight)
    k = w.shape[-1]
    h, wd = x.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    taps = [(i, j) for i in range(k) for j in range(k)]
    out = sum(np.einsum("bchw,oc->bohw", xp[:, :, i : i + h, j : j + wd], w[:, :, i, j]) for i, j in taps)
    return out + _np(conv.bias)[None, :, None, None]


def _pixel_shuffle(x, b):
    """DepthToSpace's order: channel (i * b + j) * C + c goes to pixel (h * b + i, w * b + j) of channel c."""
    n, c, h, w = x.shape
    return x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)


def _edsr_numpy(net, x, factors):
    mean = np.float64(config.rgb_mean)[None, :, None, None]
    x = _conv_same(x / 255 - mean, net.head[0])
    res = x
    for block in list(net.body)[:-1]:
        res = res + 0.1 * _conv_same(np.maximum(_conv_same(res, block.conv1), 0), block.conv2)
    x = x + _conv_same(res, net.body[len(net.body) - 1])
    up = list(net.tail[0].up)
    for conv, factor in zip(up[0::2], factors):
        x = _pixel_shuffle(_conv_same(x, conv), factor)
    return (_conv_same(x, net.tail[1]) + mean) * 255


def _psnr(sr, hr, shave):
    sr = np.clip(sr, 0, 255).astype(np.int32)  # Quantizer: clip, then truncate
    diff = ((sr - hr) / 255)[..., shave:-shave, shave:-shave]
    return list(-10 * np.log10((diff**2).mean((1, 2, 3))))


# ---------------------------------------------------------------------------------------------
# The network and the metrics


@pytest.mark.parametrize("scale, factors", [(2, [2]), (3, [3]), (4, [2, 2])])
def test_edsr_matches_a_numpy_edsr(rng, scale, factors):
    net = EDSR(scale=scale, n_feats=8, kernel_size=3, n_resblocks=2, rgb_mean=config.rgb_mean)
    trainable = net.trainable_params()
    # head, 2 blocks of 2, the body's last, one convolution per factor, the tail's: weights and biases;
    # RgbNormal's weights and biases are not trained
    assert len(trainable) == 2 * (1 + 4 + 1 + len(factors) + 1)
    assert sum(not p.requires_grad for p in net.get_parameters()) == 4
    for p in trainable:
        p.set_data(Tensor(rng.normal(0, 0.1, p.shape).astype(np.float32)))
    x = rng.uniform(0, 255, (2, 3, 6, 5)).astype(np.float32)
    got = net(Tensor(x)).asnumpy()
    assert got.shape == (2, 3, 6 * scale, 5 * scale)
    np.testing.assert_allclose(got, _edsr_numpy(net, x.astype(np.float64), factors), rtol=1e-4, atol=1e-2)


def test_pre_trained_weights_load_across_scales(tmp_path):
    x2 = EDSR(scale=2, n_feats=8, kernel_size=3, n_resblocks=2)
    path = str(tmp_path / "edsr_x2.ckpt")
    opforge.save_checkpoint(x2, path)
    config.scale, config.pre_trained = 4, path
    x4 = init_net(config)  # load_pre_trained_param_dict(strict=False): the tail's shapes differ and stay
    for name, p in x4.parameters_and_names():
        theirs = dict(x2.parameters_and_names()).get(name)
        if name.startswith("tail") or theirs is None:
            continue
        np.testing.assert_array_equal(p.asnumpy(), theirs.asnumpy(), err_msg=name)
    assert x4.tail[0].up[0].weight.shape == (32, 8, 3, 3) and x4.tail[0].up[2].weight.shape == (32, 8, 3, 3)


def test_psnr_benchmark_psnr_and_saving(rng, tmp_path):
    sr = rng.uniform(-20, 275, (2, 3, 12, 12)).astype(np.float32)
    hr = rng.integers(0, 256, (2, 3, 12, 12)).astype(np.float32)
    metric = PSNR(rgb_range=255, shave=3)
    metric.update(Tensor(sr), Tensor(hr))
    metric.update(Tensor(hr), Tensor(hr + 1))
    want = _psnr(sr, hr, 3) + _psnr(hr, hr + 1, 3)
    np.testing.assert_allclose(metric.eval(sync=False), np.mean(want), rtol=1e-6)
    np.testing.assert_allclose(metric.eval(), np.mean(want), rtol=1e-6)
    # eval.py's BenchmarkPSNR: the difference's luma (the channels weighted by 65.738, 129.057, 25.064 over 256).
    # Its ReduceSum, kept as `self.sum`, is what _DistMetric.eval takes for the distributed sum (None on one
    # device), so eval(sync=True), which do_eval calls, fails on one device, as in MindSpore: eval(sync=False)
    luma = zoo_eval.BenchmarkPSNR(rgb_range=255, shave=2, channels_scale=[x / 256 for x in (65.738, 129.057, 25.064)])
    luma.update(Tensor(sr), Tensor(hr))
    diff = (np.clip(sr, 0, 255).astype(np.int32) - hr) / 255
    y = np.einsum("bchw,c->bhw", diff, np.float64([65.738, 129.057, 25.064]) / 256)[:, 2:-2, 2:-2]
    np.testing.assert_allclose(luma.eval(sync=False), np.mean(-10 * np.log10((y**2).mean((1, 2)))), rtol=1e-5)
    # SaveSrHr: the quantized SR and the HR as PNG files, counted
    saver = SaveSrHr(str(tmp_path))
    saver.update(Tensor(sr), Tensor(hr))
    assert saver.eval() == 2 and sorted(os.listdir(tmp_path)) == SAVED
    saved = np.asarray(Image.open(tmp_path / "0001_sr.png"))
    np.testing.assert_array_equal(saved, np.clip(sr[1], 0, 255).astype(np.uint8).transpose(1, 2, 0))


def test_self_ensemble_averages_the_eight_flips_and_transposes(rng):
    net = EDSR(scale=2, n_feats=8, kernel_size=3, n_resblocks=1)
    for p in net.trainable_params():
        p.set_data(Tensor(rng.normal(0, 0.1, p.shape).astype(np.float32)))
    x = rng.uniform(0, 255, (1, 3, 5, 5)).astype(np.float32)
    got = SelfEnsembleWrapperNumpy(net)(Tensor(x)).asnumpy()
    outs = []
    for k in range(4):  # the 8 symmetries of the square: 4 rotations, with and without a transpose
        for t in (False, True):
            v = np.rot90(x, k, (2, 3))
            v = v.transpose(0, 1, 3, 2) if t else v
            y = net(Tensor(np.ascontiguousarray(v))).asnumpy()
            y = y.transpose(0, 1, 3, 2) if t else y
            outs.append(np.rot90(y, -k, (2, 3)))
    np.testing.assert_allclose(got, np.mean(outs, 0), rtol=1e-5, atol=1e-3)


def test_train_step_is_adam_on_the_l1_loss(rng):
    """Two steps of train.py's Model(net, L1Loss, Adam from init_opt) against NumPy's Adam (MindSpore's: bias
    corrected through beta powers, epsilon 1e-8) on the L1 loss's gradients, at the step learning rates."""
    config.amp_level, config.steps_per_epoch, config.learning_rate = "O0", 2, 0.01
    net = init_net(config)
    lrs = zoo_train.lr_steps_edsr(0.01, [1], 0.5, config.epoch_size, 2)
    np.testing.assert_allclose(lrs, [0.01] * 10)  # a lone milestone never takes effect (segments: 0 to the 2nd)
    opt = zoo_train.init_opt(config, net)
    model = Model(net, loss_fn=nn.L1Loss(reduction="mean"), optimizer=opt, amp_level="O0")
    lr_batch = rng.uniform(0, 255, (2, 2, 3, 6, 6)).astype(np.float32)
    hr_batch = rng.uniform(0, 255, (2, 2, 3, 12, 12)).astype(np.float32)
    params = list(net.trainable_params())
    loss_net = nn.WithLossCell(net, nn.L1Loss())
    grad_fn = ops.GradOperation(get_by_list=True)(loss_net, ParameterTuple(params))
    m = [np.zeros(p.shape) for p in params]
    v = [np.zeros(p.shape) for p in params]
    for t in (1, 2):
        lr, hr = Tensor(lr_batch[t - 1]), Tensor(hr_batch[t - 1])
        values = [_np(p) for p in params]
        grads = [g.asnumpy().astype(np.float64) for g in grad_fn(lr, hr)]
        model.train(1, ds.NumpySlicesDataset({"lr": lr_batch[t - 1 : t], "hr": hr_batch[t - 1 : t]}, shuffle=False))
        step = 0.01 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        for j, p in enumerate(params):
            m[j] = 0.9 * m[j] + 0.1 * grads[j]
            v[j] = 0.999 * v[j] + 0.001 * grads[j] ** 2
            want = values[j] - step * m[j] / (np.sqrt(v[j]) + 1e-8)
            np.testing.assert_allclose(p.asnumpy(), want, rtol=1e-4, atol=1e-6, err_msg=p.name)


# ---------------------------------------------------------------------------------------------
# The DIV2K pipelines


def test_div2k_pipelines_cut_aligned_patches(tmp_path):
    root = _write_div2k(tmp_path)
    train = create_dataset_DIV2K(_dataset_config(root), dataset_type="train", num_parallel_workers=2)
    assert train.get_col_names() == ["lrx2", "hr"] and train.get_dataset_size() == 2
    firsts = []
    for lr, hr in train.create_tuple_iterator(output_numpy=True):
        assert lr.shape == (2, 3, 8, 8) and hr.shape == (2, 3, 16, 16) and lr.dtype == hr.dtype == np.float32
        np.testing.assert_array_equal(hr, lr.repeat(2, 2).repeat(2, 3))  # the same place, flip and transpose
        firsts.append(lr[0])
    # the centre patches (patch_size 16 of the HR) and the whole images (patch_size -1)
    lr_image = np.asarray(Image.open(os.path.join(root, "DIV2K_valid_LR_bicubic", "X2", "0000x2.png")), np.float32)
    centre = create_dataset_DIV2K(_dataset_config(root), dataset_type="valid")
    lr, hr = next(centre.create_tuple_iterator(output_numpy=True))
    np.testing.assert_array_equal(lr[0], lr_image[4:12, 4:12].transpose(2, 0, 1))
    whole = create_dataset_DIV2K(_dataset_config(root, patch_size=-1), dataset_type="valid")
    lr, hr = next(whole.create_tuple_iterator(output_numpy=True))
    np.testing.assert_array_equal(lr[0], lr_image.transpose(2, 0, 1))
    assert hr.shape == (2, 3, 32, 32)


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def _results(text):
    return [eval(line.split("=", 1)[1]) for line in text.splitlines() if line.startswith("evaluation result =")]


def test_train_py_then_eval_py(tmp_path, capsys):
    config.data_path = _write_div2k(tmp_path / "div2k")
    config.output_path = str(tmp_path / "out")
    config.ckpt_save_dir = str(tmp_path / "out" / "ckpt")
    zoo_train.run_train()
    out = capsys.readouterr().out
    assert "train success" in out
    losses = [float(x) for x in re.findall(r"step: 2, loss is ([0-9.]+)", out)]
    results = _results(out)  # EvalCallBack after each epoch: do_eval's PSNR of the centre patches
    assert len(losses) == len(results) == config.epoch_size == 5
    assert [r["epoch"] for r in results] == [1, 2, 3, 4, 5]
    psnr = [r["psnr"] for r in results]
    checkpoints = sorted(os.listdir(config.ckpt_save_dir))
    assert checkpoints == [f"EDSR_x2_DIV2K-{e}_2.ckpt" for e in range(1, 6)]

    # the PSNRs by hand: each epoch's checkpoint (its network in float16, as O3 trains it) on the centre patches.
    # do_eval never clears the metric, so epoch k prints the mean over epochs 1..k (MindSpore's Metric as well)
    context.set_context(mode=context.PYNATIVE_MODE)
    lr, hr = next(create_dataset_DIV2K(_dataset_config(config.data_path), "valid").create_tuple_iterator())
    per_epoch = []
    for name in checkpoints:
        config.pre_trained = os.path.join(config.ckpt_save_dir, name)
        net = init_net(config)
        net.to_float(opforge.float16)
        per_epoch.append(np.mean(_psnr(net(lr).asnumpy().astype(np.float32), hr.asnumpy(), 1)))  # shave=True: 1
    np.testing.assert_allclose(psnr, np.cumsum(per_epoch) / np.arange(1, 6), rtol=1e-3)
    assert per_epoch[-1] > per_epoch[0] + 1, per_epoch

    # eval.py on DIV2K: whole images, self-ensemble, PSNR shaved by 6 + scale, SR and HR saved
    zoo_eval.run_eval()
    out = capsys.readouterr().out
    assert "eval success" in out
    result = _results(out)[-1]
    net = init_net(config)
    want, count = [], 0
    for lr, hr in create_dataset_DIV2K(_dataset_config(config.data_path, -1), "valid").create_tuple_iterator():
        for i in range(lr.shape[0]):
            sr = SelfEnsembleWrapperNumpy(net)(lr[i : i + 1]).asnumpy()
            want += _psnr(sr, hr.asnumpy()[i : i + 1], 8)
            count += 1
    assert count == result["num_sr"] == 2
    np.testing.assert_allclose(result["psnr"], np.mean(want), rtol=1e-4)
    assert sorted(os.listdir(os.path.join(config.output_path, "HrSr"))) == SAVED
