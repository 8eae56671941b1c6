"""``opforge.dataset.GraphData`` on a small graph written with the model zoo's graph converter schema
(tests/zoo/graph_to_mindrecord/graph_map_schema.py's ``GraphMapSchema``, opforge's ``FileWriter``): its answers
checked against the edge list and features the test wrote (NumPy adjacency, hand-computed expectations), the
sampling against its definition (subsets, frequencies), seeded by ``ds.config.set_seed``."""

import numpy as np
import pytest
from zoo.graph_to_mindrecord.graph_map_schema import GraphMapSchema

import opforge.dataset as ds
from opforge.dataset import OutputFormat, SamplingStrategy
from opforge.mindrecord import FileWriter

USERS = [10, 11, 12, 13, 14, 15]  # node type 0
ITEMS = [100, 101, 102, 103]  # node type 1
# user -> item edges (type 0), with weights; 15 has none
RATINGS = [(10, 100, 1.0), (10, 101, 2.0), (10, 103, 5.0), (11, 100, 1.0), (12, 102, 1.0), (12, 103, 3.0),
           (13, 101, 1.0), (14, 100, 1.0), (14, 101, 1.0), (14, 102, 1.0), (14, 103, 0.0)]  # fmt: skip
FRIENDS = [(10, 11), (11, 10), (11, 12), (12, 13), (13, 14), (14, 10), (10, 12), (12, 11)]  # user -> user (type 2)


def _edges():
    """(id, src, dst, type, weight): the ratings, the items' edges back (type 1), the friendships."""
    rows = [(s, d, 0, w) for s, d, w in RATINGS] + [(d, s, 1, 1.0) for s, d, _ in RATINGS]
    rows += [(s, d, 2, 1.0) for s, d in FRIENDS]
    return [(k + 1, s, d, t, w) for k, (s, d, t, w) in enumerate(rows)]


def _user_feature(v):
    return [v / 10.0, v / 100.0, -1.0]


def _item_feature(v):
    return [0.5, v / 1000.0, 2.0]


def _write(path, shard_num=1):
    schema = GraphMapSchema()
    schema.set_node_feature_profile(2, ["float32", "int32"], [[-1], [-1]])
    schema.set_edge_feature_profile(1, ["float32"], [[-1]])
    nodes = [{"id": v, "type": 0, "feature_1": _user_feature(v), "feature_2": v % 3} for v in USERS]
    nodes += [{"id": v, "type": 1, "feature_1": _item_feature(v)} for v in ITEMS]  # no label (feature 2)
    edges = []
    for e, s, d, t, w in _edges():
        edge = {"id": e, "src_id": s, "dst_id": d, "type": t, "weight": w}
        if t == 0:
            edge["feature_1"] = [w, float(e)]
        edges.append(edge)
    writer = FileWriter(str(path), shard_num)
    writer.add_schema(schema.get_schema, "mindrecord_graph_schema")
    writer.write_raw_data([schema.transform_node(n) for n in nodes])
    writer.write_raw_data([schema.transform_edge(e) for e in edges])
    writer.commit()
    return str(path) if shard_num == 1 else str(path) + "0"


@pytest.fixture
def graph(tmp_path):
    ds.config.set_seed(7)
    return ds.GraphData(_write(tmp_path / "graph_mr"))


def _neighbors(v, node_type):
    """v's neighbours of node type ``node_type``, in edge order (the expectation, from the edge list)."""
    kinds = {u: 0 for u in USERS} | {u: 1 for u in ITEMS}
    return [d for _, s, d, _, _ in _edges() if s == v and kinds[d] == node_type]


