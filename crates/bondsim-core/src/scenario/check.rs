//! Value checks shared by every part: durations, rates, factors, probabilities, counts.

use super::*;
use bondsim_time::SimTime;

/// Longest time a scenario may name: a year, far beyond any useful run and
/// far inside the nanosecond clock's 584-year range.
pub(super) const MAX_SECONDS: f64 = 365.0 * 86_400.0;

impl Scenario {
    /// What the scenario sets that its run ignores, one warning per field, naming it (the command line
    /// prints each on a line): a bond option of another mode than `bond.mode` (`xmit_hash_policy` under
    /// balance-rr), taken so that one bond table serves a sweep over modes. Which mode reads which
    /// option is the registry's one rule ([`bondsim_bond::registry::resolve`]); a scenario that does not
    /// pass its checks has none.
    ///
    /// And, under a mode that places flows by a hash of their addresses but not their ports
    /// ([`bondsim_bond::registry::Resolved::hashes_ports`]), requests that draw their
    /// clients at random (`workload.clients_in_turn = false`, the default) when there are no more of
    /// them than clients, yet a tenth of them or more are expected to share one: "8 requests from 8
    /// clients" then come from about 5 distinct clients (C·(1 − (1 − 1/C)^R) expected), which a hash
    /// spreads over fewer links than 8 would be (100 from the thesis's 5,000: 99.0, unsaid).
    pub fn warnings(&self) -> Vec<bondsim_bond::Warning> {
        let Ok(resolved) = bondsim_bond::registry::resolve(&self.bond.mode, &self.bond.options) else {
            return Vec::new();
        };
        // (a hash of the ports sets one client's connections apart: drawing clients at random is then harmless)
        let hashes = resolved.info.params.iter().any(|p| HASH_PARAMS.contains(&p.name)) && !resolved.hashes_ports();
        let mut warnings = resolved.ignored;
        if let (true, Workload::Requests(w)) = (hashes, &self.workload) {
            let (c, r) = (f64::from(w.clients), f64::from(w.requests));
            let distinct = c * (1.0 - (1.0 - 1.0 / c).powf(r));
            // (a tenth of the requests or more sharing a client they need not share)
            if !w.clients_in_turn && w.requests > 1 && w.requests <= w.clients && distinct < 0.9 * r {
                warnings.push(bondsim_bond::Warning {
                    path: "workload.clients_in_turn".into(),
                    message: format!(
                        "false: the {} requests draw their clients at random from {}, about {distinct:.1} distinct \
                         ones expected, and {} places flows by a hash of their addresses; set it to true for one \
                         request per client in turn",
                        w.requests, w.clients, resolved.info.name
                    ),
                });
            }
        }
        warnings
    }
}

/// The parameters of the modes that place flows by a hash of their addresses: Linux's
/// (balance-xor, 802.3ad, balance-tlb, balance-alb), teamd's and Open vSwitch's.
const HASH_PARAMS: [&str; 3] = ["xmit_hash_policy", "tx_hash", "bond_hash_basis"];

/// `value` must be a finite number > 0 (factors, rates).
pub(crate) fn positive(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a number > 0, got {value}")))
    }
}

/// A physical field's plausible range: the lowest and the highest value a real link or host
/// has, and why. A value outside is refused in one line naming the field, the range and the
/// reason (`links.0.rate_mbps: must be from 0.0003 to 1600000 Mbit/s (…), got 1e-9`). Every
/// bound is in [`BOUNDS`], the one table of them (`docs/reference/bounds.md` is generated from it).
#[derive(Debug)]
pub struct Bound {
    /// The fields it holds for, as `--set` names them (`N`: any link or flow).
    pub fields: &'static str,
    /// The lowest plausible value.
    pub low: f64,
    /// The highest plausible value.
    pub high: f64,
    /// The unit the fields are in.
    pub unit: &'static str,
    /// Why, with a source where one exists.
    pub why: &'static str,
}

/// A link's bit rate, and a flow's: 300 bit/s to 1.6 Tbit/s.
pub const RATE_MBPS: Bound = Bound {
    fields: "links.N.rate_mbps, links.N.downstream.rate_mbps, sender.rate_mbps, sender.flow_rates_mbps.N, \
             a paced link's chunk per period_ms",
    low: 3e-4,
    high: 1.6e6,
    unit: "Mbit/s",
    why: "300 bit/s is the slowest modem line (ITU-T V.21), 1.6 Tbit/s the fastest Ethernet (IEEE P802.3dj)",
};

