"""Swin Transformer as MindSpore's model zoo runs it (tests/zoo/swintransformer: official/cv/SwinTransformer with
``mindspore`` replaced by ``opforge``) at a tiny Swin-T (32 x 32 images, patch 4, window 4, two stages):
``SwinTransformer``'s window attention (``WindowPartitionConstruct`` / ``WindowReverseConstruct``, per-head
``BatchMatMul``), the shifted windows (``Roll`` over ``mindspore.numpy.roll`` and the -100 attention mask),
the relative position bias (a one-hot ``MatMul`` over the bias table) and ``PatchMerging``, checked against a
NumPy Swin written from the paper's definitions; ``cast_amp``'s O1 (float16 Dense layers, float32 GELU,
Softmax, LayerNorm and convolution); the ``TrainOneStepWithLossScaleCellGlobalNormClip`` step (a loss scale,
``clip_by_global_norm``, ``AdamWeightDecay`` with its parameter groups on the warm-up and cosine learning
rates) against NumPy's AdamW; the ImageNet pipelines (``RandomCropDecodeResize``, ``ToPIL``, RandAugment,
``ToTensor``, ``Normalize``, ``RandomErasing``, ``Mixup`` with CutMix; the eval side's ``Resize``,
``CenterCrop`` and ``OneHot``); then train.py's ``main()`` (GRAPH_MODE, ``Model.train`` in dataset sink mode
with ``TimeMonitor``, ``ModelCheckpoint``, ``LossMonitor`` and the zoo's ``EvaluateCallBack``) and eval.py's
``main()`` (``Loss``, ``Top1CategoricalAccuracy``, ``Top5CategoricalAccuracy``) on an ImageNet-style folder
written here. The zoo's ``set_device`` accepts only Ascend and GPU targets, so the scripts run on the CPU
with it replaced by its single-device result (rank 0)."""

import copy
import glob
import os
import re

import numpy as np
import pytest
from PIL import Image
from zoo.swintransformer import eval as zoo_eval
from zoo.swintransformer import train as zoo_train
from zoo.swintransformer.src.args import args
from zoo.swintransformer.src.data.imagenet import create_dataset_imagenet
from zoo.swintransformer.src.models.swintransformer.swin_transformer import Roll, SwinTransformerBlock
from zoo.swintransformer.src.tools.cell import cast_amp
from zoo.swintransformer.src.tools.criterion import NetWithLoss, SoftTargetCrossEntropy, get_criterion
from zoo.swintransformer.src.tools.get_misc import get_model, get_train_one_step, set_device
from zoo.swintransformer.src.tools.optimizer import get_optimizer

import opforge
import opforge.dataset as ds
import opforge.numpy as mnp
from opforge import ParameterTuple, Tensor, context, ops

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220], [200, 200, 40]])


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(args))
    opforge.set_seed(0)
    yield
    vars(args).clear()
    vars(args).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


def _write_imagenet(root, per_class=(4, 2), seed=0):
    """ImageNet's layout: train/ and val/, a folder of JPEG files per class; 40 x 40 images of four colours."""
    rng = np.random.default_rng(seed)
    for split, count in zip(("train", "val"), per_class):
        for c in range(4):
            folder = os.path.join(root, split, f"n0{c}")
            os.makedirs(folder, exist_ok=True)
            for i in range(count):
                img = np.clip(COLORS[c] + rng.normal(0, 20, (40, 40, 3)), 0, 255).astype(np.uint8)
                Image.fromarray(img).save(os.path.join(folder, f"{i}.JPEG"))
    return str(root)


# ---------------------------------------------------------------------------------------------
# A NumPy Swin Transformer (the paper's definitions), reading the zoo network's parameters


def _np(p):
    return p.asnumpy().astype(np.float64)


def _layer_norm(x, cell):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * _np(cell.gamma) + _np(cell.beta)


def _dense(x, cell):
    y = x @ _np(cell.weight).T
    return y + _np(cell.bias) if cell.bias is not None else y


