//! THE scenario schema: every knob of a run, defined once.
//!
//! A scenario arrives as JSON (the Python front loads TOML and applies
//! `--set` overrides first). Unknown keys, wrong types and impossible values
//! are errors naming the field path, e.g. `links.1.period_ms: must be > 0`.
//! File references (`trace_file`, a directory of files) are resolved by the
//! front into inline data, so the core never touches the file system.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::time::SimTime;

/// One simulation run: what is requested, how it is sent, over which bond.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-text name shown in outputs.
    #[serde(default)]
    pub name: String,
    /// Seed of every random stream of the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The requests clients make.
    pub workload: Workload,
    /// How the server turns requests into packets.
    #[serde(default)]
    pub sender: Sender,
    /// The bond: its mode (scheduler) and that mode's options.
    pub bond: Bond,
    /// The bonded links, in order (link ids are positions after `count` expansion).
    pub links: Vec<LinkSpec>,
}

fn default_seed() -> u64 {
    1
}

/// The requests: how many, from how many clients, when, for which file sizes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Number of clients; each request comes from one drawn uniformly.
    #[serde(default = "default_clients")]
    pub clients: u32,
    /// Total number of requests.
    pub requests: u32,
    /// When requests arrive.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Size of the file each request asks for.
    pub file_size: FileSize,
}

fn default_clients() -> u32 {
    10
}

/// When requests reach the server's request queue.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// All requests are queued at time zero (the thesis's experiments).
    #[default]
    AtStart,
    /// `size` requests every `every_s` seconds, the first batch at zero (the
    /// appendix's `generate()`: 4999 requests every 5 s).
    Batches { size: u32, every_s: f64 },
    /// A Poisson process of `rate_per_s` requests per second.
    Poisson { rate_per_s: f64 },
}

/// The file size of each request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FileSize {
    /// Every file has `bytes` bytes.
    Fixed { bytes: u64 },
    /// Uniform integer in `[min_bytes, max_bytes]`.
    Uniform { min_bytes: u64, max_bytes: u64 },
    /// The SPECweb99 file set: 4 classes of 9 files (0.1–0.9 KB … 100–900 KB).
    Zipfset {
        /// Classes to draw from (0–3); the class mix is renormalised over them.
        #[serde(default = "all_classes")]
        classes: Vec<u8>,
        /// `specweb` (SPECweb99 class mix and Zipf file popularity) or `uniform`.
        #[serde(default)]
        popularity: Popularity,
    },
    /// One of these sizes, uniformly at random (a directory of real files
    /// is turned into this list by the front).
    List { bytes: Vec<u64> },
}

fn all_classes() -> Vec<u8> {
    vec![0, 1, 2, 3]
}

/// How files of the SPECweb99 set are chosen.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Popularity {
    /// SPECweb99's class mix and Zipf popularity within each class.
    #[default]
    Specweb,
    /// Every file of the chosen classes equally likely.
    Uniform,
}

/// The server side that turns requests into packets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Sender {
    /// `paced`: the thesis scheduler loop.
    #[serde(default)]
    pub kind: SenderKind,
    /// Period of the scheduler loop, milliseconds (appendix: 0.020 s).
    #[serde(default = "default_tick_ms")]
    pub tick_ms: f64,
    /// Packets taken per tick, one per queued request in turn (appendix: 4).
    #[serde(default = "default_packets_per_tick")]
    pub packets_per_tick: u32,
    /// Payload bytes per packet (appendix: 1024). A file of S bytes is
    /// `S / chunk_bytes + 1` packets; the last one is short, possibly empty.
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: u32,
}

impl Default for Sender {
    fn default() -> Self {
        Sender {
            kind: SenderKind::Paced,
            tick_ms: default_tick_ms(),
            packets_per_tick: default_packets_per_tick(),
            chunk_bytes: default_chunk_bytes(),
        }
    }
}

fn default_tick_ms() -> f64 {
    20.0
}
fn default_packets_per_tick() -> u32 {
    4
}
fn default_chunk_bytes() -> u32 {
    1024
}

/// Which sender model runs.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SenderKind {
    /// The thesis model: a periodic loop hands packets to the bond.
    #[default]
    Paced,
}

/// The bond: `mode` names a registered scheduler (`bondsim schedulers`), with
/// parameters either in brackets (`"flowlet[gap_us=500]"`) or as keys here.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bond {
    /// Scheduler name, optionally with `[key=value,...]` parameters.
    pub mode: String,
    /// The scheduler's parameters, checked against its declaration.
    #[serde(flatten)]
    pub options: BTreeMap<String, serde_json::Value>,
}

/// One bonded link (or `count` identical ones).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Number of identical links this entry stands for.
    #[serde(default = "default_count")]
    pub count: u32,
    /// Label used in outputs (default `linkN`).
    #[serde(default)]
    pub name: Option<String>,
    /// Time between the link's sends, milliseconds (thesis: 20; its slow interface 82).
    #[serde(default = "default_period_ms")]
    pub period_ms: f64,
    /// Uniform slowdown: every period is multiplied by this (2 = half speed).
    #[serde(default = "default_slowdown")]
    pub slowdown: f64,
    /// Extra slowdowns over time windows.
    #[serde(default)]
    pub slow_windows: Vec<SlowWindow>,
    /// Intermittent on/off slowdowns.
    #[serde(default)]
    pub intermittent: Option<Intermittent>,
    /// Replayed send timing: seconds between successive sends (one per
    /// send, cycling). The front fills it from `trace_file`.
    #[serde(default)]
    pub trace_intervals_s: Option<Vec<f64>>,
}

