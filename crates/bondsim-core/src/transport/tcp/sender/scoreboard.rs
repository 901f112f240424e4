//! The SACK scoreboard (net/ipv4/tcp_input.c): each segment's marks (`TCPCB_*`), SACK tagging
//! (`tcp_sacktag_write_queue`, `tcp_sacktag_one`), D-SACKs (`tcp_check_dsack`, `tcp_dsack_seen`),
//! the cumulative ACK (`tcp_clean_rtx_queue`), loss marks (`tcp_mark_skb_lost`,
//! `tcp_skb_mark_lost`) and the reordering degree (`tcp_check_sack_reordering`).

use super::*;

/// Scoreboard marks (Linux's `TCPCB_*` sacked bits).
pub(super) const SACKED: u8 = 1; // TCPCB_SACKED_ACKED
pub(super) const LOST: u8 = 2; // TCPCB_LOST
pub(super) const EVER_RETRANS: u8 = 4; // TCPCB_EVER_RETRANS / TCPCB_RETRANS
pub(super) const RETRANS_OUT: u8 = 8; // TCPCB_SACKED_RETRANS: a retransmission is in flight
/// The model's own bookkeeping, no Linux bit: a D-SACK already counted its latest
/// retransmission spurious (`TcpStats::spurious_retransmits`).
pub(super) const DSACKED: u8 = 16;
/// The model's own bookkeeping, no Linux bit: sent again as a loss probe that the kernel left
/// unmarked (3.10-3.13). Counts only in the model's tally of needless retransmissions.
pub(super) const PROBED: u8 = 32;

impl Conn {
    /// Marks segment `seq` lost (`tcp_mark_skb_lost`); a retransmission in flight is lost too.
    pub(super) fn mark_lost(&mut self, seq: u32) {
        let s = self.seg_mut(seq);
        let marks = s.marks;
        if marks & LOST != 0 && marks & RETRANS_OUT == 0 {
            return;
        }
        s.marks = (marks | LOST) & !RETRANS_OUT;
        if marks & RETRANS_OUT != 0 {
            self.retrans_out -= 1;
        }
        if marks & LOST == 0 {
            self.lost_out += 1;
        }
        self.retrans_hint = self.retrans_hint.min(seq);
    }

    /// Marks segment `seq` lost as the head-marking of dupthresh and FACK does (`tcp_skb_mark_lost`):
    /// a segment SACKed or already lost stays as it is, and a forward retransmission in flight
    /// stays in flight (`TCPCB_SACKED_RETRANS` kept).
    pub(super) fn mark_head_lost(&mut self, seq: u32) -> bool {
        let s = self.seg_mut(seq);
        if s.marks & (SACKED | LOST) != 0 {
            return false;
        }
        if s.marks & RETRANS_OUT == 0 {
            self.mark_lost(seq);
        } else {
            s.marks |= LOST;
            self.lost_out += 1;
        }
        true
    }

    /// A D-SACK of `[start, end)` arrived, before the ACK's cumulative part is taken
    /// (`tcp_check_dsack` → `tcp_dsack_seen`, and `tcp_sacktag_one`'s D-SACK
    /// accounting): whether it reports the segment of a tail loss probe (`FLAG_DSACK_TLP`), and
    /// the duplicated segments it reports when it is not dubious (`dup_segs`).
    pub(super) fn on_dsack(&mut self, start: u32, end: u32, stats: &mut TcpStats) -> (bool, u32) {
        let n = end.saturating_sub(start);
        if n == 0 {
            return (false, 0);
        }
        // `tcp_dsack_seen`: a one-segment D-SACK ending at `tlp_high_seq` is the probe's.
        let tlp = n == 1 && self.tlp_high_seq == Some(end);
        self.dsack_dups += n;
        stats.dsacks_received += u64::from(n);
        stats.spurious_retransmits += u64::from(self.count_spurious(start, end));
        // `tcp_dsack_seen`: "Skip the DSACK if dup segs weren't retransmitted by sender"
        // (`dsack_dups > total_retrans`, TCPDSACKIgnoredDubious). A broadcast bond sends
        // every segment on every link, so its receiver reports (links − 1) duplicates of
        // each: past the first few, all its D-SACKs are dubious to Linux, and none widens
        // RACK's window or counts toward an undo.
        if self.dsack_dups > self.retransmits {
            return (tlp, 0);
        }
        // RACK widens its window on D-SACKs once reordering was seen, not for a probe's.
        if self.reord_seen > 0 && !tlp {
            self.rack.dsack_seen = true;
        }
        if let Some(marker) = self.rp().undo_marker.filter(|_| self.rp().undo_retrans > 0) {
            let needless = if end <= self.snd_una {
                // `tcp_check_dsack`, below prior_snd_una and above undo_marker: "D-SACK for
                // already forgotten data... Do dumb counting." The scoreboard no longer says
                // whether it was retransmitted: the extra copies of a broadcast bond would
                // count here, were they not dubious already.
                if end > marker {
                    n
                } else {
                    0
                }
            } else {
                // `tcp_sacktag_one`: the block's segments above undo_marker that were
                // retransmitted (TCPCB_RETRANS).
                let (from, to) = (start.max(self.snd_una).max(marker), end.min(self.snd_nxt));
                (from..to).filter(|&q| self.seg(q).marks & EVER_RETRANS != 0).count() as u32
            };
            let r = self.rp_mut();
            r.undo_retrans = (r.undo_retrans - i64::from(needless)).max(0);
        }
        (tlp, n)
    }

