//! THE scenario schema: every knob of a run, defined once.
//!
//! A scenario arrives as JSON (the Python front loads TOML and applies
//! `--set` overrides first). Unknown keys, wrong types and impossible values
//! are errors naming the field path, e.g. `links.1.period_ms: must be > 0`.
//! File references (`trace_file`, a directory of files) are resolved by the
//! front into inline data, so the core never touches the file system.
//!
//! This file holds [`Scenario`], its parsing and the checks across parts; each part of
//! the schema (workload, sender, network, ipfrag, host, bond, links and their failures, switch,
//! trace, capture options) is a file of this folder with its types, defaults and checks.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use bondsim_bond::error::quoted;

mod bond;
mod capture;
mod check;
mod failures;
mod host;
mod ipfrag;
mod links;
mod named;
mod network;
mod sender;
mod switch;
mod trace;
mod workload;

pub use bond::*;
pub use capture::*;
use check::*;
pub use check::{Bound, BOUNDS};
pub use failures::*;
pub use host::*;
pub use ipfrag::*;
pub use links::*;
use named::{by_name, named_enum};
pub use network::*;
pub use sender::*;
pub use switch::*;
pub use trace::*;
pub use workload::*;

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
    /// End the run at this time, seconds, even if work remains (default: when all is delivered).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Count goodput (`goodput_bps`) from this time, seconds: a warm-up left out of it (a closed
    /// loop's connections starting together, a bond before its first rebalance). Default 0.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure_from_s: Option<f64>,
    /// The run's guard: a run that has processed this many events without finishing stops
    /// with an error naming this field, so that no scenario can keep a run going for ever.
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    /// What the clients do: request files (the default), or exchange tokens (`kind = "pingpong"`).
    pub workload: Workload,
    /// How the server turns requests into packets.
    #[serde(default)]
    pub sender: Sender,
    /// Addresses and headers the packets carry (what the hash policies read).
    #[serde(default, deserialize_with = "table")]
    pub network: Network,
    /// The receiving host's IP reassembly (used when datagrams are fragmented).
    #[serde(default, deserialize_with = "table")]
    pub ipfrag: IpFrag,
    /// The clients' machines: CPU and receive queue (off by default: frames cost nothing).
    #[serde(default, skip_serializing_if = "Host::is_off", deserialize_with = "table")]
    pub host: Host,
    /// The server's machine, as `host` (off by default).
    #[serde(default, skip_serializing_if = "Host::is_off", deserialize_with = "table")]
    pub server_host: Host,
    /// The bond: its mode (scheduler), link monitor and the mode's options.
    #[serde(deserialize_with = "table")]
    pub bond: Bond,
    /// The bonded links, in order (link ids are positions after `count` expansion).
    pub links: Vec<LinkSpec>,
    /// Time series recorded for reports (`bondsim report`): off unless asked for.
    #[serde(default, skip_serializing_if = "Trace::is_off", deserialize_with = "table")]
    pub trace: Trace,
    /// The switch between the bond's links and the clients (default: a LAG hashing layer2+3
    /// over the ports with carrier, static or for a bond in 802.3ad running LACP,
    /// [`Scenario::lag`]; written without it).
    #[serde(default, skip_serializing_if = "Switch::is_default", deserialize_with = "table")]
    pub switch: Switch,
}

fn default_seed() -> u64 {
    1
}

/// The default [`Scenario::max_events`]: 40 times the largest run in the repository (the
/// engine benchmark's 10^7 packets take about 2.5·10^7 events; TCP takes a few events per
/// segment), reached after a minute or two at the engine's 10–20 million events per second.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

fn default_max_events() -> u64 {
    DEFAULT_MAX_EVENTS
}

/// The scenario text with its TCP sender's kernel preset filled in ([`sender::apply_kernel_preset`]),
/// when it names one (`sender.kernel`); none otherwise (the text is read as it is).
fn with_kernel_preset(text: &str) -> Option<String> {
    if !text.contains("\"kernel\"") {
        return None;
    }
    let mut doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let sender = doc.get_mut("sender")?.as_object_mut()?;
    sender::apply_kernel_preset(sender);
    Some(doc.to_string())
}

