# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's model_utils/config.py (its ``Config`` namespace) with the values of
squeezenet_cpu_config.yaml (ImageNet-style image folders, 5 classes), shrunk for the tests: batch 2, 2 epochs. The yaml/argparse loading is left out (the tests set the
data, output and checkpoint paths)."""

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
    "enable_profiling": False,
    "checkpoint_path": "./checkpoint/",
    "checkpoint_file_path": "",
    "net_name": "squeezenet",
    "dataset": "imagenet",
    "class_num": 5,
    "batch_size": 2,
    "loss_scale": 1024,
    "momentum": 0.9,
    "weight_decay": 7e-05,
    "epoch_size": 2,
    "pretrain_epoch_size": 0,
    "save_checkpoint": True,
    "save_checkpoint_epochs": 1,
    "keep_checkpoint_max": 10,
    "warmup_epochs": 0,
    "lr_decay_mode": "poly",
    "use_label_smooth": True,
    "label_smooth_factor": 0.1,
    "lr_init": 0,
    "lr_end": 0,
    "lr_max": 0.01,
    "pre_trained": "",
    "run_distribute": False,
    "device_num": 1,
    "width": 227,
    "height": 227,
    "file_name": "squeezenet",
    "file_format": "MINDIR",
}

config = Config(dict(DEFAULTS))
