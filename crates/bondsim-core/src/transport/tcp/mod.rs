//! TCP: a packet-level model of Linux's TCP, one sender ([`sender`]) and one
//! receiver ([`receiver`]) per flow, with congestion control behind a trait
//! ([`cc`]).
//!
//! The model's unit of sequence space is the segment: a file of `S` bytes is
//! `ceil(S / MSS)` segments, segment `k` carries bytes `[k·MSS, (k+1)·MSS)`,
//! and sequence numbers, ACK numbers and SACK blocks count segments. Linux
//! counts bytes on the wire but segments in its window arithmetic
//! (`snd_cwnd`, `packets_out`, `sacked_out`, `tp->reordering` are all in
//! segments), which is what the model follows; a retransmission resends the
//! same segment, as Linux does for an MSS-sized skb.
//!
//! The timestamp option (RFC 7323) is on, as Linux's default: its clock ticks in
//! milliseconds (`TCP_TS_HZ = 1000`), a segment's TSval is its send time on that
//! clock ([`ts_of`]), and the ACK echoes `TS.Recent` (`Packet::ts_ecr`).

pub mod cc;
pub mod era;
pub mod peer;
pub mod receiver;
pub mod sender;

use crate::report::{count, flag, real, Declared, Report};
use crate::scenario::{TcpSender as TcpSpec, TsClock};
use crate::time::{MaybeTime, SimTime};
use era::{Era, LossDetection};