impl Scenario {
    /// Parses and checks a scenario given as JSON text; unset fields of the
    /// chosen kinds get their defaults (so the result prints every value in force).
    pub fn from_json(text: &str) -> Result<Scenario> {
        let filled = with_kernel_preset(text);
        let text = filled.as_deref().unwrap_or(text);
        let de = &mut serde_json::Deserializer::from_str(text);
        let mut scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|err| {
            let mut path = dotted(err.path());
            let mut message = err.into_inner().to_string();
            // serde_json appends " at line L column C": positions in generated JSON mean nothing to a user.
            if let Some(cut) = message.rfind(" at line ") {
                message.truncate(cut);
            }
            // An error inside a tagged part (`sender`, a link) carries its own path.
            if let Some((inner, rest)) = message.split_once(PATH_SEP) {
                if !inner.is_empty() {
                    path = if path.is_empty() { inner.to_string() } else { format!("{path}.{inner}") };
                }
                message = rest.to_string();
            }
            if let Some(field) = field_at_fault(text, &path, &message) {
                path = field;
            }
            let message = in_users_words(&message, || tagged_kinds(text, &path));
            Error::scenario(path, message)
        })?;
        scenario.fill_derived_defaults();
        scenario.validate()?;
        Ok(scenario)
    }

    /// The scenario as JSON with every default filled in.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serialises")
    }

    /// The one default that depends on another field: the header size follows the protocol.
    fn fill_derived_defaults(&mut self) {
        let tcp_options = match self.sender {
            Sender::Mptcp(_) => TCP_TIMESTAMP_BYTES + MPTCP_DSS_BYTES,
            Sender::Tcp(_) => TCP_TIMESTAMP_BYTES,
            _ => 0,
        };
        let n = &mut self.network;
        // TCP's segments carry the timestamp option in every header (RFC 7323): 52 bytes; an
        // MPTCP subflow's data segments the DSS option too: 76.
        n.header_bytes.get_or_insert(n.protocol.header_bytes() + tcp_options);
        let header = self.l3_header_bytes();
        let mtu = self.mtu();
        if let Some(t) = self.sender.tcp_mut() {
            // The MSS a 1500-byte MTU gives with timestamps: 1500 − 52 = 1448.
            t.mss.get_or_insert(mtu.saturating_sub(header).max(1));
        }
    }

    /// Checks values that types alone cannot (positive periods, ranges, names).
    pub fn validate(&self) -> Result<()> {
        if let Some(stop) = self.stop_s {
            duration("stop_s", stop, 1.0, false)?;
        }
        if let Some(from) = self.measure_from_s {
            duration("measure_from_s", from, 1.0, true)?;
            if self.stop_s.is_some_and(|stop| from >= stop) {
                return Err(Error::scenario(
                    "measure_from_s",
                    format!("must be before stop_s ({} s), got {} s", num(self.stop_s.unwrap_or(0.0)), num(from)),
                ));
            }
        }
        at_least("max_events", self.max_events, 1)?;
        self.validate_trace()?;
        self.validate_workload()?;
        self.validate_sender()?;
        self.validate_network()?;
        self.validate_links()?;
        self.validate_ipfrag()?;
        self.validate_host()?;
        self.validate_switch()?;
        self.validate_bond()
    }

    /// Number of links after expanding `count`.
    pub fn link_count(&self) -> usize {
        self.links.iter().map(|l| l.base.count as usize).sum()
    }

    /// Payload bytes per packet.
    pub fn chunk_bytes(&self) -> u32 {
        self.sender.chunk_bytes()
    }

    /// Whether the clients send the files (`workload.direction = "upload"`).
    pub fn upload(&self) -> bool {
        matches!(&self.workload, Workload::Requests(w) if w.direction == Direction::Upload)
    }

    /// IPv4 + transport header bytes per packet, plus the VLAN tag if any.
    /// The bond's MTU: its smallest link's (Linux gives a bond's slaves the bond's MTU;
    /// the thesis's paced interface has none and counts as Ethernet's 1500).
    pub fn mtu(&self) -> u32 {
        self.links.iter().filter_map(|l| l.model.mtu()).min().unwrap_or(default_mtu())
    }

    /// Whether datagrams are cut into IP fragments: a `cbr` sender of UDP whose
    /// datagrams (payload + headers) exceed the MTU (`ip_finish_output` →
    /// `ip_fragment` when `skb->len > mtu`).
    pub fn fragments(&self) -> bool {
        matches!(self.sender, Sender::Cbr(_))
            && self.network.protocol == Protocol::Udp
            && self.chunk_bytes() + self.l3_header_bytes() > self.mtu()
    }

    pub fn l3_header_bytes(&self) -> u32 {
        self.network.header_bytes.unwrap_or(self.network.protocol.header_bytes())
            + if self.network.vlan.is_some() { 4 } else { 0 }
    }

    /// Every link spec, once per link (after `count` expansion), with its id.
    pub fn each_link(&self) -> impl Iterator<Item = (usize, &LinkSpec)> {
        self.links.iter().flat_map(|spec| std::iter::repeat_n(spec, spec.base.count as usize)).enumerate()
    }
}

