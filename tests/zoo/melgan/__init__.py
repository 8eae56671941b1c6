# ruff: noqa  (the model zoo's text as it is)
"""MelGAN as MindSpore's model zoo writes it: the files of mindspore-ai/models official/audio/MELGAN at commit
eab643f51336dbf7d711f02d27e6516e5affee59 (src/model.py, src/loss.py; Apache-2.0) with ``mindspore`` replaced by
``opforge`` in the imports; nothing else changed. Left out: src/trainonestep.py and train.py, which imports it
(the step cells read Ascend's overflow register, ``NPUAllocFloatStatus`` / ``NPUGetFloatStatus`` /
``NPUClearFloatStatus``, which opforge lacks), src/dataset.py (wav files through scipy and precomputed mels) and
the yaml / moxing configuration. ``tests/test_zoo_melgan.py`` checks the generator and the multi-scale
discriminator against NumPy, the generator and discriminator losses against NumPy, and runs the training steps as
train.py and src/trainonestep.py take them (their gradients, loss scale as sens, ``nn.Adam``)."""
