//! Python bindings of bondsim-core: the whole surface Python sees, in one module.
//!
//! Scenarios cross the boundary as JSON text: one schema, defined in `bondsim_core::scenario`, and
//! no second copy of it here. A run's tables cross as Arrow (`arrow.rs`: the Arrow PyCapsule
//! interface, tables of the schemas `bondsim_core::columnar` defines), its summary as JSON text.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use bondsim_core::scenario::{CaptureOptions, Kernel};
use bondsim_core::{bond::registry, Error, Scenario};

mod arrow;
#[cfg(target_os = "linux")]
mod memory;

/// An allocation the system refuses ends the process with one line, not an abort ([`memory`]).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: memory::Guarded = memory::Guarded;

create_exception!(_core, BondsimError, PyException, "Base class of every bondsim error.");
create_exception!(
    _core,
    ScenarioError,
    BondsimError,
    "A scenario is malformed or impossible; `.path` names the field."
);

/// Turns a core error into the matching Python exception.
fn to_py(err: Error) -> PyErr {
    match &err {
        Error::Scenario { path, .. } => {
            let py_err = ScenarioError::new_err(err.to_string());
            Python::attach(|py| {
                let value = py_err.value(py);
                let _ = value.setattr("path", path.as_str());
            });
            py_err
        }
        Error::Interrupted | Error::Io(_) => BondsimError::new_err(err.to_string()),
    }
}

/// Checks a scenario (JSON text); returns it with every default filled in, and its warnings
/// (`Scenario::warnings`: what it sets that its run ignores), each `path: message`.
#[pyfunction]
fn check(scenario_json: &str) -> PyResult<(String, Vec<String>)> {
    let scenario = Scenario::from_json(scenario_json).map_err(to_py)?;
    bondsim_core::check(&scenario).map_err(to_py)?;
    Ok((scenario.to_json(), scenario.warnings().iter().map(ToString::to_string).collect()))
}

/// A scenario's (JSON text) run, estimated before it runs (`bondsim_core::cost::Cost` as JSON:
/// requests, packets, events, memory_bytes, seconds).
#[pyfunction]
fn cost(scenario_json: &str) -> PyResult<String> {
    let scenario = Scenario::from_json(scenario_json).map_err(to_py)?;
    Ok(serde_json::to_string(&scenario.cost()).expect("a cost serialises"))
}

/// Runs a scenario (JSON text) and returns its summary as JSON text and its tables as
/// `{name: Table}` (`arrow.rs`: Arrow through `__arrow_c_stream__`; the schemas of `schemas()`).
///
/// `progress(done_packets, total_packets, sim_time_s)` is called now and then
/// while the GIL is released for the rest of the run; Ctrl-C stops the run
/// with `KeyboardInterrupt`. `pcap_json`, if given, asks for packet captures
/// (`bondsim_core::scenario::CaptureOptions` as JSON: `dir`, `payload`, `max_packets`,
/// `start_s`, `stop_s`). `max_resident_bytes`, if given, is the memory budget: the run stops
/// with a `BondsimError` once this process holds more (resident; looked at each time progress
/// is reported).
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None, pcap_json=None, max_resident_bytes=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    progress: Option<Py<PyAny>>,
    pcap_json: Option<&str>,
    max_resident_bytes: Option<u64>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let scenario = Scenario::from_json(scenario_json).map_err(to_py)?;
    let capture = pcap_json.map(CaptureOptions::from_json).transpose().map_err(to_py)?;
    let mut pending: Option<PyErr> = None;
    let outcome = py.detach(|| {
        bondsim_core::run_with_capture(&scenario, capture.as_ref(), &mut |p| {
            if let Some(message) = over_memory_budget(max_resident_bytes) {
                pending = Some(BondsimError::new_err(message));
                return false;
            }
            report(&progress, &mut pending, (p.done_packets, p.total_packets, p.now.as_secs_f64()))
        })
        .map(|result| (result.summary_json(), result.batches())) // built without the GIL too
    });
    let (summary, batches) = finish(outcome, pending)?;
    Ok((summary, arrow::tables(py, batches)?))
}

/// The error of a run above its memory budget ([`memory::over_budget`]; none off Linux).
fn over_memory_budget(limit: Option<u64>) -> Option<String> {
    #[cfg(target_os = "linux")]
    return memory::over_budget(limit);
    #[cfg(not(target_os = "linux"))]
    return limit.and(None);
}

/// Calls `progress(done, total, seconds)` with the GIL, after looking for signals (Ctrl-C);
/// on an exception, keeps it in `pending` and returns false (stop).
fn report(progress: &Option<Py<PyAny>>, pending: &mut Option<PyErr>, args: (u64, u64, f64)) -> bool {
    Python::attach(|py| {
        let step = py.check_signals().and_then(|()| match progress {
            Some(callback) => callback.call1(py, args).map(|_| ()),
            None => Ok(()),
        });
        match step {
            Ok(()) => true,
            Err(err) => {
                *pending = Some(err);
                false
            }
        }
    })
}

/// The run's outcome for Python: an interruption raises the exception that caused it.
fn finish<T>(outcome: Result<T, Error>, mut pending: Option<PyErr>) -> PyResult<T> {
    match outcome {
        Ok(value) => Ok(value),
        Err(Error::Interrupted) if pending.is_some() => Err(pending.take().expect("checked")),
        Err(err) => Err(to_py(err)),
    }
}