/// An IP packet, payload and headers: at most 65535 bytes.
pub const PACKET_BYTES: Bound = Bound {
    fields: "sender.chunk_bytes or sender.mss, plus network.header_bytes",
    low: 1.0,
    high: 65535.0,
    unit: "bytes",
    why: "an IPv4 packet's Total Length, and a UDP datagram's Length, are 16 bits (RFC 791, RFC 768)",
};

/// IPv4 and transport headers.
pub const HEADER_BYTES: Bound = Bound {
    fields: "network.header_bytes",
    low: 0.0,
    high: 120.0,
    unit: "bytes",
    why: "an IPv4 header is at most 60 bytes (IHL) and a TCP header at most 60 (Data Offset), RFC 791 and RFC 9293",
};

/// A link's MTU.
pub const MTU_BYTES: Bound = Bound {
    fields: "links.N.mtu",
    low: 68.0,
    high: 65535.0,
    unit: "bytes",
    why: "IPv4's minimum (RFC 791) and its 16-bit Total Length; Linux's ETH_MIN_MTU and ETH_MAX_MTU",
};

/// Bytes a frame carries on the wire beyond its IP packet.
pub const OVERHEAD_BYTES: Bound = Bound {
    fields: "links.N.overhead_bytes",
    low: 0.0,
    high: 512.0,
    unit: "bytes",
    why: "Ethernet's is 38 (preamble 8, header 14, FCS 4, gap 12); stacked tags and tunnels \
          (802.1ad 8, Geneve over IPv6 with 252 bytes of options, 330) stay far below 512",
};

/// A transmit queue or a line's queue, packets.
pub const QUEUE_PACKETS: Bound = Bound {
    fields: "links.N.txqueuelen, links.N.downstream.queue_packets, host.netdev_max_backlog, host.rx_ring",
    low: 1.0,
    high: 1e6,
    unit: "packets",
    why: "Linux's default txqueuelen is 1000 and fq_codel's limit 10240 packets; a million full \
          frames is 1.5 GB of buffer, more than any NIC or router is given",
};

/// One-way delays: propagation, jitter, a window sender's ACK delay.
pub const DELAY_US: Bound = Bound {
    fields: "links.N.delay_us, links.N.downstream.delay_us, links.N.jitter.*, sender.ack_delay_us",
    low: 0.0,
    high: 1e7,
    unit: "µs",
    why: "a geostationary satellite hop takes about 0.27 s one way and the Moon 1.3 s; 10 s is beyond any path",
};

/// Per-frame costs on the host: the NIC's and driver's time, TX-completion coalescing, the
/// receiving host's CPU time per frame.
pub const HOST_FRAME_US: Bound = Bound {
    fields: "links.N.per_packet_us, links.N.tx_coalesce_us, links.N.rx_coalesce_us, host.rx_packet_us, host.rx_skb_us, host.tx_packet_us, \
             host.rx_coalesce_us",
    low: 0.0,
    high: 1e4,
    unit: "µs",
    why: "a NIC's and driver's cost per frame is microseconds, and ethtool's tx-usecs stops at 10 ms \
          (igb's IGB_MAX_ITR_USECS)",
};

/// The receiving host's CPU time per payload byte.
pub const HOST_BYTE_NS: Bound = Bound {
    fields: "host.rx_byte_ns",
    low: 0.0,
    high: 100.0,
    unit: "ns per byte",
    why: "copying a byte takes a fraction of a nanosecond on today's hosts (memcpy at several GB/s); \
          100 ns is 10 MB/s, slower than any machine that ran Linux's TCP",
};

/// How much later than the physical change a NIC reports carrier.
pub const CARRIER_LATENCY_MS: Bound = Bound {
    fields: "links.N.carrier_latency_ms",
    low: 0.0,
    high: 1e4,
    unit: "ms",
    why: "PHYs report a lost link within about a second (e1000e about 350 ms; IEEE 802.3 \
          link_fail_inhibit_timer 750-1000 ms); 10 s is beyond any",
};

/// The bonding driver's intervals and delays, whole ms.
pub const BOND_MS: Bound = Bound {
    fields: "bond.miimon, bond.updelay, bond.downdelay, bond.peer_notif_delay, bond.arp_interval",
    low: 0.0,
    high: 2_147_483_647.0,
    unit: "ms",
    why: "the bonding driver takes them as int milliseconds, at most INT_MAX \
          (drivers/net/bonding/bond_options.c, bond_intmax_tbl)",
};