/// What both ends read from the scenario, resolved once.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    /// Payload bytes per full segment.
    pub mss: u32,
    /// Congestion control (`net.ipv4.tcp_congestion_control`).
    pub cc: String,
    /// HyStart in CUBIC (`hystart` module parameter of `tcp_cubic`).
    pub hystart: bool,
    /// Initial window, segments (`initcwnd`; RFC 6928: 10).
    pub initial_cwnd: u32,
    /// `net.ipv4.tcp_reordering`: the initial reordering degree (dupthresh).
    pub reordering: u32,
    /// `net.ipv4.tcp_max_reordering`.
    pub max_reordering: u32,
    /// RACK's reordering window stays at one step, D-SACKs do not widen it (bit 0x2,
    /// `TCP_RACK_STATIC_REO_WND`).
    pub static_reo_wnd: bool,
    /// RACK keeps its window even once `reordering` segments are SACKed (bit 0x4,
    /// `TCP_RACK_NO_DUPTHRESH`).
    pub no_dupthresh: bool,
    /// Tail loss probes (`net.ipv4.tcp_early_retrans` ≥ 3).
    pub tlp: bool,
    /// FACK loss detection (`net.ipv4.tcp_fack`, Linux before 4.15; without RACK).
    pub fack: bool,
    /// RFC 5827 early retransmit (`TcpSpec::early_retransmit`, without RACK): `None` off, else the
    /// least it waits (`Some(0)`: at once, `tcp_early_retrans` = 1; else `msecs_to_jiffies(2)`).
    pub early_retransmit: Option<SimTime>,
    /// The bond's `hz`: kernel timers set in jiffies (`usecs_to_jiffies` rounds up to one).
    pub hz: u32,
    /// The timestamp option's clock (`sender.ts_clock`).
    pub ts: TsTicks,
    /// Linux's RFC 4653 NCR entry to recovery (`TcpSpec::ncr`, without RACK).
    pub ncr: bool,
    /// Linux's forward retransmission before 4.11 (`TcpSpec::forward_retransmit`, without RACK).
    pub forward_retransmit: bool,
    /// The kernel era's rules as facts (`TcpSpec::undo`, `small_queues`, `tlp_timeout`, `cwnd_reduction`).
    pub era: Era,
    /// How losses are found, chosen once: RACK (`net.ipv4.tcp_recovery` bit 0x1,
    /// `TCP_RACK_LOSS_DETECTION`) with `tcp_sack`, else the scoreboard's rules.
    pub loss: LossDetection,
    /// SACK (`net.ipv4.tcp_sack`).
    pub sack: bool,
    /// D-SACK (`net.ipv4.tcp_dsack`).
    pub dsack: bool,
    /// Delayed ACKs (off: every segment is ACKed at once, as `TCP_QUICKACK`).
    pub delayed_ack: bool,
    /// `TCP_NODELAY`: no Nagle hold on sub-MSS segments.
    pub nodelay: bool,
    /// The delayed-ACK timeout (`TCP_DELACK_MIN` = `TCP_ATO_MIN` = 40 ms).
    pub delack_timeout: SimTime,
    /// `rto_min` (`TCP_RTO_MIN`, 200 ms).
    pub rto_min: SimTime,
    /// `TCP_RTO_MAX`: 120 s.
    pub rto_max: SimTime,
    /// `net.ipv4.tcp_retries2`: the timeouts a connection's give-up time is modelled on.
    pub retries2: u32,
    /// The receive window a connection starts with, bytes (`tcp_select_initial_window`:
    /// half of `tcp_rmem[1]`, at most 65535 since the SYN's window is not scaled).
    pub rwnd_initial: u64,
    /// The largest receive window, bytes (half of `tcp_rmem[2]`).
    pub rwnd_max: u64,
    /// `net.ipv4.tcp_moderate_rcvbuf`: the receive window grows with what the
    /// application reads per round trip (dynamic right-sizing, `tcp_rcv_space_adjust`).
    pub moderate_rcvbuf: bool,
    /// The most segments a sender keeps unacknowledged (its send buffer).
    pub sndbuf_segments: u32,
    /// Segmentation offload (TSO/GSO): the bond places buffers of several segments.
    pub gso: bool,
    /// `net.ipv4.tcp_limit_output_bytes`: TCP small queues' ceiling per connection.
    pub limit_output_bytes: u64,
    /// F-RTO (`net.ipv4.tcp_frto`, RFC 5682): detect spurious timeouts.
    pub frto: bool,
    /// Closing connections leave their destination's TCP metrics (`!tcp_no_metrics_save`).
    pub metrics_save: bool,
    /// The TCP metrics keep a slow-start threshold (`!tcp_no_ssthresh_metrics_save`).
    pub ssthresh_metrics: bool,
    /// Sample every open connection's state this often (`trace_ms`), if at all.
    pub trace_every: Option<SimTime>,
    /// The most SACK blocks an ACK carries: 3 beside the timestamp option in TCP's 40 option
    /// bytes (`tcp_established_options`), 1 on an MPTCP subflow, whose DSS option takes the room
    /// of two (`mptcp_established_options` has precedence over SACK).
    pub sack_blocks: usize,
    /// The reading application's read ACKs pushed data at once (`__tcp_cleanup_rbuf`'s
    /// `ICSK_ACK_PUSHED` rule). Off on an MPTCP subflow: there the read is the connection's, and
    /// `mptcp_cleanup_rbuf` (net/mptcp/protocol.c, 6.18) lets a subflow ACK only when the whole
    /// connection's receive queue, its out-of-order data included, is empty, which the subflow's
    /// receiver does not see; without that condition the rule is left out there.
    pub pushed_acks: bool,
}

