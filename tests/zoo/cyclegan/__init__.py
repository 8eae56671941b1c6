# ruff: noqa  (the model zoo's text as it is)
"""CycleGAN as MindSpore's model zoo writes it: the files of mindspore-ai/models official/cv/CycleGAN (src/,
train.py, eval.py; Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by
relative imports, the package flattened: src/models/{cycle_gan, networks, losses, resnet, depth_resnet, unet}.py,
src/utils/{args, tools, reporter}.py and src/dataset/{cyclegan_dataset, distributed_sampler}.py are here under
their file names. One change: args.py parses an empty command line (``parser.parse_args([])``: pytest's is not
the script's); the tests set the values (small images and channel counts: ``image_size``, ``ngf``, ``ndf``,
``gl_num``, ``dl_num``). ``tests/test_zoo_cyclegan.py`` runs train.py's ``train()`` (the zoo's own loop of
``TrainOneStepG`` / ``TrainOneStepD`` with the ``ImagePool``) and eval.py's ``predict()``.
export.py is the zoo's export.py, run by ``tests/test_zoo_export.py``."""
