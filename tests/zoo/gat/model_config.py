# ruff: noqa  (the model zoo's text as it is)
"""default_config.yaml's values as the namespace src/model_utils/config.py builds (the tests set the node
counts and the epochs for their small graphs)."""
from types import SimpleNamespace

config = SimpleNamespace(
    enable_modelarts=False,
    data_url="",
    train_url="",
    checkpoint_url="",
    data_path="/cache/data",
    output_path="/cache/train",
    load_path="/cache/checkpoint_path",
    device_target="Ascend",
    enable_profiling=False,
    lr=0.005,
    num_epochs=200,
    hid_units=[8],
    n_heads=[8, 1],
    early_stopping=100,
    l2_coeff=0.0005,
    attn_dropout=0.6,
    feature_dropout=0.6,
    data_dir="/cache/data",
    train_nodes_num=140,
    eval_nodes_num=500,
    test_nodes_num=1000,
    device_id=0,
    ckpt_file='',
    dataset="cora",
    file_name="gat",
    file_format='MINDIR',
)
