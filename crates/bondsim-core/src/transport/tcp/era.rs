//! Kernel eras as facts. The scenario names a rule by the kernel era that ran it
//! (`sender.undo`, `sender.small_queues`, `sender.tlp_timeout`), or by its mechanism
//! (`sender.cwnd_reduction`, and `sender.tcp_recovery` with `sender.tcp_sack` for the loss
//! detection); [`Era::new`] turns those names, once, when the
//! connection's configuration is built, into the plain facts the sender tests on its hot paths
//! and the loss-detection strategy it runs. No hot path names an era.

use crate::scenario::{CwndReduction, SmallQueues, TlpTimeout, UndoEra};
use crate::time::SimTime;

/// Scoreboard marks an era's `tcp_enter_loss` voids the undo marker at (`TCPCB_RETRANS` or
/// `TCPCB_SACKED_RETRANS`); the sender's own mark bits, which it passes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoidUndoAt {
    /// Never (3.16 on: the marker is kept, `tcp_enter_loss` no longer walks the queue for it).
    Never,
    /// A segment ever retransmitted (`TCPCB_RETRANS`, 3.10-3.13).
    EverRetransmitted,
    /// A retransmission in flight (`TCPCB_SACKED_RETRANS`, 3.14-3.15).
    RetransmissionInFlight,
}

/// The undo rules of an era (`sender.undo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoRules {
    /// A D-SACK is news to `tcp_ack` (`FLAG_DSACKING_ACK` in `FLAG_CA_ALERT`, and the ACK no
    /// duplicate): today's kernels; 3.x's `tcp_ack` did not count it.
    pub dsack_is_news: bool,
    /// `tcp_process_loss` tries `tcp_try_undo_loss` on every ACK in Loss (3.10-3.18); today's only
    /// on one that moves snd_una (`flag & FLAG_SND_UNA_ADVANCED`).
    pub undo_loss_on_any_ack: bool,
    /// `tcp_enter_recovery` forgets a stale first retransmission's time
    /// (`tcp_retrans_stamp_cleanup`, 6.12 and the stable kernels since); 3.x did not.
    pub recovery_forgets_retrans_stamp: bool,
    /// What makes `tcp_enter_loss` void the undo marker (until 3.15).
    pub loss_voids_undo_at: VoidUndoAt,
    /// A loss probe of a segment not marked lost marks it `TCPCB_EVER_RETRANS`
    /// (`__tcp_retransmit_skb`, 3.14 on); 3.10-3.13 marked nothing.
    pub probe_marks_ever_retrans: bool,
}

impl UndoRules {
    pub fn of(era: UndoEra) -> UndoRules {
        let current = era == UndoEra::Current;
        UndoRules {
            dsack_is_news: current,
            undo_loss_on_any_ack: !current,
            recovery_forgets_retrans_stamp: current,
            loss_voids_undo_at: match era {
                UndoEra::Current => VoidUndoAt::Never,
                UndoEra::Linux313 => VoidUndoAt::EverRetransmitted,
                UndoEra::Linux315 => VoidUndoAt::RetransmissionInFlight,
            },
            probe_marks_ever_retrans: era != UndoEra::Linux313,
        }
    }
}

/// TCP small queues' limit (`tcp_small_queue_check`, `sender.small_queues`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsqLimit {
    /// Today's: `max(2 · truesize, pacing_rate >> 10)` at most `tcp_limit_output_bytes`, doubled
    /// for retransmissions; a connection with at most one buffer out always sends.
    Capped,
    /// 3.12 to 3.18's: at least `tcp_limit_output_bytes`, else 200% of the window's rate >> 10;
    /// retransmissions never held (`tcp_xmit_retransmit_queue` has no such check).
    Floored,
    /// None (Linux before 3.6): only the send buffer and the links' queues hold a connection.
    Off,
}

/// How the window comes down in Recovery and CWR (`sender.cwnd_reduction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// Proportional Rate Reduction (`tcp_cwnd_reduction`, RFC 6937; Linux since 3.2), the
    /// window set to ssthresh at the end (`tcp_end_cwnd_reduction`).
    Prr,
    /// Rate halving (2.6.32's `tcp_cwnd_down`, `tcp_complete_cwr`; Linux before 3.2).
    RateHalving,
}

/// The tail loss probe's rules (`sender.tlp_timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlpRules {
    /// 3.10's first TLP: the probe timeout's floor (`msecs_to_jiffies(10)`) and its one-segment
    /// term (1.5·RTT + `TCP_DELACK_MAX`); none today (2·SRTT plus `tcp_rto_min` or 2 ms).
    pub floor: Option<SimTime>,
    /// An ACK in the window turns a pending probe back into the RTO (3.10's `tcp_ack`:
    /// `icsk_pending == ICSK_TIME_LOSS_PROBE` → `tcp_rearm_rto`); today's leave it pending.
    pub rearmed_by_ack: bool,
}