/// Runs a scenario (JSON text) on the emulator (`bondsim_emu`: the kernel's TCP in
/// network namespaces, the bond in this process; Linux, root) and returns its result as
/// JSON text. `seconds` bounds the run in real time; `progress(done_requests,
/// total_requests, elapsed_s)` is called about four times a second; Ctrl-C (and any
/// exception from `progress`) stops it; `traffic` is `sockets` (the default) or `iperf3`.
/// Namespaces, devices and child processes go with the run.
#[cfg(target_os = "linux")]
#[pyfunction]
#[pyo3(signature = (scenario_json, seconds=None, progress=None, traffic=None))]
fn emulate(
    py: Python<'_>,
    scenario_json: &str,
    seconds: Option<f64>,
    progress: Option<Py<PyAny>>,
    traffic: Option<&str>,
) -> PyResult<String> {
    let scenario = Scenario::from_json(scenario_json).map_err(to_py)?;
    let traffic = traffic.map(bondsim_emu::Traffic::from_name).transpose().map_err(to_py)?.unwrap_or_default();
    let options = bondsim_emu::Options { seconds, traffic };
    let mut pending: Option<PyErr> = None;
    let outcome = py.detach(|| {
        bondsim_emu::realtime::emulate(&scenario, &options, &mut |p| {
            report(&progress, &mut pending, (u64::from(p.done), u64::from(p.total), p.elapsed_s))
        })
        .map(|v| v.to_string())
    });
    finish(outcome, pending)
}

/// Checks that the emulator can carry out a scenario (JSON text): an error names the field.
#[cfg(target_os = "linux")]
#[pyfunction]
fn emulate_check(scenario_json: &str) -> PyResult<()> {
    let scenario = Scenario::from_json(scenario_json).map_err(to_py)?;
    bondsim_emu::check(&scenario).map_err(to_py)
}

/// The scenario (JSON text) as the emulator runs it, for the model to run the same host
/// (`bondsim_emu::emulated_host`), and that placement in words.
#[cfg(target_os = "linux")]
#[pyfunction]
fn emulated_host(scenario_json: &str) -> PyResult<(String, &'static str)> {
    let scenario = Scenario::from_json(scenario_json).map_err(to_py)?;
    let (host, words) = bondsim_emu::emulated_host(&scenario);
    Ok((host.to_json(), words))
}

/// The one of `names` that `given` most likely misspells, for an error's "did you mean" (the core's
/// rule, `bondsim_bond::error::closest`); None when none is close.
#[pyfunction]
fn closest(given: &str, names: Vec<String>) -> Option<String> {
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    bondsim_core::bond::error::closest(given, &names).map(str::to_string)
}

/// Every registered scheduler (the values of `bond.mode`) as JSON: name, aliases, summary,
/// parameters, and the field that names it (`for`).
#[pyfunction]
fn schedulers() -> String {
    let list: Vec<serde_json::Value> = registry::ALL
        .iter()
        .map(|info| {
            serde_json::json!({
                "name": info.name,
                "for": "bond.mode",
                "aliases": info.aliases,
                "summary": info.summary,
                "params": info.params.iter().map(|p| serde_json::json!({
                    "name": p.name,
                    "default": p.default,
                    "allowed": p.kind.describe(),
                    "help": p.help,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Every MPTCP packet scheduler (the values of `sender.mptcp_scheduler`) as JSON, in the shape of
/// [`schedulers`]'s entries, with `upstream`: whether Linux's own tree (so the emulator) has it.
#[pyfunction]
fn mptcp_schedulers() -> String {
    let list: Vec<serde_json::Value> = bondsim_core::transport::mptcp::sched::SCHEDULERS
        .iter()
        .map(|info| {
            serde_json::json!({
                "name": info.name,
                "for": "sender.mptcp_scheduler",
                "aliases": [],
                "summary": info.summary,
                "params": [],
                "upstream": info.upstream,
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// bondsim's compiled core.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BondsimError", m.py().get_type::<BondsimError>())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(cost, m)?)?;
    m.add_function(wrap_pyfunction!(mptcp_schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(closest, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::schemas, m)?)?;
    m.add_class::<arrow::Table>()?;
    // Every table a result may have, in its order (`schemas()`' names but the summary).
    let tables: Vec<&str> = bondsim_core::columnar::schemas().iter().map(|(name, _)| *name).skip(1).collect();
    m.add("TABLES", tables)?;
    // Each kernel era (`sender.kernel`) with its preset's sender fields, values as JSON text.
    let kernels: Vec<(&str, Vec<(&str, &str)>)> = Kernel::ALL.iter().map(|k| (k.name(), k.preset().to_vec())).collect();
    m.add("KERNELS", kernels)?;
    // Every congestion control the schema takes (`sender.tcp_congestion_control`), the default first.
    m.add("CONGESTION_CONTROLS", bondsim_core::scenario::CONGESTION_CONTROLS.to_vec())?;
    // Every plausibility bound on a physical field (`scenario::BOUNDS`): fields, low, high, unit, why.
    let bounds: Vec<(&str, f64, f64, &str, &str)> =
        bondsim_core::scenario::BOUNDS.iter().map(|b| (b.fields, b.low, b.high, b.unit, b.why)).collect();
    m.add("BOUNDS", bounds)?;
    #[cfg(target_os = "linux")]
    {
        m.add_function(wrap_pyfunction!(emulate, m)?)?;
        m.add_function(wrap_pyfunction!(emulate_check, m)?)?;
        m.add_function(wrap_pyfunction!(emulated_host, m)?)?;
        // What `emulate`'s `traffic` takes, the default first.
        m.add("EMU_TRAFFIC", bondsim_emu::Traffic::NAMES.to_vec())?;
    }
    Ok(())
}
