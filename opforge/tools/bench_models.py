"""The ``models`` suite of ``opforge bench``: training steps of real networks, side by side with the same
network in PyTorch eager (the same layers, initialisation aside; times only, never asserted).

Cases: a ResNet-50 training step (batch 8, 3x64x64, Momentum), a 2-layer bidirectional LSTM's forward
and backward (sequence 128, batch 8, hidden 128) and a Transformer encoder layer's forward and backward
(batch 8, sequence 256, d_model 256, 4 heads)."""

from __future__ import annotations

RESNET_BATCH, RESNET_SIDE, RESNET_CLASSES, LR = 8, 64, 10, 0.01


def _opforge_resnet50(nn, ops, width: int = 64):
    """ResNet-50 (bottleneck blocks 3-4-6-3, expansion 4) from opforge.nn, the model zoo's layout."""

    class Bottleneck(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            mid = cout // 4
            self.body = nn.SequentialCell(
                nn.Conv2d(cin, mid, 1, has_bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
                nn.Conv2d(mid, mid, 3, stride=stride, pad_mode="pad", padding=1, has_bias=False),
                nn.BatchNorm2d(mid), nn.ReLU(),
                nn.Conv2d(mid, cout, 1, has_bias=False), nn.BatchNorm2d(cout),
            )  # fmt: skip
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.SequentialCell(
                    nn.Conv2d(cin, cout, 1, stride=stride, has_bias=False), nn.BatchNorm2d(cout)
                )
            self.relu = nn.ReLU()

        def construct(self, x):
            return self.relu(self.body(x) + (x if self.down is None else self.down(x)))

    class ResNet50(nn.Cell):
        def __init__(self):
            super().__init__()
            layers = [
                nn.Conv2d(3, width, 7, stride=2, pad_mode="pad", padding=3, has_bias=False),
                nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, pad_mode="same"),
            ]  # fmt: skip
            cin = width
            for n, cout, stride in ((3, width * 4, 1), (4, width * 8, 2), (6, width * 16, 2), (3, width * 32, 2)):
                for i in range(n):
                    layers.append(Bottleneck(cin, cout, stride if i == 0 else 1))
                    cin = cout
            self.features = nn.SequentialCell(layers)
            self.mean = ops.ReduceMean(keep_dims=False)
            self.fc = nn.Dense(cin, RESNET_CLASSES)

        def construct(self, x):
            return self.fc(self.mean(self.features(x), (2, 3)))

    return ResNet50()


def _torch_resnet50(torch, width: int = 64):
    t = torch.nn

    class Bottleneck(t.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            mid = cout // 4
            self.body = t.Sequential(
                t.Conv2d(cin, mid, 1, bias=False), t.BatchNorm2d(mid), t.ReLU(),
                t.Conv2d(mid, mid, 3, stride=stride, padding=1, bias=False), t.BatchNorm2d(mid), t.ReLU(),
                t.Conv2d(mid, cout, 1, bias=False), t.BatchNorm2d(cout),
            )  # fmt: skip
            self.down = None
            if stride != 1 or cin != cout:
                self.down = t.Sequential(t.Conv2d(cin, cout, 1, stride=stride, bias=False), t.BatchNorm2d(cout))

        def forward(self, x):
            return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))

    layers = [
        t.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
        t.BatchNorm2d(width),
        t.ReLU(),
        t.MaxPool2d(3, 2, 1),
    ]
    cin = width
    for n, cout, stride in ((3, width * 4, 1), (4, width * 8, 2), (6, width * 16, 2), (3, width * 32, 2)):
        for i in range(n):
            layers.append(Bottleneck(cin, cout, stride if i == 0 else 1))
            cin = cout
    return t.Sequential(*layers, t.AdaptiveAvgPool2d(1), t.Flatten(), t.Linear(cin, RESNET_CLASSES))


