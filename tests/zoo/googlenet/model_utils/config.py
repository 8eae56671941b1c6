# ruff: noqa  (the model zoo's text as it is)
"""The configuration of the zoo's model_utils/config.py (its ``Config`` namespace) with the values of
cifar10_config_cpu.yaml, shrunk for the tests: 32 x 32 images (``image_height`` / ``image_width``; the yaml has
224), batch 4, 2 epochs. The yaml/argparse loading is left out (the tests set the data, checkpoint and output
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
    "need_modelarts_dataset_unzip": True,
    "modelarts_dataset_unzip_name": "cifar10",
    "dataset_name": "cifar10",
    "name": "cifar10",
    "pre_trained": False,
    "num_classes": 10,
    "lr_init": 0.1,
    "batch_size": 4,
    "epoch_size": 2,
    "momentum": 0.9,
    "weight_decay": 0.0005,
    "image_height": 32,
    "image_width": 32,
    "train_data_path": "/cache/data/cifar10/",
    "val_data_path": "/cache/data/cifar10/",
    "keep_checkpoint_max": 10,
    "checkpoint_path": "./train_googlenet_cifar10-125_390.ckpt",
    "onnx_filename": "googlenet",
    "air_filename": "googlenet",
    "ckpt_save_dir": "./ckpt/",
    "ckpt_file": "",
    "file_name": "googlenet",
    "file_format": "MINDIR",
}

config = Config(dict(DEFAULTS))
