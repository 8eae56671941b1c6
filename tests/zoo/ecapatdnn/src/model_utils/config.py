# ruff: noqa  (the model zoo's text as it is)
# Copyright 2022 Huawei Technologies Co., Ltd
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

"""The zoo's src/model_utils/config.py ``Config`` namespace holding the values of ecapa-tdnn_config.yaml (the
yaml/argparse loading is left out: PyYAML is not installed and pytest owns the command line), for the CPU
(``device_target``) and shrunk for the tests: 16 fbank bins (``in_channels``), 32 middle channels (``channels``),
a 16-dim embedding (``emb_size``), 6 speakers (``class_num``), batches of 4 (``minibatch_size``), a cyclic LR
reaching its peak after 2 steps (``step_size``) and the learning rates raised for so short a run."""

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
    "device_id": 0,
    "run_distribute": 0,
    "in_channels": 16,
    "channels": 32,
    "base_lrate": 0.0001,
    "max_lrate": 0.01,
    "momentum": 0.95,
    "weight_decay": 0.000002,
    "num_epochs": 1,
    "minibatch_size": 4,
    "emb_size": 16,
    "step_size": 2,
    "class_num": 6,
    "pre_trained": False,
    "train_data_path": "./feat_train/",
    "keep_checkpoint_max": 2,
    "checkpoint_path": "train_ecapa_vox2_full-2_664204.ckpt",
    "ckpt_save_dir": "./ckpt/",
}

config = Config(dict(DEFAULTS))