def test_nodes_edges_and_graph_info(graph):
    assert graph.graph_info() == {
        "node_type": [0, 1],
        "edge_type": [0, 1, 2],
        "node_num": {0: 6, 1: 4},
        "edge_num": {0: 11, 1: 11, 2: 8},
        "node_feature_type": [1, 2],
        "edge_feature_type": [1],
    }
    users = graph.get_all_nodes(0)
    assert users.dtype == np.int32 and users.tolist() == USERS
    assert graph.get_all_nodes(1).tolist() == ITEMS
    edges = _edges()
    assert graph.get_all_edges(2).tolist() == [e for e, _, _, t, _ in edges if t == 2]
    ids = np.array([e for e, *_ in edges], np.int32)
    pairs = graph.get_nodes_from_edges(ids)
    assert pairs.dtype == np.int32 and pairs.tolist() == [[s, d] for _, s, d, _, _ in edges]
    found = graph.get_edges_from_nodes([(10, 103), (103, 10), (14, 10), (10, 14)])
    assert found.tolist() == [3, 14, 28, -1]  # no edge from 10 to 14
    assert graph.get_edges_from_nodes(np.array([[12, 13]], np.int32)).tolist() == 26  # one: squeezed to 0-d


def test_all_neighbors_normal_coo_csr_match_the_adjacency(graph):
    users = graph.get_all_nodes(0)
    table = graph.get_all_neighbors(users, 1)
    lists = [_neighbors(v, 1) for v in USERS]
    width = 1 + max(map(len, lists))
    expected = np.array([[v, *n] + [-1] * (width - 1 - len(n)) for v, n in zip(USERS, lists)], np.int32)
    assert table.dtype == np.int32
    np.testing.assert_array_equal(table, expected)
    # the adjacency rebuilt from the table, as the zoo's GCN does, is the one of the edge list
    index = {v: k for k, v in enumerate(USERS + ITEMS)}
    adj = np.zeros((10, 10))
    for row in table:
        for u in row[1:]:
            if u >= 0:
                adj[index[row[0]], index[u]] = 1
    reference = np.zeros((10, 10))
    for s, d, _ in RATINGS:
        reference[index[s], index[d]] = 1
    np.testing.assert_array_equal(adj, reference)

    coo = graph.get_all_neighbors(users, 1, OutputFormat.COO)
    assert coo.tolist() == [[v, u] for v, n in zip(USERS, lists) for u in n]
    offsets, flat = graph.get_all_neighbors(users, 1, OutputFormat.CSR)
    assert offsets.tolist() == np.concatenate([[0], np.cumsum(list(map(len, lists)))[:-1]]).tolist()
    assert flat.tolist() == [u for n in lists for u in n]
    # friends: neighbours of the user type; one node gives 1-D, one without any a 0-d array
    assert graph.get_all_neighbors([11], 0).tolist() == [11, 10, 12]
    assert graph.get_all_neighbors([15], 0).tolist() == 15
    assert graph.get_all_neighbors(np.array([100, 103], np.int32), 0).tolist() == [[100, 10, 11, 14], [103, 10, 12, 14]]


def test_node_and_edge_features(graph):
    features, labels = graph.get_node_feature(USERS, [1, 2])
    assert features.dtype == np.float32 and labels.dtype == np.int32
    np.testing.assert_allclose(features, np.array([_user_feature(v) for v in USERS], np.float32))
    assert labels.tolist() == [v % 3 for v in USERS]  # the [1]-shaped label squeezed away
    # a table of neighbours (with -1 padding) reads as its shape, the padding and the items' missing label as 0
    table = graph.get_all_neighbors(graph.get_all_nodes(0), 1)
    feats, labs = graph.get_node_feature(table, [1, 2])
    assert feats.shape == table.shape + (3,) and labs.shape == table.shape
    for (i, j), v in np.ndenumerate(table):
        want = np.zeros(3) if v < 0 else _user_feature(v) if v in USERS else _item_feature(v)
        np.testing.assert_allclose(feats[i, j], np.float32(want))
        assert labs[i, j] == (v % 3 if v in USERS else 0)
    (one,) = graph.get_node_feature([12], [1])
    assert one.shape == (3,)
    edges = graph.get_all_edges(0)
    (values,) = graph.get_edge_feature(edges, [1])
    assert values.tolist() == [[w, float(e)] for e, _, _, t, w in _edges() if t == 0]
    (missing,) = graph.get_edge_feature(np.array([1, -1, 12], np.int32), [1])  # 12: type 1, no feature
    assert missing.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


