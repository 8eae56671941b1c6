# ruff: noqa  (the model zoo's text as it is)
# Copyright 2021 Huawei Technologies Co., Ltd
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ============================================================================

"""The configuration of the zoo's model_utils/config.py (its ``Config`` namespace) with the values of
DIV2K_config.yaml, for the CPU (``device_target``) and shrunk for the tests: an EDSR x2 of 8 features and 2
residual blocks (``scale``, ``n_feats``, ``n_resblocks``), 16 x 16 HR patches (``patch_size``), 5 epochs evaluated
and saved after each (``epoch_size``, ``eval_epoch_frq``, ``save_epoch_frq``), the learning rate raised for so
short a run (``learning_rate``). The yaml/argparse loading is
left out (the tests set the data, output and checkpoint paths)."""

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
    "device_target": "CPU",
    "amp_level": "O3",
    "loss_scale": 1000.0,
    "keep_checkpoint_max": 60,
    "save_epoch_frq": 1,
    "ckpt_save_dir": "./ckpt/",
    "epoch_size": 5,
    "eval_epoch_frq": 1,
    "self_ensemble": True,
    "save_sr": True,
    "eval_type": "",
    "opt_type": "Adam",
    "weight_decay": 0.0,
    "learning_rate": 0.005,
    "milestones": [4000],
    "gamma": 0.5,
    "dataset_name": "DIV2K",
    "lr_type": "bicubic",
    "batch_size": 2,
    "patch_size": 16,
    "scale": 2,
    "dataset_sink_mode": True,
    "need_unzip_in_modelarts": False,
    "need_unzip_files": [],
    "pre_trained": "",
    "rgb_range": 255,
    "rgb_mean": [0.4488, 0.4371, 0.4040],
    "rgb_std": [1.0, 1.0, 1.0],
    "n_colors": 3,
    "n_feats": 8,
    "kernel_size": 3,
    "n_resblocks": 2,
    "res_scale": 0.1,
}

config = Config(dict(DEFAULTS))
