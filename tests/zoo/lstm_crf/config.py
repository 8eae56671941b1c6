# ruff: noqa  (the model zoo's text as it is)
"""default_config.yaml's values as the namespace model_utils/config.py builds (nested dictionaries become
namespaces too), shrunk (embed_size, num_hiddens, batch_size, num_epochs)."""
from types import SimpleNamespace

config = SimpleNamespace(
    enable_modelarts=False,
    data_path="./data",
    output_path="./output/train",
    load_path="./output/checkpoint_path",
    checkpoint_path="./checkpoint/",
    checkpoint_file="./checkpoint/lstm_crf.ckpt",
    device_target="CPU",
    device_id=1,
    enable_profiling=False,
    ckpt_save_path="../ckpt_lstm_crf",
    num_epochs=4,
    batch_size=8,
    embed_size=8,
    num_hiddens=12,
    num_layers=2,
    bidirectional=True,
    keep_checkpoint_max=20,
    dropout=0.5,
    build_data=False,
    optimizer="AdamWeightDecay",
    AdamWeightDecay=SimpleNamespace(
        warmup_steps=1000,
        beta1=0.9,
        beta2=0.99,
        learning_rate=0.002 * 10,  # ten times the zoo's: a few epochs on the synthetic set
        end_learning_rate=0.0000000001,
        power=1.0,
        weight_decay=0.00001,
        decay_filter=["layernorm", "bias"],
        eps=0.000001,
    ),
    preprocess="false",
    data_CoNLL_path="../data/CoNLL2000",
    glove_path="../data/glove",
    preprocess_path="/preprocess",
    ckpt_path="lstm_crf-15_446.ckpt",
    pre_trained="",
    device_num=1,
    enable_graph_kernel="true",
    ckpt_file="./ckpt_lstm/lstm_crf.ckpt",
    file_name="lstm_crf",
    file_format="MINDIR",
)
