//! The out-of-tree multipath-tcp.org kernel's schedulers (v0.95, net/mptcp/): its default,
//! minRTT (mptcp_sched.c), round-robin (mptcp_rr.c) and redundant (mptcp_redundant.c), one
//! segment per decision. BLEST and ECF start from [`min_rtt`] too.

use super::{Candidate, Meta, Push, Scheduler, Take};

/// `mptcp_is_def_unavailable`: it cannot send at all: not established (or closed), or
/// stale (the out-of-tree kernel's `tp->pf`, "potentially failed", is what 6.18's stale is).
pub fn def_unavailable(s: &Candidate) -> bool {
    !s.established || !s.active
}

/// `mptcp_is_temp_unavailable` (with SACK, without the zero-window test, as `mptcp_next_segment`
/// asks): in `TCP_CA_Loss`, no room in its congestion window, or what it holds unsent already
/// fills that room.
pub fn temp_unavailable(s: &Candidate) -> bool {
    s.in_loss || s.in_flight >= s.cwnd || s.unsent > s.cwnd - s.in_flight
}

/// `mptcp_is_available`.
pub fn available(s: &Candidate) -> bool {
    !def_unavailable(s) && !temp_unavailable(s)
}

/// `get_available_subflow` for new data (which no subflow carried yet, so every subflow is
/// "unused"): among the non-backup subflows, the available one with the lowest SRTT (the first
/// on a tie); none if one of them is only temporarily unavailable (`found_unused_una` forces
/// the answer); otherwise the same among the backups.
pub fn min_rtt(subs: &[Candidate]) -> Option<usize> {
    for backups in [false, true] {
        let mut best: Option<(usize, u64)> = None;
        let mut waiting = false;
        for (i, s) in subs.iter().enumerate().filter(|(_, s)| s.backup == backups && !def_unavailable(s)) {
            if temp_unavailable(s) {
                waiting = true;
            } else if best.is_none_or(|(_, srtt)| s.srtt_us8 < srtt) {
                best = Some((i, s.srtt_us8));
            }
        }
        if best.is_some() || waiting {
            return best.map(|(i, _)| i);
        }
    }
    None
}

/// BLEST's and ECF's `minsk`: the subflow with the lowest SRTT (the first of equals) among those
/// that can send, whether or not their windows have room.
pub fn fastest(subs: &[Candidate]) -> Option<usize> {
    subs.iter().enumerate().filter(|(_, s)| !def_unavailable(s)).min_by_key(|&(i, s)| (s.srtt_us8, i)).map(|(i, _)| i)
}

/// The out-of-tree default, minRTT.
#[derive(Debug, Clone, Copy)]
pub struct MinRtt;

impl Scheduler for MinRtt {
    fn get_send(&mut self, subs: &mut [Candidate], _: &Meta) -> Option<Push> {
        min_rtt(subs).map(Push::segment)
    }
}

/// Round-robin (`mptcp_rr_next_segment`, `num_segments` = 1, `cwnd_limited` = 1): each round
/// gives every available subflow a segment; it ignores backup flags, as mptcp_rr.c does.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    /// Segments each subflow took this round (`rsp->quota`).
    quota: Vec<u32>,
}

impl RoundRobin {
    const NUM_SEGMENTS: u32 = 1;

    pub fn new(subflows: usize) -> RoundRobin {
        RoundRobin { quota: vec![0; subflows] }
    }
}

impl Scheduler for RoundRobin {
    /// A subflow part-way through its quota goes on; else the last available one with none yet;
    /// when every available one has its quota, a new round starts.
    fn get_send(&mut self, subs: &mut [Candidate], _: &Meta) -> Option<Push> {
        for _round in 0..2 {
            let (mut choose, mut iter, mut full) = (None, 0, 0);
            for (i, _) in subs.iter().enumerate().filter(|(_, s)| available(s)) {
                iter += 1;
                let q = self.quota[i];
                if q > 0 && q < Self::NUM_SEGMENTS {
                    choose = Some(i);
                    break;
                }
                if q == 0 {
                    choose = Some(i);
                }
                full += usize::from(q == Self::NUM_SEGMENTS);
            }
            if iter > 0 && iter == full {
                for (i, _) in subs.iter().enumerate().filter(|(_, s)| available(s)) {
                    self.quota[i] = 0;
                }
                continue;
            }
            let i = choose?;
            self.quota[i] += 1;
            return Some(Push::segment(i));
        }
        None
    }
}

/// Redundant (mptcp_redundant.c, v0.90 on: `mptcp_red_next_segment`): the subflows take turns
/// from the one after the last that sent; each sends the next of the connection's packets it
/// has not sent (from the one after its last, or the send head once that is acknowledged), if
/// it has room in its congestion window (`redsched_use_subflow`: new data goes to a backup only
/// while no active subflow can send; data another subflow sent goes to active ones only).
#[derive(Debug, Clone)]
pub struct Redundant {
    /// The last packet each subflow was given (`redsched_priv.skb`).
    last: Vec<Option<u32>>,
    /// The subflow whose turn is next (`redsched_cb.next_subflow`).
    next: usize,
}

impl Redundant {
    pub fn new(subflows: usize) -> Redundant {
        Redundant { last: vec![None; subflows], next: 0 }
    }