    /// Needless retransmissions among `[start, end)`, just D-SACKed: the model's own
    /// count (Linux has no such counter; it keeps nothing of ACKed data). A segment
    /// counts if it was retransmitted, at most once per retransmission; the duplicates
    /// a broadcast bond makes of segments never retransmitted count nothing (all its
    /// D-SACKs are in `dsacks_received`). The extra copies of a retransmission that
    /// was needed are D-SACKed too, so under broadcast this is an upper bound.
    pub(super) fn count_spurious(&mut self, start: u32, end: u32) -> u32 {
        let mut n = 0;
        for seq in start..end {
            if (self.snd_una..self.snd_nxt).contains(&seq) {
                let s = self.seg_mut(seq);
                if s.marks & (EVER_RETRANS | PROBED) != 0 && s.marks & DSACKED == 0 {
                    s.marks |= DSACKED;
                    n += 1;
                }
            } else if let Some(r) = self.repair.as_mut() {
                if let Ok(i) = r.retx_acked.binary_search(&seq) {
                    r.retx_acked.remove(i);
                    n += 1;
                }
            }
        }
        n
    }

    /// `tcp_check_sack_reordering`: a segment at `low` was delivered below the highest SACK.
    /// A degree raised turns FACK off (`tcp_update_reordering` → `tcp_disable_fack`); any
    /// reordering turns early retransmit off.
    pub(super) fn check_reordering(&mut self, config: &TcpConfig, low: u32) {
        if low >= self.fack {
            return;
        }
        // (`if (metric > 0) tcp_disable_early_retrans(tp)`, whether or not the degree rises.)
        self.do_early_retrans = false;
        let metric = self.fack - low;
        if metric > self.reordering {
            self.reordering = metric.min(config.max_reordering);
            self.fack_on = false;
        }
        self.reord_seen += 1;
    }
}

impl Conn {
    /// The ACK's SACK blocks: a D-SACK first (`tcp_check_dsack`), then the scoreboard
    /// (`tcp_sacktag_write_queue`), skipping what the last ACK already said; the newly SACKed
    /// segments go into the rate sample `rs` (when sampling).
    pub(super) fn sacktag_write_queue(
        &mut self,
        config: &TcpConfig,
        stats: &mut TcpStats,
        ack: &Packet,
        a: &mut Ack,
        rs: &mut Option<RateSample>,
    ) {
        // D-SACK (RFC 2883 §4; `tcp_check_dsack`): a first block below the ACK, or inside the second.
        let blocks = ack.sack_blocks();
        a.sack_blocks = !blocks.is_empty();
        a.dsack = blocks.first().is_some_and(|b| {
            b.start < ack.ack || blocks.get(1).is_some_and(|b2| b.start >= b2.start && b.end <= b2.end)
        });
        if a.dsack {
            let (tlp, dup_segs) = self.on_dsack(blocks[0].start, blocks[0].end, stats);
            a.dsack_tlp = tlp;
            if config.era.dsack_delivered {
                a.dsack_delivered = dup_segs;
            }
            // `tcp_sacktag_one`: a D-SACK of a retransmitted segment already SACKed says the
            // original arrived after data sent later: reordering, from the lowest such segment.
            let (start, end) = (blocks[0].start.max(self.snd_una), blocks[0].end.min(self.snd_nxt));
            if let Some(seq) =
                (start..end).find(|&q| self.seg(q).marks & (SACKED | EVER_RETRANS) == SACKED | EVER_RETRANS)
            {
                a.reord = a.reord.min(seq);
            }
        }
        if config.sack {
            let cache = self.sack_cache;
            let mut new_cache = [(0u32, 0u32); 3];
            for (i, b) in blocks.iter().enumerate().skip(usize::from(a.dsack)) {
                new_cache[i] = (b.start, b.end);
                let mut start = b.start.max(self.snd_una);
                for &(cs, ce) in &cache {
                    if cs <= start && start < ce {
                        start = ce;
                    }
                }
                for seq in start..b.end.min(self.snd_nxt) {
                    self.sacktag_one(seq, a, rs);
                }
            }
            self.sack_cache = new_cache;
        }
        // `tcp_sacktag_write_queue` judges the reordering its SACKs show only outside Loss, or in a
        // Loss that may still be undone (`icsk_ca_state != TCP_CA_Loss || tp->undo_marker`).
        // (The model's timeout always keeps an undo marker, as Linux since 3.18; 3.10-3.15's
        // `tcp_enter_loss` dropped it when a segment had been retransmitted, which is not modelled.)
        if self.state == CaState::Loss && self.rp().undo_marker.is_none() {
            a.reord = u32::MAX;
        }
    }