/// A serde error in the words of a scenario file, the one place they are put so: `must be WHAT IS
/// ALLOWED, got THE VALUE` for a value of the wrong type or range (Rust's type names out: `f64` is a
/// number, `u32` a whole number and its range, `internally tagged enum FileSize` a table with one of its
/// kinds, which `kinds` finds), a name none of those allowed (an enum's variant) or an unknown field with
/// the one most likely meant, a hint where a value was typed as another kind (TOML's and `--set`'s: `1`
/// is a number, `"1"` a string). A message that is not serde's is left as it is.
fn in_users_words(message: &str, kinds: impl FnOnce() -> Option<(String, Vec<String>)>) -> String {
    use bondsim_bond::error::{one_of, unknown_field};
    // the names serde lists after "expected" (`a`, `b`; an earlier "did you mean" is not one of them)
    let names = |list: &str| -> Vec<String> {
        let list = list.split_once("expected ").map_or("", |(_, names)| names);
        list.split('`').skip(1).step_by(2).map(str::to_string).collect()
    };
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some((given, list)) = rest.split_once('`') {
            let allowed = names(list);
            return unknown_field(given, &allowed.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        if let Some((given, list)) = rest.split_once('`') {
            let allowed = names(list);
            return one_of(&allowed.iter().map(String::as_str).collect::<Vec<_>>(), given);
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        if let Some((length, expected)) = rest.split_once(", expected ") {
            return format!("must be {}, got a list of {length}", allowed(expected, kinds));
        }
    }
    let Some(rest) = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: ")) else {
        return message.to_string();
    };
    let Some(at) = rest.rfind(", expected ") else {
        return message.to_string();
    };
    let (unexpected, expected) = (&rest[..at], &rest[at + ", expected ".len()..]);
    let got = given(unexpected);
    let mut text = format!("must be {}, got {got}", allowed(expected, kinds));
    let number = expected.starts_with(['u', 'i', 'f']) && expected[1..].chars().all(|c| c.is_ascii_digit());
    if let Some(inner) = unexpected.strip_prefix("string ") {
        let inner = inner.trim_matches('"');
        if number && inner.trim().parse::<f64>().is_ok_and(f64::is_finite) {
            text.push_str(" (a number is written without quotes)");
        } else if expected == "a boolean" && matches!(inner, "true" | "false") {
            text.push_str(" (true and false are written without quotes)");
        }
    }
    if unexpected.starts_with("floating point") && number && !expected.starts_with('f') {
        let whole = got.parse::<f64>().ok().filter(|x| x.fract() == 0.0);
        if whole.is_some_and(|x| x.abs() >= 2f64.powi(63)) {
            // `18446744073709551616`: TOML reads a whole number too large for 64 bits as a float
            text.push_str(" (a whole number beyond 64 bits reads as a float)");
        } else if whole.is_some() {
            text.push_str(" (write it without a decimal point or exponent)");
        }
    }
    if unexpected == "map" && expected == "a sequence" {
        // `--set links.0.failures.0.down_s=1` where the scenario has no `failures` makes a table.
        text.push_str(" (give the list whole, in [ ]: an index in --set reaches into a list already there)");
    }
    text
}

/// What serde's `expected` part of a message allows, in a scenario file's words.
fn allowed(expected: &str, kinds: impl FnOnce() -> Option<(String, Vec<String>)>) -> String {
    let whole = |low: i128, high: i128| format!("a whole number from {low} to {high}");
    match expected {
        "f64" | "f32" => "a number".into(),
        "u8" => whole(0, u8::MAX.into()),
        "u16" => whole(0, u16::MAX.into()),
        "u32" => whole(0, u32::MAX.into()),
        "u64" | "usize" => whole(0, u64::MAX.into()),
        "i32" => whole(i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => whole(i64::MIN.into(), i64::MAX.into()),
        "a boolean" => "true or false".into(),
        "a string" => "text, in quotes".into(),
        "a sequence" => "a list, in [ ]".into(),
        "a map" | "a table of fields" => "a table of fields".into(),
        "string or map" => "a name, in quotes, or a table of fields".into(),
        _ if expected.starts_with("struct ") => "a table of fields".into(),
        _ if expected.starts_with("internally tagged enum ") => match kinds() {
            Some((tag, kinds)) => {
                let kinds: Vec<String> = kinds.iter().map(|k| format!("`{k}`")).collect();
                format!("a table with `{tag}` = one of {}", kinds.join(", "))
            }
            None => "a table of fields".into(),
        },
        _ => match expected.strip_prefix("an array of length ") {
            Some(n) => format!("a list of {n} values"),
            None => expected.to_string(),
        },
    }
}

/// What serde's `unexpected` part of a message names, as the user wrote it.
fn given(unexpected: &str) -> String {
    for prefix in ["integer ", "floating point ", "boolean "] {
        if let Some(value) = unexpected.strip_prefix(prefix) {
            return value.trim_matches('`').to_string();
        }
    }
    match unexpected {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        "unit" | "null" => "nothing (null)".into(),
        _ => unexpected.strip_prefix("string ").map_or_else(|| unexpected.to_string(), str::to_string),
    }
}

/// The tag (`kind`, teamd's link watch's `name`) and the kinds of the internally tagged table at `path`
/// of the scenario `text`, found by asking serde about a kind no table has.
fn tagged_kinds(text: &str, path: &str) -> Option<(String, Vec<String>)> {
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let pointer: String =
        path.split('.').map(|key| format!("/{}", key.replace('~', "~0").replace('/', "~1"))).collect();
    ["kind", "name"].into_iter().find_map(|tag| {
        let mut trial = doc.clone();
        *trial.pointer_mut(&pointer)? = serde_json::json!({ tag: "\u{1}" });
        let trial = trial.to_string();
        let de = &mut serde_json::Deserializer::from_str(&trial);
        let err = serde_path_to_error::deserialize::<_, Scenario>(de).err()?;
        let message = err.inner().to_string();
        let message = message.rsplit(PATH_SEP).next()?; // (an error inside a tagged part carries its path)
        let list = message.strip_prefix("unknown variant `\u{1}`, expected ")?;
        let kinds = list.split('`').skip(1).step_by(2).map(str::to_string).collect();
        Some((tag.to_string(), kinds))
    })
}

/// The field of a tagged table that a bad value is in. serde's derive reads an internally tagged
/// enum (`file_size`, `arrivals`, `jitter`, `loss_model`) whole before its variant, so an invalid
/// value inside is reported at the table (`workload.file_size`); the field at fault is the one
/// whose removal makes that error go (`workload.file_size.bytes`). Only on an error, and only for
/// a value of the wrong type or range (an unknown field is already named in its message).
fn field_at_fault(text: &str, path: &str, message: &str) -> Option<String> {
    if !(message.starts_with("invalid value") || message.starts_with("invalid type")) {
        return None;
    }
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let pointer: String =
        path.split('.').map(|key| format!("/{}", key.replace('~', "~0").replace('/', "~1"))).collect();
    let table = doc.pointer(&pointer)?.as_object()?;
    if !table.contains_key("kind") {
        return None;
    }
    let key = table.keys().filter(|key| *key != "kind").find(|key| {
        let mut trial = doc.clone();
        if let Some(t) = trial.pointer_mut(&pointer).and_then(|v| v.as_object_mut()) {
            t.remove(key.as_str());
        }
        serde_json::from_value::<Scenario>(trial).map_or_else(|err| !err.to_string().contains(message), |_| true)
    })?;
    Some(format!("{path}.{key}"))
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

/// Separates a nested field path from its message in errors raised inside a
/// `try_from` (serde reports them at the enclosing value; [`Scenario::from_json`]
/// joins both paths).
const PATH_SEP: char = '\u{1f}';

fn nested(path: &str, message: impl std::fmt::Display) -> String {
    format!("{path}{PATH_SEP}{message}")
}

/// Removes `kind` from `map` (or takes `default`); it must be one of `kinds`.
fn take_kind(
    map: &mut serde_json::Map<String, serde_json::Value>,
    default: &str,
    kinds: &[(&str, &[&str])],
) -> std::result::Result<String, String> {
    let names: Vec<&str> = kinds.iter().map(|(k, _)| *k).collect();
    match map.remove("kind") {
        None => Ok(default.to_string()),
        Some(serde_json::Value::String(kind)) if names.contains(&kind.as_str()) => Ok(kind),
        Some(serde_json::Value::String(kind)) => Err(nested("kind", bondsim_bond::error::one_of(&names, &kind))),
        Some(other) => Err(nested("kind", format!("must be one of {}, got {other}", quoted(&names)))),
    }
}

/// Deserialises one part of a tagged value, keeping the path of a nested error.
fn part<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> std::result::Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|err| nested(&dotted(err.path()), err.into_inner()))
}

/// A part of the scenario that is a table of fields. serde's derive also reads a struct from a list
/// of its fields in order (`trace = [5, 2, 100]`, `switch = []`), which no scenario file means.
fn table<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::de::Error as _;
    let value = serde_json::Value::deserialize(d)?;
    let got = match &value {
        serde_json::Value::Object(_) => return part(value).map_err(D::Error::custom),
        serde_json::Value::Array(_) => "a list".to_string(),
        serde_json::Value::Null => "nothing (null)".to_string(),
        other => other.to_string(),
    };
    Err(D::Error::custom(format!("must be a table of fields, got {got}")))
}