/// The paced sender's loop period.
pub const TICK_MS: Bound = Bound {
    fields: "sender.tick_ms",
    low: 1e-3,
    high: MAX_SECONDS * 1e3,
    unit: "ms",
    why: "a host's timer (hrtimer) fires at most about once a microsecond",
};

/// TCP's minimum retransmission timeout.
pub const RTO_MIN_MS: Bound = Bound {
    fields: "sender.rto_min_ms",
    low: 0.0,
    high: 120_000.0,
    unit: "ms",
    why: "no timeout is armed beyond TCP_RTO_MAX, 120 s (include/net/tcp.h)",
};

/// Every plausibility bound: the one table (`docs/reference/bounds.md` is generated from it, through
/// the Python module's `_core.BOUNDS`).
pub const BOUNDS: &[&Bound] = &[
    &RATE_MBPS,
    &PACKET_BYTES,
    &HEADER_BYTES,
    &MTU_BYTES,
    &OVERHEAD_BYTES,
    &QUEUE_PACKETS,
    &DELAY_US,
    &HOST_FRAME_US,
    &HOST_BYTE_NS,
    &CARRIER_LATENCY_MS,
    &BOND_MS,
    &TICK_MS,
    &RTO_MIN_MS,
];

/// `value` at `path` must lie within `bound` (inclusive); the error names the range and why.
pub(crate) fn plausible(path: &str, value: f64, bound: &Bound) -> Result<()> {
    if (bound.low..=bound.high).contains(&value) {
        return Ok(());
    }
    Err(Error::scenario(path, out_of_bounds(value, bound)))
}

/// The message of a value outside `bound`: the range, its reason and the value.
pub(crate) fn out_of_bounds(value: f64, bound: &Bound) -> String {
    format!("must be {}, got {}", range_of(bound), num(value))
}

/// `from LOW to HIGH UNIT (WHY)`.
pub(crate) fn range_of(bound: &Bound) -> String {
    format!("from {} to {} {} ({})", num(bound.low), num(bound.high), bound.unit, bound.why)
}

/// `value` must be a link or flow rate in Mbit/s: a number > 0 within [`RATE_MBPS`].
pub(crate) fn rate_mbps(path: &str, value: f64) -> Result<()> {
    if !(value.is_finite() && value > 0.0) {
        return Err(Error::scenario(path, format!("must be a rate in Mbit/s, > 0, got {value}")));
    }
    plausible(path, value, &RATE_MBPS)
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
/// or [0, one year] if `zero_ok`; one that is not zero must be at least a nanosecond
/// once rounded to the clock (a period of 0 ns would stop time).
pub(crate) fn duration(path: &str, value: f64, unit_s: f64, zero_ok: bool) -> Result<()> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(value.is_finite() && low_ok && value * unit_s <= MAX_SECONDS) {
        let low = if zero_ok { ">= 0" } else { "> 0" };
        return Err(Error::scenario(path, format!("must be a duration {low} and at most a year, got {}", num(value))));
    }
    if value > 0.0 && nanos(value, unit_s) == 0 {
        let unit = match unit_s {
            1.0 => "s",
            1e-3 => "ms",
            1e-6 => "us",
            _ => "units",
        };
        let allowed = if zero_ok { "0 or at least 1 ns" } else { "at least 1 ns" };
        return Err(Error::scenario(
            path,
            format!(
                "must be {allowed} (simulated time counts whole nanoseconds), got {} {unit}, which rounds to 0 ns",
                num(value)
            ),
        ));
    }
    Ok(())
}

/// A trace's sampling period, ms: a duration of at least 1 µs (that floor checked first, so a
/// value below it is not told "at least 1 ns").
pub(super) fn trace_period(path: &str, every_ms: f64) -> Result<()> {
    if every_ms.is_finite() && every_ms > 0.0 && every_ms < 1e-3 {
        return Err(Error::scenario(path, format!("must be at least 0.001 (1 µs), got {}", num(every_ms))));
    }
    duration(path, every_ms, 1e-3, false)
}

/// `value` in units of `unit_s` seconds as the simulator's clock holds it, in nanoseconds
/// (the same conversions the links and transports use, so the check and the run agree).
pub(super) fn nanos(value: f64, unit_s: f64) -> u64 {
    let time = match unit_s {
        1.0 => SimTime::from_secs_f64(value),
        1e-3 => SimTime::from_millis_f64(value),
        1e-6 => SimTime::from_micros_f64(value),
        _ => SimTime::from_secs_f64(value * unit_s),
    };
    time.as_nanos()
}

