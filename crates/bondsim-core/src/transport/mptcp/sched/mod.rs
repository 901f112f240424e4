//! MPTCP's packet schedulers: which subflow the connection's next data goes to.
//!
//! One small trait, [`Scheduler`], as Linux's `struct mptcp_sched_ops` (include/net/mptcp.h,
//! 6.18.y: `get_send`, `get_retrans`): the sender hands it every subflow as a [`Candidate`] (in
//! the order Linux walks `msk->conn_list`) and the connection's data level as a [`Meta`]; it
//! answers with a [`Push`]. Sans-IO, each unit-tested on its own.
//!
//! * `default` ([`upstream`]): Linux's own, the only one upstream ships.
//! * `minrtt`, `roundrobin`, `redundant` ([`mptcp_org`]), `blest` ([`blest`]), `ecf` ([`ecf`]):
//!   the schedulers research compares, as the out-of-tree multipath-tcp.org kernel (v0.95,
//!   net/mptcp/mptcp_sched.c, mptcp_rr.c, mptcp_redundant.c, mptcp_blest.c, mptcp_ecf.c) runs
//!   them: one segment per decision (its meta-level skbs are one MSS without GSO), each on the
//!   connection level of 6.18 (its send buffer, data-level window, retransmission timer, stale
//!   subflows and `get_retrans`). Not upstream, so the emulator cannot run them. Not modelled:
//!   their opportunistic retransmission and penalisation (`mptcp_rcv_buf_optimization`, Raiciu
//!   et al., NSDI 2012), so BLEST's λ, which only that raises, drifts to its floor.
//!
//! To add a scheduler: a type implementing [`Scheduler`], an entry in [`SCHEDULERS`], and its
//! name in `scenario::MPTCP_SCHEDULERS` (a test checks the two lists agree).

pub mod blest;
pub mod ecf;
pub mod mptcp_org;
pub mod upstream;

use crate::time::SimTime;

pub use upstream::{get_retrans, mean_pacing_rate};