def test_sampled_neighbors_random(graph):
    users = np.array(USERS, np.int32)
    out = graph.get_sampled_neighbors(users, [2, 3], [1, 0])
    assert out.dtype == np.int32 and out.shape == (6, 1 + 2 + 2 * 3)
    for row, v in zip(out, USERS):
        assert row[0] == v
        hop1, hop2 = row[1:3], row[3:].reshape(2, 3)
        items = _neighbors(v, 1)
        if not items:  # 15: no item, so -1s, and -1s for their samples
            assert (hop1 == -1).all() and (hop2 == -1).all()
            continue
        if len(items) >= 2:  # RANDOM takes distinct neighbours while there are enough
            assert len(set(hop1.tolist())) == 2
        assert set(hop1.tolist()) <= set(items)
        for item, users_of_item in zip(hop1, hop2):
            back = _neighbors(int(item), 0)
            assert set(users_of_item.tolist()) <= set(back)
            if len(back) >= 3:
                assert len(set(users_of_item.tolist())) == 3
    # more samples than neighbours: every neighbour in each round of len(neighbours)
    many = graph.get_sampled_neighbors([11], [7], [0])  # 11's friends: 10, 12
    assert many.shape == (8,) and many[7] in (10, 12)
    for k in (1, 3, 5):
        assert sorted(many[k : k + 2].tolist()) == [10, 12]
    # the sampling order is random
    draws = {tuple(graph.get_sampled_neighbors([14], [4], [1])[1:].tolist()) for _ in range(30)}
    assert len(draws) > 5 and all(sorted(d) == ITEMS for d in draws)


def test_sampled_neighbors_edge_weight_frequencies(graph):
    # at most as many samples per node as the graph has nodes (MindSpore's check): many nodes of 10 draws
    out = graph.get_sampled_neighbors([10, 14] * 400, [10], [1], SamplingStrategy.EDGE_WEIGHT)
    assert out.shape == (800, 11)
    of_10, of_14 = out[0::2, 1:], out[1::2, 1:]
    np.testing.assert_allclose([np.mean(of_10 == u) for u in (100, 101, 103)], [1 / 8, 2 / 8, 5 / 8], atol=0.03)
    assert set(of_10.ravel().tolist()) == {100, 101, 103}
    assert 103 not in of_14  # weight 0: never drawn
    np.testing.assert_allclose([np.mean(of_14 == u) for u in (100, 101, 102)], [1 / 3] * 3, atol=0.03)


def test_sampling_is_seeded_by_the_dataset_seed(tmp_path):
    path = _write(tmp_path / "graph_mr")

    def draws(seed):
        ds.config.set_seed(seed)
        g = ds.GraphData(path)
        return (
            g.get_sampled_neighbors(USERS, [3, 2], [1, 0]).tolist(),
            g.get_neg_sampled_neighbors(USERS, 2, 1).tolist(),
            g.random_walk(USERS[:5], [1, 0, 1, 0]).tolist(),
        )

    assert draws(3) == draws(3)
    assert draws(3) != draws(4)


def test_negative_sampling(graph):
    out = graph.get_neg_sampled_neighbors(USERS, 1, 1)
    assert out.shape == (6, 2) and out[:, 0].tolist() == USERS
    for v, neg in zip(USERS, out[:, 1]):
        allowed = set(ITEMS) - set(_neighbors(v, 1))
        assert (neg == -1) if not allowed else (int(neg) in allowed)
    assert out[4, 1] == -1  # 14 rated every item
    # users: the samples are other users that are not friends
    friends = graph.get_neg_sampled_neighbors([11, 11, 11], 3, 0)
    for row in friends:
        assert 11 not in row[1:] and not set(row[1:].tolist()) & {10, 12}
        assert set(row[1:].tolist()) <= {13, 14, 15}
    # a node of the other type has no neighbour of that type: any node of it but itself
    items = graph.get_neg_sampled_neighbors(ITEMS, 3, 1)
    for row in items:
        assert len(set(row[1:].tolist())) == 3 and int(row[0]) not in row[1:]


