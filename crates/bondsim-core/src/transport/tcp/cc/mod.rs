//! Congestion control: a small trait shaped like Linux's `struct
//! tcp_congestion_ops` (`include/net/tcp.h`), one file per algorithm, and a
//! registry.
//!
//! The connection ([`super::sender`]) owns the window (`snd_cwnd`, in
//! segments, as Linux counts it) and calls the algorithm where Linux calls
//! its ops: `cong_avoid` on an ACK that may raise the window
//! (`tcp_cong_control` → `tcp_cong_avoid`), `ssthresh` when a reduction
//! starts (`tcp_init_cwnd_reduction`, and `tcp_enter_loss` on a timeout),
//! `undo_cwnd` when a reduction is found needless (`tcp_undo_cwnd_reduction`),
//! `pkts_acked` with each ACK's RTT sample (`tcp_ack` → `tcp_clean_rtx_queue`),
//! `set_state` on every change of congestion state (`tcp_set_ca_state`) and
//! `cwnd_event` when transmission restarts after idle (`tcp_cwnd_event`).
//!
//! * [`newreno`]: RFC 5681 / RFC 6582 (Linux `tcp_reno_*`).
//! * [`cubic`]: RFC 9438 with HyStart, as Linux's `tcp_cubic.c` (the default).
//! * [`bbr`]: BBR v1, as Linux 6.x's `tcp_bbr.c` (rate-based: `cong_control`, paced).
//! * [`coupled`]: LIA and OLIA, which couple an MPTCP connection's subflows (the out-of-tree
//!   multipath-tcp.org kernel's; `sender.kind = "mptcp"` only).

pub mod bbr;
pub mod coupled;
pub mod cubic;
pub mod newreno;

use crate::time::SimTime;

/// Linux's congestion states (`enum tcp_ca_state`, `include/net/tcp.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaState {
    /// Nothing wrong.
    #[default]
    Open,
    /// Duplicate ACKs or SACKs seen, no loss marked yet.
    Disorder,
    /// Window being reduced for a local reason: the host's own queue refused a send
    /// (`tcp_enter_cwr`; ECN, the other reason, is not modelled).
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// What the connection shows its congestion control: Linux's `struct tcp_sock`
/// fields the `tcp_congestion_ops` read and write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// `snd_cwnd`: the congestion window, in segments.
    pub cwnd: u32,
    /// `snd_ssthresh`, in segments (`u32::MAX`: infinite, `TCP_INFINITE_SSTHRESH`).
    pub ssthresh: u32,
    /// `snd_cwnd_cnt`: the additive-increase counter of `tcp_cong_avoid_ai`.
    pub cwnd_cnt: u32,
    /// `snd_cwnd_clamp`: the window never exceeds it.
    pub cwnd_clamp: u32,
    /// `tcp_is_cwnd_limited()`: the window, not the application or the
    /// receiver, limited what was sent (only then may it grow).
    pub cwnd_limited: bool,
    /// `snd_una`: the oldest unacknowledged segment.
    pub snd_una: u64,
    /// `snd_nxt`: the next new segment to send (HyStart's round boundary).
    pub snd_nxt: u64,
    /// `lsndtime`: when data was last sent. On [`CaEvent::TxStart`] it is still
    /// the time of the send *before* the idle period (Linux raises the event in
    /// `tcp_event_data_sent` before it sets `lsndtime = now`); CUBIC shifts its
    /// epoch by `now - lsndtime` (`cubictcp_cwnd_event`).
    pub lsndtime: SimTime,
    /// The current time (`tcp_jiffies32` / `tcp_clock_us()` in Linux).
    pub now: SimTime,
    /// `sk_pacing_rate`, bytes per second (0 before the first RTT sample): Linux computes it
    /// whether or not anything paces (`tcp_update_pacing_rate`); HyStart reads it.
    pub pacing_rate: u64,
    /// `mss_cache`: payload bytes per segment (set once, before `init`).
    pub mss: u32,
    /// `srtt_us`: 8 × SRTT in µs, 0 before a sample; the RTT estimator keeps it current for every
    /// control (BBR and the coupled controls read it).
    pub srtt_us: u64,
    /// The `tcp_sock` fields only a rate-based control reads, copied in by the sender only for a
    /// control with `cong_control` (before `cong_control` and `cwnd_event`; zero otherwise):
    /// `tp->delivered` (segments delivered, ACKed or SACKed, each once), `tp->delivered_mstamp`
    /// (when it last grew), `tcp_packets_in_flight()` (after the ACK), `tcp_min_rtt()` and
    /// `tcp_wstamp_ns` (the next departure time, EDT).
    pub delivered: u32,
    pub delivered_mstamp: SimTime,
    pub packets_in_flight: u32,
    pub min_rtt: Option<SimTime>,
    pub wstamp: SimTime,
    /// `tp->app_limited` (tcp_rate.c: the delivered count that ends an application-limited
    /// stretch, 0 for none), copied in with the fields above and back out after `cong_control`:
    /// BBR's PROBE_RTT writes it (`bbr_update_min_rtt`).
    pub app_limited: u32,
}

