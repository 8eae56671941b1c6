# ruff: noqa  (the model zoo's text as it is)
"""mr_config_cpu.yaml's values as the namespace model_utils/config.py builds, shrunk (word_len, vec_length,
batch, epochs)."""
from types import SimpleNamespace

config = SimpleNamespace(
    enable_modelarts=False,
    data_path="./data",
    output_path="./train",
    load_path="./checkpoint_path/",
    device_target="CPU",
    enable_profiling=False,
    dataset='MR',
    pre_trained=False,
    num_classes=2,
    batch_size=16,
    epoch_size=5,
    sink_size=-1,
    weight_decay=3e-5,
    keep_checkpoint_max=1,
    checkpoint_path="./checkpoint/",
    checkpoint_file_path="./train/checkpoint/train_textcnn-5_6.ckpt",
    word_len=12,
    vec_length=8,
    base_lr=1e-2,
    device_id=0,
    file_name="textcnn",
    file_format="MINDIR",
)


def get_device_id():
    return config.device_id


def get_rank_id():
    return 0
