# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's model_utils/config.py (its ``Config`` namespace) with the values of
default_config.yaml, shrunk for the tests through the yaml's own keys: CPU, batch 2, crop 33, 3 classes, 2 epochs,
checkpoints every 2 steps. The yaml/argparse loading is left out (the tests set the data, list and checkpoint
paths)."""

from pprint import pformat


class Config:
    """
    Configuration namespace. Convert dictionary to members.
    """
    def __init__(self, cfg_dict):
        for k, v in cfg_dict.items():
            if isinstance(v, (list, tuple)):
                setattr(self, k, [Config(x) if isinstance(x, dict) else x for x in v])
            else:
                setattr(self, k, Config(v) if isinstance(v, dict) else v)

    def __str__(self):
        return pformat(self.__dict__)

    def __repr__(self):
        return self.__str__()


DEFAULTS = {
    "enable_modelarts": False,
    "data_url": "",
    "train_url": "",
    "checkpoint_url": "",
    "data_path": "/cache/data",
    "output_path": "/cache/train",
    "load_path": "/cache/checkpoint_path",
    "device_target": "CPU",
    "train_dir": "/cache/train/ckpt",
    "need_modelarts_dataset_unzip": False,
    "data_file": "",
    "batch_size": 2,
    "crop_size": 33,
    "image_mean": [103.53, 116.28, 123.675],
    "image_std": [57.375, 57.120, 58.395],
    "min_scale": 0.5,
    "max_scale": 2.0,
    "ignore_label": 255,
    "num_classes": 3,
    "train_epochs": 2,
    "lr_type": "cos",
    "base_lr": 0.015,
    "lr_decay_step": 40000,
    "lr_decay_rate": 0.1,
    "loss_scale": 3072.0,
    "model": "deeplab_v3_s16",
    "freeze_bn": False,
    "ckpt_pre_trained": "",
    "filter_weight": False,
    "is_distributed": False,
    "rank": 0,
    "group_size": 1,
    "save_steps": 2,
    "keep_checkpoint_max": 1,
    "data_root": "",
    "data_lst": "",
    "scales": [1.0],
    "scales_list": [[1.0], [0.5, 0.75, 1.0, 1.25, 1.75]],
    "scales_type": 0,
    "flip": False,
    "ckpt_path": "",
    "input_format": "NCHW",
    "device_id": 0,
    "export_batch_size": 1,
    "input_size": 513,
    "ckpt_file": "",
    "file_name": "deeplabv3",
    "file_format": "MINDIR",
    "export_model": "deeplab_v3_s8",
}

config = Config(dict(DEFAULTS))
