# ruff: noqa  (the model zoo's text as it is)
"""The zoo's src/args.py ``args``: the ``argparse.Namespace`` its ``parse_arguments()`` and ``get_config()`` make
from the parser's defaults and src/configs/swin_tiny_patch4_window7_224.yaml, shrunk for the tests: a Swin-T of
two stages on 32 x 32 images (patch 4: 8 x 8 patches, window 4 with the shift of 2 in the first stage's second
block, then patch merging to 4 x 4, where the window covers the whole map and does not shift), embedding 16,
4 classes, batch 4, 8 epochs with a 1-epoch warm-up, the base learning rate raised for so short a run, one
worker (the augmentations draw from Python's ``random``: one worker draws in one order), ``device_target`` CPU. The yaml/argparse loading is left out (the tests set the data path)."""

import argparse

DEFAULTS = {
    # the parser's defaults
    "arch": "swin_tiny_patch4_window7_224",
    "accumulation_step": 1,
    "amp_level": "O1",
    "ape": False,
    "batch_size": 4,
    "beta": [0.9, 0.999],
    "clip_global_norm_value": 5.0,
    "crop": True,
    "data_url": "./data/imagenet",
    "device_id": 0,
    "device_num": 1,
    "device_target": "CPU",
    "epochs": 8,
    "eps": 1e-8,
    "file_format": "MINDIR",
    "in_channel": 3,
    "is_dynamic_loss_scale": False,
    "keep_checkpoint_max": 20,
    "optimizer": "adamw",
    "set": "ImageNet",
    "graph_mode": 0,
    "mix_up": 0.8,
    "mlp_ratio": 4.0,
    "num_parallel_workers": 1,
    "start_epoch": 0,
    "warmup_length": 1,
    "warmup_lr": 0.00000007,
    "weight_decay": 0.05,
    "loss_scale": 1024,
    "lr": 5e-4,
    "lr_scheduler": "cosine_lr",
    "lr_adjust": 30,
    "lr_gamma": 0.97,
    "momentum": 0.9,
    "num_classes": 4,
    "patch_size": 4,
    "patch_norm": True,
    "pretrained": None,
    "swin_config": "src/configs/swin_tiny_patch4_window7_224.yaml",
    "seed": 0,
    "save_every": 2,
    "label_smoothing": 0.1,
    "image_size": 32,
    "train_url": "./",
    "run_modelarts": False,
    # swin_tiny_patch4_window7_224.yaml's other values
    "cutmix": 1.0,
    "auto_augment": "rand-m9-mstd0.5-inc1",
    "interpolation": "bicubic",
    "re_prob": 0.25,
    "re_mode": "pixel",
    "re_count": 1,
    "mixup_prob": 1.0,
    "switch_prob": 0.5,
    "mixup_mode": "batch",
    "base_lr": 0.05,
    "min_lr": 0.000006,
    "nonlinearity": "GELU",
    "keep_bn_fp32": True,
    "drop_path_rate": 0.2,
    "embed_dim": 16,
    "depths": [2, 2],
    "num_heads": [2, 4],
    "window_size": 4,
}

args = argparse.Namespace(**DEFAULTS)
