"""The results database: tables in with the core's types (Arrow), a database made before them migrated."""

from __future__ import annotations

import copy
import json
import math

import duckdb
import pandas as pd
import pyarrow as pa

import bondsim
from bondsim import _core
from bondsim import store as store_module
from bondsim.api import _read, decode_output
from bondsim.scenario import scenario_hash
from bondsim.store import RUN_COLUMNS, Store, _stacked


def core_output(doc: dict) -> dict:
    return decode_output(*_core.run(json.dumps(doc), None))


def test_new_figures_columns_and_tables_extend_the_schema(tmp_path):
    old_doc = bondsim.load("thesis", ["workload.requests=5"])
    new_doc = bondsim.load("thesis", ["workload.requests=6"])
    old = core_output(old_doc)
    # what a later core might add: a figure, a per-link column, a per-flow table
    new = copy.deepcopy(core_output(new_doc))
    new["summary"]["future_figure_bps"] = 1.5e6
    new["links"] = _read(new["links"]).append_column("jain_share", pa.array([0.25] * len(new["links"])))
    new["flows"] = {"flow": [0, 1], "reorder_extent": [1, 3]}

    db = tmp_path / "runs.duckdb"
    with Store(db) as store:
        old_id, new_id = store.add([(scenario_hash(old_doc), old_doc, old)]) + store.add(
            [(scenario_hash(new_doc), new_doc, new)]
        )
        assert store.columns("runs")["future_figure_bps"] == "DOUBLE"
        assert store.columns("runs")["dropped"] == "BIGINT"  # the core's type, whatever the values
        runs = store.runs().set_index("run_id")
        assert math.isnan(runs.loc[old_id, "future_figure_bps"]) and runs.loc[new_id, "future_figure_bps"] == 1.5e6
        assert runs.loc[old_id, "dropped"] == old["summary"]["dropped"]
        loaded = store.load(store.runs()["run_id"])  # ids straight from a table
        assert loaded[new_id].links["jain_share"].tolist() == new["links"]["jain_share"].to_pylist()
        assert loaded[old_id].links["jain_share"].isna().all()
        assert loaded[old_id].summary == old["summary"]  # the JSON keeps every figure as reported
        assert store.stored([scenario_hash(old_doc), scenario_hash(new_doc), "f" * 16]) == {
            scenario_hash(old_doc): old_id,
            scenario_hash(new_doc): new_id,
        }
        written = store.export(tmp_path / "out", "parquet")
    assert sorted(p.name for p in written) == ["flows.parquet", "links.parquet", "requests.parquet", "runs.parquet"]
    with duckdb.connect() as con:
        flows = con.execute(f"SELECT * FROM read_parquet('{tmp_path / 'out' / 'flows.parquet'}')").fetchall()
    assert flows == [(new_id, 0, 1), (new_id, 1, 3)]
    # pandas reads it too (pyarrow is a dependency: "Unable to find a usable engine" before).
    frame = pd.read_parquet(tmp_path / "out" / "flows.parquet")
    assert [tuple(row) for row in frame.itertuples(index=False)] == flows


def test_each_run_s_rows_are_read_in_the_order_stored_whichever_runs_lie_between(tmp_path):
    """Store.load reads a run's rows of each table in the order they were stored (DuckDB keeps a table's order when
    a query asks for none) and groups them by run itself: here run 1's rows come again after run 2's."""
    docs = [bondsim.load("thesis", [f"workload.requests={n}"]) for n in (3, 4)]
    with Store(tmp_path / "runs.duckdb") as store:
        first, second = store.add([(scenario_hash(doc), doc, core_output(doc)) for doc in docs])
        store.con.execute("INSERT INTO requests SELECT * FROM requests WHERE run_id = ?", [first])
        frames, plain = store.load([second, first]), store.load([first, second], plain=True)
    assert plain[first].columns("requests")["request"] == [0, 1, 2, 0, 1, 2]
    assert plain[second].columns("requests")["request"] == [0, 1, 2, 3]
    for run_id in (first, second):
        assert frames[run_id].requests["request"].tolist() == plain[run_id].columns("requests")["request"]