def test_random_walk_follows_the_meta_path(graph):
    walks = graph.random_walk(USERS, [1, 0, 1, 0, 1])
    assert walks.shape == (6, 6) and walks.dtype == np.int32
    for walk in walks:
        for step, (a, b) in enumerate(zip(walk[:-1], walk[1:])):
            if a == -1:
                assert b == -1
            elif b != -1:
                assert int(b) in _neighbors(int(a), [1, 0, 1, 0, 1][step])
    assert walks[5].tolist() == [15, -1, -1, -1, -1, -1]  # 15 rated nothing
    assert graph.random_walk([15], [1, 0], default_node=99).tolist() == [15, 99, 99]


def _second_steps(graph, start, path, p, q, n=3000):
    walks = graph.random_walk([start] * n, path, p, q)
    return walks[:, 1], walks[:, 2]


def _node2vec(previous, current, path, p, q):
    """MindSpore's weights of the step after previous -> current: current's neighbours of type path[1],
    sorted; back to previous 1/p, a neighbour of previous (of type path[0]) 1, any other 1/q."""
    choices = sorted(_neighbors(current, path[1]))
    near = set(_neighbors(previous, path[0]))
    w = np.array([1 / p if u == previous else 1.0 if u in near else 1 / q for u in choices])
    return choices, w / w.sum()


def test_random_walk_node2vec_probabilities(graph):
    p, q = 0.5, 4.0
    # friends (one node type, node2vec's usual walk): 10 -> 11 or 12 uniformly, then 1/p, 1 or 1/q
    second, third = _second_steps(graph, 10, [0, 0], p, q)
    np.testing.assert_allclose([np.mean(second == u) for u in (11, 12)], [0.5, 0.5], atol=0.04)
    for current in (11, 12):
        choices, want = _node2vec(10, current, [0, 0], p, q)
        got = [np.mean(third[second == current] == u) for u in choices]
        np.testing.assert_allclose(got, want, atol=0.05)
    # user -> item -> user: the first step uniform over 10's items
    second, third = _second_steps(graph, 10, [1, 0], p, q)
    np.testing.assert_allclose([np.mean(second == u) for u in (100, 101, 103)], [1 / 3] * 3, atol=0.04)
    for item in (100, 101, 103):
        choices, want = _node2vec(10, item, [1, 0], p, q)
        got = [np.mean(third[second == item] == u) for u in choices]
        np.testing.assert_allclose(got, want, atol=0.06)


def test_multi_shard_dataset_is_read_whole(tmp_path):
    ds.config.set_seed(1)
    g = ds.GraphData(_write(tmp_path / "sharded_mr", shard_num=2))
    assert sorted(g.get_all_nodes(0).tolist()) == USERS and sorted(g.get_all_nodes(1).tolist()) == ITEMS
    assert g.graph_info()["edge_num"] == {0: 11, 1: 11, 2: 8}
    assert sorted(g.get_all_neighbors([10], 1)[1:].tolist()) == sorted(_neighbors(10, 1))


