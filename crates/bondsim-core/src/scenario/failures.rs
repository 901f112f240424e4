//! A link's failures: losses of carrier or silent ports, flapping trains, random failures.

use super::*;

/// One failure of a link: a loss of carrier (`kind = "carrier"`), or a port that keeps its
/// carrier but passes nothing, or only part of its traffic (`kind = "silent"`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// When the failure starts, seconds.
    pub down_s: f64,
    /// When it ends, seconds (never, if absent).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_s: Option<f64>,
    /// A uniform random offset in [0, jitter_ms) ms, drawn from the stream
    /// `links.{i}.failures.{k}.jitter`, added to `down_s` and `up_s` alike (the failure
    /// lasts as long): the failure falls at any phase of the monitor's period, and a sweep
    /// over `seed` is a Monte Carlo of failure instants. 0 = exactly at `down_s`.
    #[serde(default)]
    pub jitter_ms: f64,
    /// What fails.
    #[serde(default)]
    pub kind: FailureKind,
    /// `silent`: the fraction of frames the port drops (1 = everything), each frame
    /// independently, from the stream `links.{id}.silent`.
    #[serde(default = "default_drop")]
    pub drop: f64,
    /// `silent`: which direction drops: `both`, `out` (host to switch: the bond's
    /// transmissions) or `in` (switch to host: what the bond receives).
    #[serde(default)]
    pub direction: FailureDirection,
}

fn default_drop() -> f64 {
    1.0
}

/// What a [`Failure`] breaks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The carrier goes (the NIC reports link down; miimon sees it).
    #[default]
    Carrier,
    /// The carrier stays, frames are dropped: a switch port "suspended", an upstream
    /// not ready. Only monitors that look at traffic (the ARP monitor, LACPDUs) see it.
    Silent,
}

/// The direction a silent failure drops, seen from the bond's host.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureDirection {
    /// Both directions.
    #[default]
    Both,
    /// Host to switch (the forward link: data, ARP probes).
    Out,
    /// Switch to host (the reverse link: ACKs, ARP replies, LACPDUs).
    In,
}

impl FailureDirection {
    /// Whether frames the bond sends (`outgoing`) or receives are dropped.
    pub fn drops(self, outgoing: bool) -> bool {
        match self {
            FailureDirection::Both => true,
            FailureDirection::Out => outgoing,
            FailureDirection::In => !outgoing,
        }
    }
}

/// Repeated short losses of carrier: `count` times, the carrier goes for `down_ms`
/// and comes back for `up_ms`, starting at `start_s`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Flapping {
    /// When the first loss of carrier starts, seconds.
    pub start_s: f64,
    /// How long each loss lasts, ms.
    pub down_ms: f64,
    /// How long the carrier stays between two losses, ms.
    pub up_ms: f64,
    /// Number of losses.
    pub count: u32,
    /// A uniform random offset in [0, jitter_ms) ms added to every instant (stream
    /// `links.{i}.flapping.jitter`), as a failure's `jitter_ms`. 0 = exactly at `start_s`.
    #[serde(default)]
    pub jitter_ms: f64,
}

impl Flapping {
    /// Every (down, up) pair of instants, seconds.
    pub fn windows(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let cycle = (self.down_ms + self.up_ms) / 1e3;
        (0..self.count).map(move |k| {
            let down = self.start_s + f64::from(k) * cycle;
            (down, down + self.down_ms / 1e3)
        })
    }
}

/// Losses of carrier a `flapping` train may have (each is two events queued at the start).
pub const MAX_FLAPS: u32 = 1_000_000;

/// A link that fails and recovers at random.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomFailures {
    /// Mean time between failures (time up), seconds.
    pub mtbf_s: f64,
    /// Mean time to repair (time down), seconds.
    pub mttr_s: f64,
}

