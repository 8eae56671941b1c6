"""``opforge demo``: train a small MLP on scikit-learn's 8x8 handwritten digits, end to end.

Everything the network computes (Dense layers, ReLU, the cross-entropy loss, its gradients and
the optimizer's in-place updates) runs as opforge primitives on the registry's kernels; NumPy
only loads, standardises and batches the data and counts correct predictions. The run ends with
the profiler's table of the kernels that ran.

    opforge demo                        # 64 -> 128 -> 10 MLP, Adam, 20 epochs
    opforge demo --model lenet          # LeNet-5 (two Conv2D + MaxPool stages, three Dense layers)
    opforge demo --optimizer momentum --lr 0.05 --epochs 30 --plot curves.png

In Python, ``train(dataset, ...)`` runs the same loop without printing and returns a
``History``; ``load_digits_dataset()`` needs scikit-learn (``pip install "opforge[demo]"``) and
``synthetic_dataset()`` does not.
"""

from __future__ import annotations

import io
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from rich.markup import escape

import opforge
from opforge import nn
from opforge.dispatch.sharding import gather_whole
from opforge.parallel_context import operator_parallel
from opforge.primitives.primitive import Primitive

__all__ = [
    "INSTALL_HINT",
    "MissingDependencyError",
    "Dataset",
    "History",
    "MLP",
    "LeNet5",
    "MODELS",
    "load_digits_dataset",
    "synthetic_dataset",
    "make_optimizer",
    "accuracy",
    "train",
    "plot_history",
    "run",
    "main",
]

INSTALL_HINT = 'pip install "opforge[demo]"'
DEFAULT_LR = {"adam": 1e-3, "momentum": 0.05, "sgd": 0.1}
SPLIT_SEED = 0  # the train/test split is fixed, whatever the training seed


class MissingDependencyError(RuntimeError):
    """An optional dependency of the demo (scikit-learn, matplotlib) is not installed."""


@dataclass
class Dataset:
    """Standardised float32 features and int32 class labels, split into train and test."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int

    @property
    def num_features(self) -> int:
        return self.x_train.shape[1]


@dataclass
class History:
    """What a training run measured: per-epoch mean loss and accuracies, and per-step losses."""

    loss: list = field(default_factory=list)
    train_acc: list = field(default_factory=list)
    test_acc: list = field(default_factory=list)
    step_loss: list = field(default_factory=list)
    epoch_seconds: list = field(default_factory=list)
    seconds: float = 0.0
    ranks: int = 1  # data parallel: the number of ranks, and the all-reduces each step ran
    collectives_per_step: int = 0

    @property
    def final_test_acc(self) -> float:
        return self.test_acc[-1] if self.test_acc else float("nan")


def _standardise(x_train: np.ndarray, x_test: np.ndarray) -> tuple:
    """Zero mean, unit variance per feature, with the training set's statistics (constant
    features, such as the digits' always-blank corner pixels, are only centred)."""
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std[std < 1e-8] = 1.0
    return ((x_train - mean) / std).astype(np.float32), ((x_test - mean) / std).astype(np.float32)


def _split(x: np.ndarray, y: np.ndarray, test_fraction: float, seed: int) -> tuple:
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def load_digits_dataset(test_fraction: float = 0.2) -> Dataset:
    """scikit-learn's 1,797 8x8 digit images (shipped inside scikit-learn: no download), as 64
    standardised features; a fixed 80/20 split (1,438 train, 359 test)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise MissingDependencyError(
            f"The demo trains on scikit-learn's digits data set, but scikit-learn is not installed. "
            f"Install the demo extra: {INSTALL_HINT}"
        ) from None
    digits = load_digits()
    x = digits.data.astype(np.float64)
    y = digits.target.astype(np.int32)
    x_train, y_train, x_test, y_test = _split(x, y, test_fraction, SPLIT_SEED)
    x_train, x_test = _standardise(x_train, x_test)
    return Dataset("digits (8x8, scikit-learn)", x_train, y_train, x_test, y_test, 10)


def synthetic_dataset(
    n_train: int = 512, n_test: int = 128, num_features: int = 64, num_classes: int = 10, seed: int = 0
) -> Dataset:
    """Gaussian clusters, one per class, shaped like the digits (no scikit-learn needed)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 1.0, (num_classes, num_features))
    y = rng.integers(0, num_classes, n_train + n_test).astype(np.int32)
    x = centres[y] + rng.normal(0.0, 1.5, (len(y), num_features))
    x_train, x_test = _standardise(x[:n_train], x[n_train:])
    return Dataset("synthetic clusters", x_train, y[:n_train], x_test, y[n_train:], num_classes)


