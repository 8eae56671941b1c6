"""WGAN as MindSpore's model zoo runs it (tests/zoo/wgan: official/cv/WGAN with ``mindspore`` replaced by
``opforge``) on an LSUN-style image folder written here: the DCGAN generator and critic (``DcganG`` / ``DcganD``
with BatchNorm, ``DcgannobnG`` without, extra layers) against NumPy; the critic's training cell
(``DisTrainOneStepCell``: ``GradOperation(get_by_list=True, sens_param=True)``, ``RMSProp``, then every
weight clipped by ``ClipParameter`` and written back by ``HyperMap`` over ``F.assign``) and the generator's
(``GenTrainOneStepCell``) against NumPy's RMSProp; ``create_dataset``'s ``ImageFolderDataset`` with
``Resize``, ``CenterCrop``, ``Normalize`` and ``HWC2CHW``; train.py run as the script (GRAPH_MODE) and its
loop of critic and generator iterations; then eval.py run as the script on a generator checkpoint.

train.py prints each iteration's losses with ``'%f' % loss.asnumpy()``, of the critic's 1-element output
(``view(1)``): NumPy 2.4 no longer converts an array of one element to a float, so with it the script stops
at that print (in MindSpore too). The test then runs the script up to there and the rest of its loop with the
zoo's cells here."""

import json
import os
import runpy
import sys

import numpy as np
import pytest
from PIL import Image
from zoo.wgan.src.cell import DisTrainOneStepCell, DisWithLossCell, GenTrainOneStepCell, GenWithLossCell
from zoo.wgan.src.dataset import create_dataset
from zoo.wgan.src.dcgan_model import DcganD, DcganG
from zoo.wgan.src.dcgannobn_model import DcgannobnD, DcgannobnG

import opforge
import opforge.dataset as ds
from opforge import ParameterTuple, Tensor, context, nn, ops
from opforge.common import initializer as init

NZ, SIZE = 8, 16


