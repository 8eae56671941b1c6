# ruff: noqa  (the model zoo's text as it is)
"""Swin Transformer as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/SwinTransformer
(src/models, src/tools, src/trainers, src/data, train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by
``opforge`` in the imports and ``src.`` by relative imports. Other change: ``args`` a namespace of the parser's
defaults and the Swin-T yaml's values, shrunk (src/args.py, for the zoo's argparse and yaml loading).
``tests/test_zoo_swintransformer.py`` builds the network, checks its window attention, shifted-window masks,
relative position bias and patch merging against NumPy, and runs train.py's ``main()`` and eval.py's ``main()``
on an ImageNet-style folder written there."""
