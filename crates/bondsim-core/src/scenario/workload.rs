//! `[workload]`: what the clients do (requests for files, or ping-pong tokens).

use super::*;

/// What the clients do, chosen by `kind`: `requests` (the default: clients ask the
/// server for files) or `pingpong` (client/server pairs bounce a token back and forth).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub enum Workload {
    /// Clients request files from the server.
    Requests(Requests),
    /// Client/server pairs exchange a token over TCP (a request/response workload).
    PingPong(PingPong),
}

impl Workload {
    /// Every kind with its fields (its struct's), for errors naming a field of another kind.
    fn kinds() -> [(&'static str, &'static [&'static str]); 2] {
        [("requests", fields_of::<Requests>()), ("pingpong", fields_of::<PingPong>())]
    }
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for Workload {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        let kinds = Workload::kinds();
        let kind = take_kind(&mut map, "requests", &kinds)?;
        let fields = kinds.iter().find(|(k, _)| *k == kind).expect("checked").1;
        if let Some(key) = map.keys().find(|key| !fields.contains(&key.as_str())) {
            let other = kinds.iter().find(|(_, f)| f.contains(&key.as_str()));
            let message = match other {
                Some((owner, _)) => format!("only for kind = \"{owner}\", not \"{kind}\""),
                None => format!("unknown field `{key}`, expected one of `kind`, {}", quoted(fields)),
            };
            return Err(nested(key, message));
        }
        let body = serde_json::Value::Object(map);
        Ok(if kind == "pingpong" { Workload::PingPong(part(body)?) } else { Workload::Requests(part(body)?) })
    }
}

/// A request workload prints as before (no `kind`); a ping-pong one with its `kind`.
impl Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a> {
            kind: &'static str,
            #[serde(flatten)]
            body: &'a PingPong,
        }
        match self {
            Workload::Requests(r) => r.serialize(s),
            Workload::PingPong(p) => Tagged { kind: "pingpong", body: p }.serialize(s),
        }
    }
}

/// `workload.kind = "pingpong"`: `pairs` client/server pairs, each its own TCP
/// connection, bounce a token of `token_bytes` back and forth `rounds` times. The
/// server's end writes the first token; each end writes the next one as soon as it has
/// read the whole token from the other (seed 001's producer/consumer pairs, Fig. 5).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PingPong {
    /// Client/server pairs (one client each).
    #[serde(default = "default_pairs")]
    pub pairs: u32,
    /// Bytes of one token (one `send()` of the application).
    pub token_bytes: u64,
    /// Exchanges per pair: the server's token out and the client's back.
    #[serde(default = "default_rounds")]
    pub rounds: u32,
}

fn default_pairs() -> u32 {
    1
}

fn default_rounds() -> u32 {
    100
}

/// The requests: how many, from how many clients, when, for which file sizes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    /// Number of clients; each request comes from one drawn uniformly.
    #[serde(default = "default_clients")]
    pub clients: u32,
    /// Total number of requests.
    pub requests: u32,
    /// Request `i` comes from client `i % clients` instead of a random one.
    #[serde(default)]
    pub clients_in_turn: bool,
    /// When requests arrive.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Size of the file each request asks for.
    pub file_size: FileSize,
    /// Which way the files go: `download` (the server sends them out through the bond,
    /// the default) or `upload` (each client sends its file to the server: the data
    /// comes in through the switch, which places it on a port, and the bond carries the
    /// server's ACKs; iperf from the clients, the thesis's Table 2). TCP only.
    #[serde(default)]
    pub direction: Direction,
}

/// Which way a request's file travels.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the server, out through the bond, to the client.
    #[default]
    Download,
    /// From the client, in through the switch and the bond, to the server.
    Upload,
}

fn default_clients() -> u32 {
    10
}

/// When requests reach the server's request queue.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// All requests are queued at time zero (the thesis's experiments). (A variant with no
    /// fields rather than a unit one: serde then refuses a stray field, as for the others.)
    AtStart {},
    /// `size` requests every `every_s` seconds, the first batch at zero (the
    /// appendix's `generate()`: 4999 requests every 5 s).
    Batches { size: u32, every_s: f64 },
    /// A Poisson process of `rate_per_s` requests per second.
    Poisson { rate_per_s: f64 },
    /// A closed loop: each client keeps `active` requests outstanding and asks
    /// again as soon as one ends (flexiclient's `-active`; the thesis's §4.4
    /// web test ran 64 per client). Request `i` comes from client `i % clients`.
    Closed { active: u32 },
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals::AtStart {}
    }
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

