"""``Dataset.concat`` (and ``+``): the rows of several datasets one after another, as MindSpore's
``ConcatDataset`` reads them (each child's epoch in turn, the children's operations kept: a concat of batched
datasets yields their batches)."""

from __future__ import annotations

from opforge.dataset.engine import Dataset

__all__ = ["concat"]


class _Concat(Dataset):
    def __init__(self, children: list):
        super().__init__(children[0]._columns)
        self.children = children

    def _size(self) -> int:
        return sum(child._size() for child in self.children)

    def _rows(self, epoch):
        for child in self.children:
            yield from child._rows(epoch)


def concat(dataset: Dataset, datasets) -> Dataset:
    """``dataset`` followed by ``datasets`` (a Dataset or a list of them); every one must have the same
    column names in the same order (MindSpore's rule)."""
    others = datasets if isinstance(datasets, list) else [datasets]
    if not isinstance(datasets, (list, Dataset)) or not all(isinstance(d, Dataset) for d in others):
        raise TypeError(
            f"For 'concat', 'datasets' must be a Dataset or a list of Datasets, but got {type(datasets).__name__}."
        )
    children = []
    for d in [dataset, *others]:  # flatten nested concats, as MindSpore does
        children.extend(d.children if isinstance(d, _Concat) else [d])
    for d in children[1:]:
        if d._columns != children[0]._columns:
            raise RuntimeError(
                f"For 'concat', every dataset must have the columns {children[0]._columns}, but one has {d._columns}."
            )
    return _Concat(children)
