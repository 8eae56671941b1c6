"""CycleGAN as MindSpore's model zoo runs it (tests/zoo/cyclegan: official/cv/CycleGAN with ``mindspore``
replaced by ``opforge``), on JPEG images written here in trainA/trainB/testA/testB: train.py's ``train()``
(GRAPH_MODE; ``create_dataset``'s ``GeneratorDataset`` of unaligned pairs with the zoo's
``DistributedSampler``, ``RandomResizedCrop``, ``RandomHorizontalFlip``, ``Normalize``, ``HWC2CHW``; two ResNet
generators with shared residual blocks and two PatchGAN discriminators, instance normalization as BatchNorm
without affine at batch size 1; ``GeneratorLoss`` / ``DiscriminatorLoss``; ``TrainOneStepG`` /
``TrainOneStepD``: ``GradOperation(get_by_list=True, sens_param=True)`` with a tuple of sensitivities, Adam
on the linear-decay ``get_lr``; the ``ImagePool``; the ``Reporter``'s logs, images and checkpoints), then
eval.py's ``predict()`` on the checkpoints. The networks' shapes, the losses and what each train step updates
are checked against independent references."""

import glob
import os
import random
import re

import numpy as np
import pytest
from PIL import Image
from zoo.cyclegan import eval as zoo_eval
from zoo.cyclegan import train as zoo_train
from zoo.cyclegan.args import args, get_args
from zoo.cyclegan.cycle_gan import (
    Discriminator,
    Generator,
    TrainOneStepD,
    TrainOneStepG,
    get_discriminator,
    get_generator,
)
from zoo.cyclegan.depth_resnet import DepthResNetGenerator
from zoo.cyclegan.losses import DiscriminatorLoss, GANLoss, GeneratorLoss
from zoo.cyclegan.resnet import ResNetGenerator
from zoo.cyclegan.tools import decode_image, load_ckpt
from zoo.cyclegan.unet import UnetGenerator

import opforge
import opforge.dataset as ds
import opforge.nn as nn
from opforge import Tensor, context

SMALL = {
    "platform": "CPU",
    "image_size": 32,
    "ngf": 8,
    "ndf": 8,
    "gl_num": 2,
    "dl_num": 2,
    "pool_size": 2,
    "print_iter": 1,
    "save_checkpoint_epochs": 1,
}


