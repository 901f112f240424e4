//! `[trace]`: the time series a run records for reports.

use super::*;

/// What a run records over time, for reports: each link's load, queue and state
/// (`link_trace`, `link_events`) and the first packets' schedule (`packet_trace`).
/// Nothing is recorded by default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// Width of the time buckets of the link trace, milliseconds (each link's bytes
    /// on the wire, utilisation, queue and state per bucket). Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_ms: Option<f64>,
    /// Most buckets each link keeps: past it, adjacent buckets merge in pairs and the
    /// width doubles, so a long run's trace covers it whole in bounded memory.
    #[serde(default = "default_link_buckets")]
    pub link_buckets: u32,
    /// Record the schedule of the first this many packets the bond is handed (which
    /// link, when sent, when they left the link and reached the client; 0: none).
    #[serde(default)]
    pub packets: u32,
}

fn default_link_buckets() -> u32 {
    10_000
}

/// Most packets [`Trace::packets`] may ask for (one row each, held for the whole run).
pub const MAX_TRACE_PACKETS: u32 = 1_000_000;
/// Most buckets [`Trace::link_buckets`] may ask for per link.
pub const MAX_TRACE_BUCKETS: u32 = 1_000_000;

impl Default for Trace {
    fn default() -> Trace {
        Trace { link_ms: None, link_buckets: default_link_buckets(), packets: 0 }
    }
}

impl Trace {
    /// Whether nothing is recorded (and the scenario is written without `trace`).
    pub fn is_off(&self) -> bool {
        self.link_ms.is_none() && self.packets == 0 && self.link_buckets == default_link_buckets()
    }
}

impl Scenario {
    pub(super) fn validate_trace(&self) -> Result<()> {
        let t = &self.trace;
        if let Some(every) = t.link_ms {
            trace_period("trace.link_ms", every)?;
        }
        // Pairs of buckets merge: at least two, and an even number so that every bucket has a partner.
        if t.link_buckets < 2 || t.link_buckets > MAX_TRACE_BUCKETS || t.link_buckets % 2 == 1 {
            return Err(Error::scenario(
                "trace.link_buckets",
                format!("must be an even number from 2 to {MAX_TRACE_BUCKETS}, got {}", t.link_buckets),
            ));
        }
        if t.packets > MAX_TRACE_PACKETS {
            return Err(Error::scenario(
                "trace.packets",
                format!("at most {MAX_TRACE_PACKETS} (one row each, held for the whole run), got {}", t.packets),
            ));
        }
        Ok(())
    }
}