/// A subflow as a scheduler reads it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Candidate {
    /// `subflow->backup || subflow->request_bkup`.
    pub backup: bool,
    /// `__mptcp_subflow_active`: its handshake is over and it is not closed (stale or not).
    pub established: bool,
    /// `mptcp_subflow_active`: established, and not stale (or heard from since it went stale).
    pub active: bool,
    /// `sk_wmem_queued`, bytes.
    pub wmem_queued: u64,
    /// `subflow->avg_pacing_rate`, bytes per second (0: not yet set).
    pub avg_pacing_rate: f64,
    /// `sk_pacing_rate`, bytes per second (0 before the subflow has one).
    pub pacing_rate: f64,
    /// `sk_stream_memory_free`: `sk_wmem_queued < sk_sndbuf` (a subflow's `notsent_lowat` is
    /// `UINT_MAX`, `mptcp_sockopt_sync_locked`, so that is the whole test).
    pub memory_free: bool,
    /// Time left on its pending TCP timer if its `stale_count` is 0 (`mptcp_timeout_from_subflow`).
    pub timeout: SimTime,
    /// Retransmission periods it made no progress in (`subflow->stale_count`).
    pub stale_count: u32,
    /// `tp->srtt_us`: eight times its smoothed RTT in µs (0 before a sample).
    pub srtt_us8: u64,
    /// `tp->rttvar_us`, µs.
    pub rttvar_us: u64,
    /// Its congestion window and slow-start threshold, segments (`u32::MAX`: infinite).
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Segments in flight (`tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Segments written and not yet acknowledged (`write_seq - snd_una`), and of those not yet
    /// sent (`write_seq - snd_nxt`).
    pub queued: u32,
    pub unsent: u32,
    /// In `TCP_CA_Loss`.
    pub in_loss: bool,
}

impl Candidate {
    /// Its TCP write or retransmission queue holds data (`!tcp_rtx_and_write_queues_empty`).
    pub fn outstanding(&self) -> bool {
        self.queued > 0
    }
}

/// The connection's data level as a scheduler reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Meta {
    pub now: SimTime,
    /// Payload bytes per segment.
    pub mss: u64,
    /// The connection's packets: the DATA_ACK (`snd_una`), the next to push (the send head), one
    /// past the last the application wrote, and one past the last the peer's window allows.
    pub snd_una: u32,
    pub push_at: u32,
    pub write_seq: u32,
    pub wnd_end: u32,
}

impl Meta {
    /// The peer's data-level window left from the next data to push (`mptcp_wnd_end` less it), bytes.
    pub fn window_bytes(&self) -> u64 {
        u64::from(self.wnd_end.saturating_sub(self.push_at)) * self.mss
    }

    /// The peer's whole data-level window (`wnd_end - snd_una`: the meta socket's `snd_wnd`), bytes.
    pub fn snd_wnd_bytes(&self) -> u64 {
        u64::from(self.wnd_end.saturating_sub(self.snd_una)) * self.mss
    }

    /// Data the application wrote that no subflow has taken yet, bytes.
    pub fn unsent_bytes(&self) -> u64 {
        u64::from(self.write_seq.saturating_sub(self.push_at)) * self.mss
    }
}

/// How much data a push takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// `MPTCP_SEND_BURST_SIZE`, whole data fragments at a time (upstream's `__subflow_push_pending`).
    Burst,
    /// At most this many segments.
    Segments(u32),
    /// A copy of the connection's packet `dsn`, which another subflow took already (below the
    /// send head): only `redundant` asks for it.
    Again(u32),
}

/// A scheduler's answer: the subflow the data goes to and how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Push {
    pub sub: usize,
    pub take: Take,
}

impl Push {
    /// `sub` takes one segment of new data.
    pub fn segment(sub: usize) -> Push {
        Push { sub, take: Take::Segments(1) }
    }
}

/// A packet scheduler (`struct mptcp_sched_ops`): one per connection, holding its own state.
pub trait Scheduler: std::fmt::Debug + Send {
    /// `get_send`: the subflow the next data goes to, or none (nothing is pushed until an ACK
    /// or a timer calls again). It may set a candidate's `avg_pacing_rate` (the sender keeps it).
    fn get_send(&mut self, subs: &mut [Candidate], meta: &Meta) -> Option<Push>;

    /// `get_retrans`: the subflow the retransmission timer sends the oldest data again on
    /// (upstream's `mptcp_subflow_get_retrans` unless a scheduler says otherwise).
    fn get_retrans(&mut self, subs: &[Candidate]) -> Option<usize> {
        get_retrans(subs)
    }
}

/// The connection's retransmission period as `mptcp_subflow_get_send` sets it for any
/// scheduler (`__mptcp_set_timeout`): the longest time left on an active subflow's timer.
pub fn retransmit_period(subs: &[Candidate]) -> SimTime {
    subs.iter().filter(|s| s.active).map(|s| s.timeout).max().unwrap_or(SimTime::ZERO)
}

/// A scheduler `sender.mptcp_scheduler` may name.
#[derive(Debug)]
pub struct SchedInfo {
    pub name: &'static str,
    /// One line for `bondsim schedulers`, with where it comes from.
    pub summary: &'static str,
    /// In Linux's own tree (the emulator's kernel can run it).
    pub upstream: bool,
    /// A fresh instance for a connection of `subflows` subflows.
    pub build: fn(subflows: usize) -> Box<dyn Scheduler>,
}

impl PartialEq for SchedInfo {
    fn eq(&self, other: &SchedInfo) -> bool {
        self.name == other.name
    }
}

/// Every scheduler, the default first.
pub const SCHEDULERS: &[SchedInfo] = &[
    SchedInfo {
        name: "default",
        summary: "Linux's own (net/mptcp/protocol.c mptcp_subflow_get_send, 6.18): the active \
                  subflow with the least linger time (queued bytes over its mean pacing rate), \
                  backups only when no other is active, bursts of 64 KB",
        upstream: true,
        build: |_| Box::new(upstream::Default),
    },
    SchedInfo {
        name: "minrtt",
        summary: "the out-of-tree kernel's default (multipath-tcp.org v0.95 mptcp_sched.c; Paasch \
                  et al., 'Experimental evaluation of multipath TCP schedulers', CSWS 2014): the \
                  lowest-RTT subflow with room in its congestion window. Not upstream",
        upstream: false,
        build: |_| Box::new(mptcp_org::MinRtt),
    },
    SchedInfo {
        name: "roundrobin",
        summary: "each subflow with room in its congestion window in turn, a segment each \
                  (multipath-tcp.org v0.95 mptcp_rr.c, num_segments = 1, cwnd_limited). Not upstream",
        upstream: false,
        build: |n| Box::new(mptcp_org::RoundRobin::new(n)),
    },
    SchedInfo {
        name: "redundant",
        summary: "every segment on every active subflow: each with room in its congestion window \
                  in turn sends the next segment it has not sent (multipath-tcp.org v0.95 \
                  mptcp_redundant.c; Frömmgen et al., 'ReMP TCP', 2016). Not upstream",
        upstream: false,
        build: |n| Box::new(mptcp_org::Redundant::new(n)),
    },
    SchedInfo {
        name: "blest",
        summary: "minRTT, but waits for the fast subflow when the slow one would block the \
                  data-level window (Ferlin et al., 'BLEST', IFIP Networking 2016; \
                  multipath-tcp.org mptcp_blest.c). Not upstream",
        upstream: false,
        build: |n| Box::new(blest::Blest::new(n)),
    },
    SchedInfo {
        name: "ecf",
        summary: "minRTT, but waits for the fast subflow when it would finish the queued data \
                  sooner (Lim et al., 'ECF', CoNEXT 2017; multipath-tcp.org mptcp_ecf.c). Not \
                  upstream",
        upstream: false,
        build: |_| Box::new(ecf::Ecf::default()),
    },
];

/// The scheduler named `name` (one of [`SCHEDULERS`]; the scenario checked it).
pub fn info(name: &str) -> &'static SchedInfo {
    SCHEDULERS.iter().find(|s| s.name == name).expect("sender.mptcp_scheduler is checked against MPTCP_SCHEDULERS")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_and_the_schema_name_the_same_schedulers() {
        let names: Vec<&str> = SCHEDULERS.iter().map(|s| s.name).collect();
        assert_eq!(names, crate::scenario::MPTCP_SCHEDULERS);
        assert!(SCHEDULERS[0].upstream && SCHEDULERS[1..].iter().all(|s| !s.upstream));
    }

    #[test]
    fn the_period_is_the_longest_time_left_on_an_active_subflows_timer() {
        let sub = |ms, active| Candidate { active, timeout: SimTime::from_millis_f64(ms), ..Candidate::default() };
        assert_eq!(
            retransmit_period(&[sub(30.0, true), sub(250.0, true), sub(900.0, false)]),
            SimTime::from_millis_f64(250.0)
        );
        assert_eq!(retransmit_period(&[]), SimTime::ZERO);
    }
}
