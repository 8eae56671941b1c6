# ruff: noqa  (the model zoo's text as it is)
"""EfficientNet-B0 as MindSpore's model zoo writes it: the files of mindspore-ai/models
official/cv/Efficientnet/efficientnet-b0 (src/ and train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by
``opforge`` in the imports and ``src.`` by relative imports. efficientnet.py (GenEfficientNet: the block-string
decoder, depthwise-separable and inverted-residual blocks with squeeze-excite, HSwish, drop-connect through
``P.Dropout``'s mask), loss.py (LabelSmoothingCrossEntropy), callbacks.py (EvalCallBack), dataset.py (CIFAR-10
through ``Cifar10Dataset``, ``RandomResizedCrop``, ``RandAugment`` as the batch's ``per_batch_map``),
transform.py and transform_utils.py (RandAugment in Pillow), train.py (get_lr, the net and optimizer makers) and
eval.py are the zoo's text. Other changes: ``config`` a namespace of efficientnet_b0_cifar10_config.yaml's
values, shrunk (config.py, for src/config.py's yaml and argparse loading: 32-pixel crops, batch 4), and
transform_utils.py's ``np.float`` (removed in NumPy 1.24) written ``float``. ``tests/test_zoo_efficientnet.py``
trains it as train.py's main does and evaluates it by running eval.py.
export.py is the zoo's export.py, run by ``tests/test_zoo_export.py``."""