    /// `redsched_next_skb_from_queue`: the packet subflow `i` would send next, if any.
    fn next_for(&self, i: usize, meta: &Meta) -> Option<u32> {
        let dsn = match self.last[i] {
            Some(last) if last >= meta.snd_una => (last + 1).min(meta.push_at),
            _ => meta.push_at,
        };
        (dsn < meta.write_seq).then_some(dsn)
    }
}

impl Scheduler for Redundant {
    fn get_send(&mut self, subs: &mut [Candidate], meta: &Meta) -> Option<Push> {
        let n = subs.len();
        let any_active = subs.iter().any(|s| !s.backup && !def_unavailable(s));
        for i in (0..n).map(|k| (self.next + k) % n) {
            let Some(dsn) = self.next_for(i, meta) else { continue };
            let s = &subs[i];
            let new = dsn >= meta.push_at;
            if !available(s) || (s.backup && (!new || any_active)) {
                continue;
            }
            self.last[i] = Some(dsn);
            self.next = (i + 1) % n;
            return Some(Push { sub: i, take: if new { Take::Segments(1) } else { Take::Again(dsn) } });
        }
        None
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::time::SimTime;

    /// An established subflow with `srtt_ms`, a window of `cwnd` and `in_flight` out.
    pub fn sub(srtt_ms: u64, cwnd: u32, in_flight: u32) -> Candidate {
        Candidate {
            established: true,
            active: true,
            srtt_us8: srtt_ms * 8_000,
            cwnd,
            ssthresh: u32::MAX,
            in_flight,
            ..Candidate::default()
        }
    }

    pub fn meta() -> Meta {
        Meta { now: SimTime::ZERO, mss: 1000, snd_una: 0, push_at: 0, write_seq: 1000, wnd_end: 1000 }
    }

    #[test]
    fn minrtt_takes_the_fastest_with_room_and_backups_only_when_no_other_can_send() {
        let mut s = [sub(40, 10, 0), sub(10, 10, 0)];
        assert_eq!(min_rtt(&s), Some(1));
        s[1].in_flight = 10;
        assert_eq!(min_rtt(&s), Some(0), "the fast one's window is full");
        s[1].in_flight = 9;
        s[1].unsent = 1;
        assert_eq!(min_rtt(&s), Some(1), "one segment unsent, room for one");
        s[1].unsent = 2;
        assert_eq!(min_rtt(&s), Some(0), "what it holds unsent is more than its room");
        let backup = Candidate { backup: true, ..sub(1, 10, 0) };
        assert_eq!(min_rtt(&[sub(40, 10, 10), backup]), None, "a busy primary keeps the backup out");
        assert_eq!(min_rtt(&[Candidate { active: false, ..sub(40, 10, 0) }, backup]), Some(1));
        assert_eq!(min_rtt(&[Candidate { in_loss: true, ..sub(5, 10, 0) }, sub(9, 10, 0)]), Some(1));
    }

    #[test]
    fn roundrobin_gives_each_available_subflow_a_segment_per_round() {
        let mut rr = RoundRobin::new(3);
        let mut s = [sub(1, 10, 0), sub(1, 10, 0), sub(1, 10, 0)];
        let picks: Vec<usize> = (0..6).map(|_| rr.get_send(&mut s, &meta()).unwrap().sub).collect();
        assert_eq!(picks, [2, 1, 0, 2, 1, 0], "mptcp_rr.c keeps the last unused subflow it walks past");
        s[1].in_flight = 10;
        let picks: Vec<usize> = (0..4).map(|_| rr.get_send(&mut s, &meta()).unwrap().sub).collect();
        assert_eq!(picks, [2, 0, 2, 0], "a full window drops out of the rounds");
    }

    #[test]
    fn redundant_subflows_take_turns_each_sending_what_it_has_not_sent() {
        let mut red = Redundant::new(2);
        let mut s = [sub(10, 10, 0), sub(40, 10, 0)];
        let mut m = Meta { snd_una: 0, push_at: 0, write_seq: 3, ..meta() };
        let mut step = |s: &mut [Candidate], m: &mut Meta| {
            let p = red.get_send(s, m)?;
            if p.take == Take::Segments(1) {
                m.push_at += 1;
            }
            Some((p.sub, p.take))
        };
        // A subflow starts at the send head; then each sends what the other sent before it.
        let seg = Take::Segments(1);
        assert_eq!(step(&mut s, &mut m), Some((0, seg)), "packet 0, new");
        assert_eq!(step(&mut s, &mut m), Some((1, seg)), "packet 1, new");
        assert_eq!(step(&mut s, &mut m), Some((0, Take::Again(1))));
        assert_eq!(step(&mut s, &mut m), Some((1, seg)), "packet 2, new");
        assert_eq!(step(&mut s, &mut m), Some((0, Take::Again(2))));
        assert_eq!(step(&mut s, &mut m), None, "both sent all that was written");
        m.write_seq = 5;
        s[1].in_flight = 10;
        assert_eq!(step(&mut s, &mut m), Some((0, seg)), "packet 3: subflow 1 has no room");
        assert_eq!(step(&mut s, &mut m), Some((0, seg)), "packet 4");
        s[1].in_flight = 0;
        (m.snd_una, m.write_seq) = (4, 6);
        assert_eq!(step(&mut s, &mut m), Some((1, seg)), "its last (2) is acknowledged: from the send head");
    }
}