/// Most requests (flows), and most clients, one run may have.
const MAX_FLOWS: u32 = 10_000_000;

impl Scenario {
    pub(super) fn validate_workload(&self) -> Result<()> {
        let w = match &self.workload {
            Workload::Requests(w) => w,
            Workload::PingPong(p) => return self.validate_pingpong(p),
        };
        at_least("workload.clients", u64::from(w.clients), 1)?;
        at_least("workload.requests", u64::from(w.requests), 1)?;
        // Each request is a flow and each client a pair of addresses, with state for the whole run.
        for (field, value) in [("workload.requests", w.requests), ("workload.clients", w.clients)] {
            if value > MAX_FLOWS {
                return Err(Error::scenario(
                    field,
                    format!("at most {MAX_FLOWS} in one run (each has state for the whole run), got {value}"),
                ));
            }
        }
        let requests = f64::from(w.requests);
        match &w.arrivals {
            Arrivals::AtStart {} => {}
            Arrivals::Batches { size, every_s } => {
                at_least("workload.arrivals.size", u64::from(*size), 1)?;
                duration("workload.arrivals.every_s", *every_s, 1.0, false)?;
                let last = f64::from(w.requests.div_ceil(*size) - 1) * every_s;
                if last > MAX_SECONDS {
                    return Err(Error::scenario(
                        "workload.arrivals.every_s",
                        format!("the last batch would arrive after {} s, more than a year", num(last)),
                    ));
                }
            }
            Arrivals::Closed { active } => at_least("workload.arrivals.active", u64::from(*active), 1)?,
            Arrivals::Poisson { rate_per_s } => {
                positive("workload.arrivals.rate_per_s", *rate_per_s)?;
                if requests / rate_per_s > MAX_SECONDS {
                    return Err(Error::scenario(
                        "workload.arrivals.rate_per_s",
                        format!(
                            "{} requests at {} per second would take {} s to arrive on average, more than a year",
                            w.requests,
                            num(*rate_per_s),
                            num(requests / rate_per_s)
                        ),
                    ));
                }
            }
        }
        if w.direction == Direction::Upload {
            match &self.sender {
                Sender::Tcp(t) if t.ack_path == AckPath::Ideal => {
                    return Err(Error::scenario(
                        "sender.ack_path",
                        "\"ideal\" idealises the clients' return path, which carries an upload's data: \
                         use \"links\" with workload.direction = \"upload\"",
                    ));
                }
                Sender::Tcp(_) => {}
                _ => {
                    return Err(Error::scenario(
                        "workload.direction",
                        format!(
                            "\"upload\" needs sender.kind = \"tcp\" (the clients send through their TCP stacks), \
                             not \"{}\"",
                            self.sender.kind()
                        ),
                    ));
                }
            }
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
        Ok(())
    }

    fn validate_pingpong(&self, p: &PingPong) -> Result<()> {
        at_least("workload.pairs", u64::from(p.pairs), 1)?;
        if p.pairs > MAX_FLOWS {
            return Err(Error::scenario(
                "workload.pairs",
                format!("at most {MAX_FLOWS} in one run (each has state for the whole run), got {}", p.pairs),
            ));
        }
        at_least("workload.token_bytes", p.token_bytes, 1)?;
        at_least("workload.rounds", u64::from(p.rounds), 1)?;
        let Sender::Tcp(t) = &self.sender else {
            return Err(Error::scenario(
                "workload.kind",
                format!("\"pingpong\" runs over TCP: set sender.kind = \"tcp\" (got \"{}\")", self.sender.kind()),
            ));
        };
        if t.ack_path == AckPath::Ideal {
            return Err(Error::scenario(
                "sender.ack_path",
                "must be \"links\" with workload.kind = \"pingpong\": the clients' tokens travel the reverse links",
            ));
        }
        // Both directions of a pair are one flow of `rounds` tokens, each cut into segments.
        let segments = u64::from(p.rounds) * p.token_bytes.div_ceil(u64::from(self.chunk_bytes()));
        if segments > u64::from(u32::MAX) {
            return Err(Error::scenario(
                "workload.rounds",
                format!("rounds × segments per token must be at most {}, got {segments}", u32::MAX),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{base, error_of};
    use super::*;

    #[test]
    fn every_arrivals_kind_refuses_a_stray_field_and_at_start_keeps_its_form() {
        for (kind, extra) in [("at_start", "bogus"), ("at_start", "rate_per_s"), ("poisson", "size")] {
            let mut v = base();
            v["workload"]["arrivals"] = serde_json::json!({"kind": kind, "rate_per_s": 5.0});
            v["workload"]["arrivals"][extra] = 5.into();
            let (path, msg) = error_of(v);
            assert!(path.starts_with("workload.arrivals"), "{path}: {msg}");
            assert!(msg.contains("unknown field"), "{msg}");
        }
        let at_start = serde_json::to_value(Arrivals::default()).unwrap();
        assert_eq!(at_start, serde_json::json!({"kind": "at_start"}));
        let v: Arrivals = serde_json::from_value(at_start).unwrap();
        assert_eq!(v, Arrivals::AtStart {});
    }

    #[test]
    fn workloads_too_large_to_hold_or_to_arrive_within_a_year_are_errors() {
        for field in ["requests", "clients"] {
            let mut v = base();
            v["workload"][field] = u32::MAX.into();
            let (path, msg) = error_of(v);
            assert_eq!(path, format!("workload.{field}"));
            assert!(msg.starts_with("at most 10000000 in one run"), "{msg}");
        }
        let mut v = base();
        v["workload"]["arrivals"] = serde_json::json!({"kind": "poisson", "rate_per_s": 1e-300});
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.arrivals.rate_per_s");
        assert!(msg.contains("more than a year"), "{msg}");
        let mut v = base();
        v["workload"]["arrivals"] = serde_json::json!({"kind": "batches", "size": 1, "every_s": 3e7});
        assert_eq!(error_of(v).0, "workload.arrivals.every_s");
        let mut v = base();
        v["workload"]["arrivals"] = serde_json::json!({"kind": "batches", "size": 10, "every_s": 3e7});
        Scenario::from_json(&v.to_string()).unwrap(); // one batch: all at time zero
    }

    fn pingpong() -> serde_json::Value {
        let mut v = base();
        v["workload"] = serde_json::json!({"kind": "pingpong", "token_bytes": 512});
        v["sender"] = serde_json::json!({"kind": "tcp"});
        v
    }

    #[test]
    fn pingpong_defaults_and_round_trip() {
        let s = Scenario::from_json(&pingpong().to_string()).unwrap();
        assert_eq!(s.workload, Workload::PingPong(PingPong { pairs: 1, token_bytes: 512, rounds: 100 }));
        let Sender::Tcp(t) = &s.sender else { panic!("tcp") };
        assert!(!t.nodelay, "Nagle is on by default, as on Linux");
        let again = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(again.workload, s.workload, "to_json names the kind");
        // A request workload prints as before, without a kind.
        let r = Scenario::from_json(&base().to_string()).unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(&r.to_json()).unwrap()["workload"].get("kind").is_none());
    }

    #[test]
    fn pingpong_errors_name_the_field() {
        let mut v = pingpong();
        v["workload"]["token_bytes"] = 0.into();
        assert_eq!(error_of(v).0, "workload.token_bytes");
        let mut v = pingpong();
        v["workload"]["file_size"] = serde_json::json!({"kind": "fixed", "bytes": 1});
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.file_size");
        assert!(msg.contains("only for kind = \"requests\""), "{msg}");
        let mut v = pingpong();
        v["sender"] = serde_json::json!({"kind": "window"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.kind");
        assert!(msg.contains("sender.kind = \"tcp\""), "{msg}");
        let mut v = pingpong();
        v["sender"]["ack_path"] = "ideal".into();
        assert_eq!(error_of(v).0, "sender.ack_path");
        let mut v = pingpong();
        v["workload"]["kind"] = "pingping".into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.kind");
        assert!(msg.contains("`requests`, `pingpong`"), "{msg}");
        let mut v = pingpong();
        v["workload"].as_object_mut().unwrap().remove("token_bytes");
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload");
        assert!(msg.contains("missing field `token_bytes`"), "{msg}");
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
