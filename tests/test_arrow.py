"""A run's tables cross from the core as Arrow (pyarrow tables of the core's schemas), not JSON text."""

from __future__ import annotations

import json
import pickle

import pyarrow as pa

import bondsim
from bondsim import _core
from bondsim.api import RunResult, _read, _table, decode_output, encode_output, schemas, summary_figures

#: A run with every kind of column: nulls among integers and reals, flags, names, a congestion control's mode.
TRACED = ["workload.requests=3", "sender.trace_ms=1", "trace.packets=200", "trace.link_ms=5"]


def test_the_core_hands_over_pyarrow_tables_of_its_own_schemas():
    doc = bondsim.load("tcp_rr", TRACED)
    summary, tables = _core.run(json.dumps(doc), None)
    assert isinstance(json.loads(summary), dict)
    assert list(tables) == ["requests", "links", "tcp_trace", "link_trace", "link_events", "packet_trace"]
    for name, table in tables.items():
        assert hasattr(table, "__arrow_c_stream__"), name  # the Arrow PyCapsule interface
        read = pa.table(table)
        assert isinstance(read, pa.Table) and read.schema.equals(schemas()[name]), name
        assert len(table) == read.num_rows
        assert table.to_pydict() == read.to_pydict(), name  # the lists a CSV is written from, without pyarrow
    assert len(tables["packet_trace"]) == 200
    assert schemas()["tcp_trace"].field("cc_mode").type == pa.string()
    assert tables["requests"].to_pydict(["packets"]) == {"packets": _read(tables["requests"])["packets"].to_pylist()}


def test_a_result_holds_pyarrow_tables_and_gives_dataframes_typed_as_before():
    result = bondsim.run("tcp_rr", TRACED)
    for kind in ("requests", "links", *RunResult.TRACES):
        table = result.arrow(kind)
        assert table is None or isinstance(table, pa.Table), kind
    # the DataFrame is what the JSON columns gave: int64, float64 where nulls, a column of nulls as NaN
    frame = result.packet_trace
    before = _table(result.arrow("packet_trace").to_pydict())
    assert frame.dtypes.to_dict() == before.dtypes.to_dict()
    assert frame.equals(before)
    assert result.tcp_trace["cc_mode"].dtype == float  # no mode of its own (not BBR): nulls, as stored


def test_every_table_the_core_has_is_a_table_a_result_takes():
    assert list(schemas()) == ["summary", *_core.TABLES]
    assert set(_core.TABLES) == {"requests", "links", *RunResult.TRACES}


def test_the_written_csv_is_what_pandas_writes_for_the_json_columns(tmp_path):
    result = bondsim.run("tcp_rr", TRACED)
    result.write(tmp_path)
    for kind in ("requests", "links", *RunResult.TRACES):
        table = result.arrow(kind)
        if table is None:
            continue
        expected = _table(table.to_pydict()).to_csv(index=False)
        assert (tmp_path / f"{kind}.csv").read_text() == expected, kind


def test_a_dask_worker_s_output_is_picklable_arrow_ipc_and_decodes_to_the_same_tables():
    doc = bondsim.load("thesis", ["workload.requests=4", "trace.packets=50"])
    summary, tables = _core.run(json.dumps(doc), None)
    sent = pickle.loads(pickle.dumps(encode_output(summary, tables)))
    assert all(isinstance(v, bytes) for v in sent[1].values())
    output = decode_output(*sent)
    assert output["summary"] == json.loads(summary)
    for name, table in tables.items():
        assert output[name].equals(_read(table)), name


def test_a_result_pickles_and_copies_with_its_tables():
    import copy

    result = bondsim.run("thesis", ["workload.requests=4", "trace.packets=20"])
    again = pickle.loads(pickle.dumps(result))
    copied = copy.deepcopy(result)
    for kind in ("requests", "links", "packet_trace"):
        assert again.arrow(kind).equals(result.arrow(kind)) and copied.arrow(kind).equals(result.arrow(kind))
    assert again.packet_trace.equals(result.packet_trace)


def test_summary_figures_come_from_the_schema_without_a_run():
    figures = summary_figures()
    assert figures["ooo_fraction"] and figures["tcp_retransmits"] and not figures["scheduler"]
    assert not figures["tcp_trace_truncated"]  # a flag, not a number
    assert "links" not in figures and "reorder_density" not in figures