def resnet50_case(np, opforge, torch, quick: bool = False) -> tuple:
    """One Momentum step of ResNet-50 on a batch of 8 3x64x64 images (``quick``: a quarter of the width)."""
    from opforge import nn, ops

    width = 16 if quick else 64
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((RESNET_BATCH, 3, RESNET_SIDE, RESNET_SIDE), dtype=np.float32)
    ya = rng.integers(0, RESNET_CLASSES, RESNET_BATCH).astype(np.int32)
    net = _opforge_resnet50(nn, ops, width)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), LR, 0.9))
    x, y = opforge.Tensor(xa), opforge.Tensor(ya)
    libs = {"opforge": lambda: step(x, y)}
    if torch is not None:
        tnet = _torch_resnet50(torch, width)
        opt = torch.optim.SGD(tnet.parameters(), lr=LR, momentum=0.9)
        tx, ty = torch.from_numpy(xa), torch.from_numpy(ya).long()

        def torch_step():
            opt.zero_grad(set_to_none=True)
            out = torch.nn.functional.cross_entropy(tnet(tx), ty)
            out.backward()
            opt.step()
            return out

        libs["torch"] = torch_step
    size = f"{RESNET_BATCH}x3x{RESNET_SIDE}x{RESNET_SIDE}" + (" (width/4)" if quick else "")
    return ("ResNet-50 train step", size, libs)


LSTM_SEQ, LSTM_BATCH, LSTM_HIDDEN, LSTM_LAYERS = 128, 8, 128, 2


def lstm_case(np, opforge, torch, quick: bool = False) -> tuple:
    """Forward and backward of a 2-layer bidirectional LSTM (sequence 128, batch 8, hidden 128, input 128),
    the gradients of every weight, against torch.nn.LSTM."""
    from opforge import nn

    seq = 16 if quick else LSTM_SEQ
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((seq, LSTM_BATCH, LSTM_HIDDEN), dtype=np.float32)
    net = nn.LSTM(LSTM_HIDDEN, LSTM_HIDDEN, num_layers=LSTM_LAYERS, bidirectional=True)
    x = opforge.Tensor(xa)
    grad = opforge.grad(lambda t: net(t)[0].sum(), None, net.trainable_params())
    libs = {"opforge": lambda: grad(x)}
    if torch is not None:
        tnet = torch.nn.LSTM(LSTM_HIDDEN, LSTM_HIDDEN, num_layers=LSTM_LAYERS, bidirectional=True)
        tx = torch.from_numpy(xa)

        def torch_step():
            tnet.zero_grad(set_to_none=True)
            out = tnet(tx)[0].sum()
            out.backward()
            return out

        libs["torch"] = torch_step
    return ("LSTM fwd+bwd", f"seq {seq}, batch {LSTM_BATCH}, hidden {LSTM_HIDDEN}, 2 layers, bidir", libs)


ENC_BATCH, ENC_SEQ, ENC_DMODEL, ENC_HEADS = 8, 256, 256, 4


def transformer_encoder_case(np, opforge, torch, quick: bool = False) -> tuple:
    """Forward and backward of one Transformer encoder layer (batch 8, sequence 256, d_model 256, 4 heads,
    feed-forward 1024, dropout 0, batch_first), the gradients of every weight, against
    torch.nn.TransformerEncoderLayer. opforge's attention is the fused ScaledDotProductAttention."""
    from opforge import nn

    seq = 32 if quick else ENC_SEQ
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((ENC_BATCH, seq, ENC_DMODEL), dtype=np.float32)
    net = nn.TransformerEncoderLayer(ENC_DMODEL, ENC_HEADS, 4 * ENC_DMODEL, dropout=0.0, batch_first=True)
    x = opforge.Tensor(xa)
    grad = opforge.grad(lambda t: net(t).sum(), None, net.trainable_params())
    libs = {"opforge": lambda: grad(x)}
    if torch is not None:
        tnet = torch.nn.TransformerEncoderLayer(ENC_DMODEL, ENC_HEADS, 4 * ENC_DMODEL, dropout=0.0, batch_first=True)
        tx = torch.from_numpy(xa)

        def torch_step():
            tnet.zero_grad(set_to_none=True)
            out = tnet(tx).sum()
            out.backward()
            return out

        libs["torch"] = torch_step
    size = f"batch {ENC_BATCH}, seq {seq}, d_model {ENC_DMODEL}, {ENC_HEADS} heads"
    return ("Transformer encoder layer fwd+bwd", size, libs)


# Each: (np, opforge, torch, quick) -> (name, size label, {library: callable})
MODEL_CASES = [resnet50_case, lstm_case, transformer_encoder_case]


def model_cases(np, opforge, torch, quick: bool = False) -> list:
    return [case(np, opforge, torch, quick) for case in MODEL_CASES]