impl Window {
    /// A window of `cwnd` segments and threshold `ssthresh` at time zero, limited by
    /// nothing else, before anything was sent.
    pub fn new(cwnd: u32, ssthresh: u32) -> Window {
        Window {
            cwnd,
            ssthresh,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX,
            cwnd_limited: true,
            snd_una: 0,
            snd_nxt: 0,
            now: SimTime::ZERO,
            lsndtime: SimTime::ZERO,
            pacing_rate: 0,
            mss: 0,
            delivered: 0,
            delivered_mstamp: SimTime::ZERO,
            packets_in_flight: 0,
            srtt_us: 0,
            min_rtt: None,
            wstamp: SimTime::ZERO,
            app_limited: 0,
        }
    }

    /// `tcp_in_slow_start()`: `snd_cwnd < snd_ssthresh`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start()` (`net/ipv4/tcp_cong.c`): grow by one segment per
    /// acked segment up to `ssthresh`; returns the acked segments left over.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd).min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// `tcp_cong_avoid_ai()` (`net/ipv4/tcp_cong.c`): grow by one segment per
    /// `w` acked segments.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        // If credits accumulated at a higher w, apply them gently now.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// One ACK's news for `pkts_acked` (Linux's `struct ack_sample`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckSample {
    /// Segments this ACK newly acknowledged (cumulatively or by SACK).
    pub acked: u32,
    /// The RTT measured from it, if any (Linux: `rtt_us`, -1 when none).
    pub rtt: Option<SimTime>,
    /// Segments in flight before this ACK (`in_flight`).
    pub in_flight: u32,
}

/// One ACK's delivery-rate sample (Linux's `struct rate_sample`, include/net/tcp.h, filled by
/// net/ipv4/tcp_rate.c): what a rate-based control (`cong_control`) reads. `delivered` over
/// `interval` is the delivery rate; both are `None` where Linux has -1 (no valid sample).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateSample {
    /// `prior_mstamp`: when the delivered count the sample starts from was reached.
    pub prior_mstamp: Option<SimTime>,
    /// `prior_delivered`: that count (`tx.delivered` of the latest sent segment delivered).
    pub prior_delivered: u32,
    /// Segments delivered over the interval (`delivered`).
    pub delivered: Option<u32>,
    /// `interval_us`: the longer of the send and the ACK intervals, at least `min_rtt`.
    pub interval: Option<SimTime>,
    /// `snd_interval_us` and `rcv_interval_us`.
    pub snd_interval: SimTime,
    pub rcv_interval: SimTime,
    /// `rtt_us`: the newest (S)ACKed original's RTT (`ca_rtt_us`), if any.
    pub rtt: Option<SimTime>,
    /// Segments newly marked lost on this ACK (`losses`).
    pub losses: u32,
    /// Segments newly delivered on this ACK (`acked_sacked`).
    pub acked_sacked: u32,
    /// Segments in flight before this ACK (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// The sample's segment left while the application had nothing more to send
    /// (`is_app_limited`).
    pub is_app_limited: bool,
    /// The sample's segment was a retransmission (`is_retrans`).
    pub is_retrans: bool,
    /// `last_end_seq`: one past the sample's segment.
    pub last_end_seq: u32,
}

/// Linux's `enum tcp_ca_event` (the ones the model raises).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (`CA_EVENT_TX_START`).
    TxStart,
    /// A retransmission timeout starts a reduction (`CA_EVENT_LOSS`, `tcp_enter_loss`, after
    /// the new `ssthresh`).
    Loss,
}