impl TcpConfig {
    /// The configuration `spec` describes, with `mss` payload bytes per segment, on a kernel
    /// ticking `hz` times a second (`bond.hz`).
    pub fn new(spec: &TcpSpec, mss: u32, hz: u32) -> TcpConfig {
        TcpConfig {
            mss,
            cc: spec.tcp_congestion_control.clone(),
            hystart: spec.hystart,
            initial_cwnd: spec.initial_cwnd,
            reordering: spec.tcp_reordering,
            max_reordering: spec.tcp_max_reordering,
            static_reo_wnd: spec.tcp_recovery & 2 != 0,
            no_dupthresh: spec.tcp_recovery & 4 != 0,
            tlp: spec.tcp_early_retrans >= 3,
            fack: spec.tcp_fack,
            early_retransmit: match spec.tcp_early_retrans {
                _ if !spec.early_retransmit || spec.tcp_reordering != 3 => None,
                1 => Some(SimTime::ZERO),
                2 | 3 => Some(bondsim_bond::monitor::jiffies_period(2.0, hz)),
                _ => None,
            },
            hz,
            ts: TsTicks::of(spec.ts_clock, hz),
            ncr: spec.ncr,
            forward_retransmit: spec.forward_retransmit,
            era: Era::new(spec.undo, spec.small_queues, spec.tlp_timeout, spec.cwnd_reduction, hz),
            loss: LossDetection::of(spec.tcp_recovery & 1 != 0, spec.tcp_sack),
            sack: spec.tcp_sack,
            dsack: spec.tcp_dsack && spec.tcp_sack,
            delayed_ack: spec.delayed_ack,
            nodelay: spec.nodelay,
            delack_timeout: SimTime::from_millis_f64(40.0),
            rto_min: SimTime::from_millis_f64(spec.rto_min_ms),
            rto_max: SimTime::from_secs_f64(120.0),
            retries2: spec.tcp_retries2,
            // Linux advertises about half its receive buffer (`tcp_win_from_space` with
            // `tcp_adv_win_scale` = 1 / the default `scaling_ratio`).
            rwnd_initial: (spec.tcp_rmem[1] / 2).min(65_535).max(2 * u64::from(mss)),
            rwnd_max: (spec.tcp_rmem[2] / 2).max(2 * u64::from(mss)),
            moderate_rcvbuf: spec.tcp_moderate_rcvbuf,
            // The send buffer holds each skb at about twice its payload (truesize).
            sndbuf_segments: ((spec.tcp_wmem[2] / 2) / u64::from(mss)).clamp(2, u64::from(u32::MAX)) as u32,
            gso: spec.gso,
            limit_output_bytes: spec.tcp_limit_output_bytes,
            trace_every: spec.trace_ms.map(SimTime::from_millis_f64),
            frto: spec.tcp_frto > 0,
            metrics_save: !spec.tcp_no_metrics_save,
            ssthresh_metrics: !spec.tcp_no_ssthresh_metrics_save,
            sack_blocks: 3,
            pushed_acks: true,
        }
    }

    #[cfg(test)]
    pub(crate) fn test_default() -> TcpConfig {
        let spec: TcpSpec = serde_json::from_str("{}").expect("defaults");
        TcpConfig::new(&spec, 1448, 1000)
    }
}

/// The timestamp option's clock (`sender.ts_clock`): 1 ms since Linux 4.13 (`tcp_clock_ms`), a
/// jiffy before (`tcp_time_stamp` = `jiffies`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsTicks {
    /// One tick.
    pub tick: SimTime,
}

impl TsTicks {
    /// Today's millisecond clock.
    pub const MS: TsTicks = TsTicks { tick: SimTime(1_000_000) };

    /// The clock of an era (`sender.ts_clock`) on a kernel ticking `hz` times a second.
    pub fn of(clock: TsClock, hz: u32) -> TsTicks {
        match clock {
            TsClock::Current => TsTicks::MS,
            TsClock::Linux412 => TsTicks { tick: bondsim_bond::monitor::usecs_to_jiffies(1, hz) },
        }
    }

    /// A segment's TSval: its send time in ticks (plus one, so that 0 means "no timestamp").
    pub fn ts_of(self, t: SimTime) -> u32 {
        // (Today's clock by a constant: a multiply, not a division, on every segment.)
        let ticks = if self == TsTicks::MS { t.0 / 1_000_000 } else { t.0 / self.tick.0 };
        ticks as u32 + 1
    }

    /// The time a TSval stands for (the start of its tick).
    pub fn ts_time(self, ts: u32) -> SimTime {
        SimTime(u64::from(ts.saturating_sub(1)) * self.tick.0)
    }
}

/// [`TsTicks::ts_of`] on today's millisecond clock (tests).
#[cfg(test)]
pub fn ts_of(t: SimTime) -> u32 {
    TsTicks::MS.ts_of(t)
}

/// [`TsTicks::ts_time`] on today's millisecond clock (tests).
#[cfg(test)]
pub fn ts_time(ts: u32) -> SimTime {
    TsTicks::MS.ts_time(ts)
}

/// A timer token: the flow in the high half, the timer's generation in the low.
pub(crate) fn timer_token(flow: u32, generation: u32) -> u64 {
    u64::from(flow) << 32 | u64::from(generation)
}

