# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's src/model_utils/config.py (its ``Config`` namespace) with the values of
default_config.yaml (CIFAR-10), shrunk for the tests: batch 4, 2 epochs, the CPU target (train.py"s
``train_alexnet`` runs on Ascend or GPU only; the tests build its CIFAR-10 model on the CPU). The yaml/argparse
loading is left out (the tests set the data and checkpoint paths)."""

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
    "checkpoint_path": "./checkpoint/",
    "checkpoint_file": "./checkpoint/checkpoint_alexnet-30_1562.ckpt",
    "device_target": "CPU",
    "enable_profiling": False,
    "num_parallel_workers": 8,
    "ckpt_path": "/cache/train",
    "ckpt_file": "/cache/train/checkpoint_alexnet-30_1562.ckpt",
    "epoch_size": 2,
    "keep_checkpoint_max": 10,
    "num_classes": 10,
    "learning_rate": 0.002,
    "momentum": 0.9,
    "batch_size": 4,
    "buffer_size": 1000,
    "image_height": 227,
    "image_width": 227,
    "save_checkpoint_steps": 1562,
    "air_name": "alexnet.air",
    "dataset_name": "cifar10",
    "sink_size": -1,
    "dataset_sink_mode": True,
    "device_id": 0,
    "save_checkpoint": True,
    "save_checkpoint_epochs": 2,
    "lr": 0.01,
    "model_name": "alexnet",
    "file_name": "alexnet",
    "file_format": "MINDIR",
}

config = Config(dict(DEFAULTS))
