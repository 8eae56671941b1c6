"""The figure of docs/parallel.md: layouts of a tensor-parallel MLP and the collective its rules insert.

    python -m opforge.tools.parallel_figure docs/images/parallel_mlp.png

Each panel draws a tensor as a grid of the blocks its ``TensorLayout`` gives the ranks (the colours are
the ranks holding a block, computed with the same ``coords`` the sharding interpreter slices with)."""

from __future__ import annotations

import sys

from opforge.dispatch.sharding import TensorLayout, coords

RANKS = 2
# (title, global shape, layout) of the Megatron MLP y = relu(x W1^T) W2^T on 2 ranks
PANELS = [
    ("x (whole on each rank)", (4, 6), TensorLayout((RANKS,), (None, None))),
    ("W1 (rows split: column parallel)", (8, 6), TensorLayout((RANKS,), (0, None))),
    ("h = relu(x W1^T) (columns split)", (4, 8), TensorLayout((RANKS,), (None, 0))),
    ("W2 (columns split: row parallel)", (4, 8), TensorLayout((RANKS,), (None, 0))),
    ("h W2^T: partial sums -> AllReduce", (4, 4), TensorLayout((RANKS,), (None, None))),
]
COLOURS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52"]


def owners(layout: TensorLayout, shape: tuple, i: int, j: int) -> list:
    """The ranks whose block holds element (i, j)."""
    held = []
    for r in range(RANKS):
        c = coords(r, layout.mesh) if layout.mesh else ()
        ok = True
        for dim, idx in ((0, i), (1, j)):
            axis = layout.dims[dim]
            if axis is not None:
                size = shape[dim] // layout.mesh[axis]
                ok &= idx // size == c[axis]
        if ok:
            held.append(r)
    return held


def draw(path: str) -> None:
    import matplotlib  # noqa: PLC0415 - an optional dependency of the docs' figure only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, axes = plt.subplots(1, len(PANELS), figsize=(3.2 * len(PANELS), 3.0))
    for ax, (title, shape, layout) in zip(axes, PANELS):
        for i in range(shape[0]):
            for j in range(shape[1]):
                held = owners(layout, shape, i, j)
                colour = COLOURS[held[0]] if len(held) == 1 else "#999999"
                ax.add_patch(plt.Rectangle((j, shape[0] - 1 - i), 1, 1, facecolor=colour, edgecolor="white"))
        ax.set_xlim(0, shape[1])
        ax.set_ylim(0, shape[0])
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{title}\n{layout}", fontsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS[:RANKS]] + [
        plt.Rectangle((0, 0), 1, 1, color="#999999")
    ]
    fig.legend(handles, [f"rank {r}" for r in range(RANKS)] + ["every rank"], loc="lower center", ncol=RANKS + 1)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    draw(sys.argv[1] if len(sys.argv) > 1 else "docs/images/parallel_mlp.png")
