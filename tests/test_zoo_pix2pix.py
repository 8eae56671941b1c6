"""Pix2Pix as MindSpore's model zoo runs it (tests/zoo/pix2pix: research/cv/Pix2Pix with ``mindspore`` replaced
by ``opforge``), on paired images written here (the target on the left, the input on the right): train.py's
``train()`` (GRAPH_MODE; ``pix2pixDataset``'s Pillow resize and random crop, ``create_train_dataset``'s
``GeneratorDataset`` and its ``sync_random_Horizontal_Flip``, which flips an input and its target alike by
giving ``mindspore.set_seed`` the same seed before each flip; the U-Net generator and the PatchGAN
discriminator initialised by ``init_weights``; ``D_Loss`` / ``G_Loss`` over ``SigmoidCrossEntropyWithLogits``
and ``L1Loss``; ``TrainOneStepCell``: ``GradOperation(get_by_list=True, sens_param=True)`` for each network, two
Adam optimizers on ``get_lr``'s linear decay; the fake images and the loss plots it saves), then eval.py's
``pix2pix_eval()`` on a generator checkpoint. The networks, the losses, the train step and the datasets are
checked against independent references."""

import copy
import os

import numpy as np
import pytest
from PIL import Image
from zoo.pix2pix import eval as zoo_eval
from zoo.pix2pix import train as zoo_train
from zoo.pix2pix.src.dataset.pix2pix_dataset import (
    create_train_dataset,
    create_val_dataset,
    pix2pixDataset,
    pix2pixDataset_val,
)
from zoo.pix2pix.src.models.discriminator_model import Discriminator
from zoo.pix2pix.src.models.generator_model import UnetGenerator, UnetSkipConnectionBlock
from zoo.pix2pix.src.models.loss import D_Loss, D_WithLossCell, G_Loss, G_WithLossCell, TrainOneStepCell
from zoo.pix2pix.src.models.pix2pix import Pix2Pix, get_discriminator, get_generator
from zoo.pix2pix.src.utils.config import config
from zoo.pix2pix.src.utils.tools import decode_image, get_lr

import opforge
import opforge.dataset as ds
import opforge.nn as nn
from opforge import Tensor, context


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(config))
    opforge.set_seed(0)  # the weights, numpy.random (the crops, the flips' seeds) and the dataset's draws
    yield
    vars(config).clear()
    vars(config).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_pairs(root, count, seed=0, size=32, mirror=False):
    """``count`` PNG files 0.png, 1.png, ...: the target (B) on the left half, the input (A) on the right;
    A is B inverted, or B itself (``mirror``: then a left-to-right ramp, to see the flips)."""
    rng = np.random.default_rng(seed)
    os.makedirs(root, exist_ok=True)
    ramp = np.linspace(40, 220, size)[None, :, None]
    for i in range(count):
        if mirror:
            b = np.clip(ramp + rng.normal(0, 10, (1, 1, 3)), 0, 255).repeat(size, 0).astype(np.uint8)
        else:
            coarse = np.clip(rng.normal(128, 50, (4, 4, 3)), 0, 255).astype(np.uint8)
            b = np.asarray(Image.fromarray(coarse).resize((size, size), Image.BILINEAR))
        a = b if mirror else 255 - b
        Image.fromarray(np.concatenate([b, a], 1)).save(os.path.join(root, f"{i}.png"))
    return str(root) + "/"


def _image(seed, size=32, channels=3):
    return Tensor(np.random.default_rng(seed).uniform(-1, 1, (1, channels, size, size)).astype(np.float32))


def _count(cell):
    return sum(int(np.prod(p.shape)) for p in cell.trainable_params())


# ---------------------------------------------------------------------------------------------
# The networks and the losses


def test_unet_generator_and_patchgan_discriminator():
    net_g, net_d = get_generator(), get_discriminator()
    # U-Net, ngf 64, 8 downsamplings: 4 x 4 convolutions without biases (BatchNorm follows), BatchNorm's gamma
    # and beta; transposed convolutions of the concatenated skip connections (twice the channels)
    down = [(3, 64), (64, 128), (128, 256), (256, 512)] + [(512, 512)] * 4
    up = [(1024, 512)] * 3 + [(1024, 256), (512, 128), (256, 64), (128, 3)]
    want = sum(i * o * 16 for i, o in down) + 2 * (128 + 256 + 512 * 4)  # no norm after the first and innermost
    want += 512 * 512 * 16 + sum(i * o * 16 for i, o in up) + 2 * (512 * 4 + 256 + 128 + 64)  # the ups' norms
    assert _count(net_g) == want
    blocks = [c for _, c in net_g.cells_and_names() if isinstance(c, UnetSkipConnectionBlock)]
    assert len(blocks) == 8 and [b.skip_connections for b in blocks].count(False) == 1  # the outermost only
    # PatchGAN (n_layers 3) on the concatenated input and output: 6 -> 64 -> 128 -> 256 -> 512 -> 1
    want_d = 6 * 64 * 16 + 64 * 128 * 16 + 128 * 256 * 16 + 256 * 512 * 16 + 512 * 16 + 2 * (128 + 256 + 512)
    assert _count(net_d) == want_d
    # init_weights: Normal(0.02) for the (transposed) convolutions, BatchNorm at 1 and 0
    w = net_g.model.model[0].weight.asnumpy()
    assert abs(w.std() - 0.02) < 0.002 and abs(w.mean()) < 0.002
    assert all(np.all(p.asnumpy() == (1 if "gamma" in p.name else 0)) for p in net_d.trainable_params()
               if "gamma" in p.name or "beta" in p.name)  # fmt: skip

    x, y = _image(1, 256), _image(2, 256)
    fake = net_g(x).asnumpy()
    assert fake.shape == (1, 3, 256, 256) and np.abs(fake).max() <= 1.0  # Tanh
    assert net_d(x, y).shape == (1, 1, 30, 30)  # 256 -> 128 -> 64 -> 32 -> 31 -> 30: 70 x 70 patches