/// A congestion-control algorithm, as Linux's `struct tcp_congestion_ops`.
pub trait CongestionControl: Send + std::fmt::Debug {
    /// Its name, as `net.ipv4.tcp_congestion_control` spells it.
    fn name(&self) -> &'static str;

    /// Its own state, for the TCP trace (`trace_ms`'s `cc_mode`), as `ss -i` shows it (BBR's
    /// mode); none for a control without one.
    fn mode(&self) -> Option<&'static str> {
        None
    }

    /// The connection starts (`init`); it may set the window's fields, as `bbr_init` sets
    /// `snd_ssthresh` and `sk_pacing_rate`.
    fn init(&mut self, _w: &mut Window) {}

    /// The slow-start threshold to use when a reduction starts (`ssthresh`).
    fn ssthresh(&mut self, w: &Window) -> u32;

    /// An ACK may raise the window (`cong_avoid`): `acked` segments newly delivered.
    fn cong_avoid(&mut self, w: &mut Window, acked: u32);

    /// The congestion state changes (`set_state`).
    fn set_state(&mut self, _w: &Window, _state: CaState) {}

    /// A transmission event (`cwnd_event`); it may set the window and the pacing rate, as
    /// `bbr_cwnd_event` does on a restart after idle.
    fn cwnd_event(&mut self, _w: &mut Window, _event: CaEvent) {}

    /// Each ACK's sample (`pkts_acked`), called before `cong_avoid` for the
    /// same ACK and with `snd_una` already advanced by it (`tcp_ack` updates
    /// `snd_una`, then `tcp_clean_rtx_queue` calls `pkts_acked`). The window is
    /// writable because Linux's ops may write `tcp_sock` here: HyStart ends
    /// slow start by setting `snd_ssthresh = snd_cwnd` (`hystart_update`).
    fn pkts_acked(&mut self, _w: &mut Window, _sample: &AckSample) {}

    /// Linux's `cong_control(sk, ack, flag, rs)` (BBR's path): a control that sets the window and
    /// the pacing rate itself from each ACK's delivery-rate sample returns true, and the sender
    /// then runs neither PRR nor `cong_avoid` nor its own pacing rate
    /// (`tcp_cong_control`: `if (icsk->icsk_ca_ops->cong_control) { ...; return; }`). It writes
    /// `w.cwnd` and `w.pacing_rate` (bytes per second, `sk_pacing_rate`). Without it (every
    /// loss-based control, the default): false, and the window is the sender's.
    fn cong_control(&mut self, _w: &mut Window, _rs: &RateSample) -> bool {
        false
    }

    /// Whether the control has `cong_control` (Linux: `icsk_ca_ops->cong_control != NULL`); only
    /// then does the sender sample delivery rates (Linux samples every connection, but in the
    /// model nothing else reads the sample, and the loss-based controls run without its cost).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// The control asks the sender to pace its segments itself (`sk_pacing_status =
    /// SK_PACING_NEEDED`, as BBR's `bbr_init` sets it when no fq qdisc paces): each leaves no
    /// earlier than its departure time (EDT, `tcp_wstamp_ns`). CUBIC and Reno do not.
    fn needs_pacing(&self) -> bool {
        false
    }

    /// The window to return to when a reduction is undone (`undo_cwnd`).
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32;

    /// The floor of rate halving's steps down (`tcp_cwnd_min`: the control's `min_cwnd` op, else
    /// ssthresh; Linux before 3.2, read in 2.6.32's tcp_input.c). PRR has no such floor.
    fn min_cwnd(&self, w: &Window) -> u32 {
        w.ssthresh
    }
}

/// Names the registry knows (`cubic` first: Linux's default): the schema's list, which it checks
/// `sender.tcp_congestion_control` against; `tests/schema_names.rs` builds each.
pub use crate::scenario::CONGESTION_CONTROLS as NAMES;

/// The algorithm `name` names (`reno` is Linux's name for NewReno's window rules),
/// with HyStart on or off where the algorithm has it.
pub fn build(name: &str, hystart: bool) -> Option<Box<dyn CongestionControl>> {
    match name {
        "cubic" => Some(Box::new(cubic::Cubic::with_hystart(hystart))),
        "reno" | "newreno" => Some(Box::new(newreno::NewReno)),
        "bbr" => Some(Box::new(bbr::Bbr::default())),
        _ => None,
    }
}