/// Checks link `i`'s failures, flapping train and random failures (in that order).
pub(super) fn validate_failures(base: &LinkBase, i: usize) -> Result<()> {
    let p = |field: &str| format!("links.{i}.{field}");
    let mut back_up_at = 0.0_f64;
    for (k, failure) in base.failures.iter().enumerate() {
        let q = |field: &str| format!("links.{i}.failures.{k}.{field}");
        duration(&q("down_s"), failure.down_s, 1.0, true)?;
        duration(&q("jitter_ms"), failure.jitter_ms, 1e-3, true)?;
        if failure.down_s < back_up_at {
            return Err(Error::scenario(
                q("down_s"),
                format!(
                    "failures must be in time order: this one starts before the last ended ({back_up_at} s, \
                     the previous failure's up_s plus its jitter_ms)"
                ),
            ));
        }
        match failure.up_s {
            Some(up) => {
                duration(&q("up_s"), up, 1.0, false)?;
                if up <= failure.down_s {
                    return Err(Error::scenario(q("up_s"), format!("must be > down_s ({})", failure.down_s)));
                }
                // With jitter the failure may end up to `jitter_ms` later.
                back_up_at = up + failure.jitter_ms / 1e3;
            }
            None if k + 1 < base.failures.len() => {
                return Err(Error::scenario(q("up_s"), "only the last failure may last for ever"));
            }
            None => {}
        }
        if failure.kind == FailureKind::Silent {
            if !(failure.drop > 0.0 && failure.drop <= 1.0) {
                return Err(Error::scenario(
                    q("drop"),
                    format!("must be a fraction in (0, 1] (1 = the port passes nothing), got {}", failure.drop),
                ));
            }
        } else if failure.drop != 1.0 || failure.direction != FailureDirection::Both {
            let field = if failure.drop != 1.0 { "drop" } else { "direction" };
            return Err(Error::scenario(
                q(field),
                "applies to kind = \"silent\" only (a lost carrier stops both directions entirely)",
            ));
        }
    }
    if let Some(flap) = &base.flapping {
        duration(&p("flapping.start_s"), flap.start_s, 1.0, true)?;
        duration(&p("flapping.down_ms"), flap.down_ms, 1e-3, false)?;
        duration(&p("flapping.up_ms"), flap.up_ms, 1e-3, false)?;
        at_least(&p("flapping.count"), u64::from(flap.count), 1)?;
        if flap.count > MAX_FLAPS {
            return Err(Error::scenario(
                p("flapping.count"),
                format!(
                    "must be at most {MAX_FLAPS} (every loss of carrier and its return are scheduled \
                     when the run starts; for a link that fails without end use random_failures), got {}",
                    flap.count
                ),
            ));
        }
        let end_s = flap.start_s + f64::from(flap.count) * (flap.down_ms + flap.up_ms) / 1e3;
        if end_s > MAX_SECONDS {
            return Err(Error::scenario(
                p("flapping.count"),
                format!("the last loss would end at {} s, more than a year into the run", num(end_s)),
            ));
        }
        duration(&p("flapping.jitter_ms"), flap.jitter_ms, 1e-3, true)?;
        if !base.failures.is_empty() || base.random_failures.is_some() {
            return Err(Error::scenario(
                p("flapping"),
                "give one of failures, random_failures or flapping on a link, not several",
            ));
        }
    }
    if let Some(random) = &base.random_failures {
        duration(&p("random_failures.mtbf_s"), random.mtbf_s, 1.0, false)?;
        duration(&p("random_failures.mttr_s"), random.mttr_s, 1.0, false)?;
        if !base.failures.is_empty() {
            return Err(Error::scenario(p("random_failures"), "give failures or random_failures, not both"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{base, error_of};
    use super::*;

    #[test]
    fn a_flapping_train_is_bounded_in_count_and_length() {
        let flapping = |count: u64, up_ms: f64| {
            let mut v = base();
            v["links"][1]["flapping"] =
                serde_json::json!({"start_s": 0.1, "down_ms": 1, "up_ms": up_ms, "count": count});
            v
        };
        Scenario::from_json(&flapping(u64::from(MAX_FLAPS), 1.0).to_string()).unwrap();
        let (path, msg) = error_of(flapping(u64::from(u32::MAX), 1.0));
        assert_eq!(path, "links.1.flapping.count");
        assert!(msg.starts_with("must be at most 1000000") && msg.ends_with("got 4294967295"), "{msg}");
        // Each period is within a year, the train is not.
        let (path, msg) = error_of(flapping(1000, 86_400_000.0));
        assert_eq!(path, "links.1.flapping.count");
        assert!(msg.contains("more than a year"), "{msg}");
    }
}