fn default_count() -> u32 {
    1
}
fn default_period_ms() -> f64 {
    20.0
}
fn default_slowdown() -> f64 {
    1.0
}

/// A slowdown factor applied from `start_s` (inclusive) to `end_s` (exclusive).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlowWindow {
    /// Window start, seconds.
    pub start_s: f64,
    /// Window end, seconds.
    pub end_s: f64,
    /// Factor on the period during the window.
    pub slowdown: f64,
}

/// Alternating slow and normal phases, starting with a normal phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Intermittent {
    /// Length of each slow phase (mean length if `random`), seconds.
    pub slow_s: f64,
    /// Length of each normal phase (mean length if `random`), seconds.
    pub normal_s: f64,
    /// Factor on the period during slow phases.
    pub slowdown: f64,
    /// Draw phase lengths from exponential distributions with these means.
    #[serde(default)]
    pub random: bool,
}

impl Scenario {
    /// Parses and checks a scenario given as JSON text.
    pub fn from_json(text: &str) -> Result<Scenario> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|err| {
            let path = dotted(err.path());
            let message = err.into_inner().to_string();
            // serde_json appends " at line L column C": positions in generated JSON mean nothing to a user.
            let message = match message.rfind(" at line ") {
                Some(cut) => message[..cut].to_string(),
                None => message,
            };
            Error::scenario(path, message)
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// The scenario as JSON with every default filled in.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serialises")
    }

    /// Checks values that types alone cannot (positive periods, ranges, names).
    pub fn validate(&self) -> Result<()> {
        let w = &self.workload;
        at_least("workload.clients", u64::from(w.clients), 1)?;
        at_least("workload.requests", u64::from(w.requests), 1)?;
        match &w.arrivals {
            Arrivals::AtStart => {}
            Arrivals::Batches { size, every_s } => {
                at_least("workload.arrivals.size", u64::from(*size), 1)?;
                duration("workload.arrivals.every_s", *every_s, 1.0, false)?;
            }
            Arrivals::Poisson { rate_per_s } => positive("workload.arrivals.rate_per_s", *rate_per_s)?,
        }
        match &w.file_size {
            FileSize::Fixed { .. } => {}
            FileSize::Uniform { min_bytes, max_bytes } => {
                if min_bytes > max_bytes {
                    return Err(Error::scenario(
                        "workload.file_size.max_bytes",
                        format!("must be >= min_bytes ({min_bytes}), got {max_bytes}"),
                    ));
                }
            }
            FileSize::Zipfset { classes, .. } => {
                if classes.is_empty() {
                    return Err(Error::scenario("workload.file_size.classes", "must name at least one class (0-3)"));
                }
                if let Some(bad) = classes.iter().position(|&c| c > 3) {
                    return Err(Error::scenario(
                        format!("workload.file_size.classes.{bad}"),
                        format!("SPECweb99 classes are 0, 1, 2 and 3, got {}", classes[bad]),
                    ));
                }
            }
            FileSize::List { bytes } => {
                if bytes.is_empty() {
                    return Err(Error::scenario("workload.file_size.bytes", "must hold at least one size"));
                }
            }
        }

        let s = &self.sender;
        duration("sender.tick_ms", s.tick_ms, 1e-3, false)?;
        at_least("sender.packets_per_tick", u64::from(s.packets_per_tick), 1)?;
        at_least("sender.chunk_bytes", u64::from(s.chunk_bytes), 1)?;

        let max_packets = crate::workload::max_file_bytes(&w.file_size) / u64::from(s.chunk_bytes) + 1;
        if max_packets > u64::from(u32::MAX) {
            return Err(Error::scenario(
                "workload.file_size",
                format!(
                    "a file may be cut into at most {} packets of sender.chunk_bytes, this one needs {max_packets}",
                    u32::MAX
                ),
            ));
        }

        if self.links.is_empty() {
            return Err(Error::scenario("links", "a bond needs at least one link"));
        }
        for (i, link) in self.links.iter().enumerate() {
            let p = |field: &str| format!("links.{i}.{field}");
            at_least(&p("count"), u64::from(link.count), 1)?;
            duration(&p("period_ms"), link.period_ms, 1e-3, false)?;
            factor(&p("slowdown"), link.slowdown)?;
            for (k, win) in link.slow_windows.iter().enumerate() {
                let q = |field: &str| format!("links.{i}.slow_windows.{k}.{field}");
                duration(&q("start_s"), win.start_s, 1.0, true)?;
                factor(&q("slowdown"), win.slowdown)?;
                duration(&q("end_s"), win.end_s, 1.0, false)?;
                if win.end_s <= win.start_s {
                    return Err(Error::scenario(
                        q("end_s"),
                        format!("must be > start_s ({}), got {}", win.start_s, win.end_s),
                    ));
                }
            }
            if let Some(im) = &link.intermittent {
                duration(&p("intermittent.slow_s"), im.slow_s, 1.0, false)?;
                duration(&p("intermittent.normal_s"), im.normal_s, 1.0, false)?;
                factor(&p("intermittent.slowdown"), im.slowdown)?;
            }
            if let Some(trace) = &link.trace_intervals_s {
                if trace.is_empty() {
                    return Err(Error::scenario(p("trace_intervals_s"), "a trace needs at least one interval"));
                }
                for (k, &v) in trace.iter().enumerate() {
                    duration(&format!("links.{i}.trace_intervals_s.{k}"), v, 1.0, false)?;
                }
            }
        }
        let links: u64 = self.links.iter().map(|l| u64::from(l.count)).sum();
        if links > 4096 {
            return Err(Error::scenario("links", format!("at most 4096 links in a bond, got {links}")));
        }
        crate::bond::registry::resolve(&self.bond, links as usize)?;
        Ok(())
    }