/// A number as a user would write it: `1e-7` rather than `0.0000001`.
pub(super) fn num(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// `value` must be a probability: in [0, 1], or [0, 1) unless `one_ok`.
pub(crate) fn probability(path: &str, value: f64, one_ok: bool) -> Result<()> {
    let high_ok = if one_ok { value <= 1.0 } else { value < 1.0 };
    if value.is_finite() && value >= 0.0 && high_ok {
        Ok(())
    } else {
        let range = if one_ok { "[0, 1]" } else { "[0, 1)" };
        Err(Error::scenario(path, format!("must be in {range}, got {value}")))
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
    use super::super::tests::{base, error_of};
    use super::*;

    /// `v` with `path` (`a.0.b`, as `--set` writes it) set to `value`.
    fn with(mut v: serde_json::Value, path: &str, value: serde_json::Value) -> serde_json::Value {
        let mut node = &mut v;
        for key in path.split('.') {
            node = match key.parse::<usize>() {
                Ok(i) => &mut node[i],
                Err(_) => &mut node[key],
            };
        }
        *node = value;
        v
    }

    #[test]
    fn every_physical_field_is_refused_just_outside_its_bound_and_taken_just_inside() {
        let rate = |link: serde_json::Value| with(base(), "links.0", link);
        let cbr = |sender: serde_json::Value| with(base(), "sender", sender);
        let tcp = with(with(base(), "sender", serde_json::json!({"kind": "tcp"})), "links.0.rate_mbps", 100.into());
        let rated = rate(serde_json::json!({"rate_mbps": 100}));
        let small = with(base(), "sender", serde_json::json!({"chunk_bytes": 20}));
        let host = with(base(), "host", serde_json::json!({"rx_packet_us": 1}));
        // (scenario, field, just inside, just outside, the bound it breaks)
        let cases: Vec<(serde_json::Value, &str, f64, f64, &Bound)> = vec![
            (rate(serde_json::json!({"per_packet_us": 0.01})), "links.0.rate_mbps", 1.6e6, 1.7e6, &RATE_MBPS),
            (rated.clone(), "links.0.rate_mbps", 3e-4, 2.9e-4, &RATE_MBPS),
            (rated.clone(), "links.0.rate_mbps", 3e-4, 1e-9, &RATE_MBPS),
            (
                rate(serde_json::json!({"rate_mbps": 100, "downstream": {"rate_mbps": 10}})),
                "links.0.downstream.rate_mbps",
                3e-4,
                2.9e-4,
                &RATE_MBPS,
            ),
            (cbr(serde_json::json!({"kind": "cbr", "rate_mbps": 1})), "sender.rate_mbps", 1.6e6, 1.7e6, &RATE_MBPS),
            (cbr(serde_json::json!({"kind": "cbr", "rate_mbps": 1})), "sender.rate_mbps", 3e-4, 1e-9, &RATE_MBPS),
            (
                cbr(serde_json::json!({"kind": "cbr", "rate_mbps": 1, "flow_rates_mbps": [1, 1]})),
                "sender.flow_rates_mbps.1",
                3e-4,
                2.9e-4,
                &RATE_MBPS,
            ),
            // A paced link: 1064 bytes (1024 and 40 of headers) a period.
            (base(), "links.1.period_ms", 5.4e-6, 5.2e-6, &RATE_MBPS),
            (base(), "links.1.period_ms", 28_000.0, 29_000.0, &RATE_MBPS),
            (base(), "sender.chunk_bytes", 65_495.0, 65_496.0, &PACKET_BYTES),
            (base(), "sender.chunk_bytes", 65_495.0, 4_294_967_295.0, &PACKET_BYTES),
            (base(), "network.header_bytes", 120.0, 121.0, &HEADER_BYTES),
            (with(small.clone(), "links.0.rate_mbps", 100.into()), "links.0.mtu", 68.0, 67.0, &MTU_BYTES),
            (rated.clone(), "links.0.mtu", 65_535.0, 65_536.0, &MTU_BYTES),
            (rated.clone(), "links.0.overhead_bytes", 512.0, 513.0, &OVERHEAD_BYTES),
            (rated.clone(), "links.0.txqueuelen", 1e6, 1e6 + 1.0, &QUEUE_PACKETS),
            (
                rate(serde_json::json!({"rate_mbps": 100, "downstream": {"rate_mbps": 10}})),
                "links.0.downstream.queue_packets",
                1e6,
                1e6 + 1.0,
                &QUEUE_PACKETS,
            ),
            (rated.clone(), "links.0.delay_us", 1e7, 1.000_001e7, &DELAY_US),
            (
                rate(serde_json::json!({"rate_mbps": 100, "downstream": {"rate_mbps": 10}})),
                "links.0.downstream.delay_us",
                1e7,
                1.000_001e7,
                &DELAY_US,
            ),
            (
                rate(serde_json::json!({"rate_mbps": 100, "jitter": {"kind": "uniform", "max_us": 1}})),
                "links.0.jitter.max_us",
                1e7,
                1.000_001e7,
                &DELAY_US,
            ),
            (cbr(serde_json::json!({"kind": "window"})), "sender.ack_delay_us", 1e7, 1.000_001e7, &DELAY_US),
            (rated.clone(), "links.0.per_packet_us", 1e4, 10_001.0, &HOST_FRAME_US),
            (rated.clone(), "links.0.tx_coalesce_us", 1e4, 10_001.0, &HOST_FRAME_US),
            (host.clone(), "host.rx_packet_us", 1e4, 10_001.0, &HOST_FRAME_US),
            (host.clone(), "host.tx_packet_us", 1e4, 10_001.0, &HOST_FRAME_US),
            (host.clone(), "host.rx_skb_us", 1e4, 10_001.0, &HOST_FRAME_US),
            (host.clone(), "host.rx_coalesce_us", 1e4, 10_001.0, &HOST_FRAME_US),
            (host.clone(), "host.rx_byte_ns", 100.0, 100.5, &HOST_BYTE_NS),
            (host.clone(), "host.netdev_max_backlog", 1e6, 1_000_001.0, &QUEUE_PACKETS),
            (host, "host.rx_ring", 1.0, 0.0, &QUEUE_PACKETS),
            (base(), "links.0.carrier_latency_ms", 1e4, 10_001.0, &CARRIER_LATENCY_MS),
            (base(), "bond.miimon", 2_147_483_647.0, 2_147_483_648.0, &BOND_MS),
            (base(), "bond.downdelay", 2_147_483_647.0, 2_147_483_648.0, &BOND_MS),
            (base(), "sender.tick_ms", 1e-3, 9e-4, &TICK_MS),
            (tcp, "sender.rto_min_ms", 120_000.0, 120_001.0, &RTO_MIN_MS),
        ];
        for (scenario, field, inside, outside, bound) in cases {
            let number = |x: f64| {
                if x.fract() == 0.0 && x.abs() < 1e15 {
                    serde_json::Value::from(x as u64)
                } else {
                    serde_json::Value::from(x)
                }
            };
            let ok = with(scenario.clone(), field, number(inside));
            if let Err(e) = Scenario::from_json(&ok.to_string()) {
                panic!("{field} = {inside} is inside its bound, refused: {e}");
            }
            let (path, msg) = error_of(with(scenario, field, number(outside)));
            assert_eq!(path, field, "{field} = {outside}: {msg}");
            assert!(msg.contains(&format!("must be from {} to {}", num(bound.low), num(bound.high))), "{msg}");
            assert!(msg.contains(bound.why) && msg.contains(bound.unit), "{field}: {msg}");
            assert!(!msg.contains('\n'), "one line: {msg}");
        }
    }

    #[test]
    fn the_issues_examples_are_refused_naming_the_field() {
        // 54 simulated years; Tbit/s from paced links; a chunk no IP packet holds.
        for (v, field) in [
            (with(base(), "links.0", serde_json::json!({"rate_mbps": 1e-9})), "links.0.rate_mbps"),
            (with(base(), "sender", serde_json::json!({"kind": "cbr", "rate_mbps": 1e-9})), "sender.rate_mbps"),
            (with(base(), "links.1.period_ms", 1e-6.into()), "links.1.period_ms"),
            (with(base(), "sender.chunk_bytes", 4_294_967_295_u64.into()), "sender.chunk_bytes"),
        ] {
            let (path, msg) = error_of(v);
            assert_eq!(path, field, "{msg}");
            assert!(msg.contains("must be from"), "{msg}");
        }
    }

    #[test]
    fn the_bounds_table_is_consistent() {
        for bound in BOUNDS {
            assert!(bound.low < bound.high && bound.low >= 0.0, "{bound:?}");
            assert!(!bound.fields.is_empty() && !bound.why.is_empty() && !bound.unit.is_empty());
        }
    }
}
