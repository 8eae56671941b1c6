# ruff: noqa  (the model zoo's text as it is)
"""ArcFace as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/Arcface at commit
eab643f51336dbf7d711f02d27e6516e5affee59 (src/iresnet.py, src/loss.py, src/dataset.py, train.py; Apache-2.0) with
``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by relative imports; nothing else changed.
``tests/test_zoo_arcface.py`` checks the IResNet and the PartialFC / ArcFace margin loss against NumPy and trains
train.py's ``MyNetWithLoss`` with its ``lr_generator`` and ``SGD`` through ``Model`` in dataset sink mode on an
ImageFolder of 112 x 112 images written there (train.py's ``__main__`` accepts only the GPU and Ascend targets)."""
