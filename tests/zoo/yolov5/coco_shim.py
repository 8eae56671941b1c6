"""The part of pycocotools' ``COCO`` index that src/yolo_dataset.py reads (``imgs``, ``cats``, ``getAnnIds``,
``loadAnns``, ``loadImgs``, ``getCatIds``), over an instances JSON file: pycocotools is not installed in opforge's
test environment (this is not part of the zoo, nor of opforge)."""

import json
from collections import defaultdict


def _as_list(ids):
    return list(ids) if isinstance(ids, (list, tuple)) else [ids]


class COCO:
    def __init__(self, annotation_file):
        with open(annotation_file) as f:
            self.dataset = json.load(f)
        self.anns = {a["id"]: a for a in self.dataset.get("annotations", [])}
        self.imgs = {i["id"]: i for i in self.dataset.get("images", [])}
        self.cats = {c["id"]: c for c in self.dataset.get("categories", [])}
        self.imgToAnns = defaultdict(list)
        for a in self.dataset.get("annotations", []):
            self.imgToAnns[a["image_id"]].append(a)

    def getAnnIds(self, imgIds=(), catIds=(), iscrowd=None):  # noqa: N802, N803  (pycocotools' names)
        """Annotation ids of the given images (all when none given), optionally of given categories / crowd flag."""
        img_ids, cat_ids = _as_list(imgIds), _as_list(catIds)
        anns = [a for i in img_ids for a in self.imgToAnns[i]] if img_ids else list(self.anns.values())
        if cat_ids:
            anns = [a for a in anns if a["category_id"] in cat_ids]
        if iscrowd is not None:
            anns = [a for a in anns if a["iscrowd"] == iscrowd]
        return [a["id"] for a in anns]

    def getCatIds(self):  # noqa: N802  (pycocotools' name)
        return [c["id"] for c in self.dataset.get("categories", [])]

    def loadAnns(self, ids=()):  # noqa: N802  (pycocotools' name)
        return [self.anns[i] for i in _as_list(ids)]

    def loadImgs(self, ids=()):  # noqa: N802  (pycocotools' name)
        return [self.imgs[i] for i in _as_list(ids)]
