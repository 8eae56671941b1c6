"""The configuration of the zoo's src/model_utils/config.py (its ``Config`` namespace) with the values of
default_config.yaml, shrunk for the tests: images 32 x 48 (11 time steps after the VGG, the zoo's 32 x 100
gives 24), hidden size 16, batch 4, labels of at most 5 characters; ``model_version`` "V2" (the GPU/CPU one:
V1 is Ascend's DynamicRNN). The yaml/argparse loading is left out (the tests set the values)."""

import logging
from pprint import pformat


class Config:
    """
    Configuration namespace. Convert dictionary to members
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
    "run_distribute": False,
    "model": "lowercase",
    "model_version": "V2",
    "device_target": "CPU",
    "label_dict": "abcdefghijklmnopqrstuvwxyz0123456789",
    "train_dataset": "synth",
    "max_text_length": 5,
    "image_width": 48,
    "image_height": 32,
    "batch_size": 4,
    "epoch_size": 2,
    "hidden_size": 16,
    "learning_rate": 0.02,
    "momentum": 0.95,
    "nesterov": True,
    "save_checkpoint": True,
    "save_checkpoint_steps": 1000,
    "keep_checkpoint_max": 30,
    "per_print_time": 1,
    "class_num": 37,
    "input_size": 32,
    "num_step": 11,
    "use_dropout": True,
    "blank": 36,
    "train_dataset_path": "",
    "train_eval_dataset": "synth",
    "train_eval_dataset_path": "",
    "run_eval": False,
    "eval_all_saved_ckpts": False,
    "save_best_ckpt": True,
    "eval_start_epoch": 1,
    "eval_interval": 1,
    "resume_ckpt": "",
    "train_start_epoch": 0,
    "eval_dataset": "synth",
    "eval_dataset_path": "",
    "checkpoint_path": "",
    # export.py's (and its ModelArts wrapper's: moxing_adapter.py, device_adapter.py)
    "enable_modelarts": False,
    "data_url": "",
    "train_url": "",
    "checkpoint_url": "",
    "data_path": "/cache/data",
    "output_path": "/cache/train",
    "load_path": "/cache/checkpoint_path",
    "enable_profiling": False,
    "ckpt_file": "",
    "file_name": "crnn",
    "file_format": "MINDIR",
}

config = Config(DEFAULTS)
config.logger = logging.getLogger("crnn")
