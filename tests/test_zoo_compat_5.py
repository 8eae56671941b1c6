"""What the model zoo's Transformer (tests/zoo/transformer, tests/test_zoo_transformer.py) needed of opforge, one
focused check each: ``dataset.transforms.transforms`` (MindSpore 2.x's module path), ``Cell.add_flags`` /
``add_flags_recursive`` / ``get_flags``, parameter names that run through ``auto_prefix=False`` cells (as
MindSpore's ``update_parameters_name``), ``ops.identity`` (its argument itself), ``ops.AssignAdd`` /
``ops.assign_add``, and ``self.param = tensor`` in a construct (the Parameter takes the value)."""

import numpy as np
import pytest

import opforge
import opforge.dataset as de
from opforge import Parameter, Tensor, nn, ops
from opforge.common import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import operations as P

# ---------------------------------------------------------------------------------------------
# dataset.transforms.transforms


def test_dataset_transforms_transforms_module_is_the_transforms():
    mod = de.transforms.transforms
    assert mod.TypeCast is de.transforms.TypeCast and mod.Compose is de.transforms.Compose
    from opforge.dataset.transforms.transforms import OneHot, TypeCast

    assert OneHot is de.transforms.OneHot
    out = TypeCast(mstype.int32)(np.array([1, 2], np.int64))
    assert out.dtype == np.int32 and out.tolist() == [1, 2]

    def rows():
        for i in range(3):
            yield (np.array([i, i + 1], np.int64),)

    data = de.GeneratorDataset(rows, column_names=["ids"], shuffle=False)
    data = data.map(operations=mod.TypeCast(mstype.int32), input_columns="ids").batch(3)
    batch = next(data.create_tuple_iterator(output_numpy=True))[0]
    assert batch.dtype == np.int32 and batch.tolist() == [[0, 1], [1, 2], [2, 3]]


# ---------------------------------------------------------------------------------------------
# Cell.add_flags


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(2, 2)

    def construct(self, x):
        return self.fc(x)


def test_cell_add_flags_records_sets_attributes_and_returns_the_cell():
    net = _Net()
    assert net.get_flags() == {}
    assert net.add_flags(loop_can_unroll=True, sink_mode=False) is net
    assert net.get_flags() == {"loop_can_unroll": True, "sink_mode": False}
    assert net.loop_can_unroll is True and net.sink_mode is False
    assert net.fc.get_flags() == {}
    assert net.add_flags_recursive(defer_inline=True) is net
    assert net.fc.defer_inline is True and net.get_flags()["defer_inline"] is True
    x = Tensor(np.ones((1, 2), np.float32))
    np.testing.assert_allclose(net(x).asnumpy(), net.fc(x).asnumpy())  # flags change nothing


# ---------------------------------------------------------------------------------------------
# parameter names through auto_prefix=False cells


class _NoPrefix(nn.Cell):
    def __init__(self, inner):
        super().__init__(auto_prefix=False)
        self.inner = inner
        self.scale = Parameter(Tensor(np.ones(1, np.float32)), name="scale")

    def construct(self, x):
        return self.inner(x) * self.scale


def test_parameter_names_take_the_full_path_through_auto_prefix_false_cells():
    wrapper = _NoPrefix(_Net())
    # the wrapper does not rename what is assigned to it
    assert [p.name for p in wrapper.trainable_params()] == ["scale", "fc.weight", "fc.bias"]

    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = _NoPrefix(_Net())

    # an auto-prefix cell above renames every parameter to its attribute path, the wrapper's names included
    names = [p.name for p in Outer().trainable_params()]
    assert names == ["block.scale", "block.inner.fc.weight", "block.inner.fc.bias"]


def test_a_shared_parameter_takes_its_first_path_and_wrappers_keep_names():
    class Step(nn.Cell):
        def __init__(self, embedding):
            super().__init__(auto_prefix=False)
            self.embedding = embedding

    class Model(nn.Cell):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(5, 3)
            self.decoder = Step(self.embedding)

    model = Model()
    # the decoder's assignment came last, so the table is named for its path there (MindSpore's rule)
    assert [p.name for p in model.trainable_params()] == ["decoder.embedding.embedding_table"]
    net = _Net()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    nn.TrainOneStepCell(loss_net, nn.SGD(net.trainable_params(), 0.1))
    assert [p.name for p in net.trainable_params()] == ["fc.weight", "fc.bias"]


# ---------------------------------------------------------------------------------------------
# ops.identity


def test_identity_returns_its_argument_itself():
    x = Tensor(np.arange(3, dtype=np.float32))
    grads = (x, Tensor(np.ones(2, np.float32)))
    for identity in (ops.identity, F.identity, P.identity()):
        assert identity(x) is x
        assert identity(grads) is grads
        assert identity(None) is None
    assert isinstance(ops.identity, P.identity)
    # Identity, the operator, makes a new Tensor of the same values
    y = ops.Identity()(x)
    assert y is not x
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


# ---------------------------------------------------------------------------------------------
# AssignAdd


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_assign_add_adds_in_place_against_numpy(dtype):
    rng = np.random.default_rng(0)
    start = (rng.standard_normal((2, 3)) * 10).astype(dtype) if dtype != np.uint8 else np.arange(6, dtype=dtype)
    start = start.reshape(2, 3)
    value = np.arange(6).reshape(2, 3).astype(dtype)
    variable = Parameter(Tensor(start.copy()), name="v")
    out = ops.assign_add(variable, Tensor(value))
    assert out is variable
    np.testing.assert_array_equal(variable.asnumpy(), start + value)
    P.AssignAdd()(variable, 2)  # a number: converted to the variable's dtype
    np.testing.assert_array_equal(variable.asnumpy(), start + value + dtype(2))
    assert variable.dtype == mstype.to_dtype(dtype) and variable.shape == (2, 3)


