"""DCGAN as the model zoo writes it (research/cv/dcgan: src/cell.py, src/generator.py, src/discriminator.py,
src/dcgan.py): a generator of transposed convolutions and a discriminator of strided convolutions, both
initialised by a user-written ``Initializer`` subclass that fills a NumPy array through
``mindspore.common.initializer._assignment``; one ``WithLossCell`` per network (the discriminator's stops the
gradient at the fake images), one ``TrainOneStepCell`` and one ``Adam`` each, and a ``DCGAN`` cell that runs
both steps and returns both losses. The training loop is the zoo's hand-written one (``train.py``)."""

import numpy as np

from opforge import nn, ops
from opforge.common import dtype as mstype
from opforge.common.initializer import Initializer, _assignment
from opforge.ops import functional as F


class Reshape(nn.Cell):
    def __init__(self, shape, auto_prefix=True):
        super().__init__(auto_prefix=auto_prefix)
        self.shape = shape

    def construct(self, x):
        return ops.operations.Reshape()(x, self.shape)


class Normal(Initializer):
    """N(mean, sigma^2) samples from NumPy, reseeded at every call as the zoo does."""

    def __init__(self, mean=0.0, sigma=0.01):
        super().__init__()
        self.sigma = sigma
        self.mean = mean

    def _initialize(self, arr):
        np.random.seed(999)
        _assignment(arr, np.random.normal(self.mean, self.sigma, arr.shape))


class WithLossCellD(nn.Cell):
    def __init__(self, netD, netG, loss_fn):
        super().__init__(auto_prefix=True)
        self.netD = netD
        self.netG = netG
        self.loss_fn = loss_fn

    def construct(self, real_data, latent_code):
        ones = ops.Ones()
        zeros = ops.Zeros()
        out1 = self.netD(real_data)
        loss1 = self.loss_fn(out1, ones(out1.shape, mstype.float32))
        fake_data = F.stop_gradient(self.netG(latent_code))
        out2 = self.netD(fake_data)
        loss2 = self.loss_fn(out2, zeros(out2.shape, mstype.float32))
        return loss1 + loss2

    @property
    def backbone_network(self):
        return self.netD


class WithLossCellG(nn.Cell):
    def __init__(self, netD, netG, loss_fn):
        super().__init__(auto_prefix=True)
        self.netD = netD
        self.netG = netG
        self.loss_fn = loss_fn

    def construct(self, latent_code):
        ones = ops.Ones()
        out = self.netD(self.netG(latent_code))
        return self.loss_fn(out, ones(out.shape, mstype.float32))

    @property
    def backbone_network(self):
        return self.netG


def _conv(in_channels, out_channels, kernel_size, stride=1, padding=0, pad_mode="pad"):
    return nn.Conv2d(
        in_channels,
        out_channels,
        kernel_size=kernel_size,
        stride=stride,
        padding=padding,
        weight_init=Normal(mean=0, sigma=0.02),
        has_bias=False,
        pad_mode=pad_mode,
    )


def _convt(in_channels, out_channels, kernel_size, stride=1, padding=0, pad_mode="pad"):
    return nn.Conv2dTranspose(
        in_channels,
        out_channels,
        kernel_size=kernel_size,
        stride=stride,
        padding=padding,
        weight_init=Normal(mean=0, sigma=0.02),
        has_bias=False,
        pad_mode=pad_mode,
    )


def _bm(num_features):
    return nn.BatchNorm2d(num_features=num_features, gamma_init=Normal(mean=1, sigma=0.02))


class Discriminator(nn.Cell):
    """channel_size x 32 x 32 images to one probability each (N, 1, 1, 1)."""

    def __init__(self, cfg):
        super().__init__()
        f = cfg.feature_size
        self.discriminator = nn.SequentialCell()
        self.discriminator.append(_conv(cfg.channel_size, f * 2, 4, 2, 1))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.discriminator.append(_conv(f * 2, f * 4, 4, 2, 1))
        self.discriminator.append(_bm(f * 4))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.discriminator.append(_conv(f * 4, f * 8, 4, 2, 1))
        self.discriminator.append(_bm(f * 8))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.discriminator.append(_conv(f * 8, 1, 4, 1))
        self.discriminator.append(nn.Sigmoid())

    def construct(self, x):
        return self.discriminator(x)


class Generator(nn.Cell):
    """latent_size x 1 x 1 codes to channel_size x 32 x 32 images in (-1, 1)."""

    def __init__(self, cfg):
        super().__init__()
        f = cfg.feature_size
        self.generator = nn.SequentialCell()
        self.generator.append(_convt(cfg.latent_size, f * 8, 4, 1, 0))
        self.generator.append(_bm(f * 8))
        self.generator.append(nn.ReLU())
        self.generator.append(_convt(f * 8, f * 4, 4, 2, 1))
        self.generator.append(_bm(f * 4))
        self.generator.append(nn.ReLU())
        self.generator.append(_convt(f * 4, f * 2, 4, 2, 1))
        self.generator.append(_bm(f * 2))
        self.generator.append(nn.ReLU())
        self.generator.append(_convt(f * 2, cfg.channel_size, 4, 2, 1))
        self.generator.append(nn.Tanh())

    def construct(self, x):
        return self.generator(x)


class DCGAN(nn.Cell):
    def __init__(self, myTrainOneStepCellForD, myTrainOneStepCellForG):
        super().__init__(auto_prefix=True)
        self.myTrainOneStepCellForD = myTrainOneStepCellForD
        self.myTrainOneStepCellForG = myTrainOneStepCellForG

    def construct(self, real_data, latent_code):
        output_D = self.myTrainOneStepCellForD(real_data, latent_code).view(-1)
        netD_loss = output_D.mean()
        output_G = self.myTrainOneStepCellForG(latent_code).view(-1)
        netG_loss = output_G.mean()
        return netD_loss, netG_loss