    /// Number of links after expanding `count`.
    pub fn link_count(&self) -> usize {
        self.links.iter().map(|l| l.count as usize).sum()
    }

    /// The scheduler tick of the paced sender.
    pub fn tick(&self) -> SimTime {
        SimTime::from_millis_f64(self.sender.tick_ms)
    }
}

/// Formats a serde path as `a.b.3.c`, the form `--set` takes.
fn dotted(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let parts: Vec<String> = path
        .iter()
        .filter_map(|seg| match seg {
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { variant } => Some(variant.clone()),
            Segment::Unknown => None,
        })
        .collect();
    parts.join(".")
}

/// Longest time a scenario may name: a year, far beyond any useful run and
/// far inside the nanosecond clock's 584-year range.
const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// `value` must be a finite number > 0 (factors, rates).
pub(crate) fn positive(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a number > 0, got {value}")))
    }
}

/// `value` must be a speed factor in (0, 10^6].
pub(crate) fn factor(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 && value <= 1e6 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a factor > 0 and at most 1e6, got {value}")))
    }
}

/// `value` (in units of `unit_s` seconds) must be a duration in (0, one year],
/// or [0, one year] if `zero_ok`.
pub(crate) fn duration(path: &str, value: f64, unit_s: f64, zero_ok: bool) -> Result<()> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if value.is_finite() && low_ok && value * unit_s <= MAX_SECONDS {
        Ok(())
    } else {
        let low = if zero_ok { ">= 0" } else { "> 0" };
        Err(Error::scenario(path, format!("must be a duration {low} and at most a year, got {value}")))
    }
}

/// `value` must be at least `min`.
pub(crate) fn at_least(path: &str, value: u64, min: u64) -> Result<()> {
    if value >= min {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be >= {min}, got {value}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> serde_json::Value {
        serde_json::json!({
            "workload": {"requests": 10, "file_size": {"kind": "fixed", "bytes": 102400}},
            "bond": {"mode": "rr"},
            "links": [{}, {"period_ms": 82}, {"count": 2}]
        })
    }

    fn error_of(v: serde_json::Value) -> (String, String) {
        match Scenario::from_json(&v.to_string()) {
            Err(Error::Scenario { path, message }) => (path, message),
            other => panic!("expected a scenario error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_fill_in() {
        let s = Scenario::from_json(&base().to_string()).unwrap();
        assert_eq!(s.seed, 1);
        assert_eq!(s.sender, Sender::default());
        assert_eq!(s.workload.clients, 10);
        assert_eq!(s.workload.arrivals, Arrivals::AtStart);
        assert_eq!(s.link_count(), 4);
        assert_eq!(s.links[1].period_ms, 82.0);
    }

    #[test]
    fn unknown_key_names_its_table_and_allowed_keys() {
        let mut v = base();
        v["links"][1]["perod_ms"] = 5.into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.1.perod_ms");
        assert!(msg.contains("unknown field `perod_ms`") && msg.contains("period_ms"), "{msg}");
    }

    #[test]
    fn wrong_type_names_field() {
        let mut v = base();
        v["sender"] = serde_json::json!({"tick_ms": "fast"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "sender.tick_ms");
        assert!(msg.contains("invalid type"), "{msg}");
    }

    #[test]
    fn impossible_values_name_field() {
        let mut v = base();
        v["links"][0]["period_ms"] = 0.into();
        assert_eq!(error_of(v).0, "links.0.period_ms");
        let mut v = base();
        v["workload"]["file_size"] = serde_json::json!({"kind": "uniform", "min_bytes": 9, "max_bytes": 3});
        assert_eq!(error_of(v).0, "workload.file_size.max_bytes");
        let mut v = base();
        v["links"] = serde_json::json!([]);
        assert_eq!(error_of(v).0, "links");
    }

    #[test]
    fn missing_field_is_named() {
        let mut v = base();
        v["workload"].as_object_mut().unwrap().remove("requests");
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload");
        assert!(msg.contains("missing field `requests`"), "{msg}");
    }
}