@pytest.fixture(autouse=True)
def _state():
    saved = dict(vars(args))
    ds.config._state["seed"] = None
    np.random.seed(0)
    random.seed(0)
    opforge.set_seed(0)
    vars(args).update(SMALL)
    yield
    vars(args).clear()
    vars(args).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_images(root, count=4, seed=0):
    """The zoo's layout: trainA, trainB, testA, testB; domain A dark images, domain B bright ones."""
    rng = np.random.default_rng(seed)
    for split in ("trainA", "trainB", "testA", "testB"):
        os.makedirs(os.path.join(root, split), exist_ok=True)
        for i in range(count):
            base = 60 if split.endswith("A") else 190
            pixels = np.clip(rng.normal(base, 30, (40, 40, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, split, f"{i}.jpg"))
    return str(root)


def _image(seed, size=32):
    return Tensor(np.random.default_rng(seed).uniform(-1, 1, (1, 3, size, size)).astype(np.float32))


# ---------------------------------------------------------------------------------------------
# The networks and the losses


def test_generators_and_discriminator_shapes_and_shared_residual_blocks():
    x = _image(1)
    for pad_mode in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        for cls in (ResNetGenerator, DepthResNetGenerator):
            out = cls(in_planes=3, ngf=8, n_layers=3, norm_mode="instance", pad_mode=pad_mode)(x).asnumpy()
            assert out.shape == (1, 3, 32, 32) and np.abs(out).max() <= 1.0  # Tanh
    net = ResNetGenerator(in_planes=3, ngf=8, n_layers=3, norm_mode="instance")
    # ``[ResidualBlock(...)] * n_layers``: one block three times, its parameters once
    assert net.residuals[0] is net.residuals[2]
    names = [p.name for p in net.trainable_params()]
    assert len(names) == len(set(names)) == 15 and not any(n.startswith("residuals.1") for n in names)
    unet = UnetGenerator(in_planes=3, out_planes=3, ngf=4, n_layers=5, norm_mode="instance")
    assert unet(_image(2, 64)).shape == (1, 3, 64, 64)
    # PatchGAN: 4x4 convolutions, stride 2 then 1: 32 -> 16 -> 8 -> 7 -> 6
    assert Discriminator(3, 8, 2, norm_mode="instance")(x).shape == (1, 1, 6, 6)
    assert Discriminator(3, 8, 3)(x).shape == (1, 1, 2, 2)


def test_gan_losses_match_numpy():
    rng = np.random.default_rng(3)
    pred = rng.standard_normal((1, 1, 6, 6)).astype(np.float32)
    got = GANLoss("lsgan")(Tensor(pred), Tensor(True, opforge.bool_)).asnumpy()
    np.testing.assert_allclose(got, np.mean((pred - 1) ** 2), rtol=1e-6)
    got = GANLoss("vanilla")(Tensor(pred), Tensor(False, opforge.bool_)).asnumpy()
    np.testing.assert_allclose(got, np.mean(np.log1p(np.exp(pred))), rtol=1e-5)  # BCE with logits, target 0
    with pytest.raises(NotImplementedError):
        GANLoss("wgangp")


def _networks():
    get_args("train")  # batch size 1: instance normalization
    g_a, g_b, d_a, d_b = get_generator(args), get_generator(args), get_discriminator(args), get_discriminator(args)
    generator = Generator(g_a, g_b, args.lambda_idt > 0)
    return generator, d_a, d_b


def test_generator_and_discriminator_losses_match_numpy():
    generator, d_a, d_b = _networks()
    img_a, img_b = _image(4), _image(5)
    loss_g = GeneratorLoss(args, generator, d_a, d_b)
    loss_g.set_train()
    out = [o.asnumpy() for o in loss_g(img_a, img_b)]
    fake_a, fake_b, rec_a, rec_b, idt_a, idt_b = (o.asnumpy() for o in generator(img_a, img_b))
    a, b = img_a.asnumpy(), img_b.asnumpy()
    parts = [
        np.mean((d_b(Tensor(fake_b)).asnumpy() - 1) ** 2),
        np.mean((d_a(Tensor(fake_a)).asnumpy() - 1) ** 2),
        np.mean(np.abs(rec_a - a)) * args.lambda_A,
        np.mean(np.abs(rec_b - b)) * args.lambda_B,
        np.mean(np.abs(idt_a - a)) * args.lambda_A * args.lambda_idt,
        np.mean(np.abs(idt_b - b)) * args.lambda_B * args.lambda_idt,
    ]
    np.testing.assert_allclose(out[3:], parts, rtol=1e-5)
    np.testing.assert_allclose(out[0], sum(parts), rtol=1e-5)
    np.testing.assert_allclose(out[1], fake_a, rtol=1e-5, atol=1e-6)

    loss_d = DiscriminatorLoss(args, d_a, d_b)
    got = loss_d(img_a, img_b, Tensor(fake_a), Tensor(fake_b)).asnumpy()
    want = 0.5 * (
        np.mean(d_a(Tensor(fake_a)).asnumpy() ** 2)
        + np.mean((d_a(img_a).asnumpy() - 1) ** 2)
        + np.mean(d_b(Tensor(fake_b)).asnumpy() ** 2)
        + np.mean((d_b(img_b).asnumpy() - 1) ** 2)
    )
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_each_train_step_updates_only_its_networks():
    args.dataset_size = 2
    generator, d_a, d_b = _networks()
    loss_d = DiscriminatorLoss(args, d_a, d_b)
    loss_g = GeneratorLoss(args, generator, d_a, d_b)
    net_g = TrainOneStepG(loss_g, generator, nn.Adam(generator.trainable_params(), 0.001, beta1=args.beta1))
    net_d = TrainOneStepD(loss_d, nn.Adam(loss_d.trainable_params(), 0.001, beta1=args.beta1))

    def snapshot(cell):
        return {p.name: p.asnumpy().copy() for p in cell.trainable_params()}

    def changed(before, cell):
        return {p.name for p in cell.trainable_params() if not np.array_equal(before[p.name], p.asnumpy())}

    img_a, img_b = _image(6), _image(7)
    g0, d0 = snapshot(generator), snapshot(loss_d)
    res_g = net_g(img_a, img_b)
    assert len(res_g) == 9 and res_g[0].shape == (1, 3, 32, 32)
    assert changed(g0, generator) == set(g0) and not changed(d0, loss_d)  # D is not trained by G's step
    g1, d1 = snapshot(generator), snapshot(loss_d)
    ld = net_d(img_a, img_b, res_g[0], res_g[1])
    assert ld.shape == () and np.isfinite(ld.asnumpy())
    assert changed(d1, loss_d) == set(d1) and not changed(g1, generator)


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def _logged(path, name):
    return [float(v) for v in re.findall(rf"{name}: ?([0-9.]+)", open(path).read())]


def test_train_py_then_eval_py(tmp_path, monkeypatch):
    args.dataroot = _write_images(tmp_path / "data")
    args.outputs_dir = str(tmp_path / "outputs")
    args.max_epoch, args.n_epochs = 3, 2  # the lr constant for 2 epochs, then decaying to 0
    made = []

    def recording_get_generator(a):  # the zoo's generators, kept to compare with the checkpoints
        made.append(get_generator(a))
        return made[-1]

    monkeypatch.setattr(zoo_train, "get_generator", recording_get_generator)
    zoo_train.train()

    (log,) = glob.glob(os.path.join(args.outputs_dir, "log", "*_rank_0.log"))
    g_losses, d_losses = _logged(log, r"\] step cost: [0-9.]+ ms, G_loss"), _logged(log, "D_loss")
    assert len(g_losses) == 12 and len(d_losses) == 15  # 4 steps an epoch; D_loss also in the 3 epoch lines
    assert np.mean(g_losses[-4:]) < 0.8 * np.mean(g_losses[:4]), g_losses
    assert sorted(os.listdir(os.path.join(args.outputs_dir, "ckpt"))) == sorted(
        f"{n}_{e}.ckpt" for n in ("G_A", "G_B", "D_A", "D_B") for e in (1, 2, 3)
    )
    images = os.listdir(os.path.join(args.outputs_dir, "imgs"))
    assert sorted(i for i in images if i.startswith("3_")) == [
        "3_fake_A.jpg",
        "3_fake_B.jpg",
        "3_img_A.jpg",
        "3_img_B.jpg",
    ]

    # eval.py: new generators with the last checkpoints, each test image translated and saved
    args.G_A_ckpt = os.path.join(args.outputs_dir, "ckpt", "G_A_3.ckpt")
    args.G_B_ckpt = os.path.join(args.outputs_dir, "ckpt", "G_B_3.ckpt")
    zoo_eval.predict()
    predicted = sorted(os.listdir(os.path.join(args.outputs_dir, "predict", "fake_B")))
    assert predicted == sorted([f"{i}.jpg" for i in range(4)] + [f"{i}_fake_B.jpg" for i in range(4)])
    assert len(os.listdir(os.path.join(args.outputs_dir, "predict", "fake_A"))) == 8

    # the checkpoints hold the trained generators: a network loaded from them computes what they compute
    context.set_context(mode=context.PYNATIVE_MODE)
    g_a, g_b = get_generator(args), get_generator(args)
    load_ckpt(args, g_a, g_b)
    trained_a, trained_b = made[0], made[1]
    for net in (g_a, g_b, trained_a, trained_b):
        net.set_train(True)  # eval.py's: instance normalization
    x = _image(8)
    np.testing.assert_allclose(g_a(x).asnumpy(), trained_a(x).asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_b(x).asnumpy(), trained_b(x).asnumpy(), rtol=1e-5, atol=1e-6)
    assert decode_image(g_a(x).asnumpy()).shape == (32, 32, 3)