pub(crate) fn split_token(token: u64) -> (u32, u32) {
    ((token >> 32) as u32, token as u32)
}

/// What a timer event means when it comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fired {
    /// Not this timer's current event, or the timer was cancelled.
    Stale,
    /// The deadline moved later: ask again for this time.
    Early(SimTime),
    /// The deadline is reached.
    Due,
}

/// One per-connection timer that is re-armed far more often than it fires (the
/// retransmission timer moves on every ACK). Moving the deadline later costs
/// nothing: the event already queued fires early and asks again; only an
/// earlier deadline queues a new event (and makes the old one stale).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Timer {
    deadline: MaybeTime,
    queued: MaybeTime,
    generation: u32,
}

// Three per flow (the sender's retransmission and pacing timers, the receiver's ACK timer).
const _: () = assert!(std::mem::size_of::<Timer>() == 24);

impl Timer {
    /// Sets the deadline; true when the owner must queue an event at [`Timer::at`].
    pub fn arm(&mut self, at: SimTime) -> bool {
        self.deadline = MaybeTime::some(at);
        match self.queued.get() {
            Some(q) if q <= at => false,
            _ => {
                self.generation = self.generation.wrapping_add(1);
                self.queued = MaybeTime::some(at);
                true
            }
        }
    }

    /// Sets the deadline to `at` unless one is pending no later; true as [`Timer::arm`].
    pub fn arm_by(&mut self, at: SimTime) -> bool {
        match self.deadline.get() {
            Some(d) if d <= at => false,
            _ => self.arm(at),
        }
    }

    /// When the queued event is due.
    pub fn at(&self) -> SimTime {
        self.queued.get().expect("a queued event")
    }

    /// The current deadline.
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline.get()
    }

    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// No deadline (the queued event, if any, will find none).
    pub fn cancel(&mut self) {
        self.deadline = MaybeTime::NONE;
    }

    /// Its event of `generation` came at `now`.
    pub fn fire(&mut self, now: SimTime, generation: u32) -> Fired {
        if generation != self.generation || self.queued.is_none() {
            return Fired::Stale;
        }
        self.queued = MaybeTime::NONE;
        match self.deadline.get() {
            None => Fired::Stale,
            Some(d) if d > now => {
                self.generation = self.generation.wrapping_add(1);
                self.queued = MaybeTime::some(d);
                Fired::Early(d)
            }
            Some(_) => {
                self.deadline = MaybeTime::NONE;
                Fired::Due
            }
        }
    }
}

/// Rows a trace keeps at most; sampling stops there (`TcpTrace::truncated`).
pub const TRACE_MAX_ROWS: usize = 1_000_000;

/// Samples of every open connection's state over time, one column per field
/// (`sender.trace_ms`): what `ss -ti` shows of a Linux socket.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TcpTrace {
    /// Sample time, seconds.
    pub t_s: Vec<f64>,
    /// The flow (request).
    pub flow: Vec<u32>,
    /// Congestion window, segments.
    pub cwnd: Vec<u32>,
    /// Slow-start threshold, segments (null while infinite).
    pub ssthresh: Vec<Option<u32>>,
    /// Smoothed RTT, microseconds (null before the first sample).
    pub srtt_us: Vec<Option<f64>>,
    /// Segments in flight (`tcp_packets_in_flight`).
    pub in_flight: Vec<u32>,
    /// Segments acknowledged so far (`snd_una`).
    pub acked: Vec<u32>,
    /// Segments this flow retransmitted so far.
    pub retransmits: Vec<u32>,
    /// The reordering degree (`tp->reordering`).
    pub reordering: Vec<u32>,
    /// Congestion state: open, disorder, cwr, recovery, loss.
    pub state: Vec<&'static str>,
    /// The congestion control's own state (BBR: startup, drain, probe_bw, probe_rtt; null for
    /// a control without one).
    pub cc_mode: Vec<Option<&'static str>>,
    /// Whether sampling stopped at [`TRACE_MAX_ROWS`].
    #[serde(skip)]
    pub truncated: bool,
}

