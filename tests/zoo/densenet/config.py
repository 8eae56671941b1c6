# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's src/model_utils/config.py (its ``Config`` namespace) with the values of
densenet121_config.yaml, shrunk for the tests: images 32 x 32 (``image_size``; the yaml has 224), 10 classes,
batch 4, 2 epochs, the CPU target, a checkpoint every 2 steps. The yaml/argparse loading is left out (the
tests set the values: the data, checkpoint and log paths)."""

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
    "load_path": "/cache/checkpoint_path/",
    "device_target": "CPU",
    "enable_profiling": False,
    "net": "densenet121",
    "dataset": "imagenet",
    "is_distributed": 0,
    "rank": 0,
    "group_size": 1,
    "train_data_dir": "",
    "train_pretrained": "",
    "model_train_url": "",
    "image_size": "32, 32",
    "num_classes": 10,
    "lr": 0.1,
    "lr_scheduler": "cosine_annealing",
    "lr_epochs": "30, 60, 90, 120",
    "lr_gamma": 0.1,
    "eta_min": 0,
    "T_max": 120,
    "max_epoch": 2,
    "per_batch_size": 4,
    "warmup_epochs": 0,
    "weight_decay": 0.0001,
    "momentum": 0.9,
    "is_dynamic_loss_scale": 0,
    "loss_scale": 1024,
    "label_smooth": 0,
    "label_smooth_factor": 0.1,
    "log_interval": 100,
    "ckpt_interval": 2,
    "save_ckpt_path": "./",
    "is_save_on_master": 1,
    "eval_data_dir": "",
    "backbone": "resnet50",
    "ckpt_files": "",
    "log_path": "",
    "eval_url": "",
    "device_id": 0,
    "batch_size": 4,
    "file_name": "densenet",
    "file_format": "MINDIR",
}

config = Config(dict(DEFAULTS))
