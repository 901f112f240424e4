//! Linux's default MPTCP scheduler: `mptcp_subflow_get_send` (net/mptcp/protocol.c, 6.18.y),
//! which `mptcp_sched_default_get_send` (sched.c) calls, and the retransmission's
//! `mptcp_subflow_get_retrans`. Sans-IO: the sender hands each subflow's state over, in the
//! order Linux walks `msk->conn_list` (the first subflow, then the joins in order).

use super::{Candidate, Meta, Push, Scheduler, Take};

/// `MPTCP_SEND_BURST_SIZE`: 64 KiB less a TCP header, the most TCP options, an IPv6 header and
/// a fragment header: 65,428 bytes.
pub const SEND_BURST_BYTES: u64 = 65_428;

/// Linux's default scheduler (`mptcp_sched_default`, net/mptcp/sched.c).
#[derive(Debug, Clone, Copy)]
pub struct Default;

impl Scheduler for Default {
    /// [`get_send`]'s pick takes a burst of `MPTCP_SEND_BURST_SIZE` capped by the data-level
    /// window; its `avg_pacing_rate` becomes the burst-weighted mean ([`mean_pacing_rate`]). With
    /// the window closed it takes nothing.
    fn get_send(&mut self, subs: &mut [Candidate], meta: &Meta) -> Option<Push> {
        let pick = get_send(subs)?;
        let burst = SEND_BURST_BYTES.min(meta.window_bytes());
        if burst == 0 {
            return None;
        }
        let c = &mut subs[pick];
        c.avg_pacing_rate = mean_pacing_rate(c.avg_pacing_rate, c.pacing_rate, c.wmem_queued, burst);
        Some(Push { sub: pick, take: Take::Burst })
    }
}

/// `mptcp_subflow_get_send`: among the active subflows, the one with the least linger time
/// (`sk_wmem_queued` over `avg_pacing_rate`, the first on a tie), the backups only if no other
/// subflow is active; nothing if that one's send buffer is full (the memory test is made on
/// the winner only). A subflow whose `avg_pacing_rate` is unset takes its `sk_pacing_rate`
/// (updated in `subflows`), and is skipped while that is 0 too. (Its timeout is
/// [`super::retransmit_period`].)
pub fn get_send(subflows: &mut [Candidate]) -> Option<usize> {
    let mut best: [Option<(usize, f64)>; 2] = [None, None];
    let mut nr_active = 0;
    for (i, s) in subflows.iter_mut().enumerate() {
        if !s.active {
            continue;
        }
        nr_active += usize::from(!s.backup);
        if s.avg_pacing_rate == 0.0 {
            s.avg_pacing_rate = s.pacing_rate;
            if s.avg_pacing_rate == 0.0 {
                continue;
            }
        }
        let linger = s.wmem_queued as f64 / s.avg_pacing_rate;
        let slot = &mut best[usize::from(s.backup)];
        if slot.is_none_or(|(_, l)| linger < l) {
            *slot = Some((i, linger));
        }
    }
    let chosen = if nr_active == 0 { best[1] } else { best[0] };
    chosen.map(|(i, _)| i).filter(|&i| subflows[i].memory_free)
}

/// `avg_pacing_rate` after a burst of `burst` bytes is given to a subflow holding `wmem` bytes:
/// the burst-weighted mean of the old value and its `sk_pacing_rate` now.
pub fn mean_pacing_rate(avg: f64, pacing_rate: f64, wmem: u64, burst: u64) -> f64 {
    (avg * wmem as f64 + pacing_rate * burst as f64) / (burst + wmem) as f64
}