def _bce_with_logits(x, z):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def test_losses_and_the_loss_cells_match_numpy():
    rng = np.random.default_rng(3)
    pred1, pred0 = rng.standard_normal((2, 1, 1, 6, 6)).astype(np.float32)
    got = D_Loss()(Tensor(pred1), Tensor(pred0)).asnumpy()
    want = (np.mean(_bce_with_logits(pred1, 1)) + np.mean(_bce_with_logits(pred0, 0))) * config.LAMBDA_Dis
    np.testing.assert_allclose(got, want, rtol=1e-5)
    fake, real = rng.uniform(-1, 1, (2, 1, 3, 8, 8)).astype(np.float32)
    got = G_Loss()(Tensor(fake), Tensor(real), Tensor(pred0)).asnumpy()
    want = np.mean(_bce_with_logits(pred0, 1)) * config.LAMBDA_GAN + np.mean(np.abs(fake - real)) * config.LAMBDA_L1
    np.testing.assert_allclose(got, want, rtol=1e-5)

    # the loss cells on small networks (32 x 32 images: 5 downsamplings)
    net_g = UnetGenerator(in_planes=3, out_planes=3, ngf=4, n_layers=5)
    net_d = Discriminator(in_planes=6, ndf=4, n_layers=2)
    pix2pix = Pix2Pix(generator=net_g, discriminator=net_d)
    real_a, real_b = _image(4), _image(5)
    fake_b = pix2pix(real_a, real_b)
    np.testing.assert_allclose(fake_b.asnumpy(), net_g(real_a).asnumpy(), rtol=1e-6)
    d = D_WithLossCell(backbone=pix2pix, loss_fn=D_Loss())(real_a, real_b).asnumpy()
    want = D_Loss()(net_d(real_a, real_b), net_d(real_a, fake_b)).asnumpy()
    np.testing.assert_allclose(d, want, rtol=1e-5)
    g = G_WithLossCell(backbone=pix2pix, loss_fn=G_Loss())(real_a, real_b).asnumpy()
    np.testing.assert_allclose(g, G_Loss()(fake_b, real_b, net_d(real_a, fake_b)).asnumpy(), rtol=1e-5)


def test_train_one_step_cell_updates_each_network_with_its_own_loss():
    net_g = UnetGenerator(in_planes=3, out_planes=3, ngf=4, n_layers=5)
    net_d = Discriminator(in_planes=6, ndf=4, n_layers=2)
    pix2pix = Pix2Pix(generator=net_g, discriminator=net_d)
    d_loss_net = D_WithLossCell(backbone=pix2pix, loss_fn=D_Loss())
    g_loss_net = G_WithLossCell(backbone=pix2pix, loss_fn=G_Loss())
    lr = 0.001
    d_opt = nn.Adam(net_d.trainable_params(), learning_rate=lr, beta1=0.5, beta2=0.999, loss_scale=1)
    g_opt = nn.Adam(net_g.trainable_params(), learning_rate=lr, beta1=0.5, beta2=0.999, loss_scale=1)
    step = TrainOneStepCell(loss_netD=d_loss_net, loss_netG=g_loss_net, optimizerD=d_opt, optimizerG=g_opt)
    step.set_train()
    real_a, real_b = _image(6), _image(7)
    before = {p.name: p.asnumpy().copy() for p in pix2pix.trainable_params()}
    want_d, want_g = d_loss_net(real_a, real_b).asnumpy(), g_loss_net(real_a, real_b).asnumpy()
    d_res, g_res = step(real_a, real_b)
    # both losses of the weights before the step; each optimizer moves its own network's parameters, Adam's
    # first step by lr * g / (|g| + eps): about lr each (0 where the gradient is: the taps of the innermost 4 x 4
    # convolution that only ever see the padding of its 2 x 2 input)
    np.testing.assert_allclose(d_res.asnumpy(), want_d, rtol=1e-5)
    np.testing.assert_allclose(g_res.asnumpy(), want_g, rtol=1e-5)
    for net in (net_g, net_d):
        for p in net.trainable_params():
            moved = np.abs(p.asnumpy() - before[p.name])
            assert lr * 0.99 < moved.max() <= lr * 1.001, p.name


