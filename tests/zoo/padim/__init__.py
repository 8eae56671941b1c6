# ruff: noqa  (the model zoo's text as it is)
"""PaDiM's dataset pipeline as MindSpore's model zoo writes it: mindspore-ai/models research/cv/PaDiM/src/dataset.py
(Apache-2.0) with ``mindspore`` replaced by ``opforge`` in the imports, nothing else changed: ``MVTecDataset`` reads
an MVTec AD category folder with Pillow and transforms each image through ``transforms.py_transforms.Compose`` of
``vision.py_transforms`` (``Resize`` with ``Inter.ANTIALIAS`` / ``Inter.NEAREST``, ``CenterCrop``, ``ToTensor``,
``Normalize``), taking ``[0]`` of the Compose's tuple; ``createDataset`` feeds it to ``GeneratorDataset``,
``TypeCast`` and ``batch``. ``tests/test_py_transforms.py`` runs ``createDataset`` on synthetic PNG folders."""