/// `mptcp_subflow_get_retrans` after its stale checks (the sender counts them first): the
/// first established subflow with nothing outstanding that is not a backup, else the first
/// such backup if every subflow with data outstanding made no progress for two periods or more
/// (`min_stale_count > 1`; none outstanding counts as that). The stale flag is not tested here.
pub fn get_retrans(subflows: &[Candidate]) -> Option<usize> {
    let mut backup = None;
    let mut min_stale = u32::MAX;
    for (i, s) in subflows.iter().enumerate().filter(|(_, s)| s.established) {
        if s.outstanding() {
            min_stale = min_stale.min(s.stale_count);
            continue;
        }
        if s.backup {
            backup = backup.or(Some(i));
            continue;
        }
        return Some(i);
    }
    backup.filter(|_| min_stale > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(wmem: u64, rate: f64) -> Candidate {
        Candidate {
            established: true,
            active: true,
            wmem_queued: wmem,
            pacing_rate: rate,
            memory_free: true,
            ..Candidate::default()
        }
    }

    #[test]
    fn the_least_linger_time_wins_and_the_first_on_a_tie() {
        let mut s = [sub(10_000, 1e6), sub(10_000, 2e6)];
        assert_eq!(get_send(&mut s), Some(1), "half the linger time");
        assert_eq!(s[0].avg_pacing_rate, 1e6, "unset averages start from the pacing rate");
        let mut tie = [sub(0, 1e6), sub(0, 5e6)];
        assert_eq!(get_send(&mut tie), Some(0), "strict <: the earlier subflow keeps a tie");
    }

    #[test]
    fn a_full_winner_sends_nothing_even_if_another_has_room() {
        let mut s = [sub(1_000, 1e6), sub(50_000, 1e6)];
        s[0].memory_free = false;
        assert_eq!(get_send(&mut s), None);
    }

    #[test]
    fn backups_only_when_no_other_subflow_is_active() {
        let mut s = [sub(90_000, 1e6), Candidate { backup: true, ..sub(0, 1e6) }];
        assert_eq!(get_send(&mut s), Some(0), "a busy primary still blocks the backup");
        s[0].active = false;
        assert_eq!(get_send(&mut s), Some(1));
    }

    #[test]
    fn a_subflow_without_a_pacing_rate_counts_as_active_but_is_not_picked() {
        let mut s = [sub(0, 0.0), Candidate { backup: true, ..sub(0, 1e6) }];
        assert_eq!(get_send(&mut s), None, "nr_active counts it, so the backup stays out");
    }

    #[test]
    fn a_burst_is_capped_by_the_window_and_none_is_taken_when_it_is_closed() {
        let meta = |wnd_end| Meta { wnd_end, ..super::super::mptcp_org::tests::meta() };
        let mut s = [sub(0, 1e6)];
        assert_eq!(Default.get_send(&mut s, &meta(0)), None);
        assert_eq!(s[0].avg_pacing_rate, 1e6, "the rate was set, no burst averaged in");
        s[0].pacing_rate = 3e6;
        assert_eq!(Default.get_send(&mut s, &meta(10)).map(|p| p.sub), Some(0));
        assert_eq!(s[0].avg_pacing_rate, 3e6, "all of it the burst (nothing queued)");
    }

    #[test]
    fn the_mean_pacing_rate_weighs_the_burst_against_what_is_queued() {
        assert_eq!(mean_pacing_rate(1e6, 3e6, 65_428, 65_428), 2e6);
        assert_eq!(mean_pacing_rate(1e6, 3e6, 0, 1000), 3e6);
    }

    #[test]
    fn retransmissions_go_to_an_idle_subflow_and_to_a_backup_only_without_progress() {
        let busy = |stale| Candidate { queued: 1, stale_count: stale, ..sub(1, 1e6) };
        let backup = Candidate { backup: true, ..sub(0, 1e6) };
        assert_eq!(get_retrans(&[busy(0), sub(0, 1e6), backup]), Some(1));
        assert_eq!(get_retrans(&[busy(1), busy(1), backup]), None);
        assert_eq!(get_retrans(&[busy(2), busy(3), backup]), Some(2));
        let joining = Candidate { established: false, ..sub(0, 1e6) };
        assert_eq!(get_retrans(&[busy(2), joining, backup]), Some(2));
    }
}