/// A value with every field at its default (the serde attributes are the one place defaults are set).
fn from_defaults<T: serde::de::DeserializeOwned>() -> T {
    serde_json::from_value(serde_json::Value::Object(serde_json::Map::new())).expect("every field has a default")
}

/// The fields serde's derive reads for the struct `T`, in declaration order: the list the derive
/// hands [`serde::Deserializer::deserialize_struct`]. A tagged part's field lists are derived from
/// its structs, so that a field added to a struct is in them.
fn fields_of<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    /// A deserializer that keeps the field names it is asked for and reads nothing.
    struct Fields(Option<&'static [&'static str]>);
    impl<'de> de::Deserializer<'de> for &mut Fields {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> std::result::Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> std::result::Result<V::Value, Self::Error> {
            self.0 = Some(fields);
            Err(de::Error::custom("fields recorded"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
            unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields = Fields(None);
    let _ = T::deserialize(&mut fields);
    fields.0.expect("a struct of named fields")
}

/// Like [`from_defaults`] for a value with one required field.
fn from_defaults_with<T: serde::de::DeserializeOwned>(key: &str, value: serde_json::Value) -> T {
    let mut map = serde_json::Map::new();
    map.insert(key.to_string(), value);
    serde_json::from_value(serde_json::Value::Object(map)).expect("every other field has a default")
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn base() -> serde_json::Value {
        serde_json::json!({
            "workload": {"requests": 10, "file_size": {"kind": "fixed", "bytes": 102400}},
            "bond": {"mode": "rr"},
            "links": [{}, {"period_ms": 82}, {"count": 2}]
        })
    }

    pub(super) fn error_of(v: serde_json::Value) -> (String, String) {
        match Scenario::from_json(&v.to_string()) {
            Err(Error::Scenario { path, message }) => (path, message),
            other => panic!("expected a scenario error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_fill_in() {
        let s = Scenario::from_json(&base().to_string()).unwrap();
        assert_eq!(s.seed, 1);
        assert_eq!(s.sender, Sender::Paced(PacedSender { chunk_bytes: 1024, tick_ms: 20.0, packets_per_tick: 4 }));
        let Workload::Requests(w) = &s.workload else { panic!("requests by default") };
        assert_eq!(w.clients, 10);
        assert_eq!(w.arrivals, Arrivals::AtStart {});
        assert_eq!(s.link_count(), 4);
        assert_eq!(s.links[1], LinkSpec::paced(82.0));
        assert_eq!(s.links[0], LinkSpec::paced(20.0));
        assert_eq!(s.bond.miimon, 100.0);
        assert_eq!(s.network.header_bytes, Some(40));
    }

    #[test]
    fn unknown_key_names_its_table_and_allowed_keys() {
        let mut v = base();
        v["links"][1]["perod_ms"] = 5.into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.1.perod_ms");
        assert!(msg.starts_with("unknown field `perod_ms` (did you mean `period_ms`?), expected one of"), "{msg}");
    }

    #[test]
    fn wrong_type_names_field() {
        let mut v = base();
        v["sender"] = serde_json::json!({"tick_ms": "fast"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "sender.tick_ms");
        assert_eq!(msg, "must be a number, got \"fast\"");
    }

    /// serde's words never reach the user: every message of a value of the wrong type, length or name
    /// says what is allowed and what was given, and a misspelt name the one most likely meant.
    #[test]
    fn serde_errors_are_put_in_the_users_words() {
        let cases: Vec<(serde_json::Value, &str, &str)> =
            vec![
            (json!({"workload": {"file_size": 5}}), "workload.file_size",
             "must be a table with `kind` = one of `fixed`, `uniform`, `zipfset`, `list`, got 5"),
            (json!({"links": [{"rate_mbps": 100, "jitter": 3}]}), "links.0.jitter",
             "must be a table with `kind` = one of `uniform`, `exponential`, `normal`, `choice`, got 3"),
            (json!({"bond": {"mode": "rr", "link_watch": 5}}), "bond.link_watch",
             "must be a table with `name` = one of `ethtool`, `arp_ping`, got 5"),
            (json!({"links": [{"rate_mbps": "fast"}]}), "links.0.rate_mbps", "must be a number, got \"fast\""),
            (json!({"workload": {"requests": 1.5}}), "workload.requests",
             "must be a whole number from 0 to 4294967295, got 1.5"),
            (json!({"workload": {"requests": "10"}}), "workload.requests",
             "must be a whole number from 0 to 4294967295, got \"10\" (a number is written without quotes)"),
            (json!({"seed": -1}), "seed", "must be a whole number from 0 to 18446744073709551615, got -1"),
            (json!({"sender": {"kind": "tcp", "hystart": "true"}}), "sender.hystart",
             "must be true or false, got \"true\" (true and false are written without quotes)"),
            (json!({"sender": {"kind": "tcp", "tcp_rmem": [1, 2]}}), "sender.tcp_rmem",
             "must be a list of 3 values, got a list of 2"),
            (json!({"name": 5}), "name", "must be text, in quotes, got 5"),
            (json!({"links": 5}), "links", "must be a list, in [ ], got 5"),
            (json!({"trace": [5, 2]}), "trace", "must be a table of fields, got a list"),
            (json!({"bond": 5}), "bond", "must be a table of fields, got 5"),
            (json!({"workload": {"file_size": {"kind": "fixd"}}}), "workload.file_size.kind",
             "must be one of `fixed`, `uniform`, `zipfset`, `list`, got \"fixd\"; did you mean `fixed`?"),
            (json!({"bond": {"mode": "rr", "arp_validate": "filtr"}}), "bond.arp_validate",
             "must be one of `none`, `active`, `backup`, `all`, `filter`, `filter_active`, `filter_backup`, \
              got \"filtr\"; did you mean `filter`?"),
            (json!({"sender": {"kind": "tcpp"}}), "sender.kind",
             "must be one of `paced`, `window`, `cbr`, `tcp`, `mptcp`, got \"tcpp\"; did you mean `tcp`?"),
            (json!({"links": [{"rate_mbps": 100, "placement": "shapr"}]}), "links.0.placement",
             "must be one of `nic`, `shaper`, `tun`, got \"shapr\"; did you mean `shaper`?"),
            (json!({"workload": {"direction": "up"}}), "workload.direction",
             "must be one of `download`, `upload`, got \"up\"; did you mean `upload`?"),
            (json!({"sender": {"kind": "tcp", "tcp_congestion_control": "cubix"}}), "sender.tcp_congestion_control",
             "must be one of `cubic`, `reno`, `bbr`, got \"cubix\"; did you mean `cubic`?"),
            (json!({"switch": {"lagg": "static"}}), "switch.lagg",
             "unknown field `lagg` (did you mean `lag`?), expected one of `lag`, `hash`, `stp`, `forward_delay_s`, \
              `edge_ports`, `auto_edge`, `ageing_s`"),
            (json!({"bond": {"mode": "rr", "miimom": 100}}), "bond.miimom",
             "`miimom` is not a field of the bond nor a parameter of any mode (those of balance-rr: \
              packets_per_slave); did you mean `miimon`?"),
            (json!({"bond": {"mode": "balance-r"}}), "bond.mode", "did you mean `balance-rr`?"),
        ];
        for (change, field, says) in cases {
            let mut v = base();
            merge(&mut v, change);
            let (path, msg) = error_of(v);
            assert_eq!(path, field, "{msg}");
            assert!(msg.ends_with(says), "{field}: {msg}\n  wanted: {says}");
            for word in ["invalid type", "invalid value", "expected f64", "expected u", "tagged enum", "variant"] {
                assert!(!msg.contains(word), "{field}: serde's words: {msg}");
            }
        }
    }

    use serde_json::json;

    /// `change`'s fields put into `v`, tables merged.
    fn merge(v: &mut serde_json::Value, change: serde_json::Value) {
        match (v, change) {
            (serde_json::Value::Object(into), serde_json::Value::Object(from)) => {
                for (key, value) in from {
                    match into.get_mut(&key) {
                        Some(old) if old.is_object() && value.is_object() => merge(old, value),
                        _ => {
                            into.insert(key, value);
                        }
                    }
                }
            }
            (v, change) => *v = change,
        }
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
    fn kinds_are_tagged_and_fields_of_another_kind_are_named() {
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 100, "jitter": {"kind": "uniform", "max_us": "x"}});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.jitter.max_us", "the field of the tagged table, not the table");
        assert_eq!(msg, "must be a number, got \"x\"");
        for (at, table, field) in [
            ("workload", serde_json::json!({"kind": "fixed", "bytes": -1}), "file_size.bytes"),
            (
                "workload",
                serde_json::json!({"kind": "uniform", "min_bytes": 1, "max_bytes": "9"}),
                "file_size.max_bytes",
            ),
            ("workload", serde_json::json!({"kind": "poisson", "rate_per_s": true}), "arrivals.rate_per_s"),
        ] {
            let mut v = base();
            let name = field.split('.').next().unwrap();
            v[at][name] = table;
            let (path, msg) = error_of(v);
            assert_eq!(path, format!("{at}.{field}"), "{msg}");
            assert!(msg.starts_with("must be a"), "{msg}");
        }
        let mut v = base();
        v["links"][1]["delay_us"] = 5.into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.1.delay_us");
        assert!(msg.contains("kind = \"rate\""), "{msg}");
        let mut v = base();
        v["links"][0] = serde_json::json!({"kind": "rate", "period_ms": 5});
        assert_eq!(error_of(v).0, "links.0.period_ms");
        let mut v = base();
        v["links"][0] = serde_json::json!({"kind": "rate"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0");
        assert!(msg.contains("missing field `rate_mbps`"), "{msg}");
        let mut v = base();
        v["links"][0] = serde_json::json!({"kind": "optical"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.kind");
        assert!(msg.contains("`paced`, `rate`"), "{msg}");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "window", "tick_ms": 5});
        assert_eq!(error_of(v), ("sender.tick_ms".into(), "only for kind = \"paced\", not \"window\"".into()));
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "cbr"});
        assert!(error_of(v).1.contains("missing field `rate_mbps`"));
    }

    #[test]
    fn the_checked_scenario_names_every_kind_and_default() {
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 100});
        v["sender"] = serde_json::json!({"kind": "window"});
        let s = Scenario::from_json(&v.to_string()).unwrap();
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["links"][0]["kind"], "rate");
        assert_eq!(json["links"][0]["txqueuelen"], 1000);
        assert_eq!(json["links"][1]["kind"], "paced");
        assert_eq!(json["sender"]["window_pkts"], 64);
        assert_eq!(json["sender"]["kind"], "window");
        // What it prints parses back to the same scenario.
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap().to_json(), s.to_json());
    }

    #[test]
    fn durations_that_round_to_zero_nanoseconds_are_errors_naming_the_field() {
        let with = |path: &[&str], value: serde_json::Value| {
            let mut v = base();
            let mut node = &mut v;
            for key in &path[..path.len() - 1] {
                node = match key.parse::<usize>() {
                    Ok(i) => &mut node[i],
                    Err(_) => &mut node[*key],
                };
            }
            node[path[path.len() - 1]] = value;
            v
        };
        for tiny in [1e-7, 1e-300, 4e-7] {
            let (path, msg) = error_of(with(&["links", "1", "period_ms"], tiny.into()));
            assert_eq!(path, "links.1.period_ms");
            assert!(msg.contains("at least 1 ns") && msg.contains("rounds to 0 ns"), "{msg}");
        }
        let (_, msg) = error_of(with(&["links", "1", "period_ms"], 1e-7.into()));
        assert!(msg.contains("got 1e-7 ms"), "{msg}");
        // One nanosecond is the clock's tick: allowed, for a packet small enough that a period of
        // 1 ns is a rate a link has (41 bytes: 328 Gbit/s).
        let mut v = with(&["links", "1", "period_ms"], 1e-6.into());
        v["sender"] = serde_json::json!({"chunk_bytes": 1});
        Scenario::from_json(&v.to_string()).unwrap();
        let mut v = base();
        v["sender"] = serde_json::json!({"tick_ms": 1e-9});
        assert_eq!(error_of(v).0, "sender.tick_ms");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "window", "ack_delay_us": 1e-4});
        let (path, msg) = error_of(v);
        assert_eq!(path, "sender.ack_delay_us");
        assert!(msg.starts_with("must be 0 or at least 1 ns"), "{msg}");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "window", "ack_delay_us": 0});
        Scenario::from_json(&v.to_string()).unwrap();
        let mut v = base();
        v["bond"]["miimon"] = 1e-7.into();
        assert_eq!(error_of(v).0, "bond.miimon");
        // Linux's monitor intervals and delays are whole milliseconds.
        for field in ["miimon", "updelay", "downdelay", "peer_notif_delay", "arp_interval"] {
            let mut v = base();
            v["bond"]["miimon"] = 10.into();
            v["bond"][field] = 2.5.into();
            let (path, msg) = error_of(v);
            assert_eq!(path, format!("bond.{field}"));
            assert!(msg.contains("whole number of milliseconds") && msg.contains("2.5"), "{msg}");
        }
        // The tick rate is one a kernel can be built with.
        let mut v = base();
        v["bond"]["hz"] = 200.into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "bond.hz");
        assert!(msg.contains("100, 250, 300, 1000") && msg.contains("200"), "{msg}");
        // A slowdown factor that shrinks a 1 ns period to nothing names the factor.
        let mut v = base();
        v["sender"] = serde_json::json!({"chunk_bytes": 1});
        v["links"][0] = serde_json::json!({"period_ms": 1e-6, "slowdown": 0.1});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.slowdown");
        assert!(msg.contains("links.0.period_ms") && msg.contains("0 ns"), "{msg}");
        let mut v = base();
        v["sender"] = serde_json::json!({"chunk_bytes": 1});
        v["links"][0] =
            serde_json::json!({"period_ms": 1e-6, "slow_windows": [{"start_s": 0, "end_s": 1, "slowdown": 0.2}]});
        assert_eq!(error_of(v).0, "links.0.slow_windows.0.slowdown");
        let mut v = base();
        v["links"][0] = serde_json::json!({"trace_intervals_s": [0.01, 1e-12]});
        assert_eq!(error_of(v).0, "links.0.trace_intervals_s.1");
    }

    #[test]
    fn a_kinds_field_list_is_its_structs() {
        assert_eq!(fields_of::<PacedSender>(), ["chunk_bytes", "tick_ms", "packets_per_tick"]);
        // Every field TCP's sender prints (its options set) is one the list holds, in its order.
        let tcp = TcpSender { mss: Some(1448), trace_ms: Some(1.0), message_bytes: Some(8), ..from_defaults() };
        let printed = serde_json::to_value(tcp).unwrap();
        let printed: Vec<&str> = printed.as_object().unwrap().keys().map(String::as_str).collect();
        let mut listed = fields_of::<TcpSender>().to_vec();
        listed.sort_unstable();
        assert_eq!(printed, listed);
    }

    #[test]
    fn the_run_guard_is_a_field_with_a_default() {
        let s = Scenario::from_json(&base().to_string()).unwrap();
        assert_eq!(s.max_events, DEFAULT_MAX_EVENTS);
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["max_events"], DEFAULT_MAX_EVENTS);
        let mut v = base();
        v["max_events"] = 0.into();
        assert_eq!(error_of(v).0, "max_events");
    }
}
