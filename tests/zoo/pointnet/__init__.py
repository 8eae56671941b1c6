# ruff: noqa  (the model zoo's text as it is)
"""PointNet as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/PointNet at commit
eab643f51336dbf7d711f02d27e6516e5affee59 (src/network.py, src/loss.py, src/dataset.py, src/misc/num_seg_classes.txt,
train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by relative
imports; nothing else changed (src/dataset.py imports tqdm and plyfile, the program's requirements).
``tests/test_zoo_pointnet.py`` checks the segmentation network (its T-Net, the point features, the dense head) and
the loss against NumPy, and runs train.py and eval.py as scripts (``--device_target CPU``) on a ShapeNet-style
part-segmentation folder written there."""
