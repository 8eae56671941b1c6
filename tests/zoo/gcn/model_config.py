# ruff: noqa  (the model zoo's text as it is)
"""default_config.yaml's values as the namespace model_utils/config.py builds (the node counts set by the
tests for their small graphs), and model_utils/local_adapter.py's get_device_id / get_device_num."""
import os
from types import SimpleNamespace

config = SimpleNamespace(
    enable_modelarts=False,
    data_url="",
    train_url="",
    checkpoint_url="",
    data_path="/cache/data",
    output_path="/cache/train",
    load_path="/cache/checkpoint_path",
    device_target="CPU",
    need_modelarts_dataset_unzip=False,
    modelarts_dataset_unzip_name="",
    data_dir="./data/cora/cora_mr",
    train_nodes_num=140,
    eval_nodes_num=500,
    test_nodes_num=1000,
    save_TSNE=False,
    save_ckptpath="ckpts/",
    train_with_eval=False,
    eval_start_epoch=1,
)


def get_device_id():
    device_id = os.getenv('DEVICE_ID', '0')
    return int(device_id)


def get_device_num():
    device_num = os.getenv('RANK_SIZE', '1')
    return int(device_num)
