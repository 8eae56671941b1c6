# ruff: noqa  (the model zoo's text as it is)
"""eval.py's eval_net without its ModelArts wrapper; it returns the accuracy it prints."""
import opforge as ms
import opforge.nn as nn
from opforge.nn.metrics import Accuracy
from opforge.train.model import Model

from zoo.textcnn.config import config, get_device_id
from zoo.textcnn.textcnn import TextCNN
from zoo.textcnn.dataset import MovieReview, SST2, Subjectivity


def eval_net():
    '''eval net'''
    if config.dataset == 'MR':
        instance = MovieReview(root_dir=config.data_path, maxlen=config.word_len, split=0.9)
    elif config.dataset == 'SUBJ':
        instance = Subjectivity(root_dir=config.data_path, maxlen=config.word_len, split=0.9)
    elif config.dataset == 'SST2':
        instance = SST2(root_dir=config.data_path, maxlen=config.word_len, split=0.9)
    device_target = config.device_target
    ms.set_context(mode=ms.GRAPH_MODE, device_target=config.device_target)
    if device_target == "Ascend":
        ms.set_context(device_id=get_device_id())
    dataset = instance.create_test_dataset(batch_size=config.batch_size)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
    net = TextCNN(vocab_len=instance.get_dict_len(), word_len=config.word_len,
                  num_classes=config.num_classes, vec_length=config.vec_length)
    opt = nn.Adam(filter(lambda x: x.requires_grad, net.get_parameters()), learning_rate=0.001,
                  weight_decay=float(config.weight_decay))

    param_dict = ms.load_checkpoint(config.checkpoint_file_path)
    print("load checkpoint from [{}].".format(config.checkpoint_file_path))

    ms.load_param_into_net(net, param_dict)
    net.set_train(False)
    model = Model(net, loss_fn=loss, optimizer=opt, metrics={'acc': Accuracy()})

    acc = model.eval(dataset)
    print("accuracy: ", acc)
    return acc