crate::columnar!(TcpTrace: t_s, flow, cwnd, ssthresh, srtt_us, in_flight, acked, retransmits, reordering, state, cc_mode);

/// What a run's TCP senders did, summed over flows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Segments sent for the first time.
    pub segments_sent: u64,
    /// Segments sent again (fast retransmits, RACK, RTO and TLP retransmissions).
    pub retransmits: u64,
    /// Retransmissions the receiver reported as duplicates (D-SACK): spurious. Only
    /// segments that were retransmitted count, each retransmission at most once.
    pub spurious_retransmits: u64,
    /// Segments the receiver reported as duplicates (D-SACK blocks, Linux's
    /// `tcpi_dsack_dups`), retransmitted or not: under broadcast, every extra copy.
    pub dsacks_received: u64,
    /// Entries into fast recovery.
    pub fast_recoveries: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// Tail loss probes sent.
    pub tlp_probes: u64,
    /// Sends the host's own queue refused (`NET_XMIT_DROP`: taken back, CWR entered).
    pub xmit_drops: u64,
    /// Window reductions undone (D-SACK or timestamps showed them needless).
    pub undos: u64,
    /// Sum over flows of the reordering degree each ended at (`tp->reordering`).
    pub reordering_sum: u64,
    /// The highest reordering degree any flow reached.
    pub reordering_max: u32,
    /// The least RTT any connection sampled (`tcp_min_rtt`, Linux's `tcpi_min_rtt`; the handshake's
    /// sample included): the path's unloaded round trip as the senders saw it. None before a sample.
    pub min_rtt_min: Option<SimTime>,
    /// ACKs the senders received.
    pub acks_received: u64,
    /// Connections given up: after `tcp_retries2` timeouts, or their handshake after
    /// `tcp_synack_retries`.
    pub aborted: u64,
    /// SYN-ACKs (an upload's SYNs) sent again (Linux's `TCPSynRetrans`).
    pub syn_retransmits: u64,
    /// Timeouts F-RTO found spurious (Linux `TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
    /// When each retransmission timeout fired (for the failover measures, `failover.rs`).
    pub rto_at: Vec<SimTime>,
    /// When F-RTO found a timeout spurious.
    pub spurious_rto_at: Vec<SimTime>,
}

/// The summary figures TCP's senders report ([`TcpStats`]; a ping-pong's two ends summed):
/// segments sent for the first time; sent again (fast retransmit, RACK, RTO, TLP); spurious
/// retransmissions (D-SACKs of retransmitted segments, each at most once); D-SACKs received,
/// retransmitted or not (under broadcast, every extra copy); entries into fast recovery;
/// retransmission timeouts; tail loss probes; window reductions undone; the reordering degree
/// connections ended at (mean over connections) and the highest one reached; connections given
/// up (`sender.tcp_retries2`, or a handshake never answered); timeouts F-RTO found spurious; data
/// segments the receivers' PAWS discarded (`receiver.rs`); sends a full queue of the host refused
/// (`NET_XMIT_DROP`, taken back); handshake segments sent again (`TCPSynRetrans`); the least RTT
/// any connection sampled, µs (the emulator reports the kernel's `tcpi_min_rtt` under this name).
pub const FIGURES: &[Declared] = &[
    count("tcp_segments_sent"),
    count("tcp_retransmits"),
    count("tcp_spurious_retransmits"),
    count("tcp_dsacks_received"),
    count("tcp_fast_recoveries"),
    count("tcp_rtos"),
    count("tcp_tlp_probes"),
    count("tcp_undos"),
    real("tcp_reordering_mean"),
    count("tcp_reordering_max"),
    count("tcp_aborted"),
    count("tcp_spurious_rtos"),
    count("tcp_paws_drops"),
    count("tcp_xmit_drops"),
    count("tcp_syn_retransmits"),
    count("tcp_min_rtt_min_us"),
];

/// The trace's figure: whether it stopped at its row limit (only when tracing).
pub const TRACE_FIGURES: &[Declared] = &[flag("tcp_trace_truncated")];