class MLP(nn.Cell):
    """``in -> hidden -> ReLU -> classes``: two Dense layers (He-uniform weights)."""

    def __init__(self, num_features: int = 64, hidden: int = 128, num_classes: int = 10):
        super().__init__()
        self.fc1 = nn.Dense(num_features, hidden, weight_init="he_uniform")
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(hidden, num_classes, weight_init="he_uniform")

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class LeNet5(nn.Cell):
    """LeNet-5's layout (MindSpore's model zoo LeNet5) for 8x8 one-channel images, wider than the
    original 6 and 16 channels, which reached only 95-97% on the digits: ``conv 3x3 (32) -> ReLU -> max
    pool 2 -> conv 3x3 (64) -> ReLU -> max pool 2 -> flatten -> Dense 128 -> ReLU -> Dense 64 -> ReLU ->
    Dense classes``. Takes the 64 features of a sample and views them as a 1x8x8 image."""

    def __init__(self, num_class: int = 10, num_channel: int = 1, side: int = 8, channels=(32, 64), hidden=(128, 64)):
        super().__init__()
        self.image_shape = (-1, num_channel, side, side)
        self.reshape = opforge.ops.Reshape()
        self.conv1 = nn.Conv2d(num_channel, channels[0], 3, pad_mode="same", weight_init="he_uniform")
        self.conv2 = nn.Conv2d(channels[0], channels[1], 3, pad_mode="same", weight_init="he_uniform")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        flat = channels[1] * (side // 4) * (side // 4)
        self.fc1 = nn.Dense(flat, hidden[0], weight_init="he_uniform")
        self.fc2 = nn.Dense(hidden[0], hidden[1], weight_init="he_uniform")
        self.fc3 = nn.Dense(hidden[1], num_class, weight_init="he_uniform")

    def construct(self, x):
        x = self.reshape(x, self.image_shape)
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


MODELS = {"mlp": "MLP 64 -> 128 -> ReLU -> 10", "lenet": "LeNet-5 (conv 3x3 32 and 64 channels, max pools, 3 Dense)"}


def make_model(model: str, data: Dataset, hidden: int = 128) -> nn.Cell:
    """The demo's network for ``model`` ("mlp" or "lenet") on ``data``."""
    if model == "mlp":
        return MLP(data.num_features, hidden, data.num_classes)
    if model == "lenet":
        return LeNet5(data.num_classes)
    raise ValueError(f"unknown model {model!r}; choose one of {sorted(MODELS)}.")


def shard_mlp(net: MLP) -> None:
    """Megatron-style tensor parallelism over all ranks: fc1 column-parallel, fc2 row-parallel."""
    from opforge.communication import get_group_size

    if not isinstance(net, MLP):
        raise ValueError(f"tensor parallel shards the MLP only, not {type(net).__name__}.")
    shard_dense_pair(net.fc1, net.fc2, get_group_size())


def shard_dense_pair(first: nn.Dense, second: nn.Dense, n: int) -> None:
    """Megatron's split of two Dense layers over ``n`` ranks: ``first`` column-parallel (its output features
    split, bias included), ``second`` row-parallel (its input features split: partial sums, completed once)."""
    first.matmul.shard(((1, 1), (n, 1)))
    first.bias_add.shard(((1, n), (n,)))
    second.matmul.shard(((1, n), (1, n)))


def searched_strategies(net: nn.Cell) -> str:
    """``fc1.matmul ((1, 1), (2, 1)), ...``: the strategies AUTO_PARALLEL's search set on ``net``'s operators."""
    found = [
        f"{name}.{attr} {prim.in_strategy}"
        for name, cell in net.cells_and_names()
        for attr, prim in vars(cell).items()
        if isinstance(prim, Primitive) and prim.__dict__.get("_searched_strategy")
    ]
    return ", ".join(found) or "none"


def make_optimizer(name: str, params, lr: float | None = None) -> nn.Optimizer:
    """ "adam", "momentum" (0.9) or "sgd", with the demo's default learning rate when ``lr`` is None."""
    key = name.lower()
    if key not in DEFAULT_LR:
        raise ValueError(f"unknown optimizer {name!r}; choose one of {sorted(DEFAULT_LR)}.")
    lr = DEFAULT_LR[key] if lr is None else lr
    if key == "adam":
        return nn.Adam(params, learning_rate=lr)
    if key == "momentum":
        return nn.Momentum(params, learning_rate=lr, momentum=0.9)
    return nn.SGD(params, learning_rate=lr)


def accuracy(net: nn.Cell, x: np.ndarray, y: np.ndarray, batch_size: int = 1024) -> float:
    """The fraction of samples whose largest logit is the label (the network in eval mode)."""
    was_training = net.training
    net.set_train(False)
    correct = 0
    for start in range(0, len(x), batch_size):
        rows = x[start : start + batch_size]
        # Auto parallel may split the batch: a last batch padded (with its first row) to a multiple of the ranks
        ranks = opforge.communication.get_group_size() if operator_parallel() else 1
        padded = np.concatenate([rows, np.repeat(rows[:1], -len(rows) % ranks, axis=0)])
        logits = gather_whole(net(opforge.Tensor(padded))).asnumpy()[: len(rows)]
        correct += int((logits.argmax(axis=1) == y[start : start + batch_size]).sum())
    net.set_train(was_training)
    return correct / max(len(x), 1)


def train(
    data: Dataset,
    epochs: int = 20,
    batch_size: int = 32,
    lr: float | None = None,
    optimizer: str = "adam",
    seed: int = 0,
    hidden: int = 128,
    on_step: Callable | None = None,
    on_epoch: Callable | None = None,
    max_steps: int | None = None,
    model: str = "mlp",
    graph: bool = False,
    parallel: str = "data",
) -> tuple:
    """Train the ``model`` ("mlp" or "lenet") on ``data``; returns ``(net, history)``.

    ``seed`` fixes the initial weights and the batch order, so a run is reproducible.
    ``on_step(epoch, step, loss)`` and ``on_epoch(epoch, history)`` report progress;
    ``max_steps`` stops early (for quick checks). ``graph`` traces the training step once per batch
    shape and replays it (``opforge.jit``, MindSpore's graph mode).

    Data parallel (``parallel_mode`` DATA_PARALLEL in the auto-parallel context, e.g. under
    ``opforge demo --workers 2``): every rank draws the same batches and trains on its slice of each
    (``np.array_split``), the gradients are all-reduced with ``gradients_mean``, and the per-step and
    per-epoch losses recorded are the means over the ranks.

    Tensor parallel (``parallel="tensor"`` in SEMI_AUTO_PARALLEL mode, ``opforge demo --workers 2
    --parallel tensor``): every rank takes the whole batch, the MLP's first Dense is column-parallel and
    the second row-parallel (docs/parallel.md), so each rank holds 1/N of the weights and the training
    equals one process.

    Auto parallel (``parallel="auto"`` in AUTO_PARALLEL mode, ``opforge demo --workers 2 --parallel auto``):
    every rank takes the whole batch, and the strategy search (MindSpore's default ``search_mode``) chooses
    every operator's split before the first step; the training equals one process.
    """
    if epochs < 1 or batch_size < 1:
        raise ValueError(f"epochs and batch_size must be >= 1, but got {epochs} and {batch_size}.")
    nn.set_seed(seed)
    net = make_model(model, data, hidden)
    if parallel == "tensor":
        shard_mlp(net)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = make_optimizer(optimizer, net.trainable_params(), lr)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    reducer = step.grad_reducer if step.reducer_flag else None
    if graph:
        step = opforge.jit(step)
    rank, ranks = (reducer.rank, reducer.group_size) if reducer is not None else (0, 1)
    order_rng = np.random.default_rng(seed)
    history = History(ranks=ranks, collectives_per_step=reducer.collectives_per_step if reducer is not None else 0)
    n = len(data.x_train)
    steps_done = 0
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        epoch_start = time.perf_counter()
        order = order_rng.permutation(n)
        losses = []
        for i, first in enumerate(range(0, n, batch_size)):
            idx = order[first : first + batch_size]
            if ranks > 1:
                idx = np.array_split(idx, ranks)[rank]
            loss = float(step(opforge.Tensor(data.x_train[idx]), opforge.Tensor(data.y_train[idx])).asnumpy())
            losses.append(loss)
            history.step_loss.append(loss)
            steps_done += 1
            if on_step is not None:
                on_step(epoch, i + 1, loss)
            if max_steps is not None and steps_done >= max_steps:
                break
        if ranks > 1:  # the mean over the ranks of each step's loss
            losses = _mean_over_ranks(reducer, losses)
            history.step_loss[-len(losses) :] = losses
        history.loss.append(float(np.mean(losses)))
        history.train_acc.append(accuracy(net, data.x_train, data.y_train))
        history.test_acc.append(accuracy(net, data.x_test, data.y_test))
        history.epoch_seconds.append(time.perf_counter() - epoch_start)
        if on_epoch is not None:
            on_epoch(epoch, history)
        if max_steps is not None and steps_done >= max_steps:
            break
    history.seconds = time.perf_counter() - start
    net.set_train(False)
    return net, history


def _mean_over_ranks(reducer, values: list) -> list:
    """The mean over the ranks of a list of floats (one all-reduce)."""
    total = opforge.ops.AllReduce(group=reducer.group)(opforge.Tensor(np.asarray(values, np.float64)))
    return (total.asnumpy() / reducer.group_size).tolist()


def plot_history(history: History, path: str) -> str:
    """Save loss and accuracy curves to ``path`` (a PNG, matplotlib's Agg backend)."""
    try:
        import matplotlib
        import matplotlib.ticker

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError(f"--plot needs matplotlib. Install the demo extra: {INSTALL_HINT}") from None
    epochs = np.arange(1, len(history.loss) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    steps = np.arange(1, len(history.step_loss) + 1) / max(len(history.step_loss) / max(len(epochs), 1), 1)
    ax_loss.plot(steps, history.step_loss, color="tab:blue", alpha=0.3, lw=0.8, label="per step")
    ax_loss.plot(epochs, history.loss, color="tab:blue", marker="o", label="epoch mean")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy loss", title="Training loss", yscale="log")
    ax_loss.legend()
    ax_acc.plot(epochs, np.array(history.train_acc) * 100, marker="o", label="train")
    ax_acc.plot(epochs, np.array(history.test_acc) * 100, marker="s", label="test")
    ax_acc.set(xlabel="epoch", ylabel="accuracy (%)", title="Accuracy")
    for ax in (ax_loss, ax_acc):
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax_acc.grid(alpha=0.3)
    ax_acc.legend()
    fig.suptitle("opforge demo: MLP on 8x8 digits")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def run(
    epochs: int = 20,
    seed: int = 0,
    batch_size: int = 32,
    lr: float | None = None,
    optimizer: str = "adam",
    plot: str | None = None,
    threads: int | None = 1,
    console=None,
    device: str = "CPU",
    model: str = "mlp",
    mode: str = "pynative",
    parallel: str = "data",
) -> int:
    """The ``opforge demo`` command: train with a progress bar, print the per-epoch metrics, the
    final test accuracy and the profiler's kernel table. Returns the exit code.

    Started on several MPI ranks (``opforge demo --workers 2`` relaunches itself under mpiexec;
    ``mpiexec -n 2 opforge demo`` too), it trains data-parallel: each rank takes its share of every
    batch of ``batch_size`` (the global batch), and only rank 0 prints.

    ``threads`` sets the kernel thread count (``opforge.set_context(num_threads=...)``; None keeps
    it): one thread is fastest for tensors this small. ``device`` ("CPU" or "GPU") is where the
    network trains (``opforge.set_context(device_target=...)``).
    """
    from rich.console import Console

    from opforge.tools.launch import world_rank, world_size

    ranks = world_size()
    if ranks > 1 and world_rank() != 0:  # only rank 0 prints
        console = Console(file=io.StringIO(), width=120)
    # Printed to a file or a pipe, rich assumes 80 columns: too narrow for the kernel table.
    console = console or Console(width=None if sys.stdout.isatty() else 120)
    try:
        data = load_digits_dataset()
    except MissingDependencyError as e:
        console.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False, soft_wrap=True)
        return 1
    if epochs < 1 or batch_size < 1:
        console.print(
            f"[bold red]error:[/bold red] --epochs and --batch-size must be >= 1 (got {epochs}, {batch_size})."
        )
        return 2
    if model not in MODELS:
        console.print(f"[bold red]error:[/bold red] unknown model {model!r}; choose {sorted(MODELS)}.")
        return 2
    if optimizer.lower() not in DEFAULT_LR:
        console.print(f"[bold red]error:[/bold red] unknown optimizer {optimizer!r}; choose {sorted(DEFAULT_LR)}.")
        return 2
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        console.print(f"[bold red]error:[/bold red] --threads must be >= 1 (got {threads}).")
        return 2
    previous_threads, previous_device = opforge.get_context("num_threads"), opforge.get_context("device_target")
    try:
        opforge.set_context(device_target=device)
    except (ValueError, RuntimeError) as e:
        console.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False, soft_wrap=True)
        return 1
    if threads is not None:
        opforge.set_context(num_threads=threads)
    if parallel == "tensor" and model != "mlp":  # (auto parallel searches any model's strategies)
        console.print("[bold red]error:[/bold red] --parallel tensor shards the MLP (--model mlp) only.")
        return 2
    if ranks > 1:
        from opforge.communication import init
        from opforge.context import ParallelMode

        init()
        if parallel == "tensor":
            opforge.set_auto_parallel_context(parallel_mode=ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
        elif parallel == "auto":
            opforge.set_auto_parallel_context(parallel_mode=ParallelMode.AUTO_PARALLEL, full_batch=True)
        else:
            opforge.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
    else:
        parallel = "data"  # one rank: nothing to split
    try:
        return _run(data, epochs, seed, batch_size, lr, optimizer, plot, console, model, ranks, mode, parallel)
    finally:
        opforge.set_context(num_threads=previous_threads, device_target=previous_device)
        if ranks > 1:
            opforge.reset_auto_parallel_context()


def _run(
    data: Dataset,
    epochs,
    seed,
    batch_size,
    lr,
    optimizer,
    plot,
    console,
    model="mlp",
    ranks=1,
    mode="pynative",
    parallel="data",
) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    lr_shown = DEFAULT_LR[optimizer.lower()] if lr is None else lr
    console.print(
        f"[bold]opforge {opforge.__version__} demo[/bold]: {MODELS[model]} on {data.name}; "
        f"{len(data.x_train)} train / {len(data.x_test)} test samples\n"
        f"optimizer {optimizer} (lr {lr_shown:g}), batch {batch_size}, {epochs} epochs, seed {seed}, "
        f"device {opforge.get_context('device_target')}, kernel threads {opforge.get_context('num_threads')}"
        + (
            f"\ntensor parallel on {ranks} MPI ranks: the whole batch on every rank, fc1 column-parallel and fc2 "
            f"row-parallel (1/{ranks} of their weights per rank)"
            if ranks > 1 and parallel == "tensor"
            else f"\nauto parallel on {ranks} MPI ranks: the whole batch on every rank, each operator's split chosen "
            "by the strategy search before the first step"
            if ranks > 1 and parallel == "auto"
            else f"\ndata parallel on {ranks} MPI ranks: {batch_size // ranks} samples per rank per step, "
            f"gradients all-reduced (mean) in fused buckets"
            if ranks > 1
            else ""
        ),
        highlight=False,
    )
    steps_per_epoch = -(-len(data.x_train) // batch_size)
    progress = Progress(
        TextColumn("[bold blue]epoch {task.fields[epoch]:>3}/" + str(epochs)),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.4f}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )

    def on_step(epoch, i, loss):
        progress.update(task, advance=1, loss=loss, epoch=epoch)

    def on_epoch(epoch, history):
        progress.console.print(
            f"epoch {epoch:>3}  loss {history.loss[-1]:.4f}  train acc {history.train_acc[-1]:6.2%}  "
            f"test acc {history.test_acc[-1]:6.2%}  ({history.epoch_seconds[-1]:.2f} s)",
            highlight=False,
        )
        if epoch < epochs:
            progress.reset(task, total=steps_per_epoch, epoch=epoch + 1, loss=history.step_loss[-1])

    with opforge.profiler.profile() as prof, progress:
        task = progress.add_task("train", total=steps_per_epoch, epoch=1, loss=float("nan"))
        net, history = train(
            data, epochs=epochs, batch_size=batch_size, lr=lr, optimizer=optimizer, seed=seed,
            on_step=on_step, on_epoch=on_epoch, model=model, graph=mode == "graph", parallel=parallel,
        )  # fmt: skip
    console.print(
        f"[bold green]final test accuracy: {history.final_test_acc:.2%}[/bold green] "
        f"({len(data.x_test)} test samples; trained in {history.seconds:.1f} s)",
        highlight=False,
    )
    if parallel == "auto" and ranks > 1:
        console.print(f"searched strategies: {searched_strategies(net)}", highlight=False, soft_wrap=True)
    if history.ranks > 1:
        console.print(
            f"data parallel: {history.ranks} ranks, {history.collectives_per_step} all-reduce(s) per step for "
            f"{len(net.trainable_params())} parameters",
            highlight=False,
        )
    if plot:
        try:
            console.print(f"curves saved to {plot_history(history, plot)}")
        except MissingDependencyError as e:
            console.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False, soft_wrap=True)
            return 1
    prof.print(console=console)
    return 0


def main(argv=None) -> int:
    """``python -m opforge.tools.demo [options]``: the same as ``opforge demo [options]``."""
    from opforge.tools.cli import main as cli_main

    return cli_main(["demo", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