def test_a_run_is_stored_once_per_scenario_and_version(tmp_path):
    doc = bondsim.load("thesis", ["workload.requests=5"])
    output = core_output(doc)
    with Store(tmp_path / "runs.duckdb") as store:
        first = store.add([(scenario_hash(doc), doc, output)])
        # stored meanwhile (by another sweep on the same file, say): not stored again, its id given back
        assert store.add([(scenario_hash(doc), doc, output)]) == first
        assert store.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
        assert store.con.execute("SELECT count(*) FROM links").fetchone()[0] == len(output["links"])


def test_tables_are_created_with_the_core_s_types_and_a_run_reads_back_equal(tmp_path):
    doc = bondsim.load("tcp_rr", ["workload.requests=2", "sender.trace_ms=1", "trace.packets=50"])
    result = bondsim.api.run_checked(doc)
    with Store(tmp_path / "runs.duckdb") as store:
        run_id = store.add_result(result, "simulator")
        schemas = bondsim.api.schemas()
        duck = {pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN", pa.string(): "VARCHAR"}
        for kind in ("requests", "links", "tcp_trace", "packet_trace"):
            want = {"run_id": "BIGINT", **{f.name: duck[f.type] for f in schemas[kind]}}
            assert store.columns(kind) == want, kind
        figures = store.columns("runs")
        assert figures["tcp_retransmits"] == "BIGINT" and figures["tcp_reordering_mean"] == "DOUBLE"
        assert figures["failovers_truncated"] == "BOOLEAN"  # a flag no run here reports: typed all the same
        back = store.load([run_id])[run_id]
    for kind in ("requests", "links", "tcp_trace", "packet_trace"):
        pd.testing.assert_frame_equal(
            back.trace(kind) if kind in back.TRACES else getattr(back, kind),
            result.trace(kind) if kind in result.TRACES else getattr(result, kind),
            check_dtype=False,
        )
    assert back.summary == result.summary


def test_a_database_typed_by_hand_before_is_migrated_to_the_core_s_types_and_appends(tmp_path):
    """Before the core published its schema, the store typed columns from the first values it saw: a figure or
    column no run had a value of yet became DOUBLE (then widened by hand). Adding a run now migrates such a
    column to the core's type."""
    thesis = bondsim.load("thesis", ["workload.requests=2"])
    tcp = bondsim.load("tcp_rr", ["workload.requests=2", "sender.trace_ms=1"])
    db = tmp_path / "runs.duckdb"
    with Store(db) as store:
        store.add([(scenario_hash(thesis), thesis, core_output(thesis))])
        # as the hand-typed store left them: counts and names of no value yet as DOUBLE
        store.con.execute('ALTER TABLE runs ALTER "tcp_retransmits" TYPE DOUBLE')
        store.con.execute('ALTER TABLE requests ALTER "rx_link" TYPE DOUBLE')
        store.con.execute("CREATE TABLE tcp_trace (run_id BIGINT, t_s DOUBLE, flow BIGINT, cc_mode DOUBLE)")
    with Store(db) as store:
        (run_id,) = store.add([(scenario_hash(tcp), tcp, core_output(tcp))])
        assert store.columns("runs")["tcp_retransmits"] == "BIGINT"
        assert store.columns("requests")["rx_link"] == "BIGINT"
        assert store.columns("tcp_trace")["cc_mode"] == "VARCHAR"
        assert store.columns("tcp_trace")["state"] == "VARCHAR"  # added
        back = store.load([run_id])[run_id]
        assert back.tcp_trace["state"].tolist() == core_output(tcp)["tcp_trace"].to_pydict()["state"]
        assert store.runs().set_index("run_id").loc[run_id, "tcp_retransmits"] >= 0


def test_emulated_runs_are_each_stored_and_tagged_and_an_older_database_gains_the_tag(tmp_path):
    doc = bondsim.load("thesis", ["workload.requests=5"])
    result = bondsim.api.run_checked(doc)
    db = tmp_path / "runs.duckdb"
    with Store(db) as store:
        sim = [store.add_result(result, "simulator") for _ in range(2)]
        emu = [store.add_result(result, "emulator") for _ in range(2)]
        # The simulator's run is the scenario's (stored once); each emulation is a measurement of its own.
        assert sim[0] == sim[1] and len({sim[0], *emu}) == 3
        runs = store.runs().set_index("run_id")
        assert runs.loc[sim[0], "engine"] == "simulator" and runs.loc[emu, "engine"].tolist() == ["emulator"] * 2
        assert runs.loc[sim[0], "scenario_hash"] == scenario_hash(doc) != runs.loc[emu[0], "scenario_hash"]
        # stored from the result's tables: the same as the core's own output
        assert store.load([emu[0]])[emu[0]].links.equals(store.load([sim[0]])[sim[0]].links)
        # a database made before the tag: its runs were simulated
        store.con.execute("ALTER TABLE runs DROP COLUMN engine")
    with Store(db, read_only=True) as store:
        assert store.record(emu[0])["engine"] == "simulator"
        assert store.runs()["engine"].tolist() == ["simulator"] * 3  # what the report reads
    with Store(db) as store:
        assert store.runs()["engine"].tolist() == ["simulator"] * 3


def test_asking_for_what_is_not_stored_is_an_error_naming_it(tmp_path):
    import pytest

    doc = bondsim.load("thesis", ["workload.requests=2"])
    with Store(tmp_path / "runs.duckdb") as store:
        (run_id,) = store.add([(scenario_hash(doc), doc, core_output(doc))])
        assert store.record(run_id)["run_id"] == run_id and set(store.load([run_id])) == {run_id}
        for call, says in [
            (lambda: store.record(999), "999: no run with that id"),
            (lambda: store.load([run_id, 999]), "no run with id 999"),
            (lambda: store.load(1), "run ids are a list of whole numbers"),
            (lambda: store.export(tmp_path / "out", "xls"), "format: parquet or csv, got 'xls'"),
            (lambda: store.load([run_id])[run_id].trace("nosuch"), "'nosuch': no such trace; traces: tcp_trace"),
        ]:
            with pytest.raises(bondsim.BondsimError, match=says):
                call()


def test_a_duckdb_file_of_another_program_is_refused_and_left_as_it_was(tmp_path):
    import pytest

    empty, foreign, other = (tmp_path / f"{name}.duckdb" for name in ("empty", "foreign", "other"))
    duckdb.connect(str(empty)).close()
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE runs (x INTEGER)")
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE orders (id INTEGER)")
    for path, read_only, says in [
        (empty, True, "no runs stored here"),
        (foreign, True, r"its table `runs` is not bondsim's \(no column run_id, scenario"),
        (foreign, False, r"its table `runs` is not bondsim's"),
        (other, False, r"a DuckDB database of another program \(tables orders\)"),
    ]:
        with pytest.raises(bondsim.BondsimError, match=says):
            Store(path, read_only=read_only)
    for path, tables in [(foreign, [("runs",)]), (other, [("orders",)])]:
        with duckdb.connect(str(path), read_only=True) as con:
            assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == tables
            assert len(con.execute(f"DESCRIBE {tables[0][0]}").fetchall()) == 1, "no column added"
    # An empty DuckDB file is a new database to write into.
    doc = bondsim.load("thesis", ["workload.requests=2"])
    with Store(empty) as store:
        assert store.add([(scenario_hash(doc), doc, core_output(doc))]) == [1]


def test_a_sweep_is_found_by_its_grid_or_id_and_a_name_two_sweeps_share_is_refused(tmp_path):
    import pytest

    docs = [bondsim.load("thesis", ["workload.requests=2", f"seed={s}"]) for s in (1, 2)]
    grids = [[(0, scenario_hash(d), d["seed"], {"seed": d["seed"]})] for d in docs]
    db = tmp_path / "runs.duckdb"
    with Store(db) as store:
        first = store.add_sweep("s1", {"file": "s1.sweep.toml"}, grids[0])
        assert store.sweep_id("s1") == first and store.sweep_ref(first) == "s1"
        assert store.add_sweep("s1", {}, grids[0]) == first  # the same grid under the same name: recorded once
        second = store.add_sweep("s1", {"file": "other/s1.sweep.toml"}, grids[1])
        assert (store.sweep_of("s1", grids[0]), store.sweep_of("s1", grids[1])) == (first, second)
        assert store.sweep_of("s2", grids[0]) is None
        assert store.sweep_id(str(second)) == second and store.sweep_id(first) == first
        assert store.sweep_ref(first) == str(first)  # the name alone no longer says which
        with pytest.raises(bondsim.BondsimError) as info:
            store.sweep_id("s1")
        assert str(info.value) == (
            f"--sweep: 2 sweeps in {db} are named `s1`: `s1` id 1 (1 point, from s1.sweep.toml), "
            "`s1` id 2 (1 point, from other/s1.sweep.toml); pick one by its id (bondsim runs sweeps lists them), "
            "e.g. --sweep 2"
        )
        with pytest.raises(bondsim.BondsimError, match=r"^--sweep: no sweep named `s3` "):
            store.runs(sweep="s3")


def test_an_interrupt_after_the_commit_is_heard_as_the_interrupt_and_the_runs_stay(tmp_path):
    """Issue 39: Ctrl-C landing once a commit has ended its transaction made the rollback fail with
    DuckDB's "no transaction is active", which replaced the interrupt (the sweep then said its database
    refused a query, exit 2, instead of how many runs were stored, exit 130)."""
    import pytest

    import bondsim

    store = Store(tmp_path / "runs.duckdb")
    result = bondsim.run("thesis", ["workload.requests=3"])
    real = store.con

    class CommitThenInterrupt:
        def __getattr__(self, name):
            return getattr(real, name)

        def commit(self):
            real.commit()
            raise KeyboardInterrupt

    store._con = CommitThenInterrupt()
    with pytest.raises(KeyboardInterrupt):
        store.add_result(result, "simulator")
    store._con = real
    assert store.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1, "the committed run stays"


def test_a_ctrl_c_that_duckdb_hears_mid_commit_is_a_keyboard_interrupt_and_stores_nothing(tmp_path, monkeypatch):
    # A Ctrl-C or SIGTERM landing in a commit came out of duckdb 2.0 as RuntimeError("Query interrupted"):
    # a traceback where a stopped sweep should say what it stored (seen once the commits grew longer).
    import pytest

    doc = bondsim.load("thesis", ["workload.requests=5"])
    output = core_output(doc)
    with Store(tmp_path / "runs.duckdb") as store:
        append = Store._append

        def interrupted(self, table, *rest):
            append(self, table, *rest)
            if table != "runs":  # the runs row written, the next table's interrupted
                raise RuntimeError("Query interrupted")

        monkeypatch.setattr(Store, "_append", interrupted)
        with pytest.raises(KeyboardInterrupt):
            store.add([(scenario_hash(doc), doc, output)])
        monkeypatch.setattr(Store, "_append", append)
        assert store.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0  # rolled back whole
        monkeypatch.setattr(Store, "_append", lambda *a: (_ for _ in ()).throw(RuntimeError("other")))
        with pytest.raises(RuntimeError, match="other"):  # any other fault stays what it is
            store.add([(scenario_hash(doc), doc, output)])


def test_a_store_remembers_its_tables_across_releases_yet_sees_what_others_added_and_a_replaced_file(tmp_path):
    """A sweep's store lets go of the file between commits and keeps what it knew of the tables' columns (no
    schema queries again at each commit); another writer meanwhile, or the file replaced, must not mislead it."""
    docs = [bondsim.load("thesis", [f"workload.requests={n}"]) for n in (5, 6, 7, 8)]
    outputs = [core_output(doc) for doc in docs]
    outputs[1] = copy.deepcopy(outputs[1])
    outputs[1]["summary"]["future_figure_bps"] = 2.5e6  # a column only the other writer adds
    db = tmp_path / "runs.duckdb"
    entry = [(scenario_hash(doc), doc, output) for doc, output in zip(docs, outputs, strict=True)]
    mine = Store(db)
    mine.add(entry[:1])
    mine.release()
    with Store(db) as other:  # another process's writer while the file is released
        other.add(entry[1:2])
    # a shape new to this store, with a column the other writer added: taken as it now is
    third = (entry[2][0], entry[2][1], copy.deepcopy(outputs[2]))
    third[2]["summary"]["future_figure_bps"] = 3.5e6
    mine.add([third])
    mine.release()
    with Store(db, read_only=True) as reader:
        assert sorted(reader.runs()["future_figure_bps"].dropna().tolist()) == [2.5e6, 3.5e6]
    # the file deleted while released: a new database, its tables made again (not the ones remembered)
    db.unlink()
    mine.add(entry[3:4])
    mine.close()
    with Store(db, read_only=True) as again:
        kept = again.runs()
        assert kept["scenario_hash"].tolist() == [entry[3][0]]
        assert again.load(kept["run_id"])[int(kept["run_id"][0])].summary == outputs[3]["summary"]


def test_a_store_that_reads_lists_the_run_tables_once_and_again_once_another_wrote(tmp_path):
    """A store that only reads asks which per-run tables there are once (no table is made while it holds the
    file); let go and opened again after another process added one, it sees it."""
    plain, traced = (bondsim.load("thesis", ["workload.requests=3", *extra]) for extra in ([], ["trace.packets=10"]))
    db = tmp_path / "runs.duckdb"
    with Store(db) as writer:
        writer.add([(scenario_hash(plain), plain, core_output(plain))])
    reader = Store(db, read_only=True)
    before = reader.table_kinds()
    assert "packet_trace" not in before and reader.table_kinds() == before
    reader.release()
    with Store(db) as writer:
        writer.add([(scenario_hash(traced), traced, core_output(traced))])
    assert reader.table_kinds() == sorted([*before, "packet_trace"])
    reader.close()


def _layout(db) -> list[tuple]:
    """The runs table as DuckDB holds it: each column's name, type, default and nullability, and its constraints."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = con.execute(
            "SELECT column_name, data_type, column_default, is_nullable FROM duckdb_columns() "
            "WHERE table_name = 'runs' ORDER BY column_index"
        ).fetchall()
        return (
            columns
            + con.execute(
                "SELECT constraint_type, constraint_text FROM duckdb_constraints() "
                "WHERE table_name = 'runs' ORDER BY ALL"
            ).fetchall()
        )
    finally:
        con.close()


def test_a_fresh_runs_table_made_at_once_is_the_one_made_column_by_column(tmp_path):
    """A fresh database's first commit makes the runs table again with every figure in one statement (not an
    ALTER a figure): the same columns, types, order and constraints as a runs table that already held a run
    and gained them one by one."""
    doc = bondsim.load("thesis", ["workload.requests=5"])
    entry = [(scenario_hash(doc), doc, core_output(doc))]
    fresh, grown = tmp_path / "fresh.duckdb", tmp_path / "grown.duckdb"
    with Store(fresh) as store:
        store.add(entry)
    with Store(grown) as store:  # a run of no figures first: the table is not empty, so not made again
        store.con.execute("INSERT INTO runs (run_id, scenario_hash, version) VALUES (99, 'x', 'y')")
        store.add(entry)
    layout = _layout(fresh)
    assert layout == _layout(grown)
    names = [row[0] for row in layout if len(row) == 4]
    figures = [f for f in bondsim.api.schemas()["summary"].names if f not in RUN_COLUMNS]
    own = ["run_id", "scenario_hash", "name", "seed", "version", "created_at", "scenario", "summary", "engine"]
    assert names == [*own, *figures]
    with Store(fresh) as store:  # its keys hold as before: the same run twice is one run
        assert store.add(entry) == [1]
        assert store.con.execute("SELECT count(*) FROM runs").fetchone() == (1,)


def test_several_runs_tables_are_stacked_into_one_chunk_for_duckdb(monkeypatch):
    """A commit's per-run tables go to DuckDB as one chunk each, not one a run (DuckDB inserts a table of many
    small chunks several times slower); the rows are the runs', in order, each with its run id. Tables above
    ``COMBINE_ROWS`` rows together (traces) are not copied."""
    docs = [bondsim.load("thesis", [f"workload.requests={n}"]) for n in (3, 4, 5)]
    outputs = [core_output(doc) for doc in docs]
    stacked = _stacked("requests", [7, 8, 9], outputs)
    assert {column.num_chunks for column in stacked.columns} == {1}
    assert stacked.column("run_id").to_pylist() == [7] * 3 + [8] * 4 + [9] * 5
    assert stacked.column("request").to_pylist() == [*range(3), *range(4), *range(5)]
    monkeypatch.setattr(store_module, "COMBINE_ROWS", 11)
    large = _stacked("requests", [7, 8, 9], outputs)
    assert {column.num_chunks for column in large.columns} == {3}
    assert large.equals(stacked)
