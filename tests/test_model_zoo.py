"""Model-zoo networks (tests/zoo/, written as MindSpore's model zoo writes them) build and train through
``Model.train`` on a ``GeneratorDataset``, as a MindSpore training script does, and lose loss."""

import logging
import types

import numpy as np
import pytest
from opforge.nn.optim.momentum import Momentum
from zoo import dcgan, llama, resnet_train, shufflenetv2, unet, vgg
from zoo.lstm import SentimentNet
from zoo.mobilenetv2 import mobilenet_v2
from zoo.resnet import resnet18, resnet50
from zoo.vit import ViT

import opforge
from opforge import Tensor, context, nn
from opforge.dataset import GeneratorDataset
from opforge.train import Callback, LossMonitor, Model
from opforge.train.callback import (
    CheckpointConfig,
    LambdaCallback,
    ModelCheckpoint,
    RunContext,
    TimeMonitor,
    _InternalCallbackParam,
)
from opforge.train.loss_scale_manager import FixedLossScaleManager


class StepLosses(Callback):
    """Records every step's loss, as a user's callback reads it from the run context."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))


class Images:
    """A random-access source of (image, label) pairs: a small set the network can memorise."""

    def __init__(self, n, shape, classes, seed=0):
        rng = np.random.default_rng(seed)
        self.x = rng.standard_normal((n, *shape)).astype(np.float32)
        self.y = rng.integers(0, classes, n).astype(np.int32)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.y)


class Sentences(Images):
    def __init__(self, n, seq, vocab, classes, seed=0):
        rng = np.random.default_rng(seed)
        self.x = rng.integers(0, vocab, (n, seq)).astype(np.int32)
        self.y = rng.integers(0, classes, n).astype(np.int32)


def momentum(params):
    return nn.Momentum(params, 0.05, 0.9)


def adam(params):
    return nn.Adam(params, 0.005)


def _train(net, source, epochs, optimizer, batch=8):
    opforge.set_seed(0)
    dataset = GeneratorDataset(source, column_names=["data", "label"], shuffle=False).batch(batch, drop_remainder=True)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss_fn=loss, optimizer=optimizer(net.trainable_params()), metrics={"acc"})
    steps = StepLosses()
    model.train(epochs, dataset, callbacks=[steps, LossMonitor(per_print_times=100)])
    per_epoch = np.array(steps.losses).reshape(epochs, -1).mean(axis=1)
    return per_epoch, model, dataset


def _sentiment_net():
    table = np.random.default_rng(1).standard_normal((50, 16)).astype(np.float32)
    return SentimentNet(50, 16, 16, 2, True, 2, table, 8)


# name -> (network, data, epochs, optimizer)
NETWORKS = {
    "resnet18": (lambda: resnet18(class_num=4, width=8), lambda: Images(16, (3, 32, 32), 4), 6, momentum),
    "resnet50": (lambda: resnet50(class_num=4, width=4), lambda: Images(16, (3, 32, 32), 4), 6, momentum),
    "mobilenet_v2": (
        lambda: mobilenet_v2(num_classes=4, width_mult=0.25, last_channel=64),
        lambda: Images(16, (3, 32, 32), 4),
        8,
        adam,
    ),
    "vit": (
        lambda: ViT(image_size=16, patch_size=4, embed_dim=32, num_heads=4, num_classes=4),
        lambda: Images(16, (3, 16, 16), 4),
        8,
        adam,
    ),
    "lstm": (_sentiment_net, lambda: Sentences(16, 12, 50, 2), 8, adam),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_network_trains_through_model_train(name):
    build, source, epochs, optimizer = NETWORKS[name]
    np.random.seed(0)
    opforge.set_seed(0)
    net = build()
    per_epoch, model, dataset = _train(net, source(), epochs, optimizer)
    assert np.all(np.isfinite(per_epoch))
    assert per_epoch[-1] < 0.8 * per_epoch[0], per_epoch
    metrics = model.eval(dataset)
    assert 0.0 <= metrics["acc"] <= 1.0


@pytest.mark.parametrize("init_mode", ["XavierUniform", "KaimingNormal"])
def test_vgg16_trains_as_the_zoo_train_script(init_mode, tmp_path):
    """official/cv/VGG/vgg16/train.py: parameter groups, a per-step learning-rate array as a Tensor, weight decay
    and loss_scale on Momentum, amp O2; CIFAR-10 with the sparse softmax loss and no loss-scale manager, ImageNet
    with the label-smoothed CrossEntropy and a FixedLossScaleManager; TimeMonitor, LossMonitor, ModelCheckpoint."""
    opforge.set_seed(1)
    np.random.seed(1)
    args = types.SimpleNamespace(image_size=[32, 32], pad_mode="same", has_bias=False, batch_norm=True,
                                 initialize_mode=init_mode, has_dropout=True, hidden=32)  # fmt: skip
    net = vgg.vgg16(4, args, width=4)
    dataset = GeneratorDataset(Images(16, (3, 32, 32), 4), column_names=["image", "label"], shuffle=False)
    dataset = dataset.batch(8, drop_remainder=True)
    steps_per_epoch = dataset.get_dataset_size()
    if init_mode == "XavierUniform":
        lr = vgg.lr_steps(0, lr_init=0.01, lr_max=0.1, warmup_epochs=1, total_epochs=4, steps_per_epoch=steps_per_epoch)
        opt = Momentum(params=vgg.get_param_groups(net), learning_rate=Tensor(lr), momentum=0.9,
                       weight_decay=5e-4, loss_scale=1.0)  # fmt: skip
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        model = Model(net, loss_fn=loss, optimizer=opt, metrics={"acc"}, amp_level="O2", keep_batchnorm_fp32=False,
                      loss_scale_manager=None)  # fmt: skip
    else:
        lr = vgg.warmup_step_lr(0.05, [3], steps_per_epoch, 1, 4)
        opt = Momentum(params=vgg.get_param_groups(net), learning_rate=Tensor(lr), momentum=0.9,
                       weight_decay=5e-4, loss_scale=16.0)  # fmt: skip
        loss = vgg.CrossEntropy(smooth_factor=0.1, num_classes=4)
        manager = FixedLossScaleManager(16.0, drop_overflow_update=False)
        model = Model(net, loss_fn=loss, optimizer=opt, loss_scale_manager=manager, amp_level="O2")
    decays = dict(zip((p.name for p in opt.parameters), opt.weight_decays))
    assert decays["layers.1.gamma"] == 0.0 and decays["layers.0.weight"] == 5e-4
    steps = StepLosses()
    ckpt = ModelCheckpoint(config=CheckpointConfig(save_checkpoint_steps=steps_per_epoch, keep_checkpoint_max=2),
                           directory=str(tmp_path), prefix="0")  # fmt: skip
    model.train(4, dataset, callbacks=[TimeMonitor(data_size=steps_per_epoch), LossMonitor(100), ckpt, steps],
                dataset_sink_mode=True)  # fmt: skip
    losses = np.array(steps.losses)
    assert np.all(np.isfinite(losses)) and losses[-2:].mean() < losses[:2].mean(), losses
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0-3_2.ckpt", "0-4_2.ckpt"]


def test_dcgan_trains_in_the_zoo_hand_written_loop(tmp_path):
    """research/cv/dcgan/train.py: two networks, two WithLossCells, two TrainOneStepCells with an Adam each, run
    by the DCGAN cell in GRAPH_MODE from a dict iterator read for several epochs; the checkpoint callback is
    driven by hand through _InternalCallbackParam and RunContext."""
    opforge.set_seed(1)
    cfg = types.SimpleNamespace(latent_size=8, feature_size=4, channel_size=3, learning_rate=0.002, beta1=0.5,
                                epoch_size=3)  # fmt: skip
    rng = np.random.default_rng(0)
    images = np.tanh(rng.standard_normal((16, 3, 32, 32))).astype(np.float32)
    codes = rng.standard_normal((16, cfg.latent_size, 1, 1)).astype(np.float32)
    ds = GeneratorDataset(list(zip(images, codes)), column_names=["image", "latent_code"], shuffle=False).batch(8)
    steps_per_epoch = ds.get_dataset_size()
    context.set_context(mode=context.GRAPH_MODE, device_target="CPU", save_graphs=False, device_id=0)
    try:
        netD, netG = dcgan.Discriminator(cfg), dcgan.Generator(cfg)
        criterion = nn.BCELoss(reduction="mean")
        optimizerD = nn.Adam(netD.trainable_params(), learning_rate=cfg.learning_rate, beta1=cfg.beta1)
        optimizerG = nn.Adam(netG.trainable_params(), learning_rate=cfg.learning_rate, beta1=cfg.beta1)
        stepD = nn.TrainOneStepCell(dcgan.WithLossCellD(netD, netG, criterion), optimizerD)
        stepG = nn.TrainOneStepCell(dcgan.WithLossCellG(netD, netG, criterion), optimizerG)
        net = dcgan.DCGAN(stepD, stepG)
        net.set_train()
        ckpt_cb = ModelCheckpoint(config=CheckpointConfig(save_checkpoint_steps=steps_per_epoch, keep_checkpoint_max=3),
                                  directory=str(tmp_path), prefix="dcgan")  # fmt: skip
        cb_params = _InternalCallbackParam()
        cb_params.train_network = net
        cb_params.batch_num, cb_params.epoch_num = steps_per_epoch, cfg.epoch_size
        cb_params.cur_epoch_num, cb_params.cur_step_num = 0, 0
        run_context = RunContext(cb_params)
        ckpt_cb.begin(run_context)
        data_loader = ds.create_dict_iterator(output_numpy=True, num_epochs=cfg.epoch_size)
        d_losses, g_losses = [], []
        for _ in range(cfg.epoch_size):
            for data in data_loader:
                netD_loss, netG_loss = net(Tensor(data["image"]), Tensor(data["latent_code"]))
                d_losses.append(float(netD_loss.asnumpy()))
                g_losses.append(float(netG_loss.asnumpy()))
                cb_params.cur_step_num += 1
            cb_params.cur_epoch_num += 1
            ckpt_cb.step_end(run_context)
        fake = netG(Tensor(codes[:4]))
    finally:
        context.set_context(mode=context.PYNATIVE_MODE)
    assert len(d_losses) == cfg.epoch_size * steps_per_epoch
    assert np.all(np.isfinite(d_losses + g_losses)) and d_losses[-1] < d_losses[0], d_losses
    assert fake.shape == (4, 3, 32, 32) and np.abs(fake.asnumpy()).max() <= 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"dcgan-{e}_{steps_per_epoch}.ckpt" for e in (1, 2, 3)]


def test_unet_trains_and_evaluates_as_the_zoo(tmp_path):
    """official/cv/Unet/train.py: UNetMedical with the per-pixel CrossEntropyWithLogits, Adam with weight decay
    and loss_scale, a FixedLossScaleManager, the StepLossTimeMonitor callback and ModelCheckpoint; then the eval
    Model of UnetEval, TempLoss and the dice_coeff metric."""
    opforge.set_seed(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 1, 188, 188)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[rng.integers(0, 2, (4, 4, 4))].transpose(0, 3, 1, 2)
    ds = GeneratorDataset(list(zip(x, y)), column_names=["image", "mask"], shuffle=False).batch(2)
    net = unet.UNetMedical(n_channels=1, n_classes=2, width=4, factors=(8 / 16, 8 / 40, 8 / 88, 8 / 184))
    optimizer = nn.Adam(params=net.trainable_params(), learning_rate=0.01, weight_decay=0.0005, loss_scale=1024.0)
    manager = opforge.train.loss_scale_manager.FixedLossScaleManager(1024.0, False)
    model = Model(net, loss_fn=unet.CrossEntropyWithLogits(), loss_scale_manager=manager, optimizer=optimizer,
                  amp_level="O0")  # fmt: skip
    monitor = unet.StepLossTimeMonitor(batch_size=2, per_print_times=0)
    ckpt = ModelCheckpoint(prefix="ckpt_unet_medical_adam", directory=str(tmp_path),
                           config=CheckpointConfig(save_checkpoint_steps=6, keep_checkpoint_max=1))  # fmt: skip
    model.train(3, ds, callbacks=[monitor, ckpt], dataset_sink_mode=False)
    losses = np.array(monitor.all_losses)
    assert len(losses) == 6 and np.all(np.isfinite(losses)) and losses[-1] != losses[0], losses
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt_unet_medical_adam-3_2.ckpt"]
    eval_model = Model(unet.UnetEval(net, eval_activate="softmax"), loss_fn=unet.TempLoss(),
                       metrics={"dice_coeff": unet.dice_coeff(False)})  # fmt: skip
    dice, iou = eval_model.eval(ds, dataset_sink_mode=False)["dice_coeff"]
    assert 0.0 < dice <= 1.0 and 0.0 < iou <= 1.0


def test_shufflenetv2_trains_as_the_zoo_train_script(tmp_path):
    """official/cv/ShuffleNet/shufflenetv2/train.py: channel shuffle by 5-D slicing, ``get_lr_basic`` as a
    Tensor for Momentum with weight decay, LossMonitor/TimeMonitor/ModelCheckpoint in sink mode."""
    np.random.seed(0)
    opforge.set_seed(0)
    net = shufflenetv2.ShuffleNetV2(input_size=64, n_class=4, stage_out_channels=(-1, 8, 16, 32, 64, 64),
                                    stage_repeats=(1, 2, 1))  # fmt: skip
    dataset = GeneratorDataset(Images(16, (3, 64, 64), 4), column_names=["image", "label"], shuffle=False)
    dataset = dataset.batch(8, drop_remainder=True)
    n = dataset.get_dataset_size()
    lr = Tensor(shufflenetv2.get_lr_basic(lr_init=0.1, total_epochs=3, steps_per_epoch=n, is_stair=True))
    opt = Momentum(params=net.trainable_params(), learning_rate=lr, momentum=0.9, weight_decay=4e-5)
    model = Model(net, loss_fn=resnet_train.CrossEntropySmooth(sparse=True, reduction="mean", smooth_factor=0.1,
                  num_classes=4), optimizer=opt, metrics={"acc"})  # fmt: skip
    steps = StepLosses()
    ckpt = ModelCheckpoint(prefix="shufflenet-rank0", directory=str(tmp_path),
                           config=CheckpointConfig(save_checkpoint_steps=n, keep_checkpoint_max=1))  # fmt: skip
    model.train(3, dataset, callbacks=[LossMonitor(per_print_times=n), TimeMonitor(data_size=n), ckpt, steps],
                dataset_sink_mode=True)  # fmt: skip
    losses = np.array(steps.losses)
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    assert [p.name for p in tmp_path.iterdir()] == ["shufflenet-rank0-3_2.ckpt"]
    assert 0.0 <= model.eval(dataset)["acc"] <= 1.0


def test_llama_trains_through_a_loss_scaled_step_cell():
    """A mindformers-style LLaMA (RMSNorm, rotary embedding, ``ops.triu`` causal mask, float16 Softmax): a
    warm-up + cosine LearningRateSchedule for AdamWeightDecay over decay / no-decay groups, the
    TrainOneStepWithLossScaleCell with a DynamicLossScaleUpdateCell handed to ``Model`` alone."""
    np.random.seed(0)
    opforge.set_seed(0)
    net = llama.LlamaForCausalLM(vocab_size=64, dim=32, n_heads=4, n_layers=2, hidden_dim=64, seq_length=16)
    ids = np.random.default_rng(0).integers(1, 64, (16, 17)).astype(np.int32)
    ids[:, -3:] = 0  # padding, masked out of the loss
    dataset = GeneratorDataset([(r,) for r in ids], column_names=["input_ids"], shuffle=False).batch(8)
    n = dataset.get_dataset_size()
    lr = llama.LearningRateWiseLayer(learning_rate=5e-3, lr_end=1e-5, warmup_steps=2, total_steps=3 * n)
    groups = llama.get_optimizer_grouped_parameters(net, 0.1)
    opt = nn.AdamWeightDecay(groups, learning_rate=lr, beta1=0.9, beta2=0.95, eps=1e-8)
    update = nn.DynamicLossScaleUpdateCell(loss_scale_value=2**12, scale_factor=2, scale_window=1000)
    model = Model(nn.TrainOneStepWithLossScaleCell(net, opt, scale_sense=update))
    outputs = []
    cb = LambdaCallback(on_train_step_end=lambda rc: outputs.append(rc.original_args().net_outputs))
    model.train(3, dataset, callbacks=[cb], dataset_sink_mode=False)
    losses = np.array([float(o[0].asnumpy()) for o in outputs])
    assert len(losses) == 3 * n and np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    assert not any(bool(o[1].asnumpy()) for o in outputs)  # no overflow at scale 4096


def test_resnet_train_script_helpers(tmp_path):
    """official/cv/ResNet/train.py: init_weight, the cosine per-step learning rates, group params, the
    label-smoothed loss, a FixedLossScaleManager with amp O2, LossCallBack/ResumeCallback/EvalCallBack and a
    ModelCheckpoint with ``append_info``; then the resume read through ``load_checkpoint(choice_func=...)``."""
    np.random.seed(1)
    opforge.set_seed(1)
    log = logging.getLogger("resnet")
    cfg = types.SimpleNamespace(conv_init="TruncatedNormal", dense_init="RandomNormal", weight_decay=1e-4)
    dataset = GeneratorDataset(Images(16, (3, 32, 32), 4), column_names=["image", "label"], shuffle=False)
    dataset = dataset.batch(8, drop_remainder=True)
    n = dataset.get_dataset_size()
    net = resnet50(class_num=4, width=4)
    resnet_train.init_weight(net, cfg)
    lr = Tensor(resnet_train.get_lr(lr_init=0.01, lr_end=0.0001, lr_max=0.1, warmup_epochs=1, total_epochs=3,
                                    start_epoch=0, steps_per_epoch=n, lr_decay_mode="cosine"))  # fmt: skip
    opt = nn.Momentum(resnet_train.init_group_params(net, cfg), lr, 0.9, loss_scale=128.0)
    loss = resnet_train.CrossEntropySmooth(sparse=True, reduction="mean", smooth_factor=0.1, num_classes=4)
    manager = FixedLossScaleManager(128.0, drop_overflow_update=False)
    model = Model(net, loss_fn=loss, optimizer=opt, loss_scale_manager=manager, metrics={"acc"}, amp_level="O2",
                  boost_level="O0", eval_network=None,
                  boost_config_dict={"grad_freeze": {"total_steps": 3 * n}})  # fmt: skip
    loss_cb = resnet_train.LossCallBack(3, log, lr.asnumpy(), per_print_time=1)
    config_ck = CheckpointConfig(save_checkpoint_steps=n, keep_checkpoint_max=1,
                                 append_info=[{"epoch_num": 0, "step_num": 0}])  # fmt: skip
    eval_cb = resnet_train.EvalCallBack(resnet_train.apply_eval, {"model": model, "dataset": dataset, "metrics_name":
                                        "acc"}, eval_start_epoch=2, ckpt_directory=str(tmp_path),
                                        best_ckpt_name="best_acc.ckpt", logger=log)  # fmt: skip
    callbacks = [loss_cb, resnet_train.ResumeCallback(0), ModelCheckpoint(prefix="resnet50", directory=str(tmp_path),
                 config=config_ck), eval_cb]  # fmt: skip
    model.train(3, dataset, callbacks=callbacks, sink_size=n, dataset_sink_mode=False)
    losses = np.array(loss_cb.losses)
    assert len(losses) == 3 * n and np.all(np.isfinite(losses)) and losses[-1] != losses[0], losses
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best_acc.ckpt", "resnet50-3_2.ckpt"]
    resume = opforge.load_checkpoint(
        str(tmp_path / "resnet50-3_2.ckpt"), choice_func=lambda x: not x.startswith(("learning_rate", "global_step"))
    )
    assert int(resume.get("epoch_num", Tensor(0, opforge.int32)).asnumpy().item()) == 3
    assert not any(k.startswith("learning_rate") for k in resume)
    opforge.load_param_into_net(net, resume)
    opforge.load_param_into_net(opt, resume)