impl TcpTrace {
    /// Reports the trace (`tcp_trace`) and whether it stopped at its limit (the first end's).
    pub fn report(&self, r: &mut Report) {
        r.first("tcp_trace_truncated", self.truncated);
        r.table("tcp_trace", self);
    }
}

impl TcpStats {
    /// Reports a sender's figures ([`FIGURES`]); `connections`: how many it had (the reordering
    /// mean is over every connection of the run). Its timeouts go to the failover measures as
    /// instants (`rto_at`, `spurious_rto_at`).
    pub fn report(&self, connections: usize, r: &mut Report) {
        let sums = [
            ("tcp_segments_sent", self.segments_sent),
            ("tcp_retransmits", self.retransmits),
            ("tcp_spurious_retransmits", self.spurious_retransmits),
            ("tcp_fast_recoveries", self.fast_recoveries),
            ("tcp_rtos", self.rtos),
            ("tcp_tlp_probes", self.tlp_probes),
            ("tcp_undos", self.undos),
            ("tcp_aborted", self.aborted),
            ("tcp_spurious_rtos", self.spurious_rtos),
            ("tcp_xmit_drops", self.xmit_drops),
            ("tcp_syn_retransmits", self.syn_retransmits),
        ];
        for (name, n) in sums {
            r.add(name, n);
        }
        // The first end's alone, as the summary always had it (a ping-pong's client's D-SACKs are
        // not added; kept so as to move no result).
        r.first("tcp_dsacks_received", self.dsacks_received);
        r.mean("tcp_reordering_mean", self.reordering_sum, connections as u64);
        r.max("tcp_reordering_max", u64::from(self.reordering_max));
        if let Some(rtt) = self.min_rtt_min {
            r.min("tcp_min_rtt_min_us", rtt.0 / 1_000);
        }
        r.instants("rto_at", &self.rto_at);
        r.instants("spurious_rto_at", &self.spurious_rto_at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timestamp_clock_ticks_in_milliseconds_since_4_13_and_in_jiffies_before() {
        let ms = TsTicks::of(TsClock::Current, 250);
        assert_eq!((ms, ms.ts_of(SimTime(9_500_000))), (TsTicks::MS, 10));
        let jiffies = TsTicks::of(TsClock::Linux412, 250);
        assert_eq!(jiffies.tick, SimTime(4_000_000));
        assert_eq!((jiffies.ts_of(SimTime(9_500_000)), jiffies.ts_time(3)), (3, SimTime(8_000_000)));
        assert_eq!(TsTicks::of(TsClock::Linux412, 1000), TsTicks::MS, "at 1000 Hz a jiffy is a millisecond");
        // The 3.x preset runs the jiffy clock.
        let spec: TcpSpec = serde_json::from_str(r#"{"ts_clock": "linux-4.12"}"#).unwrap();
        assert_eq!(TcpConfig::new(&spec, 1448, 100).ts.tick, SimTime(10_000_000));
        assert!(crate::scenario::Kernel::Linux3x.preset().contains(&("ts_clock", "\"linux-4.12\"")));
    }

    #[test]
    fn a_later_deadline_reuses_the_queued_event_and_an_earlier_one_replaces_it() {
        let mut t = Timer::default();
        assert!(t.arm(SimTime(100)));
        let first = t.generation();
        assert!(!t.arm(SimTime(300)), "later: the queued event will ask again");
        assert_eq!(t.fire(SimTime(100), first), Fired::Early(SimTime(300)));
        let second = t.generation();
        assert!(t.arm(SimTime(200)), "earlier than the queued 300: a new event");
        assert_eq!(t.fire(SimTime(300), second), Fired::Stale);
        assert_eq!(t.fire(SimTime(200), t.generation()), Fired::Due);
        t.cancel();
        assert!(t.arm(SimTime(400)));
        t.cancel();
        assert_eq!(t.fire(SimTime(400), t.generation()), Fired::Stale);
    }

    #[test]
    fn timestamps_tick_in_milliseconds() {
        assert_eq!(ts_of(SimTime(0)), 1);
        assert_eq!(ts_of(SimTime(2_999_999)), 3);
        assert_eq!(ts_time(ts_of(SimTime(2_500_000))), SimTime(2_000_000));
    }
}