def test_assign_add_casts_a_narrower_value_and_steps_a_counter_under_jit():
    variable = Parameter(Tensor(np.zeros(2, np.float32)), name="acc")
    ops.AssignAdd()(variable, Tensor(np.array([1.5, -2.0], np.float16)))
    np.testing.assert_array_equal(variable.asnumpy(), [1.5, -2.0])
    ops.assign_add(variable, 1.0)
    np.testing.assert_array_equal(variable.asnumpy(), [2.5, -1.0])

    class Counter(nn.Cell):
        def __init__(self):
            super().__init__()
            self.step = Parameter(Tensor(np.zeros(1, np.int32)), name="global_step", requires_grad=False)
            self.assign_add = P.AssignAdd()
            self.one = Tensor(np.ones(1, np.int32))

        def construct(self, x):
            self.assign_add(self.step, self.one)
            return x * 2

    eager, graph = Counter(), Counter()
    jitted = opforge.jit(graph.construct)
    for _ in range(3):
        eager(Tensor(np.ones(1, np.float32)))
        jitted(Tensor(np.ones(1, np.float32)))
    assert eager.step.asnumpy().tolist() == [3] and graph.step.asnumpy().tolist() == [3]


def test_assign_add_rejects_bad_inputs():
    variable = Parameter(Tensor(np.zeros(2, np.int32)), name="v")
    with pytest.raises(TypeError, match="For 'AssignAdd', the 'variable' is written in place, so it must be a Par"):
        ops.assign_add(Tensor(np.zeros(2, np.int32)), 1)
    with pytest.raises(ValueError, match=r"For 'AssignAdd', the 'value' must have the shape of 'variable' \[2\]"):
        ops.assign_add(variable, Tensor(np.zeros(3, np.int32)))
    with pytest.raises(TypeError, match=r"the 'value' \(Int64\) cannot be cast losslessly to Int32"):
        ops.assign_add(variable, Tensor(np.zeros(2, np.int64)))
    with pytest.raises(TypeError, match=r"the 'value' \(float\) cannot be cast losslessly to Int32"):
        ops.AssignAdd()(variable, 0.5)
    with pytest.raises(TypeError, match="For 'AssignAdd', the 'value' must be a Number or a Tensor, but got list"):
        ops.assign_add(variable, [1, 2])
    flags = Parameter(Tensor(np.zeros(2, np.bool_)), name="flags")
    with pytest.raises(TypeError, match="For 'AssignAdd', the dtype of 'variable' must be a number type"):
        ops.assign_add(flags, True)
    assert variable.asnumpy().tolist() == [0, 0]


# ---------------------------------------------------------------------------------------------
# self.param = tensor


class _Accumulate(nn.Cell):
    """The zoo's gradient-accumulation cell's pattern: Parameters reassigned from Tensors in construct."""

    def __init__(self):
        super().__init__()
        self.local_step = Parameter(Tensor(np.zeros(1, np.int32)), name="local_step", requires_grad=False)
        self.accu_loss = Parameter(Tensor(np.zeros(1, np.float32)), name="accu_loss", requires_grad=False)
        self.select = ops.Select()
        self.one = Tensor(np.ones(1, np.int32))

    def construct(self, loss, keep):
        self.local_step = self.select(keep, self.local_step + self.one, self.one)
        self.accu_loss = self.select(keep, self.accu_loss + loss, loss)
        return self.accu_loss / self.local_step


def test_assigning_a_tensor_to_a_parameter_attribute_updates_it_eager_and_jit():
    losses = [2.0, 4.0, 6.0, 1.0]
    keeps = [False, True, True, False]
    eager, graph = _Accumulate(), _Accumulate()
    jitted = opforge.jit(graph.construct)
    means, step, total = [], 0, 0.0
    for loss, keep in zip(losses, keeps):
        step, total = (step + 1, total + loss) if keep else (1, loss)
        means.append(total / step)
        args = (Tensor(np.array([loss], np.float32)), Tensor(np.array([keep])))
        np.testing.assert_allclose(eager(*args).asnumpy(), [means[-1]], rtol=1e-6)
        np.testing.assert_allclose(jitted(*args).asnumpy(), [means[-1]], rtol=1e-6)
    for cell in (eager, graph):
        assert isinstance(cell.local_step, Parameter) and cell.local_step.asnumpy().tolist() == [1]
        assert cell.accu_loss.asnumpy().tolist() == [1.0]
        assert [p.name for p in cell.get_parameters()] == ["local_step", "accu_loss"]


def test_assigning_a_parameter_attribute_rejects_other_values():
    cell = _Accumulate()
    with pytest.raises(TypeError, match="the attribute 'local_step' is a Parameter; assign a Parameter, a Tensor"):
        cell.local_step = 3
    with pytest.raises(ValueError, match="shape"):
        cell.local_step = Tensor(np.zeros(2, np.int32))
    cell.local_step = None
    assert "local_step" not in dict(cell.parameters_and_names())