impl TlpRules {
    pub fn of(era: TlpTimeout, hz: u32) -> TlpRules {
        match era {
            TlpTimeout::Current => TlpRules { floor: None, rearmed_by_ack: false },
            TlpTimeout::Linux310 => {
                TlpRules { floor: Some(bondsim_bond::monitor::jiffies_period(10.0, hz)), rearmed_by_ack: true }
            }
        }
    }
}

/// How the sender finds losses, chosen once (`tcp_identify_packet_loss`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossDetection {
    /// RACK-TLP (`tcp_recovery` bit 1, with SACK): `tcp_rack_mark_lost`.
    Rack,
    /// The scoreboard before RACK, with SACK: dupthresh or FACK, lost retransmissions, and Linux
    /// 3.x's early retransmit and NCR where they are configured.
    Scoreboard,
    /// No SACK: only the timeout finds a loss.
    None,
}

impl LossDetection {
    pub fn of(rack: bool, sack: bool) -> LossDetection {
        match (rack, sack) {
            (true, true) => LossDetection::Rack,
            (false, true) => LossDetection::Scoreboard,
            (_, false) => LossDetection::None,
        }
    }
}

/// Every era-dependent fact of one sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Era {
    pub undo: UndoRules,
    pub tsq: TsqLimit,
    pub tlp: TlpRules,
    /// A D-SACK's duplicated segments count as delivered (`tcp_dsack_seen`: "A spurious
    /// retransmission is delivered", into `tp->delivered`, which feeds the rate sample, PRR and
    /// `tcp_cong_avoid`): today's kernels (per segment since 5.9, one per D-SACK from 4.9's
    /// delivery accounting); 3.x counted none (no `tp->delivered`: PRR's and `tcp_cong_avoid`'s
    /// counts were ACKed and SACKed segments). Follows the undo era (`sender.undo`).
    pub dsack_delivered: bool,
    pub reduction: Reduction,
    /// A dubious ACK that leaves the connection in Open, Disorder or Loss caps cwnd at the
    /// segments in flight plus the reordering degree (2.6.32's `tcp_moderate_cwnd`, called by
    /// `tcp_try_to_open` and by `tcp_fastretrans_alert` in Loss); today's kernels have no such
    /// cap. Follows the reduction (`sender.cwnd_reduction`).
    pub moderates_cwnd: bool,
    /// A full-sized segment with PSH (the end of a write) lets the reading application's read ACK
    /// at once (`tcp_measure_rcv_mss` sets `ICSK_ACK_PUSHED` for it, "tcp: fix delayed ACKs for MSS
    /// boundary condition", 4720852ed9af, Linux 6.6 and the stable kernels since); before, only a
    /// short segment did. Follows the undo era (`sender.undo`: today's kernels).
    pub pushed_full_mss: bool,
}