def test_argument_checks(graph, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        ds.GraphData(str(tmp_path / "missing"))
    path = graph._dataset_file
    with pytest.raises(ValueError, match="working_mode"):
        ds.GraphData(path, working_mode="remote")
    with pytest.raises(NotImplementedError, match="server"):
        ds.GraphData(path, working_mode="server")
    with pytest.raises(NotImplementedError, match="client"):
        ds.GraphData(path, working_mode="client")
    with pytest.raises(ValueError, match="port"):
        ds.GraphData(path, port=80)
    with pytest.raises(ValueError, match="num_client"):
        ds.GraphData(path, num_client=0)
    with pytest.raises(TypeError, match="num_parallel_workers"):
        ds.GraphData(path, num_parallel_workers=1.0)
    with pytest.raises(TypeError, match="auto_shutdown"):
        ds.GraphData(path, auto_shutdown=1)
    with pytest.raises(ValueError, match="hostname"):
        ds.GraphData(path, hostname="bad host")
    with pytest.raises(TypeError, match="node_type"):
        graph.get_all_nodes(True)
    with pytest.raises(RuntimeError, match="node type 5"):
        graph.get_all_nodes(5)
    with pytest.raises(TypeError, match="int32"):
        graph.get_all_neighbors(np.array(USERS, np.int64), 1)
    with pytest.raises(TypeError, match="node_list"):
        graph.get_all_neighbors([10, 1.5], 1)
    with pytest.raises(TypeError, match="output_format"):
        graph.get_all_neighbors([10], 1, 1)
    with pytest.raises(RuntimeError, match="node id 99"):
        graph.get_all_neighbors([99], 1)
    with pytest.raises(RuntimeError, match="neighbor_type 7"):
        graph.get_all_neighbors([10], 7)
    with pytest.raises(ValueError, match="1 to 6"):
        graph.get_sampled_neighbors([10], [1] * 7, [1] * 7)
    with pytest.raises(ValueError, match="one length"):
        graph.get_sampled_neighbors([10], [1, 1], [1])
    with pytest.raises(RuntimeError, match=r"\[1, 10\]"):
        graph.get_sampled_neighbors([10], [11], [1])
    with pytest.raises(TypeError, match="strategy"):
        graph.get_sampled_neighbors([10], [1], [1], 0)
    with pytest.raises(TypeError):
        graph.get_node_feature([[10, 11], [12]], [1])  # not aligned
    with pytest.raises(TypeError):
        graph.get_node_feature([10, [11]], [1])
    with pytest.raises(RuntimeError, match="feature type 3"):
        graph.get_node_feature([10], [3])
    with pytest.raises(RuntimeError, match="edge id 999"):
        graph.get_nodes_from_edges([999])
    with pytest.raises(ValueError, match="pair"):
        graph.get_edges_from_nodes([(10, 11, 12)])
    with pytest.raises(TypeError, match="step_home_param"):
        graph.random_walk([10], [1], 1)
    with pytest.raises(RuntimeError, match="step_home_param"):
        graph.random_walk([10], [1], 0.0)
    with pytest.raises(ValueError, match="default_node"):
        graph.random_walk([10], [1], default_node=-2)
    with pytest.raises(RuntimeError, match="1 to 80"):
        graph.random_walk([10], [1] * 81)


def test_a_mindrecord_file_that_is_not_a_graph(tmp_path):
    writer = FileWriter(str(tmp_path / "plain"))
    writer.add_schema({"label": {"type": "int32"}}, "plain")
    writer.write_raw_data([{"label": 1}])
    writer.commit()
    with pytest.raises(RuntimeError, match="first_id"):
        ds.GraphData(str(tmp_path / "plain"))


def test_engine_and_dataset_names():
    from opforge.dataset.engine import GraphData, OutputFormat, SamplingStrategy  # MindSpore's import path

    assert GraphData is ds.GraphData and OutputFormat.CSR == 2 and SamplingStrategy.EDGE_WEIGHT == 1


def test_filewriter_open_and_set_header_as_the_converter_calls_it(tmp_path):
    """The zoo's writer.py: set_header_size / set_page_size, add_schema, open_and_set_header, then writes."""
    writer = FileWriter(str(tmp_path / "g"))
    writer.set_header_size(1 << 18)
    writer.set_page_size(1 << 20)
    with pytest.raises(RuntimeError, match="schema"):
        writer.open_and_set_header()
    writer.add_schema({"label": {"type": "int32"}}, "s")
    assert writer.open_and_set_header() == 0
    with pytest.raises(RuntimeError, match="before writing"):
        writer.set_page_size(1 << 21)  # the files are open: too late
    writer.write_raw_data([{"label": 3}])
    writer.commit()
    with pytest.raises(RuntimeError, match="committed"):
        writer.open_and_set_header()
    assert [int(row[0]) for row in ds.MindDataset(str(tmp_path / "g")).create_tuple_iterator(output_numpy=True)] == [3]