# ---------------------------------------------------------------------------------------------
# The datasets and the learning rates


def test_train_dataset_crops_and_flips_input_and_target_alike(tmp_path):
    root = _write_pairs(tmp_path / "mirror", 8, mirror=True)
    data = create_train_dataset(pix2pixDataset(root_dir=root))
    assert data.get_dataset_size() == 8 and data.get_col_names() == ["input_images", "target_images"]
    flipped = []
    for row in data.create_dict_iterator(output_numpy=True):
        a, b = row["input_images"], row["target_images"]
        assert a.shape == b.shape == (1, 3, 256, 256) and a.dtype == np.float32  # a 256 crop of the 262 resize
        assert -1.0 <= a.min() and a.max() <= 1.0  # Normalize(127.5, 127.5)
        np.testing.assert_array_equal(a, b)  # the same crop, the same flip
        flipped.append(a[0, :, :, :16].mean() > a[0, :, :, -16:].mean())  # the ramp runs right to left
    assert 0 < sum(flipped) < 8, flipped  # RandomHorizontalFlip(0.5): some rows flipped, some not

    val = create_val_dataset(pix2pixDataset_val(root_dir=_write_pairs(tmp_path / "val", 2)))
    for row, i in zip(val.create_dict_iterator(output_numpy=True), range(2)):
        pair = np.asarray(Image.open(os.path.join(tmp_path / "val", f"{i}.png")).convert("RGB"))
        want_a = np.asarray(Image.fromarray(pair[:, 32:]).resize((256, 256), Image.BILINEAR), np.float32)
        np.testing.assert_allclose(row["input_images"][0], (want_a / 127.5 - 1).transpose(2, 0, 1), atol=1e-5)


def test_get_lr_keeps_then_decays_linearly():
    config.lr, config.dataset_size, config.n_epochs, config.n_epochs_decay, config.epoch_num = 0.2, 2, 1, 2, 4
    np.testing.assert_allclose(get_lr().asnumpy(), np.float32([0.2] * 4 + [0.1] * 4), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def test_train_py(tmp_path, monkeypatch):
    config.train_data_dir = _write_pairs(tmp_path / "train", 2)
    out = str(tmp_path / "results")
    config.train_fakeimg_dir, config.loss_show_dir, config.ckpt_dir = out + "/fake/", out + "/loss", out + "/ckpt"
    recorded = {}

    def recording_save_losses(g_losses, d_losses, idx):
        recorded.update(g=list(g_losses), d=list(d_losses))
        return save_losses(g_losses, d_losses, idx)

    save_losses = zoo_train.save_losses
    monkeypatch.setattr(zoo_train, "save_losses", recording_save_losses)
    zoo_train.train()
    # 2 epochs of 2 steps (dataset_size 2, one image a step); the generator learns to invert the input
    g_losses, d_losses = np.array(recorded["g"], float), np.array(recorded["d"], float)
    assert len(g_losses) == len(d_losses) == 4 and np.all(np.isfinite(d_losses))
    assert np.mean(g_losses[2:]) < 0.8 * np.mean(g_losses[:2]), g_losses
    assert sorted(os.listdir(config.train_fakeimg_dir)) == ["1.jpg", "2.jpg"]
    assert sorted(os.listdir(config.loss_show_dir)) == ["1.png", "2.png"]
    assert np.asarray(Image.open(os.path.join(config.train_fakeimg_dir, "2.jpg"))).shape == (256, 256, 3)
    assert os.listdir(config.ckpt_dir) == []  # a checkpoint every 50 epochs


def test_eval_py_translates_each_image_with_the_checkpoint(tmp_path, monkeypatch):
    config.val_data_dir = _write_pairs(tmp_path / "val", 2)
    config.predict_dir = str(tmp_path / "predict") + "/"
    config.ckpt = str(tmp_path / "generator.ckpt")
    trained = get_generator()
    opforge.save_checkpoint(trained, config.ckpt)
    saved = []
    monkeypatch.setattr(zoo_eval, "save_image", lambda img, path: saved.append((img.asnumpy(), path)))
    zoo_eval.pix2pix_eval()
    assert [os.path.basename(p) for _, p in saved] == ["1", "2"]
    # eval.py's generator is the checkpoint's, run in training mode (BatchNorm over the image, as the zoo)
    context.set_context(mode=context.PYNATIVE_MODE)
    trained.set_train()
    val = create_val_dataset(pix2pixDataset_val(root_dir=config.val_data_dir))
    for (fake, _), row in zip(saved, val.create_dict_iterator(output_numpy=True)):
        np.testing.assert_allclose(fake, trained(Tensor(row["input_images"])).asnumpy(), rtol=1e-4, atol=1e-5)
        assert decode_image(Tensor(fake)).shape == (256, 256, 3)