impl Era {
    pub fn new(undo: UndoEra, small_queues: SmallQueues, tlp: TlpTimeout, reduction: CwndReduction, hz: u32) -> Era {
        let rate_halving = reduction == CwndReduction::RateHalving;
        Era {
            undo: UndoRules::of(undo),
            tsq: match small_queues {
                SmallQueues::Current => TsqLimit::Capped,
                SmallQueues::Linux312 => TsqLimit::Floored,
                SmallQueues::Linux35 => TsqLimit::Off,
            },
            tlp: TlpRules::of(tlp, hz),
            dsack_delivered: undo == UndoEra::Current,
            reduction: if rate_halving { Reduction::RateHalving } else { Reduction::Prr },
            moderates_cwnd: rate_halving,
            pushed_full_mss: undo == UndoEra::Current,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each undo fact, by era: today's kernels, 3.10-3.13 and 3.14-3.15.
    #[test]
    fn each_undo_fact_belongs_to_its_era() {
        let now = UndoRules::of(UndoEra::Current);
        let l313 = UndoRules::of(UndoEra::Linux313);
        let l315 = UndoRules::of(UndoEra::Linux315);
        assert_eq!([now.dsack_is_news, l313.dsack_is_news, l315.dsack_is_news], [true, false, false]);
        assert_eq!(
            [now.undo_loss_on_any_ack, l313.undo_loss_on_any_ack, l315.undo_loss_on_any_ack],
            [false, true, true]
        );
        assert_eq!(
            [
                now.recovery_forgets_retrans_stamp,
                l313.recovery_forgets_retrans_stamp,
                l315.recovery_forgets_retrans_stamp
            ],
            [true, false, false]
        );
        assert_eq!(
            [now.loss_voids_undo_at, l313.loss_voids_undo_at, l315.loss_voids_undo_at],
            [VoidUndoAt::Never, VoidUndoAt::EverRetransmitted, VoidUndoAt::RetransmissionInFlight]
        );
        assert_eq!(
            [now.probe_marks_ever_retrans, l313.probe_marks_ever_retrans, l315.probe_marks_ever_retrans],
            [true, false, true]
        );
    }

    #[test]
    fn small_queues_and_tlp_facts_belong_to_their_eras() {
        let era = |sq, tlp| Era::new(UndoEra::Current, sq, tlp, CwndReduction::Prr, 250);
        assert_eq!(era(SmallQueues::Current, TlpTimeout::Current).tsq, TsqLimit::Capped);
        assert_eq!(era(SmallQueues::Linux312, TlpTimeout::Current).tsq, TsqLimit::Floored);
        assert_eq!(era(SmallQueues::Linux35, TlpTimeout::Current).tsq, TsqLimit::Off);
        let now = era(SmallQueues::Current, TlpTimeout::Current).tlp;
        assert_eq!(now, TlpRules { floor: None, rearmed_by_ack: false });
        // 3.10: 10 ms in whole jiffies of a 250 Hz tick (4 ms each): 12 ms.
        let l310 = era(SmallQueues::Current, TlpTimeout::Linux310).tlp;
        assert_eq!(l310, TlpRules { floor: Some(SimTime(12_000_000)), rearmed_by_ack: true });
    }

    /// PRR since 3.2, rate halving and `tcp_moderate_cwnd` before (2.6.32), chosen together.
    #[test]
    fn the_window_reduction_facts_belong_to_their_eras() {
        let era = |reduction| Era::new(UndoEra::Current, SmallQueues::Current, TlpTimeout::Current, reduction, 250);
        let (prr, halving) = (era(CwndReduction::Prr), era(CwndReduction::RateHalving));
        assert_eq!((prr.reduction, prr.moderates_cwnd), (Reduction::Prr, false));
        assert_eq!((halving.reduction, halving.moderates_cwnd), (Reduction::RateHalving, true));
    }

    /// The facts a `sender.kernel` preset gives, on a 250 Hz tick.
    fn era_of(kernel: &str) -> Era {
        let s = crate::Scenario::from_json(&format!(
            r#"{{"workload": {{"requests": 1, "file_size": {{"kind": "fixed", "bytes": 1000}}}},
                "sender": {{"kind": "tcp", "kernel": "{kernel}"}},
                "bond": {{"mode": "rr"}}, "links": [{{"rate_mbps": 100}}]}}"#
        ))
        .unwrap();
        let t = s.sender.tcp().unwrap();
        Era::new(t.undo, t.small_queues, t.tlp_timeout, t.cwnd_reduction, 250)
    }

    /// linux-2.6's facts beside linux-3.x's: no TCP small queues, rate halving with moderation,
    /// and 3.10-3.13's undo rules (2.6.32's `tcp_enter_loss` voids the marker at `TCPCB_RETRANS`).
    #[test]
    fn each_kernel_presets_facts() {
        let (l26, l3x, now) = (era_of("linux-2.6"), era_of("linux-3.x"), era_of("current"));
        assert_eq!([l26.tsq, l3x.tsq, now.tsq], [TsqLimit::Off, TsqLimit::Floored, TsqLimit::Capped]);
        assert_eq!(
            [l26.reduction, l3x.reduction, now.reduction],
            [Reduction::RateHalving, Reduction::Prr, Reduction::Prr]
        );
        assert_eq!([l26.moderates_cwnd, l3x.moderates_cwnd, now.moderates_cwnd], [true, false, false]);
        assert_eq!(l26.undo, UndoRules::of(UndoEra::Linux313));
        assert_eq!(l26.undo, l3x.undo);
        assert_eq!([l26.dsack_delivered, l3x.dsack_delivered, now.dsack_delivered], [false, false, true]);
    }

    #[test]
    fn rack_needs_sack_and_without_sack_only_the_timeout_finds_losses() {
        assert_eq!(LossDetection::of(true, true), LossDetection::Rack);
        assert_eq!(LossDetection::of(false, true), LossDetection::Scoreboard);
        assert_eq!(LossDetection::of(true, false), LossDetection::None);
        assert_eq!(LossDetection::of(false, false), LossDetection::None);
    }
}
