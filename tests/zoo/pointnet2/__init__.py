# ruff: noqa  (the model zoo's text as it is)
"""PointNet++ as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/PointNet2 at commit
eab643f51336dbf7d711f02d27e6516e5affee59 (src/layers.py, src/pointnet2_utils.py, src/pointnet2.py, src/dataset.py,
src/lr_scheduler.py, src/provider.py, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in
the imports and ``src.`` by relative imports; nothing else changed (src/callbacks.py, for ModelArts, imports moxing
and is left out). ``tests/test_zoo_pointnet2.py`` checks the sampling and grouping (farthest point sampling, the ball
query, the set abstraction layers) and the network against NumPy, a training step of its loss and
``AdamWeightDecay`` against NumPy, and runs train.py's ``run_train()`` and eval.py's ``run_eval()`` on a
ModelNet-style folder written there (their platform set-up, Ascend or GPU only, pointed at the CPU)."""
