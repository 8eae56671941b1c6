# ruff: noqa  (the model zoo's text as it is)
"""MobileNetV3 as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/MobileNet/mobilenetv3
(src/, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by
relative imports. Other change: src/config.py's values shrunk (batch 4, config_gpu's 32 x 32 images, config_cpu's
5 epochs at a peak learning rate of 0.002) and its ``EasyDict`` a dict with attribute reads (easydict is not
installed here). ``tests/test_zoo_mobilenetv3.py`` runs train.py and eval.py as scripts (``runpy``, with
``--device_target CPU``) on CIFAR-10 binary files."""