    /// `tcp_sacktag_one`: segment `seq` is SACKed (nothing if it already was).
    fn sacktag_one(&mut self, seq: u32, a: &mut Ack, rs: &mut Option<RateSample>) {
        let s = *self.seg(seq);
        if s.marks & SACKED != 0 {
            return;
        }
        let seg = self.seg_mut(seq);
        seg.marks = (seg.marks | SACKED) & !LOST & !RETRANS_OUT;
        self.sacked_out += 1;
        if s.marks & LOST != 0 && s.marks & RETRANS_OUT == 0 {
            self.lost_out -= 1;
        }
        if s.marks & RETRANS_OUT != 0 {
            self.retrans_out -= 1;
            if s.marks & LOST != 0 {
                self.lost_out -= 1;
            }
        }
        a.newly_acked_sacked += 1;
        a.newly_sacked += 1;
        a.prior_delivered = a.prior_delivered.max(s.delivered);
        if let Some(rs) = rs.as_mut() {
            let i = (seq - self.snd_una) as usize;
            let stamps = &mut self.rates.as_mut().expect("a sampling control has its rates").tx_stamps;
            let st = stamps[i];
            stamps[i].delivered_at = NO_STAMP;
            self.rate_skb_delivered(&s, &st, seq, rs);
        }
        if s.marks & EVER_RETRANS == 0 {
            a.orig_acked |= seq < self.high_seq;
            a.first_sackt = Some(a.first_sackt.map_or(s.sent, |t: SimTime| t.min(s.sent)));
            a.last_sackt = Some(a.last_sackt.map_or(s.sent, |t: SimTime| t.max(s.sent)));
            if seq < a.prior_fack {
                a.reord = a.reord.min(seq);
            }
        }
        self.rack_advance(a.now, seq, s.sent, s.marks);
        if seq + 1 > self.fack {
            self.fack = seq + 1;
        }
    }

    /// The cumulative ACK (`tcp_clean_rtx_queue`): the segments below it leave the scoreboard,
    /// those newly delivered going into the rate sample `rs` (when sampling).
    pub(super) fn clean_rtx_queue(&mut self, config: &TcpConfig, a: &mut Ack, rs: &mut Option<RateSample>) {
        a.una_advanced = a.ack > self.snd_una && a.ack <= self.snd_nxt;
        if !a.una_advanced {
            return;
        }
        self.timeouts = 0; // (`tcp_ack`: `icsk->icsk_retransmits = 0` as snd_una moves)
        while self.snd_una < a.ack {
            let s = self.segs.pop_front().expect("within snd_nxt");
            if let Some(stream) = self.stream.as_mut() {
                stream.acked();
            }
            let st = if rs.is_some() { self.rate_pop_stamp() } else { None };
            let seq = self.snd_una;
            self.snd_una += 1;
            // `tcp_clean_rtx_queue`: any segment ever retransmitted (TCPCB_RETRANS),
            // SACKed or not, makes the ACK FLAG_RETRANS_DATA_ACKED.
            a.retrans_data_acked |= s.marks & EVER_RETRANS != 0;
            if s.marks & (EVER_RETRANS | PROBED) != 0 && s.marks & DSACKED == 0 {
                self.rp_mut().retx_acked.push_back(seq);
            }
            if s.marks & SACKED != 0 {
                self.sacked_out -= 1;
                continue;
            }
            a.newly_acked_sacked += 1;
            a.prior_delivered = a.prior_delivered.max(s.delivered);
            if let (Some(st), Some(rs)) = (st, rs.as_mut()) {
                self.rate_skb_delivered(&s, &st, seq, rs);
            }
            if s.marks & LOST != 0 {
                self.lost_out -= 1;
            }
            if s.marks & RETRANS_OUT != 0 {
                self.retrans_out -= 1;
            }
            if s.marks & EVER_RETRANS == 0 {
                a.orig_acked |= seq < self.high_seq;
                a.first_ackt.get_or_insert(s.sent);
                a.last_ackt = Some(s.sent);
                a.reord = a.reord.min(seq);
            }
            self.rack_advance(a.now, seq, s.sent, s.marks);
        }
        self.retrans_hint = self.retrans_hint.max(self.snd_una);
        self.fack = self.fack.max(self.snd_una);
        // Duplicates of segments more than a send buffer below snd_una are no longer
        // looked for (keeps the record bounded).
        let horizon = self.snd_una.saturating_sub(config.sndbuf_segments);
        if let Some(r) = self.repair.as_mut() {
            while r.retx_acked.front().is_some_and(|&q| q < horizon) {
                r.retx_acked.pop_front();
            }
        }
        self.w.snd_una = u64::from(self.snd_una);
    }
}