def _gelu(x):  # nn.GELU's default (approximate=True): the tanh form
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _windows(x, ws):
    """(B, H, W, C) -> (B * windows, ws * ws, C): the ws x ws windows, row by row."""
    b, h, w, c = x.shape
    return x.reshape(b, h // ws, ws, w // ws, ws, c).transpose(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, c)


def _merge_windows(x, ws, b, h, w):
    return x.reshape(b, h // ws, w // ws, ws, ws, -1).transpose(0, 1, 3, 2, 4, 5).reshape(b, h, w, -1)


def _relative_index(ws):
    """The bias table's row for each (query, key) pair of a window: their offset (dy, dx), each shifted to
    0 .. 2 ws - 2, numbered dy * (2 ws - 1) + dx."""
    y, x = np.divmod(np.arange(ws * ws), ws)
    return (y[:, None] - y[None, :] + ws - 1) * (2 * ws - 1) + (x[:, None] - x[None, :] + ws - 1)


def _shift_mask(h, w, ws, shift):
    """(windows, N, N): -100 between two tokens of a window of the map rolled by -shift that are not
    neighbours in the image: one of them wrapped around the map's edge (its row or column) and the other not."""
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    wrapped = np.stack([rows + shift >= h, cols + shift >= w], -1).astype(np.float64)  # (H, W, 2)
    win = _windows(wrapped[None], ws)  # (windows, N, 2)
    apart = (win[:, :, None, :] != win[:, None, :, :]).any(-1)
    return np.where(apart, -100.0, 0.0)


def _block(x, blk, h, w):
    b, n_tokens, c = x.shape
    ws, shift, heads = blk.window_size, blk.shift_size, blk.num_heads
    n, d = ws * ws, c // heads
    y = _layer_norm(x, blk.norm1).reshape(b, h, w, c)
    if shift:
        y = np.roll(y, (-shift, -shift), axis=(1, 2))
    win = _windows(y, ws)
    attn_cell = blk.attn

    def heads_of(t):
        return t.reshape(-1, n, heads, d).transpose(0, 2, 1, 3)

    q = heads_of(_dense(win, attn_cell.q)) * d**-0.5
    k, v = heads_of(_dense(win, attn_cell.k)), heads_of(_dense(win, attn_cell.v))
    attn = q @ k.transpose(0, 1, 3, 2)
    table = _np(attn_cell.relative_bias.relative_position_bias_table)  # ((2 ws - 1)^2, heads)
    attn = attn + table[_relative_index(ws)].transpose(2, 0, 1)[None]
    if shift:
        mask = _shift_mask(h, w, ws, shift)
        attn = (attn.reshape(b, -1, heads, n, n) + mask[None, :, None]).reshape(-1, heads, n, n)
    out = (_softmax(attn) @ v).transpose(0, 2, 1, 3).reshape(-1, n, c)
    y = _merge_windows(_dense(out, attn_cell.proj), ws, b, h, w)
    if shift:
        y = np.roll(y, (shift, shift), axis=(1, 2))
    x = x + y.reshape(b, n_tokens, c)
    return x + _dense(_gelu(_dense(_layer_norm(x, blk.norm2), blk.mlp.fc1)), blk.mlp.fc2)


def _patch_merging(x, cell, h, w):
    b, _, c = x.shape
    x = x.reshape(b, h, w, c)
    x = np.concatenate([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
    return _layer_norm(x.reshape(b, -1, 4 * c), cell.norm) @ _np(cell.reduction.weight).T


def _swin_numpy(net, images):
    b = images.shape[0]
    proj = net.patch_embed.proj
    p = proj.kernel_size[0]
    g = images.shape[2] // p
    patches = images.astype(np.float64).reshape(b, 3, g, p, g, p)
    x = np.einsum("bchiwj,ocij->bhwo", patches, _np(proj.weight)) + _np(proj.bias)
    x = _layer_norm(x.reshape(b, g * g, -1), net.patch_embed.norm)
    h = w = g
    for layer in net.layers:
        for blk in layer.blocks:
            x = _block(x, blk, h, w)
        if layer.downsample is not None:
            x = _patch_merging(x, layer.downsample, h, w)
            h, w = h // 2, w // 2
    x = _layer_norm(x, net.norm).mean(1)
    return _dense(x, net.head)


def _randomize(net, rng):
    """Parameters away from their initial values (LayerNorm's gammas near 1, the rest small)."""
    for p in net.trainable_params():
        value = rng.normal(0, 0.3, p.shape)
        if p.name.endswith("gamma"):
            value = 1 + 0.2 * value
        p.set_data(Tensor(value.astype(np.float32)))


# ---------------------------------------------------------------------------------------------
# The network


def test_tiny_swin_t_matches_a_numpy_swin_in_both_modes(rng):
    net = get_model(args)
    # two stages on the 8 x 8 patch map: windows of 4 (the second block shifted by 2), patch merging to 4 x 4
    # (a window covering the map: no shift) and the head on the 32 channels' mean
    blocks = [blk for layer in net.layers for blk in layer.blocks]
    assert [(b.window_size, b.shift_size, b.num_heads) for b in blocks] == [(4, 0, 2), (4, 2, 2), (4, 0, 4), (4, 0, 4)]
    assert [b.attn_mask is None for b in blocks] == [True, False, True, True]
    assert net.layers[1].downsample is None and net.num_features == 32
    _randomize(net, rng)
    net.set_train(False)  # DropPath (drop_path_rate 0.2) off
    images = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    want = _swin_numpy(net, images)
    got = net(Tensor(images)).asnumpy()
    assert got.shape == (2, 4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    context.set_context(mode=context.GRAPH_MODE)
    np.testing.assert_allclose(net(Tensor(images)).asnumpy(), want, rtol=1e-4, atol=1e-4)


def test_shift_mask_relative_bias_and_roll():
    blk = SwinTransformerBlock(dim=8, input_resolution=(8, 8), num_heads=2, window_size=4, shift_size=2)
    # the mask Parameter: (1, windows, 1, N, N), -100 between tokens that are not neighbours in the image
    np.testing.assert_array_equal(blk.attn_mask.asnumpy()[0, :, 0], _shift_mask(8, 8, 4, 2))
    assert not blk.attn_mask.requires_grad
    # the relative bias: the one-hot rows pick the table row of each pair's offset
    bias = blk.attn.relative_bias
    index = bias.index.asnumpy()
    assert index.shape == (256, 49) and np.all(index.sum(1) == 1) and not bias.index.requires_grad
    np.testing.assert_array_equal(index.argmax(1), _relative_index(4).reshape(-1))
    table = bias.relative_position_bias_table.asnumpy()
    np.testing.assert_allclose(bias().asnumpy()[0], table[_relative_index(4)].transpose(2, 0, 1), rtol=1e-6)
    # Roll: mindspore.numpy.roll over the map's two axes, as np.roll
    x = np.arange(2 * 5 * 6 * 3, dtype=np.float32).reshape(2, 5, 6, 3)
    for shift in (2, -2, 7):
        np.testing.assert_array_equal(Roll(shift)(Tensor(x)).asnumpy(), np.roll(x, (shift, shift), (1, 2)))
    np.testing.assert_array_equal(mnp.roll(Tensor(x), -1, 2).asnumpy(), np.roll(x, -1, 2))
    np.testing.assert_array_equal(mnp.roll(Tensor(x), 3).asnumpy(), np.roll(x, 3))


def test_cast_amp_o1_computes_the_dense_layers_in_float16(rng):
    net = get_model(args)
    images = Tensor(rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
    net.set_train(False)
    want = net(images).asnumpy()
    args.amp_level = "O1"
    cast_amp(net)
    got = net(images)
    assert got.dtype == opforge.float16  # the head is a Dense layer: float16
    np.testing.assert_allclose(got.asnumpy().astype(np.float32), want, rtol=0.05, atol=0.02)
    # the criterion of the mixed batches casts both to float32
    labels = rng.dirichlet(np.ones(4), 2).astype(np.float32)
    loss = SoftTargetCrossEntropy()(got, Tensor(labels))
    logits = got.asnumpy().astype(np.float64)
    log_p = logits - logits.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    assert loss.dtype == opforge.float32
    np.testing.assert_allclose(loss.asnumpy(), np.mean(-(labels * log_p).sum(1)), rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# The training step


def test_train_step_unscales_clips_the_global_norm_and_applies_adamw(rng):
    """Two steps of the zoo's TrainOneStepWithLossScaleCellGlobalNormClip (loss scale 1024, clip at 0.05)
    against NumPy's AdamW on the clipped gradients (MindSpore's AdamWeightDecay: no bias correction, the
    decay only for the '.weight' parameters, get_param_groups)."""
    args.warmup_length, args.clip_global_norm_value = 0, 0.05
    args.drop_path_rate = 0.0  # no random DropPath: the steps and NumPy see one network
    net = get_model(args)
    net_with_loss = NetWithLoss(net, get_criterion(args))
    optimizer = get_optimizer(args, net, batch_num=3)
    epochs = np.arange(3 * args.epochs) / 3  # cosine_lr, no warm-up, times the batch over 512
    lrs = np.maximum(args.base_lr * 0.5 * (1 + np.cos(np.pi * epochs / args.epochs)), args.min_lr) * 4 / 512
    step = get_train_one_step(args, net_with_loss, optimizer)  # FixedLossScaleUpdateCell(1024)
    step.set_train()
    params = list(net.trainable_params())
    decay = [p.name.endswith(".weight") for p in params]  # 6 Dense layers a block, patch embedding, merging, head
    assert sum(decay) == 27
    grad_fn = ops.GradOperation(get_by_list=True)(net_with_loss, ParameterTuple(params))
    images = Tensor(rng.standard_normal((4, 3, 32, 32)).astype(np.float32))
    labels = Tensor(rng.dirichlet(np.ones(4), 4).astype(np.float32))
    m = [np.zeros(p.shape) for p in params]
    v = [np.zeros(p.shape) for p in params]
    for i in range(2):
        values = [_np(p) for p in params]
        grads = [g.asnumpy().astype(np.float64) for g in grad_fn(images, labels)]
        norm = np.sqrt(sum((g**2).sum() for g in grads))
        assert norm > 0.05  # clipped
        grads = [g * 0.05 / norm for g in grads]
        want_loss = net_with_loss(images, labels).asnumpy()
        loss = step(images, labels)
        np.testing.assert_allclose(loss.asnumpy(), want_loss, rtol=1e-5)
        for j, p in enumerate(params):
            m[j] = 0.9 * m[j] + 0.1 * grads[j]
            v[j] = 0.999 * v[j] + 0.001 * grads[j] ** 2
            update = m[j] / (np.sqrt(v[j]) + 1e-8) + (args.weight_decay * values[j] if decay[j] else 0)
            np.testing.assert_allclose(p.asnumpy(), values[j] - lrs[i] * update, rtol=1e-4, atol=2e-6, err_msg=p.name)


# ---------------------------------------------------------------------------------------------
# The ImageNet pipelines


def test_imagenet_pipelines(tmp_path):
    root = _write_imagenet(tmp_path)
    train = create_dataset_imagenet(os.path.join(root, "train"), args, training=True)
    assert train.get_dataset_size() == 4  # 16 images, batches of 4 (drop_remainder)
    for image, label in train.create_tuple_iterator(output_numpy=True):
        assert image.shape == (4, 3, 32, 32) and image.dtype == np.float32
        # Mixup / CutMix of the batch with its flip, on labels smoothed by 0.1 (0.025 off, 0.925 on)
        assert label.shape == (4, 4) and label.dtype == np.float32
        np.testing.assert_allclose(label.sum(1), 1, rtol=1e-5)
        assert label.min() >= 0.025 - 1e-6 and label.max() <= 0.925 + 1e-6
        assert np.all((label > 0.025 + 1e-6).sum(1) <= 2)  # a sample and its partner
    val = create_dataset_imagenet(os.path.join(root, "val"), args, training=False)
    mean, std = np.float32([0.485, 0.456, 0.406]) * 255, np.float32([0.229, 0.224, 0.225]) * 255
    rows = list(val.create_tuple_iterator(output_numpy=True))
    assert len(rows) == 2
    seen = []
    for image, label in rows:
        assert label.shape == (4, 4) and np.all(label.sum(1) == 1)  # OneHot (mix_up > 0)
        seen += [(img, int(lab.argmax())) for img, lab in zip(image, label)]
    # the eval transforms by hand: Pillow's bicubic to 36 (256 / 224 of 32), the centre 32 x 32, normalized
    for c in range(4):
        for i in range(2):
            img = Image.open(os.path.join(root, "val", f"n0{c}", f"{i}.JPEG")).convert("RGB")
            want = np.asarray(img.resize((36, 36), Image.BICUBIC), np.float32)[2:34, 2:34]
            want = ((want - mean) / std).transpose(2, 0, 1)
            assert any(lab == c and np.allclose(got, want, atol=1e-4) for got, lab in seen), (c, i)


# ---------------------------------------------------------------------------------------------
# train.py and eval.py


def _val_loss(net, root):
    data = create_dataset_imagenet(os.path.join(root, "val"), args, training=False)
    criterion = SoftTargetCrossEntropy()
    net.set_train(False)
    losses = [criterion(net(image), label).asnumpy() for image, label in data.create_tuple_iterator()]
    return float(np.mean(losses))


def test_train_py_then_eval_py(tmp_path, monkeypatch, capsys):
    args.data_url = _write_imagenet(tmp_path / "imagenet")
    args.train_url = str(tmp_path)
    gpu = copy.copy(args)
    gpu.device_target = "GPU"
    assert set_device(gpu) == 0  # one device: rank 0
    with pytest.raises(ValueError, match="Unsupported platform"):
        set_device(args)
    monkeypatch.setattr(zoo_train, "set_device", lambda a: 0)
    monkeypatch.setattr(zoo_eval, "set_device", lambda a: 0)
    monkeypatch.chdir(tmp_path)
    opforge.set_seed(args.seed)
    initial = _val_loss(get_model(args), args.data_url)  # the network train.py starts from (set_seed(0))

    zoo_train.main()
    out = capsys.readouterr().out
    assert "=> using amp_level O1" in out and "Using MixBatch" in out and "train success" in out
    # dataset sink mode: LossMonitor once an epoch (4 steps), the EvaluateCallBack's accuracy after it
    losses = [float(x) for x in re.findall(r"epoch: \d+ step: 4, loss is ([0-9.]+)", out)]
    accs = [float(x) for x in re.findall(r"epoch: \d+ acc: ([0-9.]+)", out)]
    assert len(losses) == len(accs) == args.epochs and np.all(np.isfinite(losses))
    checkpoints = sorted(glob.glob(str(tmp_path / "ckpt_0" / "*.ckpt")), key=os.path.getmtime)
    assert [os.path.basename(c) for c in checkpoints][-2:] == [
        f"swin_tiny_patch4_window7_2240-{args.epochs - 1}_4.ckpt",
        f"swin_tiny_patch4_window7_2240-{args.epochs}_4.ckpt",
    ]  # keep_checkpoint_max (save_every) 2
    assert len(checkpoints) == 2

    # the last checkpoint: the validation loss fell and the classes are told apart
    context.set_context(mode=context.PYNATIVE_MODE)
    trained = get_model(args)
    opforge.load_param_into_net(trained, opforge.load_checkpoint(checkpoints[-1]))
    final = _val_loss(trained, args.data_url)
    assert final < 0.7 * initial, (initial, final)
    assert accs[-1] == 1.0

    # eval.py on it: the loss and the accuracies of the checkpoint's network (float32 here, O1 there)
    args.pretrained = checkpoints[-1]
    zoo_eval.main()
    out = capsys.readouterr().out
    results = eval(out.split("=> eval results:")[1].splitlines()[0])
    assert results["Top1-Acc"] == 1.0 and results["Top5-Acc"] == 1.0  # four classes: the top 5 hold them all
    np.testing.assert_allclose(results["Loss"], final, rtol=0.02)