@pytest.fixture(autouse=True)
def _state():
    opforge.set_seed(0)
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_images(root, count=8, seed=0):
    """An ImageFolderDataset folder (one class): smooth 20 x 20 colour images."""
    rng = np.random.default_rng(seed)
    folder = os.path.join(root, "bedroom")
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        coarse = np.clip(rng.normal(128, 50, (4, 4, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(coarse).resize((20, 20), Image.BILINEAR).save(os.path.join(folder, f"{i}.png"))
    return str(root)


def _init_weight(net):
    """train.py's init_weight (defined inside its __main__ block)."""
    for _, cell in net.cells_and_names():
        if isinstance(cell, (nn.Conv2d, nn.Conv2dTranspose)):
            cell.weight.set_data(init.initializer(init.Normal(0.02), cell.weight.shape))
        elif isinstance(cell, nn.BatchNorm2d):
            gamma = Tensor(np.random.normal(1, 0.02, cell.gamma.shape), opforge.float32)
            cell.gamma.set_data(init.initializer(gamma, cell.gamma.shape))
            cell.beta.set_data(init.initializer("zeros", cell.beta.shape))


# ---------------------------------------------------------------------------------------------
# NumPy DCGANs


def _np(p):
    return p.asnumpy().astype(np.float64)


def _conv(x, w, stride, pad):
    k = w.shape[-1]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (xp.shape[2] - k) // stride + 1, (xp.shape[3] - k) // stride + 1
    return sum(
        np.einsum("bchw,oc->bohw", xp[:, :, i : i + stride * ho : stride, j : j + stride * wo : stride], w[:, :, i, j])
        for i in range(k)
        for j in range(k)
    )


def _conv_transpose(x, w, stride, pad):
    """Each input pixel scatters its k x k patch (weight (in, out, k, k)) at stride; the border pad cut off."""
    b, _, h, wd = x.shape
    k = w.shape[-1]
    full = np.zeros((b, w.shape[1], (h - 1) * stride + k, (wd - 1) * stride + k))
    for i in range(k):
        for j in range(k):
            full[:, :, i : i + stride * (h - 1) + 1 : stride, j : j + stride * (wd - 1) + 1 : stride] += np.einsum(
                "bchw,co->bohw", x, w[:, :, i, j]
            )
    return full[:, :, pad : full.shape[2] - pad, pad : full.shape[3] - pad]


def _run_numpy(main, x):
    """The SequentialCell's layers; BatchNorm in training mode (the batch's mean and biased variance)."""
    for cell in main:
        if isinstance(cell, nn.Conv2dTranspose):
            x = _conv_transpose(x, _np(cell.weight), cell.stride[0], cell.padding)
        elif isinstance(cell, nn.Conv2d):
            x = _conv(x, _np(cell.weight), cell.stride[0], cell.padding)
        elif isinstance(cell, nn.BatchNorm2d):
            mean, var = x.mean((0, 2, 3), keepdims=True), x.var((0, 2, 3), keepdims=True)
            x = (x - mean) / np.sqrt(var + 1e-5) * _np(cell.gamma)[:, None, None] + _np(cell.beta)[:, None, None]
        elif isinstance(cell, nn.LeakyReLU):
            x = np.where(x > 0, x, 0.2 * x)
        elif isinstance(cell, nn.ReLU):
            x = np.maximum(x, 0)
        else:
            assert isinstance(cell, nn.Tanh)
            x = np.tanh(x)
    return x


def _noise(rng, batch=2):
    return rng.standard_normal((batch, NZ, 1, 1)).astype(np.float32)


@pytest.mark.parametrize("bn", [True, False])
def test_generator_and_critic_match_numpy(rng, bn):
    gen_cls, critic_cls = (DcganG, DcganD) if bn else (DcgannobnG, DcgannobnD)
    net_g, net_d = gen_cls(SIZE, NZ, 3, 8, n_extra_layers=1), critic_cls(SIZE, NZ, 3, 8, n_extra_layers=1)
    for net in (net_g, net_d):
        _init_weight(net)
        net.set_train()
    # generator: nz -> 16 x 4 x 4 -> 8 x 8 x 8, an extra 3 x 3 layer, -> 3 x 16 x 16; the critic mirrors it
    convs = [c for c in net_g.main if isinstance(c, (nn.Conv2d, nn.Conv2dTranspose))]
    assert [c.weight.shape for c in convs] == [(NZ, 16, 4, 4), (16, 8, 4, 4), (8, 8, 3, 3), (8, 3, 4, 4)]
    assert sum(isinstance(c, nn.BatchNorm2d) for c in net_g.main) == (3 if bn else 0)
    noise = _noise(rng)
    fake = net_g(Tensor(noise)).asnumpy()
    assert fake.shape == (2, 3, SIZE, SIZE)
    np.testing.assert_allclose(fake, _run_numpy(net_g.main, noise.astype(np.float64)), rtol=1e-4, atol=1e-5)
    # the critic: one score, the batch's mean
    images = rng.uniform(-1, 1, (2, 3, SIZE, SIZE)).astype(np.float32)
    score = net_d(Tensor(images)).asnumpy()
    assert score.shape == (1,)
    want = _run_numpy(net_d.main, images.astype(np.float64)).mean()
    np.testing.assert_allclose(score[0], want, rtol=1e-4, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# The training cells


def _rmsprop(values, grads, lr):
    """MindSpore's RMSProp's first step: mean square from 1 (decay 0.99), no momentum, epsilon 1e-10."""
    return [v - lr * g / np.sqrt(0.99 + 0.01 * g**2 + 1e-10) for v, g in zip(values, grads)]


def test_critic_step_then_clipping_and_generator_step_match_numpy(rng):
    net_g, net_d = DcganG(SIZE, NZ, 3, 8), DcganD(SIZE, NZ, 3, 8)
    _init_weight(net_g)
    _init_weight(net_d)
    lr = 0.005  # large enough for some weights to leave [-0.01, 0.01]
    opt_d = nn.RMSProp(net_d.trainable_params(), learning_rate=lr, decay=0.99)
    opt_g = nn.RMSProp(net_g.trainable_params(), learning_rate=lr, decay=0.99)
    train_g = GenTrainOneStepCell(net_g, net_d, opt_g)
    train_d = DisTrainOneStepCell(net_g, net_d, opt_d, -0.01, 0.01)
    train_g.set_train()
    train_d.set_train()
    real, noise = Tensor(rng.uniform(-1, 1, (2, 3, SIZE, SIZE)).astype(np.float32)), Tensor(_noise(rng))

    # the critic: RMSProp on the gradients of D(real) - D(G(noise)), then each weight clipped to [-0.01, 0.01]
    d_params = list(net_d.trainable_params())
    d_loss = DisWithLossCell(net_g, net_d)
    want_loss = d_loss(real, noise).asnumpy()
    grads = ops.GradOperation(get_by_list=True)(d_loss, ParameterTuple(d_params))(real, noise)
    updated = _rmsprop([_np(p) for p in d_params], [g.asnumpy().astype(np.float64) for g in grads], lr)
    g_before = [_np(p) for p in net_g.trainable_params()]
    loss = train_d(real, noise)
    np.testing.assert_allclose(loss.asnumpy(), want_loss, rtol=1e-5)
    assert any(np.abs(u).max() > 0.01 for u in updated)  # the clipping bites
    for p, u in zip(d_params, updated):
        np.testing.assert_allclose(p.asnumpy(), np.clip(u, -0.01, 0.01), rtol=1e-5, atol=1e-8, err_msg=p.name)
    for p, before in zip(net_g.trainable_params(), g_before):
        np.testing.assert_array_equal(p.asnumpy(), before)  # the critic's step leaves the generator

    # the generator: RMSProp on the gradients of D(G(noise)); the critic untouched
    g_params = list(net_g.trainable_params())
    g_loss = GenWithLossCell(net_g, net_d)
    want_loss = g_loss(noise).asnumpy()
    grads = ops.GradOperation(get_by_list=True)(g_loss, ParameterTuple(g_params))(noise)
    updated = _rmsprop([_np(p) for p in g_params], [g.asnumpy().astype(np.float64) for g in grads], lr)
    d_before = [_np(p) for p in d_params]
    np.testing.assert_allclose(train_g(noise).asnumpy(), want_loss, rtol=1e-5)
    for p, u in zip(g_params, updated):
        np.testing.assert_allclose(p.asnumpy(), u, rtol=1e-5, atol=1e-8, err_msg=p.name)
    for p, before in zip(d_params, d_before):
        np.testing.assert_array_equal(p.asnumpy(), before)


def test_lsun_pipeline(tmp_path):
    root = _write_images(tmp_path / "lsun", count=5)
    data = create_dataset(root, "lsun", 2, SIZE, 1, 2, "CPU")
    assert data.get_dataset_size() == 2 and data.get_col_names() == ["image", "label"]  # drop_remainder
    mine = []
    for name in os.listdir(os.path.join(root, "bedroom")):
        img = Image.open(os.path.join(root, "bedroom", name)).convert("RGB").resize((SIZE, SIZE), Image.BILINEAR)
        mine.append((np.asarray(img, np.float32) - 127.5) / 127.5)
    for row in data.create_dict_iterator(output_numpy=True):
        image, label = row["image"], row["label"]
        assert image.shape == (2, 3, SIZE, SIZE) and image.dtype == np.float32 and label.dtype == np.int32
        for img in image:  # Resize (bilinear) to 16, centre crop 16, (x - 127.5) / 127.5, CHW
            assert any(np.allclose(img.transpose(1, 2, 0), m, atol=1e-5) for m in mine)


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def _numpy_takes_one_element_arrays_as_floats():
    try:
        float(np.ones(1))
    except TypeError:
        return False
    return True


def _train_argv(root, out, niter):
    return ["train.py", "--device_target", "CPU", "--dataset", "lsun", "--dataroot", root, "--workers", "2",
            "--batchSize", "2", "--imageSize", str(SIZE), "--nz", str(NZ), "--ngf", "8", "--ndf", "8",
            "--niter", str(niter), "--experiment", out]  # fmt: skip


def _train_loop(root, out, niter, lr=5e-5):
    """train.py's setup and loop (RMSProp), recording the critic's objective on a fixed batch after each step."""
    dataset = create_dataset(root, "lsun", 2, SIZE, 1, 2, "CPU")
    net_g, net_d = DcganG(SIZE, NZ, 3, 8, 0), DcganD(SIZE, NZ, 3, 8, 0)
    _init_weight(net_g)
    _init_weight(net_d)
    optimizer_d = nn.RMSProp(net_d.trainable_params(), learning_rate=lr, decay=0.99)
    optimizer_g = nn.RMSProp(net_g.trainable_params(), learning_rate=lr, decay=0.99)
    net_g_train = GenTrainOneStepCell(net_g, net_d, optimizer_g)
    net_d_train = DisTrainOneStepCell(net_g, net_d, optimizer_d, -0.01, 0.01)
    net_g_train.set_train()
    net_d_train.set_train()
    fixed_real = next(dataset.create_dict_iterator())["image"]
    fixed_noise = Tensor(np.random.normal(0, 1, size=[2, NZ, 1, 1]), opforge.float32)
    objective = DisWithLossCell(net_g, net_d)
    scores, d_losses, g_losses = [float(objective(fixed_real, fixed_noise).asnumpy()[0])], [], []
    gen_iterations = 0
    for epoch in range(niter):
        data_iter = dataset.create_dict_iterator()
        length = dataset.get_dataset_size()
        i = 0
        while i < length:
            for p in net_d.trainable_params():
                p.requires_grad = True
            d_iters = 100 if gen_iterations < 25 or gen_iterations % 500 == 0 else 5
            j = 0
            while j < d_iters and i < length:
                j += 1
                data = data_iter.__next__()
                i += 1
                noise = Tensor(np.random.normal(0, 1, size=[2, NZ, 1, 1]), opforge.float32)
                d_losses.append(float(net_d_train(data["image"], noise).asnumpy()[0]))
                scores.append(float(objective(fixed_real, fixed_noise).asnumpy()[0]))
            for p in net_d.trainable_params():
                p.requires_grad = False
            noise = Tensor(np.random.normal(0, 1, size=[2, NZ, 1, 1]), opforge.float32)
            g_losses.append(float(net_g_train(noise).asnumpy()[0]))
            gen_iterations += 1
            opforge.save_checkpoint(net_d, f"{out}/netD_epoch_{epoch}.ckpt")
            opforge.save_checkpoint(net_g, f"{out}/netG_epoch_{epoch}.ckpt")
    return net_g, net_d, scores, d_losses, g_losses


def test_train_py_then_eval_py(tmp_path, monkeypatch, capsys):
    root = _write_images(tmp_path / "lsun")
    out = str(tmp_path / "samples")
    monkeypatch.setattr(sys, "argv", _train_argv(root, out, niter=3))
    if _numpy_takes_one_element_arrays_as_floats():
        runpy.run_module("zoo.wgan.train", run_name="__main__")
        assert "Train success!" in capsys.readouterr().out
    else:
        # the script sets up, trains the critic over the first epoch (Diters 100: the whole epoch) and the
        # generator once, then stops at its print of the losses
        with pytest.raises(TypeError, match="0-dimensional") as caught:
            runpy.run_module("zoo.wgan.train", run_name="__main__")
        frame = caught.traceback[-1] if caught.traceback[-1].path.name == "train.py" else caught.traceback[-2]
        assert frame.path.name == "train.py" and "print(" in str(frame.statement)
        printed = capsys.readouterr().out
        assert "Random Seed:" in printed and "DcganG<" in printed and "DcganD<" in printed
    with open(os.path.join(out, "generator_config.json")) as f:
        assert json.load(f) == {"imageSize": SIZE, "nz": NZ, "nc": 3, "ngf": 8, "n_extra_layers": 0, "noBN": False}

    # the loop (the script's learning rates): 4 critic steps (the epoch) and 1 generator step an epoch; the
    # critic's objective D(real) - D(G(noise)) on a fixed batch falls, its weights stay clipped
    context.set_context(mode=context.GRAPH_MODE)
    net_g, net_d, scores, d_losses, g_losses = _train_loop(root, out, niter=3)
    assert len(d_losses) == 12 and len(g_losses) == 3 and np.all(np.isfinite(d_losses + g_losses))
    assert np.all(np.diff(scores[1:]) < 0), scores  # after the first step's clipping, every step lowers it
    assert all(np.abs(p.asnumpy()).max() <= 0.01 + 1e-7 for p in net_d.trainable_params())
    assert sorted(f for f in os.listdir(out) if f.endswith(".ckpt")) == [
        f"net{n}_epoch_{e}.ckpt" for n in "DG" for e in range(3)
    ]

    # eval.py: 3 images from the last generator checkpoint and the seeded noise (the generator in inference:
    # BatchNorm on its moving statistics)
    monkeypatch.setattr(sys, "argv", ["eval.py", "--device_target", "CPU", "--config", f"{out}/generator_config.json",
                                      "--ckpt_file", f"{out}/netG_epoch_2.ckpt", "--output_dir", out,
                                      "--nimages", "3", "--input_seed", "7"])  # fmt: skip
    runpy.run_module("zoo.wgan.eval", run_name="__main__")
    assert "Generate images success!" in capsys.readouterr().out
    context.set_context(mode=context.PYNATIVE_MODE)
    net_g.set_train(False)
    noise = np.random.RandomState(7).normal(size=[3, NZ, 1, 1]).astype(np.float32)
    want = (net_g(Tensor(noise)).asnumpy() * 127.5 + 127.5).astype(np.uint8).transpose(0, 2, 3, 1)
    for i in range(3):
        got = np.asarray(Image.open(os.path.join(out, f"generated_{i:02d}.png")))
        assert np.abs(got.astype(int) - want[i]).max() <= 1


def test_hyper_map_over_a_parameter_tuple_gives_a_tuple():
    """MindSpore's HyperMap returns a tuple for tuple inputs, a ParameterTuple among them (the critic's cell maps
    F.assign over its weights and their clipped values); lists give lists."""
    weights = ParameterTuple([opforge.Parameter(Tensor(np.float32([1.0, -2.0])), name="w0"),
                              opforge.Parameter(Tensor(np.float32([3.0])), name="w1")])  # fmt: skip
    clipped = tuple(ops.clip_by_value(w, -1.5, 1.5) for w in weights)
    out = ops.HyperMap()(lambda p, c: ops.assign(p, c), weights, clipped)
    assert type(out) is tuple and len(out) == 2
    np.testing.assert_array_equal(weights[0].asnumpy(), [1.0, -1.5])
    np.testing.assert_array_equal(weights[1].asnumpy(), [1.5])
    nested = ops.HyperMap()(ops.Neg(), [Tensor(np.float32(1)), (Tensor(np.float32(2)),)])
    assert type(nested) is list and type(nested[1]) is tuple and float(nested[1][0].asnumpy()) == -2.0
