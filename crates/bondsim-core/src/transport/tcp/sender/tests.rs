//! The sender's unit tests: each drives a `TcpSender` (or one `Conn`) through the ACKs and
//! timers of a case the kernel rule it checks names.

use super::*;
use crate::scenario::{TlpTimeout, UndoEra};
use crate::transport::tcp::cc::RateSample;
use crate::transport::tcp::era::{TlpRules, UndoRules};

/// `x` milliseconds.
fn ms(x: u64) -> SimTime {
    SimTime(x * 1_000_000)
}

fn conn(cwnd: u32, srtt_us: u64, min_rtt_us: u64) -> (TcpSender, Conn) {
    let config = TcpConfig { gso: true, ..TcpConfig::test_default() };
    let cutter = Cutter::for_scenario(
        &crate::Scenario::from_json(r#"{"workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}}, "sender": {"kind": "tcp"}, "bond": {"mode": "balance-rr"}, "links": [{"rate_mbps": 1000}]}"#).unwrap(),
    );
    let sender = TcpSender::new(config, cutter, 1);
    let mut c = sender.new_conn(0, 1 << 30, SimTime::ZERO);
    c.w.cwnd = cwnd;
    c.w.ssthresh = cwnd; // congestion avoidance: pacing at 120%
    c.srtt_us = srtt_us * 8;
    c.min_rtt = Some(SimTime(min_rtt_us * 1_000));
    (sender, c)
}

#[test]
fn tso_autosize_fills_64_kb_on_a_lan_and_about_a_millisecond_on_a_wan() {
    // min_rtt 100 µs >> 9 = 0: the full 64 KB, 45 segments of 1448 bytes.
    let (s, c) = conn(100, 100, 100);
    assert_eq!(c.tso_autosize(&s.config), 65_536 / 1448);
    // min_rtt 10 ms >> 9 = 19: no bonus; 1.2 · 100 · 1448 B / 10 ms = 17.4 MB/s,
    // of which 1/1024 s is 16 968 bytes: 11 segments.
    let (s, c) = conn(100, 10_000, 10_000);
    let rate = 1.2 * 100.0 * 1448.0 / 0.010;
    assert_eq!(c.tso_autosize(&s.config), ((rate / 1024.0) as u64 / 1448) as u32);
    // Never below tcp_min_tso_segs.
    let (s, c) = conn(2, 100_000, 100_000);
    assert_eq!(c.tso_autosize(&s.config), 2);
}

/// A sender (no GSO) with one flow of 100 segments just opened at time 0, established without
/// the handshake (the data path's rules, timed from 0), nothing sent yet, and the outputs of the
/// open.
fn one_flow() -> (TcpSender, Vec<Output>) {
    let (mut s, _) = conn(10, 1_000, 1_000);
    s.config.gso = false;
    let mut out = Vec::new();
    s.open_established(SimTime::ZERO, 0, 100 * 1448, &mut out);
    (s, out)
}

/// A sender with one open flow that has sent its first window at time 0.
fn sent_window(frto: bool) -> TcpSender {
    let (mut s, _) = one_flow();
    s.config.frto = frto; // (read at a timeout, not at the open)
    let sent = std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count();
    assert_eq!(sent, 10, "the initial window");
    s
}

fn sack(ack: u32, block: (u32, u32), now: SimTime) -> Packet {
    ack_with(ack, &[block], 0, now)
}

/// An ACK up to `ack` with SACK `blocks` (the first may be a D-SACK), echoing `ts_ecr`.
fn ack_with(ack: u32, blocks: &[(u32, u32)], ts_ecr: u32, now: SimTime) -> Packet {
    let mut a = Packet::ack(0, ack, now);
    a.seq = 1000; // window
    for (i, &(start, end)) in blocks.iter().enumerate() {
        a.sack[i] = crate::packet::SackBlock { start, end };
    }
    a.sack_len = blocks.len() as u8;
    a.ts_ecr = ts_ecr;
    a
}

/// A sender of one flow opened as a stream (`open_stream`): nothing written yet, no GSO.
fn one_stream() -> (TcpSender, Vec<Output>) {
    let (mut s, _) = conn(10, 1_000, 1_000);
    s.config.gso = false;
    let mut out = Vec::new();
    s.open_stream(SimTime::ZERO, 0, 100 * 1448, &mut out);
    (s, out)
}

/// Feeds `c` an RTT sample of `rtt_ms`; `next_round` first ends the round trip
/// (`snd_una` passes `rtt_seq`). Returns the RTO then, in µs.
fn sample(s: &TcpSender, c: &mut Conn, rtt_ms: u64, next_round: bool) -> u64 {
    if next_round {
        c.snd_una = c.rtt_seq + 1;
        c.snd_nxt = c.snd_una + 10;
    }
    let rtt = SimTime(rtt_ms * 1_000_000);
    c.rtt_sample(&s.config, rtt, rtt);
    c.rto.0 / 1_000
}

#[test]
fn the_rto_follows_linuxs_rtt_estimator_not_rfc_6298s() {
    let (s, mut c) = conn(10, 1, 1);
    c.srtt_us = 0;
    // First sample, 100 ms: SRTT 100 ms, mdev 2 × 100 ms, RTO 3 × RTT.
    assert_eq!(sample(&s, &mut c, 100, false), 300_000);
    // 20 ms in the same round trip: SRTT 90 ms; the deviation, 80 ms off, grows by
    // (80 - 200/4) / 8 = 3.75 ms only (gain 1/32 for a sample below SRTT), so RTO =
    // 90 + 203.75 ms. (RFC 6298's RTTVAR = 3/4 · 50 + 1/4 · 80 = 57.5 ms gives 90 + 230.)
    assert_eq!(sample(&s, &mut c, 20, false), 293_750);
    assert_eq!((c.srtt(), c.mdev_us, c.rttvar_us), (Some(SimTime(90_000_000)), 203_750, 203_750));

    // The variance term keeps a round trip's largest deviation and decays by a quarter of
    // its excess over the next round's largest, never below `tcp_rto_min`.
    let (s, mut c) = conn(10, 1, 1);
    c.srtt_us = 0;
    assert_eq!(sample(&s, &mut c, 300, false), 900_000); // mdev = rttvar = 600 ms
                                                         // Round 2: mdev 450 ms (no new maximum); the round that ends had 600 ms: no decay.
    assert_eq!(sample(&s, &mut c, 300, true), 900_000);
    assert_eq!((c.mdev_us, c.mdev_max_us, c.rttvar_us), (450_000, 200_000, 600_000));
    // Round 3: mdev 337.5 ms is the round's largest; rttvar 600 - (600 - 337.5) / 4.
    assert_eq!(sample(&s, &mut c, 300, true), 300_000 + 534_375);
    // (RFC 6298 would give 300 + 4 · 84.375 = 637.5 ms here.)
    // Steady samples: the deviation dies away and the RTO settles at SRTT + tcp_rto_min, or
    // 3 µs above (the integer decay stops there: a quarter of 3 µs is 0).
    let rto = (0..100).map(|_| sample(&s, &mut c, 300, true)).last();
    assert_eq!(rto, Some(500_003));
}

#[test]
fn the_minimum_rtt_is_the_newest_acked_segments_and_srtt_the_oldests() {
    // Segments sent at 0 and 12 µs, ACKed together at 100 µs: SRTT (`seq_rtt_us`, the oldest)
    // 100 µs, the minimum RTT and the congestion control's sample (`ca_rtt_us`, the newest) 88 µs.
    let (mut s, mut out) = one_flow();
    let c = s.conns[0].as_mut().unwrap();
    (c.srtt_us, c.min_rtt) = (0, None);
    assert!(s.poll_transmit(SimTime::ZERO).is_some());
    assert!(s.poll_transmit(SimTime(12_000)).is_some());
    s.on_packet(SimTime(100_000), ack_with(2, &[], 0, SimTime(100_000)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.srtt(), c.min_rtt), (Some(SimTime(100_000)), Some(SimTime(88_000))));
}

#[test]
fn a_loss_probe_after_a_write_from_idle_comes_two_rtts_later_when_several_segments_leave() {
    // `tcp_schedule_loss_probe` after the write's segments left: 5 out, so 2·SRTT + 2 ms, not
    // the `tcp_rto_min` that only a single outstanding segment adds.
    let (mut s, mut out) = one_stream();
    s.write(SimTime::ZERO, 0, 1, &mut out);
    assert!(s.poll_transmit(SimTime::ZERO).is_some());
    s.on_packet(ms(1), ack_with(1, &[], 0, ms(1)), &mut out);
    assert_eq!(s.conns[0].as_ref().unwrap().srtt(), Some(ms(1)));
    out.clear();
    s.write(ms(2), 0, 5, &mut out);
    let timer = out.iter().find_map(|o| if let Output::Timer { at, .. } = o { Some(*at) } else { None });
    assert_eq!(timer, Some(ms(2 + 2 + 2)));
    assert_eq!(s.conns[0].as_ref().unwrap().timer_kind, TimerKind::LossProbe);
}

#[test]
fn linux_3_10s_loss_probe_waits_at_least_ten_milliseconds_of_jiffies() {
    // `tlp_timeout = "linux-3.10"`: max(2·SRTT, msecs_to_jiffies(10)); with one segment out at
    // least 1.5·SRTT + TCP_DELACK_MAX. SRTT 1 ms: 10 ms at HZ = 1000, 12 ms (3 jiffies) at 250.
    for (hz, segments, pto) in [(1000, 5, ms(10)), (250, 5, ms(12)), (1000, 1, SimTime(201_500_000))] {
        let (mut s, mut out) = one_stream();
        s.config.era.tlp = TlpRules::of(TlpTimeout::Linux310, hz);
        s.write(SimTime::ZERO, 0, 1, &mut out);
        assert!(s.poll_transmit(SimTime::ZERO).is_some());
        s.on_packet(ms(1), ack_with(1, &[], 0, ms(1)), &mut out);
        out.clear();
        s.write(ms(2), 0, segments, &mut out);
        let timer = out.iter().find_map(|o| if let Output::Timer { at, .. } = o { Some(*at) } else { None });
        let c = s.conns[0].as_ref().unwrap();
        // (Never after the RTO: with one segment out the RTO, SRTT + 200 ms, comes first.)
        let rto_at = ms(2) + c.backed_off_rto(&s.config);
        assert_eq!(timer, Some((ms(2) + pto).min(rto_at)), "hz {hz}, {segments} out");
        assert_eq!(c.timer_kind, TimerKind::LossProbe);
    }
}

#[test]
fn a_window_found_full_lets_every_ack_of_that_window_grow_cwnd() {
    // 20 segments fill a window of 20 (congestion avoidance), then the application has nothing
    // more: `tcp_cwnd_validate` keeps `is_cwnd_limited` until snd_una passes the window, so
    // every ACK of it may grow cwnd; judged per ACK, only the first (20 in flight before it) did.
    let (mut s, mut out) = one_stream();
    let c = s.conns[0].as_mut().unwrap();
    (c.w.cwnd, c.w.ssthresh) = (20, 20);
    s.write(SimTime::ZERO, 0, 20, &mut out);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count(), 20);
    for k in 1..=10u32 {
        let at = SimTime(1_000_000 + u64::from(k) * 10_000);
        s.on_packet(at, ack_with(k, &[], 0, at), &mut out);
        assert!(s.conns[0].as_ref().unwrap().w.cwnd_limited, "ACK {k}");
    }
}

#[test]
fn pacing_runs_at_twice_the_rate_only_below_half_of_ssthresh() {
    // `tcp_update_pacing_rate`: 200% while cwnd < ssthresh / 2, then 120% ("approaching end of
    // slow start"), though still in slow start.
    let (s, mut c) = conn(40, 1_000, 1_000);
    let base = 1448.0 * 40.0 / 1e-3;
    c.w.ssthresh = 100;
    assert_eq!(c.pacing_rate(&s.config), Some(base * 2.0));
    c.w.ssthresh = 60;
    assert!(c.w.in_slow_start());
    assert_eq!(c.pacing_rate(&s.config), Some(base * 1.2));
}

/// `sent_window` with an RTT of `rtt` measured before.
fn sent_window_with_rtt(rtt: SimTime) -> TcpSender {
    let mut s = sent_window(false);
    let c = s.conns[0].as_mut().unwrap();
    c.rtt_sample(&s.config, rtt, rtt);
    s
}

#[test]
fn fack_counts_the_holes_below_the_highest_sack_until_reordering_is_seen() {
    let ms = SimTime(1_000_000);
    let lost = |c: &Conn| (c.snd_una..c.snd_nxt).filter(|&q| c.seg(q).marks & LOST != 0).collect::<Vec<_>>();
    let after = |fack: bool, blocks: &[&[(u32, u32)]]| {
        let mut s = sent_window_with_rtt(ms);
        s.config.loss = LossDetection::Scoreboard;
        s.config.fack = fack;
        s.conns[0].as_mut().unwrap().fack_on = fack;
        let mut out = Vec::new();
        for (k, b) in blocks.iter().enumerate() {
            let now = SimTime(ms.0 * (k as u64 + 2));
            s.on_packet(now, ack_with(0, b, 0, now), &mut out);
        }
        s
    };
    // One SACK of the last of 10 segments: FACK counts 10 > 3, the first 7 are lost and
    // fast recovery starts; RFC 6675 counts one SACKed segment and waits.
    let s = after(true, &[&[(9, 10)]]);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((lost(c), c.state), ((0..7).collect(), CaState::Recovery));
    let s = after(false, &[&[(9, 10)]]);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((lost(c), c.state), (Vec::<u32>::new(), CaState::Disorder));
    // Three up to the SACK are not more than the degree; four are: the head alone is lost.
    let s = after(true, &[&[(2, 3)]]);
    assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new());
    let s = after(true, &[&[(2, 4)]]);
    assert_eq!(lost(s.conns[0].as_ref().unwrap()), vec![0]);
    // In Recovery a duplicate ACK marks the head even when the highest SACK is within the
    // degree of it; an ACK that moves snd_una on does not. (The ACK covers the retransmission
    // only: an original ACKed below the SACK would be reordering, and turn FACK off.)
    let mut s = after(true, &[&[(3, 4)]]);
    assert_eq!(lost(s.conns[0].as_ref().unwrap()), vec![0], "fackets_out 4: the head");
    let at = |k: u64| SimTime(ms.0 * k);
    let mut out = Vec::new();
    assert_eq!(s.poll_transmit(at(3)).map(|p| p.seq), Some(0), "its retransmission");
    s.on_packet(at(4), ack_with(1, &[(3, 4)], 0, at(4)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.fack_on, lost(c)), (CaState::Recovery, true, vec![]), "fackets_out 3: nothing");
    // Not a duplicate (`is_dupack` false): an old ACK (below snd_una, overtaken on the way
    // back), one on a data segment, or one that advertises a larger window; then a duplicate
    // marks the head.
    s.on_packet(at(5), ack_with(0, &[(3, 4)], 0, at(5)), &mut out);
    assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new(), "an old ACK marks nothing");
    let mut data = ack_with(1, &[(3, 4)], 0, at(5));
    data.kind = Kind::DataAck;
    s.on_piggybacked_ack(at(5), &data, &mut out);
    assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new(), "an ACK on data marks nothing");
    let mut wider = ack_with(1, &[(3, 4)], 0, at(5));
    wider.seq += 1;
    s.on_packet(at(5), wider, &mut out);
    assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new(), "a window update marks nothing");
    let mut dup = ack_with(1, &[(3, 4)], 0, at(5));
    dup.seq = wider.seq;
    s.on_packet(at(5), dup, &mut out);
    assert_eq!(lost(s.conns[0].as_ref().unwrap()), vec![1], "the duplicate marks the head");
    // A retransmission is lost once a segment sent after it is SACKed (`tcp_mark_lost_retrans`):
    // segment 0 is resent while 10 is the next new one; a SACK of 10 declares it lost again.
    for sack_new in [false, true] {
        let mut s = after(true, &[&[(3, 4)]]);
        s.conns[0].as_mut().unwrap().w.cwnd = 20;
        let sent: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(at(3))).map(|p| p.seq).take(3).collect();
        assert_eq!(sent, vec![0, 10, 11], "the retransmission, then new data");
        let blocks: &[(u32, u32)] = if sack_new { &[(10, 11), (3, 4)] } else { &[(3, 4)] };
        s.on_packet(at(4), ack_with(0, blocks, 0, at(4)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        let again = c.seg(0).marks & RETRANS_OUT == 0;
        assert_eq!(again, sack_new, "segment 0's retransmission judged lost: {again}");
        assert_eq!(c.retrans_out, u32::from(!sack_new));
        if sack_new {
            assert_eq!(s.poll_transmit(at(5)).map(|p| (p.seq, p.retransmit())), Some((0, true)), "resent");
        }
    }
    // A SACK below the highest (an original, never retransmitted) is reordering: the degree
    // rises to its distance and FACK is off for the connection.
    let s = after(true, &[&[(4, 5)], &[(1, 2), (4, 5)]]);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.reordering, c.fack_on), (4, false));
}

#[test]
fn a_timeout_resets_the_reordering_degree_only_from_open_or_disorder() {
    // Degree 5, three segments SACKed (the initial degree's worth): in Disorder (FACK counts
    // 5, not above 5) the timeout brings the degree back to 3; in Recovery (FACK counts 10)
    // it keeps it (`tcp_enter_loss`: `icsk_ca_state <= TCP_CA_Disorder && sacked_out >= ...`).
    let ms = SimTime(1_000_000);
    for (block, state, after_rto) in [((2, 5), CaState::Disorder, 3), ((7, 10), CaState::Recovery, 5)] {
        let mut s = sent_window_with_rtt(ms);
        s.config.loss = LossDetection::Scoreboard;
        s.config.fack = true;
        let c = s.conns[0].as_mut().unwrap();
        c.fack_on = true;
        c.reordering = 5;
        let mut out = Vec::new();
        s.on_packet(SimTime(2 * ms.0), ack_with(0, &[block], 0, SimTime(2 * ms.0)), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().state, state);
        s.on_rto(0, SimTime(300 * ms.0), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().reordering, after_rto, "{state:?}");
    }
}

#[test]
fn an_ack_covering_a_retransmission_takes_no_rtt_from_the_originals_it_also_covers() {
    let ms = SimTime(1_000_000);
    for echo in [true, false] {
        let mut s = sent_window_with_rtt(ms);
        let mut out = Vec::new();
        let timeout = SimTime::from_secs_f64(1.0);
        s.on_rto(0, timeout, &mut out); // retransmits segment 0
                                        // 1 ms later one ACK covers the retransmission and segment 1, an original
                                        // sent at 0: its "RTT" would be the whole second (Karn's rule forbids it).
                                        // The receiver echoes the retransmission's TSval (RFC 7323 §4.3: it filled the
                                        // left edge), which times the retransmission itself.
        let later = timeout + ms;
        let ts = if echo { super::ts_of(timeout) } else { 0 };
        s.on_packet(later, ack_with(2, &[], ts, later), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        if echo {
            // One sample of 1 ms on the millisecond clock: SRTT stays at 1 ms.
            assert_eq!(c.srtt(), Some(ms), "the timestamp echo times the retransmission");
            assert_eq!(c.backoff, 0, "a valid sample resets the backoff");
        } else {
            assert_eq!(c.srtt(), Some(ms), "no sample at all");
            assert_eq!(c.backoff, 1, "no valid sample: the backoff stays");
        }
    }
}

#[test]
fn racks_window_widens_once_a_round_trip_however_many_dsacks_the_round_brings() {
    // `tcp_rack_update_reo_wnd`: a D-SACK for data sent before the window last widened
    // ("a rtt has not passed since we adjusted reo_wnd") is disregarded.
    let ms = SimTime(1_000_000);
    let mut s = sent_window_with_rtt(ms);
    let mut out = Vec::new();
    let c = s.conns[0].as_mut().unwrap();
    c.reord_seen = 1; // reordering seen: D-SACKs widen the window
    c.retransmits = 10; // and are not dubious (fewer duplicates than retransmissions)
    let steps = |s: &TcpSender| s.conns[0].as_ref().unwrap().rack.reo_wnd_steps;
    // 0-3 delivered; what is sent next leaves with 4 delivered.
    let t = SimTime(2 * ms.0);
    s.on_packet(t, ack_with(4, &[], 0, t), &mut out);
    s.conns[0].as_mut().unwrap().wmem = 0;
    let second: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(t)).map(|p| p.seq).collect();
    assert!(second.len() >= 3 && second[0] == 10, "{second:?}");
    // A D-SACK on an ACK delivering only first-window data (sent with 0 delivered: the rate
    // sample has no prior_delivered) waits; the next delivery of later data widens: 2 steps.
    let t = SimTime(3 * ms.0);
    s.on_packet(t, ack_with(5, &[(1, 2)], 0, t), &mut out);
    assert_eq!(steps(&s), 1);
    s.on_packet(t, ack_with(5, &[(10, 11)], 0, t), &mut out);
    assert_eq!(steps(&s), 2, "the pending D-SACK widened the window");
    // More D-SACKs in the same round, on ACKs delivering data sent before the widening: no more.
    for (i, dup) in [2u32, 3].into_iter().enumerate() {
        let t = SimTime(3 * ms.0 + 100_000 * (i as u64 + 1));
        s.on_packet(t, ack_with(5, &[(dup, dup + 1), (10, 12 + i as u32)], 0, t), &mut out);
    }
    assert_eq!(steps(&s), 2, "one step per round trip");
    // Data sent after the widening, delivered with a D-SACK: the next round, one more step.
    let t = SimTime(4 * ms.0);
    s.conns[0].as_mut().unwrap().wmem = 0;
    let third: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(t)).map(|p| p.seq).collect();
    let late = *third.first().expect("room to send");
    let t = SimTime(5 * ms.0);
    s.on_packet(t, ack_with(5, &[(4, 5), (late, late + 1)], 0, t), &mut out);
    assert_eq!(steps(&s), 3);
}

#[test]
fn a_partial_ack_echoing_the_originals_timestamp_holds_the_losses_then_undoes() {
    // `tcp_try_undo_partial`: in Recovery, an ACK that advances snd_una below high_seq and
    // echoes a TSval older than the first retransmission was triggered by the original.
    let ms = SimTime(1_000_000);
    let mut s = in_recovery_after_a_sack_of_3_to_9();
    let mut out = Vec::new();
    let t = SimTime(5 * ms.0);
    let c = s.conns[0].as_mut().unwrap();
    c.wmem = 0;
    let resent: Vec<u32> =
        std::iter::from_fn(|| s.poll_transmit(t)).filter(|p| p.retransmit()).map(|p| p.seq).collect();
    assert!(!resent.is_empty() && resent[0] == 0, "{resent:?}");
    let c = s.conns[0].as_ref().unwrap();
    let (cwnd_before, reordering_before) = (c.rp().prior_cwnd, c.reordering);
    // The original of 0 arrives late: its ACK echoes the window's TSval (from 0 ms, before
    // the retransmissions at 5 ms). Retransmissions are out: hold, mark nothing more lost.
    let early = super::ts_of(SimTime::ZERO);
    let t = SimTime(6 * ms.0);
    s.on_packet(t, ack_with(1, &[(3, 10)], early, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!(c.state, CaState::Recovery);
    assert!(c.reordering > reordering_before, "reordering raised from the timestamps: {}", c.reordering);
    assert_eq!((c.reord_seen, s.stats.undos), (1, 0));
    // The originals of 1 and 2 too, and now no retransmission is out unanswered... once the
    // ACK covers them all: the reduction is undone, the connection kept open (SACKed data
    // remain: Disorder).
    let t = SimTime(7 * ms.0);
    s.on_packet(t, ack_with(3, &[(3, 10)], early, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!(s.stats.undos, 1);
    assert_eq!(c.state, CaState::Disorder);
    assert!(c.w.cwnd >= cwnd_before, "cwnd {} restored to {cwnd_before}", c.w.cwnd);
}

/// [`sent_window_with_rtt`] (1 ms) in Recovery: 3-9 SACKed at 5 ms, so RACK marked 0-2 lost.
fn in_recovery_after_a_sack_of_3_to_9() -> TcpSender {
    let mut s = sent_window_with_rtt(SimTime(1_000_000));
    let t = SimTime(5_000_000);
    s.on_packet(t, ack_with(0, &[(3, 10)], 0, t), &mut Vec::new());
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.lost_out, c.high_seq), (CaState::Recovery, 3, 10));
    s
}

/// [`in_recovery_after_a_sack_of_3_to_9`], segment `retransmitted` retransmitted once, the
/// recovery's only retransmission.
fn in_recovery_with_one_retransmission(retransmitted: u32) -> TcpSender {
    let mut s = in_recovery_after_a_sack_of_3_to_9();
    let c = s.conns[0].as_mut().unwrap();
    c.seg_mut(retransmitted).marks |= EVER_RETRANS;
    (c.retransmits, c.reord_seen) = (1, 1);
    c.rp_mut().undo_retrans = 1;
    s
}

#[test]
fn a_dsack_undo_keeps_the_losses_still_evident_and_recovers_them_at_once() {
    // `tcp_try_undo_dsack` calls `tcp_undo_cwnd_reduction(sk, false)`: the marks stay, and
    // `tcp_time_to_recover` (lost_out) starts a new recovery on the same ACK, even one that
    // delivers nothing new.
    let mut s = in_recovery_with_one_retransmission(3);
    let mut out = Vec::new();
    // A D-SACK (inside the SACK block) says that retransmission was needless.
    let t = SimTime(6_000_000);
    s.on_packet(t, ack_with(0, &[(3, 4), (3, 10)], 0, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!(s.stats.undos, 1);
    assert_eq!((c.state, c.lost_out), (CaState::Recovery, 3), "0-2 are still lost: a new recovery");
    assert_eq!(s.stats.fast_recoveries, 2);
}

#[test]
fn a_dsack_of_a_retransmitted_segment_already_sacked_is_reordering() {
    // `tcp_sacktag_one`: "if ((sacked & TCPCB_SACKED_ACKED) && before(start_seq, state->reord))
    // state->reord = start_seq;" for a D-SACK of a retransmitted segment.
    let mut s = in_recovery_after_a_sack_of_3_to_9();
    let mut out = Vec::new();
    let c = s.conns[0].as_mut().unwrap();
    assert_eq!((c.reordering, c.reord_seen), (3, 0));
    c.seg_mut(5).marks |= EVER_RETRANS; // SACKed, and once retransmitted
    c.retransmits = 1;
    let t = SimTime(6_000_000);
    s.on_packet(t, ack_with(0, &[(5, 6), (3, 10)], 0, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.reordering, c.reord_seen), (10 - 5, 1), "fack 10 less the D-SACKed 5");
}

#[test]
fn an_ack_below_snd_una_only_tags_its_sack_blocks() {
    // `tcp_ack`: "if (before(ack, prior_snd_una)) ... goto old_ack;" where only
    // `tcp_sacktag_write_queue` and `tcp_fastretrans_alert` run.
    let ms = SimTime(1_000_000);
    let mut s = sent_window_with_rtt(ms);
    let mut out = Vec::new();
    let t = SimTime(2 * ms.0);
    s.on_packet(t, ack_with(5, &[], 0, t), &mut out);
    s.conns[0].as_mut().unwrap().wmem = 0;
    let sent = std::iter::from_fn(|| s.poll_transmit(t)).count();
    assert!(sent >= 3, "room for new data");
    let c = s.conns[0].as_ref().unwrap();
    let (cwnd, srtt, delivered) = (c.w.cwnd, c.srtt(), c.delivered);
    // An ACK overtaken by the one above, reporting segment 11 (sent at 2 ms) 3 ms later.
    let t = SimTime(5 * ms.0);
    s.on_packet(t, ack_with(3, &[(11, 12)], 0, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.snd_una, c.sacked_out, c.delivered), (5, 1, delivered + 1), "the SACK is tagged");
    assert_eq!((c.w.cwnd, c.srtt()), (cwnd, srtt), "no window growth, no RTT sample");
}

#[test]
fn racks_window_persists_by_the_recoveries_linux_counts() {
    let ms = SimTime(1_000_000);
    // A D-SACK on the ACK that ends a recovery: `tcp_try_undo_recovery` undoes it first, so
    // `tcp_try_undo_dsack` (which would keep the window one recovery longer) does not run.
    let mut s = in_recovery_with_one_retransmission(0);
    let mut out = Vec::new();
    assert_eq!(s.conns[0].as_ref().unwrap().rack.reo_wnd_persist, 0);
    let t = SimTime(6 * ms.0);
    s.on_packet(t, ack_with(10, &[(0, 1)], 0, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((s.stats.undos, c.state, c.rack.reo_wnd_persist), (1, CaState::Open, 0));
    // A timeout's recovery that ends without an undo counts down like a fast recovery's
    // (`tcp_process_loss` → `tcp_try_undo_recovery`: "else if (tp->rack.reo_wnd_persist) ...--").
    let mut s = sent_window(false);
    s.conns[0].as_mut().unwrap().rack.reo_wnd_persist = 5;
    let t = SimTime::from_secs_f64(1.0);
    s.on_rto(0, t, &mut out);
    let later = t + ms;
    s.on_packet(later, ack_with(10, &[], 0, later), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((s.stats.undos, c.state, c.rack.reo_wnd_persist), (0, CaState::Open, 4));
}

#[test]
fn an_ack_of_nothing_new_leaves_racks_reordering_timer_pending() {
    let ms = SimTime(1_000_000);
    let mut s = sent_window_with_rtt(SimTime(4 * ms.0));
    let mut out = Vec::new();
    // 4 ms after the window left, segment 5 is SACKed: 0-4, sent at the same instant
    // before it, are late or lost. RACK (`tcp_rack_detect_loss`) waits RACK.rtt + one
    // reo_wnd step (min_rtt / 4 = 1 ms) from their send time, then TCP_TIMEOUT_MIN.
    let t = SimTime(4 * ms.0);
    s.on_packet(t, ack_with(0, &[(5, 6)], 0, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    let due = SimTime(4 * ms.0 + ms.0) + REO_SLACK;
    assert_eq!((c.timer_kind, c.timer.deadline()), (TimerKind::ReoTimeout, Some(due)));
    // A broadcast copy of segment 5 arrives: a D-SACK inside the SACK block, ACKing
    // nothing (no FLAG_SET_XMIT_TIMER). The reordering timer stays.
    let copy = t + SimTime(10_000);
    s.on_packet(copy, ack_with(0, &[(5, 6), (5, 6)], 0, copy), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.timer_kind, c.timer.deadline()), (TimerKind::ReoTimeout, Some(due)));
    // It fires: the five are lost, recovery starts and segment 0 is retransmitted
    // (the window's packets left the NIC long ago: nothing is held below TCP).
    let token = timer_token(0, c.timer.generation());
    s.on_timer(due, token, &mut out);
    let c = s.conns[0].as_mut().unwrap();
    assert_eq!((c.state, c.lost_out), (CaState::Recovery, 5));
    c.wmem = 0;
    let p = s.poll_transmit(due).expect("a retransmission");
    assert!(p.retransmit() && p.seq == 0, "{p:?}");
}

#[test]
fn what_rack_finds_on_the_ack_that_undoes_a_timeout_survives_the_undo() {
    let ms = SimTime(1_000_000);
    let mut s = sent_window_with_rtt(ms);
    let mut out = Vec::new();
    let timeout = SimTime::from_secs_f64(1.0);
    // The timeout marks all ten lost and retransmits segment 0.
    s.on_rto(0, timeout, &mut out);
    // A D-SACK said the retransmission was needless (undo_retrans = 0, as
    // `tcp_check_dsack` leaves it); then one ACK covers the retransmission of 0 and
    // SACKs 5, sent at 0. `tcp_try_undo_loss` undoes the timeout (unmarking every
    // loss), then RACK judges the others: all sent at 0, RACK.rtt + reo_wnd (1 ms +
    // min_rtt/4) before the retransmission that was delivered, so lost.
    s.conns[0].as_mut().unwrap().rp_mut().undo_retrans = 0;
    let later = timeout + ms;
    s.on_packet(later, ack_with(1, &[(5, 6)], 0, later), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!(s.stats.undos, 1);
    assert_eq!((c.state, c.lost_out), (CaState::Recovery, 8), "1-4 and 6-9");
}

#[test]
fn a_dsack_counts_toward_an_undo_only_while_duplicates_do_not_outnumber_retransmissions() {
    let ms = SimTime(1_000_000);
    for (earlier_dups, undone) in [(0, true), (5, false)] {
        let mut s = sent_window_with_rtt(ms);
        let mut out = Vec::new();
        let t = SimTime(2 * ms.0);
        s.on_packet(t, ack_with(4, &[], 0, t), &mut out);
        // A recovery that began at 0 retransmitted one segment (undo_retrans = 1), and
        // the receiver reported `earlier_dups` duplicates before (a broadcast bond's copies).
        let c = s.conns[0].as_mut().unwrap();
        c.retransmits = 1;
        c.rp_mut().undo_marker = Some(0);
        c.rp_mut().undo_retrans = 1;
        c.dsack_dups = earlier_dups;
        // A D-SACK of segment 1, below snd_una: Linux cannot tell whether it was
        // retransmitted ("dumb counting", `tcp_check_dsack`) and counts it, unless
        // `tcp_dsack_seen` finds it dubious (more duplicates than retransmissions).
        let t = SimTime(3 * ms.0);
        s.on_packet(t, ack_with(4, &[(1, 2)], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(c.rp().undo_marker.is_none(), undone, "{earlier_dups} earlier duplicates");
        assert_eq!(s.stats.dsacks_received, 1);
        assert_eq!(s.stats.spurious_retransmits, 0, "segment 1 was never retransmitted");
    }
}

#[test]
fn in_open_an_ack_that_only_moves_snd_una_on_runs_no_state_machine() {
    // Open after an undo, with segment 1 once retransmitted and the first retransmission's
    // time kept. `tcp_ack_is_dubious` is false for an ACK that only acknowledges 0: Linux
    // runs no `tcp_fastretrans_alert`, so the state stays Open and the stamp is kept (the
    // model used to run `tcp_try_keep_open` on it: Disorder, the head being retransmitted).
    let ms = SimTime(1_000_000);
    let mut s = sent_window_with_rtt(ms);
    let c = s.conns[0].as_mut().unwrap();
    c.rp_mut().retrans_stamp = Some(SimTime(3 * ms.0));
    c.seg_mut(1).marks |= EVER_RETRANS;
    let mut out = Vec::new();
    let t = SimTime(4 * ms.0);
    s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.rp().retrans_stamp), (CaState::Open, Some(SimTime(3 * ms.0))));
    // A duplicate of it is dubious: step D forgets the stamp whatever was retransmitted,
    // and `tcp_try_keep_open` moves to Disorder (`tcp_any_retrans_done`: the head was).
    let t = SimTime(5 * ms.0);
    s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.rp().retrans_stamp), (CaState::Disorder, None));
}

#[test]
fn the_first_pure_ack_after_the_peers_data_is_a_window_update_not_a_duplicate() {
    // A peer that sends data too (a ping-pong's): its data segment moves the sequence number
    // the window was last taken at (`snd_wl1`), so its next pure ACK, though it acknowledges
    // nothing new, updates the window (`tcp_may_update_window`) and is no duplicate: in Open
    // not dubious, the first retransmission's time kept. The one after it is a duplicate.
    let ms = SimTime(1_000_000);
    let mut s = sent_window_with_rtt(ms);
    let mut out = Vec::new();
    let t = SimTime(2 * ms.0);
    s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
    s.conns[0].as_mut().unwrap().rp_mut().retrans_stamp = Some(ms);
    let data = Packet { kind: Kind::DataAck, ..ack_with(1, &[], 0, t) };
    s.on_piggybacked_ack(SimTime(3 * ms.0), &data, &mut out);
    let t = SimTime(4 * ms.0);
    s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
    assert_eq!(s.conns[0].as_ref().unwrap().rp().retrans_stamp, Some(ms), "a window update");
    let t = SimTime(5 * ms.0);
    s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
    assert_eq!(s.conns[0].as_ref().unwrap().rp().retrans_stamp, None, "a duplicate: dubious");
}

#[test]
fn a_dsack_on_an_ack_that_moves_snd_una_is_news_to_todays_kernels_only() {
    // In Open, one needless retransmission to undo (undo_retrans = 1). An ACK of 4 to 5 that
    // D-SACKs segment 1: today's `FLAG_CA_ALERT` holds `FLAG_DSACKING_ACK`, so
    // `tcp_fastretrans_alert` runs and `tcp_try_undo_dsack` undoes at once; 3.x's did not,
    // and the undo waits for the next dubious ACK (here a duplicate).
    let ms = SimTime(1_000_000);
    for era in [UndoEra::Current, UndoEra::Linux313] {
        let mut s = sent_window_with_rtt(ms);
        s.config.era.undo = UndoRules::of(era);
        let mut out = Vec::new();
        let t = SimTime(2 * ms.0);
        s.on_packet(t, ack_with(4, &[], 0, t), &mut out);
        let c = s.conns[0].as_mut().unwrap();
        c.retransmits = 1;
        (c.rp_mut().undo_marker, c.rp_mut().undo_retrans) = (Some(0), 1);
        let t = SimTime(3 * ms.0);
        s.on_packet(t, ack_with(5, &[(1, 2)], 0, t), &mut out);
        assert_eq!(s.stats.dsacks_received, 1, "{era:?}");
        assert_eq!(s.stats.undos, u64::from(era == UndoEra::Current), "{era:?}");
        let t = SimTime(4 * ms.0);
        s.on_packet(t, ack_with(5, &[], 0, t), &mut out);
        assert_eq!(s.stats.undos, 1, "{era:?}: the duplicate is dubious in every era");
    }
}

#[test]
fn a_duplicate_ack_that_shows_a_timeout_needless_undoes_it_in_3x_only() {
    // After a timeout at 1 s (its retransmission stamped then), a duplicate ACK echoes the
    // window's TSval of 0 ms: the original arrived (`tcp_packet_delayed`). 3.10-3.18's
    // `tcp_process_loss` calls `tcp_try_undo_loss` on every ACK in Loss and undoes; today's
    // only on an ACK that moves snd_una. An undo also resets the timeouts counted toward
    // giving the connection up (`icsk_retransmits`).
    for era in [UndoEra::Current, UndoEra::Linux315] {
        let mut s = sent_window(false);
        s.config.era.undo = UndoRules::of(era);
        let mut out = Vec::new();
        s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.timeouts, c.rp().retrans_stamp.is_some()), (CaState::Loss, 1, true), "{era:?}");
        let early = super::ts_of(SimTime::ZERO);
        let t = SimTime::from_secs_f64(1.001);
        s.on_packet(t, ack_with(0, &[], early, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        let undone = era != UndoEra::Current;
        assert_eq!(s.stats.undos, u64::from(undone), "{era:?}");
        // (Out of Loss into Open, then `tcp_try_to_open` keeps it in Disorder: the head's
        // retransmission is still out.)
        assert_eq!(c.state, if undone { CaState::Disorder } else { CaState::Loss }, "{era:?}");
        assert_eq!(c.timeouts, u32::from(!undone), "{era:?}");
    }
}

#[test]
fn a_closing_connection_leaves_its_destinations_metrics_as_tcp_update_metrics_does() {
    // (cwnd, ssthresh, state, reordering) at close → the entry's (ssthresh, reordering), from
    // an entry holding `before`, with the slow-start threshold kept (3.x) or not (today).
    let close = |keep: bool, before: (u32, u32), cwnd: u32, ssthresh: u32, state: CaState, reordering: u32| {
        let (mut s, _) = conn(10, 1_000, 1_000);
        s.config.ssthresh_metrics = keep;
        let mut c = s.new_conn(0, 1_000, SimTime::ZERO);
        (c.w.cwnd, c.w.ssthresh, c.state, c.reordering, c.srtt_us) = (cwnd, ssthresh, state, reordering, 8_000);
        let mut m = Metrics { ssthresh: before.0, reordering: before.1, stamp: SimTime::ZERO };
        m.update(&s.config, &c, SimTime(1_000_000));
        (m.ssthresh, m.reordering)
    };
    let infinite = TCP_INFINITE_SSTHRESH;
    // Initial slow start: a threshold kept grows to half the window, none is made.
    assert_eq!(close(true, (0, 0), 40, infinite, CaState::Open, 3), (0, 0));
    assert_eq!(close(true, (15, 0), 40, infinite, CaState::Open, 3), (20, 0));
    // Congestion avoidance in Open: the larger of half the window and the threshold, and
    // the reordering degree is not saved there.
    assert_eq!(close(true, (0, 0), 40, 30, CaState::Open, 9), (30, 0));
    assert_eq!(close(true, (50, 0), 80, 30, CaState::Open, 9), (40, 0));
    // Slow start after a reduction: the threshold grows only, the reordering degree too when
    // the connection raised its own above `tcp_reordering`.
    assert_eq!(close(true, (20, 5), 8, 30, CaState::Open, 9), (30, 9));
    assert_eq!(close(true, (40, 12), 8, 30, CaState::Open, 9), (40, 12));
    assert_eq!(close(true, (0, 0), 8, 30, CaState::Open, 3), (0, 0));
    // Today's kernels keep no threshold (`tcp_no_ssthresh_metrics_save`).
    assert_eq!(close(false, (0, 0), 40, 30, CaState::Open, 9), (0, 0));
    assert_eq!(close(false, (0, 0), 8, 30, CaState::Disorder, 9), (0, 9));
    // A connection that timed out last saves nothing.
    let (mut s, _) = conn(10, 1_000, 1_000);
    s.config.ssthresh_metrics = true;
    let mut c = s.new_conn(0, 1_000, SimTime::ZERO);
    (c.w.cwnd, c.w.ssthresh, c.reordering, c.srtt_us, c.backoff) = (8, 30, 9, 8_000, 1);
    let mut m = Metrics::default();
    m.update(&s.config, &c, SimTime(1_000_000));
    assert_eq!((m.ssthresh, m.reordering), (0, 0));
}

#[test]
fn a_new_connection_starts_from_its_destinations_metrics_unless_an_hour_old() {
    let (mut s, _) = conn(10, 1_000, 1_000);
    (s.config.ssthresh_metrics, s.config.fack) = (true, true);
    let fresh = |s: &TcpSender| {
        let mut c = s.new_conn(0, 1_000, SimTime::ZERO);
        c.fack_on = true;
        c.do_early_retrans = true;
        c
    };
    let mut m = Metrics { ssthresh: 25, reordering: 12, stamp: SimTime::from_secs_f64(10.0) };
    let mut c = fresh(&s);
    m.init(&s.config, &mut c, SimTime::from_secs_f64(20.0));
    assert_eq!((c.w.ssthresh, c.reordering, c.fack_on, c.do_early_retrans), (25, 12, false, false));
    // Today's kernels read no threshold.
    s.config.ssthresh_metrics = false;
    let mut c = fresh(&s);
    m.init(&s.config, &mut c, SimTime::from_secs_f64(20.0));
    assert_eq!((c.w.ssthresh >= TCP_INFINITE_SSTHRESH, c.reordering), (true, 12));
    // Untouched for over an hour (`TCP_METRICS_TIMEOUT`): reset, nothing to start from.
    let mut c = fresh(&s);
    m.init(&s.config, &mut c, SimTime::from_secs_f64(10.0 + 3601.0));
    assert_eq!((c.reordering, c.fack_on), (s.config.reordering, true));
}

#[test]
fn f_rto_undoes_a_timeout_when_data_never_retransmitted_is_then_delivered() {
    for frto in [true, false] {
        let mut s = sent_window(frto);
        let mut out = Vec::new();
        let t = SimTime::from_secs_f64(1.0);
        s.on_rto(0, t, &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Loss);
        // Segment 5 was only late: it is SACKed after the timeout, without a retransmission.
        let later = SimTime::from_secs_f64(1.001);
        s.on_packet(later, sack(0, (5, 6), later), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        if frto {
            // RFC 5682 §3.1 step 3.b: not all was lost; back to Open (Disorder: a SACK is out).
            assert!(matches!(c.state, CaState::Open | CaState::Disorder), "{:?}", c.state);
            assert_eq!((s.stats.spurious_rtos, s.stats.undos), (1, 1));
            assert_eq!(c.w.cwnd, 10, "the window before the timeout is back");
        } else {
            assert_eq!(c.state, CaState::Loss);
            assert_eq!(s.stats.spurious_rtos, 0);
            assert!(c.w.cwnd < 10);
        }
    }
}

#[test]
fn until_3_15_a_timeout_after_a_retransmission_cannot_be_undone_by_timestamps() {
    // Ten segments sent at 0 ms; segment 9 was `retransmitted` before the timeout at 1 s
    // (in flight still, or since marked lost); the timeout retransmits 0; then the
    // original of 0 is acknowledged, the ACK echoing its TSval (from 0 ms, before the
    // timeout's retransmission): `tcp_try_undo_loss` undoes if the marker is set.
    let early = super::ts_of(SimTime::ZERO);
    for (rule, retransmitted, timeouts, undone) in [
        (UndoEra::Current, EVER_RETRANS, 1, true),
        (UndoEra::Current, EVER_RETRANS | RETRANS_OUT, 1, true),
        (UndoEra::Current, 0, 2, true),
        (UndoEra::Linux313, 0, 1, true),
        (UndoEra::Linux313, EVER_RETRANS, 1, false),
        // The second timeout finds its head retransmitted by the first.
        (UndoEra::Linux313, 0, 2, false),
        (UndoEra::Linux315, EVER_RETRANS, 1, true),
        (UndoEra::Linux315, EVER_RETRANS | RETRANS_OUT, 1, false),
        (UndoEra::Linux315, 0, 2, false),
    ] {
        let mut s = sent_window_with_rtt(ms(1));
        s.config.era.undo = UndoRules::of(rule);
        let c = s.conns[0].as_mut().unwrap();
        c.seg_mut(9).marks |= retransmitted;
        c.retrans_out = u32::from(retransmitted & RETRANS_OUT != 0);
        let mut out = Vec::new();
        for k in 0..timeouts {
            s.on_rto(0, SimTime::from_secs_f64(1.0 + 2.0 * f64::from(k)), &mut out);
        }
        let t = SimTime::from_secs_f64(4.0);
        s.on_packet(t, ack_with(1, &[], early, t), &mut out);
        let case = format!("{rule:?}, marks {retransmitted}, {timeouts} timeouts");
        assert_eq!(s.stats.undos, u64::from(undone), "{case}");
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(c.state == CaState::Loss, !undone, "{case}");
    }
}

#[test]
fn a_loss_probe_counts_toward_no_undo_and_marks_its_segment_from_3_14_only() {
    // Ten segments sent at 0 ms, nothing new may go: the probe at 500 ms sends 9 again
    // (`__tcp_retransmit_skb`: no `undo_retrans`, no `retrans_stamp`; `TCPCB_EVER_RETRANS`
    // from 3.14). Then a timeout at 1 s, and the original of 0 acknowledged: only a probe
    // marked as a retransmission would void 3.10-3.13's undo marker.
    let early = super::ts_of(SimTime::ZERO);
    for (rule, marked) in [(UndoEra::Current, true), (UndoEra::Linux315, true), (UndoEra::Linux313, false)] {
        let mut s = sent_window_with_rtt(ms(1));
        s.config.era.undo = UndoRules::of(rule);
        let c = s.conns[0].as_mut().unwrap();
        c.written = c.snd_nxt;
        let (undo_retrans, mut out) = (c.rp().undo_retrans, Vec::new());
        s.on_loss_probe(0, ms(500), &mut out);
        let probe = std::iter::from_fn(|| s.poll_transmit(ms(500))).next().expect("the probe");
        assert_eq!((probe.seq, probe.retransmit()), (9, true));
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.rp().undo_retrans, c.rp().retrans_stamp, c.retrans_out), (undo_retrans, None, 0), "{rule:?}");
        assert_eq!(c.seg(9).marks & EVER_RETRANS != 0, marked, "{rule:?}");
        s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
        let t = SimTime::from_secs_f64(1.5);
        s.on_packet(t, ack_with(1, &[], early, t), &mut out);
        assert_eq!(s.stats.undos, 1, "{rule:?}");
    }
}

#[test]
fn an_original_acknowledged_before_any_retransmission_left_was_delayed_not_lost() {
    // Recovery entered with 0-2 marked lost, their retransmissions held back (TCP small
    // queues): no retransmission has a time yet. The original of 0 is acknowledged, the ACK
    // echoing no older timestamp: `tcp_packet_delayed` (3.x, and Linux since 6.12) says
    // delayed, and with no retransmission out `tcp_try_undo_partial` undoes.
    let mut s = in_recovery_after_a_sack_of_3_to_9();
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.rp().retrans_stamp, c.retrans_out), (None, 0));
    let t = ms(6);
    s.on_packet(t, ack_with(1, &[(3, 10)], 0, t), &mut Vec::new());
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((s.stats.undos, c.state), (1, CaState::Disorder));
}

#[test]
fn only_todays_kernels_forget_a_stale_first_retransmission_on_entering_recovery() {
    for (era, retransmitted, kept) in [
        (UndoEra::Current, false, false),
        (UndoEra::Current, true, true),
        (UndoEra::Linux313, false, true),
        (UndoEra::Linux315, false, true),
    ] {
        let mut s = sent_window_with_rtt(ms(1));
        s.config.era.undo = UndoRules::of(era);
        let c = s.conns[0].as_mut().unwrap();
        // A retransmission at 3 ms of an earlier episode, since acknowledged (or, with
        // `retransmitted`, the head's, still out): the stamp was not forgotten since.
        c.rp_mut().retrans_stamp = Some(ms(3));
        if retransmitted {
            c.seg_mut(0).marks |= EVER_RETRANS;
        }
        c.enter_recovery(&s.config, &mut s.stats);
        // (`tcp_init_undo` leaves the stamp as it is.)
        assert_eq!(c.rp().retrans_stamp.is_some(), kept, "{era:?}, head retransmitted: {retransmitted}");
    }
}

#[test]
fn a_repeated_timeout_keeps_the_threshold_of_the_first() {
    let mut s = sent_window(true);
    let mut out = Vec::new();
    s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    // CUBIC's ssthresh from a window of 10: 10 · 717 / 1024, and the window restarts at 1.
    assert_eq!((c.w.ssthresh, c.w.cwnd), (10 * 717 / 1024, 1));
    s.on_rto(0, SimTime::from_secs_f64(3.0), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    // `tcp_enter_loss` computes no new threshold from the collapsed window (it would be 2).
    assert_eq!((c.w.ssthresh, c.w.cwnd, c.backoff), (10 * 717 / 1024, 1, 2));
}

#[test]
fn a_timeout_in_fast_recovery_keeps_its_reduced_threshold() {
    let mut s = sent_window(true);
    let mut out = Vec::new();
    let c = s.conns[0].as_mut().unwrap();
    c.enter_recovery(&s.config, &mut s.stats);
    assert_eq!(c.w.ssthresh, 10 * 717 / 1024);
    c.w.cwnd = c.w.ssthresh; // PRR brought the window down
    s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
    // Not reduced a second time for the same episode (it would be 7 · 717 / 1024 = 4).
    assert_eq!(s.conns[0].as_ref().unwrap().w.ssthresh, 10 * 717 / 1024);
}

/// A sender of one stream of `tokens` messages of `token` bytes, written one at a time.
fn stream(nodelay: bool, token: u64, tokens: u64) -> TcpSender {
    let config = TcpConfig { nodelay, gso: false, ..TcpConfig::test_default() };
    let cutter = Cutter::messages(1448, token);
    let mut s = TcpSender::new(config, cutter, 1);
    s.open_stream(SimTime::ZERO, 0, token * tokens, &mut Vec::new());
    s
}

/// Sequence numbers and sizes of what the sender hands over now.
fn sent(s: &mut TcpSender, now: SimTime) -> Vec<(u32, u32)> {
    std::iter::from_fn(|| s.poll_transmit(now)).map(|p| (p.seq, p.bytes)).collect()
}

fn ack(upto: u32, now: SimTime) -> Packet {
    Packet { seq: 1000, ..Packet::ack(0, upto, now) }
}

#[test]
fn nagle_holds_a_small_segment_while_an_earlier_small_one_is_unacknowledged() {
    for nodelay in [false, true] {
        let mut s = stream(nodelay, 100, 10);
        let (t0, t1) = (SimTime::ZERO, SimTime(1_000_000));
        let mut out = Vec::new();
        s.write(t0, 0, 1, &mut out);
        assert_eq!(sent(&mut s, t0), [(0, 100)], "nothing in flight: a small segment goes");
        s.write(t0, 0, 1, &mut out);
        let second = sent(&mut s, t0);
        if nodelay {
            assert_eq!(second, [(1, 100)], "TCP_NODELAY: no hold");
            continue;
        }
        assert!(second.is_empty(), "segment 0 (small) is unacknowledged: {second:?}");
        s.on_packet(t1, ack(1, t1), &mut out);
        assert_eq!(sent(&mut s, t1), [(1, 100)], "its ACK releases the held segment");
    }
}

#[test]
fn nagle_never_holds_full_segments_nor_the_final_write() {
    // Tokens of two full segments and a 100-byte tail.
    let token = 2 * 1448 + 100;
    let mut s = stream(false, token, 3);
    let t0 = SimTime::ZERO;
    let mut out = Vec::new();
    s.write(t0, 0, 3, &mut out);
    assert_eq!(sent(&mut s, t0), [(0, 1448), (1, 1448), (2, 100)]);
    s.write(t0, 0, 3, &mut out);
    assert_eq!(sent(&mut s, t0), [(3, 1448), (4, 1448)], "the tail waits for the ACK of segment 2");
    let t1 = SimTime(1_000_000);
    s.on_packet(t1, ack(3, t1), &mut out);
    assert_eq!(sent(&mut s, t1), [(5, 100)]);
    s.write(t1, 0, 3, &mut out);
    // The last write's tail carries the FIN (`tcp_nagle_test`): it goes although
    // segment 5 (small) is still unacknowledged.
    assert_eq!(sent(&mut s, t1), [(6, 1448), (7, 1448), (8, 100)]);
}

/// A sender of one stream of `message`-byte writes that coalesce ([`Cutter::coalesced_stream`]),
/// its writes on the CPU (each asked for), established at 0 with a send buffer of `sndbuf`
/// segments; the flows whose application asked to write.
fn coalescing(message: u64, sndbuf: u32) -> (TcpSender, Vec<u32>) {
    let config = TcpConfig { gso: false, sndbuf_segments: sndbuf, ..TcpConfig::test_default() };
    let mut s = TcpSender::new(config, Cutter::coalesced_stream(1448, message), 1).with_app_on_cpu(true);
    let mut out = Vec::new();
    s.open_established(SimTime::ZERO, 0, 0, &mut out);
    (s, writable(&out))
}

fn writable(out: &[Output]) -> Vec<u32> {
    out.iter().filter_map(|o| if let Output::Writable(f) = o { Some(*f) } else { None }).collect()
}

/// Sequence numbers, sizes and PSH of what the sender hands over now.
fn sent_psh(s: &mut TcpSender, now: SimTime) -> Vec<(u32, u32, bool)> {
    std::iter::from_fn(|| s.poll_transmit(now)).map(|p| (p.seq, p.bytes, p.psh())).collect()
}

#[test]
fn small_writes_coalesce_while_nagle_holds_the_tail_and_keep_their_sizes_for_retransmission() {
    let (mut s, asked) = coalescing(8, 100);
    // (No loss probe nor F-RTO, which would send the tail before the timeout's retransmission.)
    (s.config.tlp, s.config.frto) = (false, false);
    assert_eq!(asked, [0], "the application is asked for its first write once the connection opens");
    let (t0, t1) = (SimTime::ZERO, SimTime(1_000_000));
    let mut out = Vec::new();
    s.app_write(t0, 0, &mut out);
    assert_eq!(writable(&out), [0], "room left: the application goes on writing");
    assert_eq!(sent_psh(&mut s, t0), [(0, 8, true)], "nothing in flight: the first write goes alone, pushed");
    for _ in 0..3 {
        s.app_write(t0, 0, &mut out);
    }
    assert!(sent_psh(&mut s, t0).is_empty(), "Nagle holds the tail behind the unacknowledged small segment");
    s.on_packet(t1, ack(1, t1), &mut out);
    assert_eq!(sent_psh(&mut s, t1), [(1, 24, true)], "its ACK lets the three writes go as one segment");
    // 200 writes of 8 bytes: a full segment (181 writes end exactly at 1448 bytes: PSH) and the rest.
    for _ in 0..200 {
        s.app_write(t1, 0, &mut out);
    }
    assert_eq!(sent_psh(&mut s, t1), [(2, 1448, true)], "a full segment is never held; the 152-byte tail is");
    // A retransmission carries the segment's own size: the RTO resends segment 1 (24 bytes).
    let rto = s.conns[0].as_ref().unwrap().timer.deadline().expect("armed");
    s.on_timer(rto, timer_token(0, s.conns[0].as_ref().unwrap().timer.generation()), &mut out);
    let again = s.poll_transmit(rto).expect("the timeout's retransmission");
    assert_eq!((again.seq, again.bytes, again.retransmit(), again.psh()), (1, 24, true, true));
}

#[test]
fn a_segment_cut_from_the_middle_of_a_write_has_no_psh_and_a_refused_one_is_cut_again() {
    // 1000-byte writes: segments of 1448 end inside a write, except where 1448·k is a multiple of 1000.
    let (mut s, _) = coalescing(1000, 100);
    let t0 = SimTime::ZERO;
    let mut out = Vec::new();
    for _ in 0..3 {
        s.app_write(t0, 0, &mut out);
    }
    let first = s.poll_transmit(t0).expect("a full segment");
    assert_eq!((first.bytes, first.psh()), (1448, false), "it ends inside the second write");
    // The host refuses it: its bytes are unsent again and the same segment is cut next time.
    assert!(s.unsent(t0, &first, &mut out));
    s.on_packet(SimTime(1), ack(0, SimTime(1)), &mut out);
    assert_eq!(sent_psh(&mut s, SimTime(1)), [(0, 1448, false), (1, 1448, false), (2, 104, true)]);
}

#[test]
fn a_writer_sleeps_on_a_full_buffer_and_wakes_when_a_third_of_it_is_free() {
    // A buffer of 3 segments, full-segment writes: three writes fill it.
    let (mut s, _) = coalescing(1448, 3);
    let t0 = SimTime::ZERO;
    let mut out = Vec::new();
    for _ in 0..3 {
        out.clear();
        s.app_write(t0, 0, &mut out);
    }
    assert!(writable(&out).is_empty(), "the third write filled the buffer: the writer sleeps");
    assert_eq!(sent_psh(&mut s, t0).len(), 3);
    out.clear();
    s.on_packet(SimTime(5), ack(1, SimTime(5)), &mut out);
    assert_eq!(writable(&out), [0], "`sk_stream_write_space`: free 1 >= half of the 2 queued");
    // Without a CPU the application fills the buffer at once, whatever the message size.
    let config = TcpConfig { gso: false, sndbuf_segments: 10, ..TcpConfig::test_default() };
    let mut s = TcpSender::new(config, Cutter::coalesced_stream(1448, 8), 1);
    s.open_established(t0, 0, 0, &mut out);
    let sizes: Vec<u32> = sent_psh(&mut s, t0).iter().map(|p| p.1).collect();
    assert_eq!(sizes, vec![1448; 10], "full segments up to the initial window");
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.written, c.stream.as_ref().unwrap().unsent), (10, 0), "1810 writes fill the 10 segments exactly");
}

#[test]
fn small_queues_hold_about_a_millisecond_of_data_below_tcp() {
    let (s, mut c) = conn(100, 10_000, 10_000);
    c.snd_nxt = 50; // more than one buffer unacknowledged
    let config = TcpConfig { gso: false, ..s.config.clone() };
    let limit = (1.2 * 100.0 * 1448.0 / 0.010 / 1024.0) as u64;
    // `sk_wmem_alloc` counts the socket's own 1 besides its buffers (`sk_alloc`).
    c.wmem = limit - 1;
    assert!(!c.small_queue_full(&config, false));
    c.wmem = limit;
    assert!(c.small_queue_full(&config, false));
    assert!(!c.small_queue_full(&config, true), "retransmissions may queue twice as much");
    c.snd_nxt = 1;
    assert!(!c.small_queue_full(&config, false), "a single buffer in flight always goes");
}

#[test]
fn linux_3_12s_small_queues_hold_at_least_tcp_limit_output_bytes_and_never_a_retransmission() {
    let (s, mut c) = conn(100, 10_000, 10_000);
    c.snd_nxt = 50;
    let mut config = TcpConfig { limit_output_bytes: 131_072, ..s.config.clone() };
    config.era.tsq = TsqLimit::Floored;
    // cwnd 100 over an SRTT of 10 ms at 200%: 28,281 bytes a millisecond, below the 128 KB.
    for (wmem, full) in [(131_071, false), (131_072, true)] {
        c.wmem = wmem;
        assert_eq!(c.small_queue_full(&config, false), full, "{wmem}");
        assert!(!c.small_queue_full(&config, true), "a retransmission never waits");
    }
    let config = TcpConfig { limit_output_bytes: 16_384, ..config };
    let rate_term = (2.0 * 100.0 * 1448.0 / 0.010 / 1024.0) as u64;
    c.wmem = rate_term - 1;
    assert!(!c.small_queue_full(&config, false));
    c.wmem = rate_term;
    assert!(c.small_queue_full(&config, false), "the pacing rate's share when it is the larger");
}

#[test]
fn small_queues_let_two_buffers_wait_not_three() {
    // A slow flow, whose limit is `2 · truesize`: one buffer below TCP leaves room for a second;
    // with two, `sk_wmem_alloc` (the socket's own 1 and their truesizes) exceeds the limit.
    let (s, mut c) = conn(2, 100_000, 100_000);
    c.snd_nxt = 50;
    let config = TcpConfig { gso: false, ..s.config.clone() };
    let buffer = truesize(config.mss, 1);
    c.wmem = buffer;
    assert!(!c.small_queue_full(&config, false), "one waits: a second may go");
    c.wmem = 2 * buffer;
    assert!(c.small_queue_full(&config, false), "two wait: no third");
}

/// A flow of `segments` segments all sent at 0 (and off the host) over a sender without RACK (dupthresh), with
/// early retransmit waiting at least `er` (`None`: off) and an SRTT of `srtt_ms`.
fn short_flow(segments: u32, er: Option<SimTime>, ncr: bool, srtt_ms: u64) -> TcpSender {
    let (mut s, _) = conn(10, 1_000, 1_000);
    (s.config.gso, s.config.loss, s.config.early_retransmit, s.config.ncr) =
        (false, LossDetection::Scoreboard, er, ncr);
    let mut out = Vec::new();
    s.open_established(SimTime::ZERO, 0, u64::from(segments) * 1448, &mut out);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count(), segments.min(10) as usize);
    let c = s.conns[0].as_mut().unwrap();
    c.wmem = 0; // their buffers left the host (TX completions)
    c.snd_wnd = 1000; // the window `ack_with`'s ACKs advertise: no window update among them
    let srtt = SimTime(srtt_ms * 1_000_000);
    c.rtt_sample(&s.config, srtt, srtt);
    s
}

fn lost_segments(s: &TcpSender) -> Vec<u32> {
    let c = s.conns[0].as_ref().unwrap();
    (c.snd_una..c.snd_nxt).filter(|&q| c.seg(q).marks & LOST != 0).collect()
}

#[test]
fn early_retransmit_recovers_a_short_flows_loss_after_a_quarter_of_the_rtt() {
    // 3 segments out, the first lost: a duplicate ACK SACKs the other two. dupthresh (3) is out
    // of reach; RFC 5827 (2 SACKed of 3 out, nothing new to send) starts recovery, Linux's delayed
    // form after max(SRTT/4, 2 ms) (`tcp_pause_early_retransmit`): the ACK's SACK sample (21 ms)
    // makes SRTT 20.125 ms, a quarter 5.03 ms, 6 jiffies at HZ 1000.
    let floor = Some(ms(2));
    let mut out = Vec::new();
    let mut s = short_flow(3, floor, false, 20);
    s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.timer_kind, c.timer.deadline()), (CaState::Disorder, TimerKind::EarlyRetrans, Some(ms(27))));
    assert!(lost_segments(&s).is_empty() && s.poll_transmit(ms(21)).is_none());
    s.on_timer(ms(27), timer_token(0, s.conns[0].as_ref().unwrap().timer.generation()), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, lost_segments(&s), s.stats.fast_recoveries), (CaState::Recovery, vec![0], 1));
    let p = s.poll_transmit(ms(27)).expect("the head goes again");
    assert!((p.seq, p.retransmit()) == (0, true));
    assert_eq!(s.conns[0].as_ref().unwrap().timer_kind, TimerKind::Rto);

    // `tcp_early_retrans` = 1: at once.
    let mut s = short_flow(3, Some(SimTime::ZERO), false, 20);
    s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
    assert_eq!((s.conns[0].as_ref().unwrap().state, lost_segments(&s)), (CaState::Recovery, vec![0]));
    // An RTO due before the delay ends: at once too (SRTT 1 s: 250 ms of delay, the RTO
    // armed at the open, 1 s, comes first).
    let mut s = short_flow(3, floor, false, 1_000);
    s.on_packet(ms(800), sack(0, (1, 3), ms(800)), &mut out);
    assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Recovery);
    // Off: the connection waits (for the loss probe or the RTO).
    let mut s = short_flow(3, None, false, 20);
    s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!(c.state, CaState::Disorder);
    assert_ne!(c.timer_kind, TimerKind::EarlyRetrans);
    // With 4 out it is dupthresh's to judge, not early retransmit's.
    let mut s = short_flow(4, floor, false, 20);
    s.on_packet(ms(21), sack(0, (2, 4), ms(21)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.timer_kind == TimerKind::EarlyRetrans), (CaState::Disorder, false));
}

#[test]
fn reordering_turns_early_retransmit_off_for_the_connection() {
    // The third of 3 SACKed pauses early retransmit; the first then arrives, never retransmitted,
    // below the SACK: reordering (`tcp_update_reordering` → `tcp_disable_early_retrans`), and the
    // ACK cancels the pause. The second's hole then waits: early retransmit is off.
    let mut out = Vec::new();
    let mut s = short_flow(3, Some(ms(2)), false, 20);
    s.on_packet(ms(21), sack(0, (2, 3), ms(21)), &mut out);
    assert_eq!(s.conns[0].as_ref().unwrap().timer_kind, TimerKind::EarlyRetrans);
    s.on_packet(ms(22), sack(1, (2, 3), ms(22)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert!(!c.do_early_retrans);
    assert_eq!((c.state, c.timer_kind == TimerKind::EarlyRetrans), (CaState::Disorder, false));
    s.on_packet(ms(23), sack(1, (2, 3), ms(23)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.timer_kind == TimerKind::EarlyRetrans), (CaState::Disorder, false));
    // The same duplicate ACK on a connection that saw no reordering pauses it.
    let mut s = short_flow(3, Some(ms(2)), false, 20);
    s.on_packet(ms(21), sack(1, (2, 3), ms(21)), &mut out);
    assert!(s.conns[0].as_ref().unwrap().do_early_retrans);
}

#[test]
fn ncr_recovers_when_half_the_flight_is_sacked_below_a_raised_degree() {
    // 8 out after reordering raised the degree to 10: 4 SACKed are far from dupthresh, but
    // they are half of the flight and `tcp_reordering`, and nothing new can go (RFC 4653 NCR,
    // `tcp_time_to_recover`'s Trick#4): recovery, the head marked by the duplicate ACK.
    let run = |segments: u32, ncr: bool, blocks: (u32, u32)| {
        let mut s = short_flow(segments, None, ncr, 20);
        s.conns[0].as_mut().unwrap().reordering = 10;
        s.on_packet(ms(21), sack(0, blocks, ms(21)), &mut Vec::new());
        s
    };
    let s = run(8, true, (4, 8));
    assert_eq!((s.conns[0].as_ref().unwrap().state, lost_segments(&s)), (CaState::Recovery, vec![0]));
    let s = run(8, false, (4, 8));
    assert_eq!((s.conns[0].as_ref().unwrap().state, lost_segments(&s)), (CaState::Disorder, vec![]));
    // 3 of 8 SACKed: under half.
    let s = run(8, true, (5, 8));
    assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Disorder);
    // 10 out, 5 SACKed: half of them. With nothing more to send, recovery; with more written and
    // room in cwnd (the SACKed left the flight), not yet (`tcp_may_send_now`).
    let s = run(10, true, (5, 10));
    assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Recovery);
    let s = run(20, true, (5, 10));
    assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Disorder);
}

#[test]
fn a_second_duplicate_ack_restarts_the_early_retransmit_delay() {
    // The pause compares the delay with the RTO the ACK leaves (`tcp_ack` turned the pending
    // early retransmit back into the RTO of the head's send, `tcp_rearm_rto`), not with the
    // pending pause: a second duplicate ACK within the delay pauses again from its own time.
    let mut out = Vec::new();
    let mut s = short_flow(3, Some(ms(2)), false, 20);
    s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
    assert_eq!(s.conns[0].as_ref().unwrap().timer.deadline(), Some(ms(27)));
    s.on_packet(ms(24), sack(0, (1, 3), ms(24)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, c.timer_kind, c.timer.deadline()), (CaState::Disorder, TimerKind::EarlyRetrans, Some(ms(30))));
}

#[test]
fn forward_retransmission_sends_the_holes_below_the_highest_sack_in_recovery() {
    // 10 out, 0 and 3 lost, the rest SACKed, the degree raised to 10: NCR starts recovery and the
    // duplicate ACK marks the head only (8 SACKed < 10: dupthresh marks nothing more). Linux
    // before 4.11 then sends 3 again too (`tcp_can_forward_retransmit`: Recovery, nothing new to
    // send), counted in flight twice (`retrans_out`) though not marked lost; without it, 3 waits.
    let run = |forward: bool| {
        let mut s = short_flow(10, None, true, 20);
        s.config.forward_retransmit = forward;
        s.conns[0].as_mut().unwrap().reordering = 10;
        s.on_packet(ms(21), ack_with(0, &[(4, 10), (1, 3)], 0, ms(21)), &mut Vec::new());
        let sent: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(ms(21))).map(|p| p.seq).collect();
        (s, sent)
    };
    let (s, sent) = run(true);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, sent, lost_segments(&s)), (CaState::Recovery, vec![0, 3], vec![0]));
    assert_eq!((c.retrans_out, c.seg(3).marks & RETRANS_OUT != 0), (2, true));
    let (s, sent) = run(false);
    assert_eq!((s.conns[0].as_ref().unwrap().state, sent), (CaState::Recovery, vec![0]));
}

#[test]
fn dupthresh_marks_a_forward_retransmission_lost_but_keeps_it_in_flight() {
    // `tcp_skb_mark_lost` (dupthresh's and FACK's marking) leaves TCPCB_SACKED_RETRANS alone: the
    // segment counts lost and retransmitted, and is not sent a third time; only RACK's and
    // FACK's lost-retransmission tests take a retransmission back out of flight.
    let (_, mut c) = conn(10, 1_000, 1_000);
    c.snd_nxt = 10;
    c.segs = (0..10).map(|_| Seg { sent: SimTime::ZERO, delivered: 0, marks: 0 }).collect();
    c.state = CaState::Recovery;
    c.seg_mut(3).marks = RETRANS_OUT | EVER_RETRANS;
    c.retrans_out = 1;
    for q in 4..10 {
        c.seg_mut(q).marks = SACKED;
    }
    (c.sacked_out, c.fack, c.reordering) = (6, 10, 3);
    assert_eq!(c.dupthresh_detect_loss(true), 4, "0 to 3 have 6 SACKed above them");
    assert_eq!((c.seg(3).marks & (LOST | RETRANS_OUT), c.lost_out, c.retrans_out), (LOST | RETRANS_OUT, 4, 1));
    assert_eq!(c.in_flight(), 1, "10 out, 6 SACKed and 4 lost, one of them in flight again");
}

#[test]
fn reordering_seen_in_loss_counts_only_while_the_timeout_may_be_undone() {
    // After a timeout, a SACK of segment 2 (never sent again) below the highest SACK (6) is
    // reordering of degree 4 (`tcp_sacktag_write_queue`), judged only in a Loss that may still
    // be undone (`icsk_ca_state != TCP_CA_Loss || tp->undo_marker`).
    for undoable in [false, true] {
        let mut s = sent_window_with_rtt(ms(1));
        let mut out = Vec::new();
        s.on_packet(ms(2), sack(0, (5, 6), ms(2)), &mut out);
        s.on_rto(0, ms(300), &mut out);
        let c = s.conns[0].as_mut().unwrap();
        assert_eq!((c.state, c.reordering, c.rp().undo_marker.is_some()), (CaState::Loss, 3, true));
        if !undoable {
            c.rp_mut().undo_marker = None;
        }
        s.on_packet(ms(301), ack_with(0, &[(2, 3), (5, 6)], 0, ms(301)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(c.reordering, if undoable { 4 } else { 3 }, "undoable: {undoable}");
    }
}

#[test]
fn an_ack_turns_a_3_10_loss_probe_back_into_the_rto_of_the_heads_send() {
    // 3.x `tcp_ack`: a pending loss probe becomes the RTO again (`tcp_rearm_rto`: the head's
    // send + RTO) on any ACK in the window; today's kernels leave it pending on an ACK that ACKs
    // nothing.
    for linux_3_10 in [false, true] {
        let mut s = short_flow(10, None, false, 20);
        s.config.era.tlp = TlpRules { floor: linux_3_10.then_some(ms(10)), rearmed_by_ack: linux_3_10 };
        let mut out = Vec::new();
        let c = s.conns[0].as_mut().unwrap();
        TcpSender::arm(c, 0, TimerKind::LossProbe, ms(60), &mut out);
        s.on_packet(ms(21), sack(0, (5, 6), ms(21)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        let rto_of_head = c.seg(0).sent + c.backed_off_rto(&s.config);
        let want = if linux_3_10 { (TimerKind::Rto, rto_of_head) } else { (TimerKind::LossProbe, ms(60)) };
        assert_eq!((c.timer_kind, c.timer.deadline().unwrap()), want, "3.10: {linux_3_10}");
    }
}

/// Sends what the sender lets out at `now`, each buffer's TX completing at once (so TCP small
/// queues hold nothing back); returns the segments sent.
fn send_completing(s: &mut TcpSender, now: SimTime) -> Vec<u32> {
    let mut seqs = Vec::new();
    while let Some(p) = s.poll_transmit(now) {
        s.on_tx_done(now, &p, &mut Vec::new());
        seqs.push(p.seq);
    }
    seqs
}

/// A control that records every rate sample and, with `own_window`, holds the window at 4
/// segments itself (`cong_control`), as a rate-based control does.
#[derive(Debug)]
struct Recorder {
    samples: std::sync::Arc<std::sync::Mutex<Vec<RateSample>>>,
    own_window: bool,
}

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn ssthresh(&mut self, w: &Window) -> u32 {
        (w.cwnd / 2).max(2)
    }
    fn cong_avoid(&mut self, w: &mut Window, acked: u32) {
        w.cwnd += acked;
    }
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u32) -> u32 {
        w.cwnd
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        self.samples.lock().unwrap().push(*rs);
        if self.own_window {
            w.cwnd = 4;
        }
        self.own_window
    }
}

/// A sender whose one flow (`window` segments out at time 0) runs the [`Recorder`].
fn recorded(own_window: bool) -> (TcpSender, std::sync::Arc<std::sync::Mutex<Vec<RateSample>>>) {
    let (mut s, _) = conn(10, 1_000, 1_000);
    s.config.gso = false;
    s.open_established(SimTime::ZERO, 0, 100 * 1448, &mut Vec::new());
    let samples = std::sync::Arc::default();
    let c = s.conns[0].as_mut().unwrap();
    c.cc = Box::new(Recorder { samples: std::sync::Arc::clone(&samples), own_window });
    // (What `new_conn` and `establish` do for a control that samples rates.)
    (c.rates, c.sampling) = (Some(Box::default()), c.cc.has_cong_control());
    c.rate_check_app_limited(&s.config, 0);
    assert_eq!(send_completing(&mut s, SimTime::ZERO).len(), 10, "the initial window");
    (s, samples)
}

#[test]
fn each_ack_samples_the_delivery_rate_as_tcp_rate_does() {
    let (mut s, samples) = recorded(false);
    // 5 of the first 10 (all sent at 0, while the write found nothing queued: app-limited) ACKed
    // at 10 ms: delivered 5 since the latest sent of them left, over max(send 0, ACK 10 ms).
    s.on_packet(ms(10), ack(5, ms(10)), &mut Vec::new());
    let first = samples.lock().unwrap()[0];
    assert_eq!((first.delivered, first.interval), (Some(5), Some(ms(10))));
    assert_eq!((first.prior_delivered, first.prior_mstamp, first.acked_sacked), (0, Some(SimTime::ZERO), 5));
    assert!(first.is_app_limited && !first.is_retrans);
    assert_eq!((first.rtt, first.prior_in_flight), (Some(ms(10)), 10));
    // The window grew by 5: segments 10 to 19 leave at 10 ms, stamped with delivered 5 at 10 ms.
    assert_eq!(send_completing(&mut s, ms(10)), (10..20).collect::<Vec<_>>());
    // Segments 5 to 14 ACKed at 20 ms: the latest sent (14) left at 10 ms when 5 were delivered;
    // 10 delivered since, over max(send 10 ms since segment 4's send, ACK 10 ms since 10 ms).
    s.on_packet(ms(20), ack(15, ms(20)), &mut Vec::new());
    let second = samples.lock().unwrap()[1];
    assert_eq!((second.prior_delivered, second.prior_mstamp), (5, Some(ms(10))));
    assert_eq!((second.delivered, second.interval), (Some(10), Some(ms(10))));
    assert_eq!((second.snd_interval, second.rcv_interval), (ms(10), ms(10)));
    assert!(!second.is_app_limited, "sent after the first 5 (app_limited = 1) were delivered");
    let c = s.conns[0].as_ref().unwrap();
    let r = c.rates.as_ref().unwrap();
    assert_eq!((r.rate_delivered, r.rate_interval, r.app_limited), (10, ms(10), 0));
}

#[test]
fn a_sacked_segment_counts_once_and_an_interval_below_min_rtt_is_no_rate() {
    let (mut s, samples) = recorded(false);
    // Segment 9 SACKed at 10 ms, then the cumulative ACK of all 10 at 11 ms.
    s.on_packet(ms(10), sack(0, (9, 10), ms(10)), &mut Vec::new());
    s.on_packet(ms(11), ack(10, ms(11)), &mut Vec::new());
    let samples = samples.lock().unwrap();
    assert_eq!((samples[0].delivered, samples[0].last_end_seq), (Some(1), 10));
    // The cumulative ACK's sample starts where segment 8 left (0 delivered, at 0): segment 9's
    // stamp went with its SACK, so it is not counted again; 9 delivered over 11 ms.
    assert_eq!((samples[1].prior_delivered, samples[1].prior_mstamp), (0, Some(SimTime::ZERO)));
    assert_eq!((samples[1].acked_sacked, samples[1].delivered, samples[1].interval), (9, Some(10), Some(ms(11))));
    // An ACK that gives no RTT sample (it covers retransmitted segments, Karn's rule) over an
    // interval shorter than the minimum RTT: no rate (`interval_us = -1`), the latest kept.
    let (mut late, samples) = recorded(false);
    let c = late.conns[0].as_mut().unwrap();
    c.min_rtt = Some(ms(50));
    c.segs.iter_mut().for_each(|s| s.marks |= EVER_RETRANS);
    late.on_packet(ms(10), ack(5, ms(10)), &mut Vec::new());
    assert_eq!(samples.lock().unwrap()[0].interval, None);
    let c = late.conns[0].as_ref().unwrap();
    assert_eq!((c.min_rtt, c.rates.as_ref().unwrap().rate_delivered), (Some(ms(50)), 0));
}

#[test]
fn a_control_with_cong_control_sets_the_window_instead_of_prr_and_cong_avoid() {
    for own_window in [false, true] {
        let (mut s, samples) = recorded(own_window);
        s.on_packet(ms(10), ack(5, ms(10)), &mut Vec::new());
        let cwnd = s.conns[0].as_ref().unwrap().w.cwnd;
        assert_eq!(cwnd, if own_window { 4 } else { 15 }, "cong_avoid adds the 5 delivered");
        assert_eq!(samples.lock().unwrap().len(), 1);
    }
}

/// A control that asks for pacing and sets the rate (as BBR does): one 1448-byte segment a
/// millisecond.
#[derive(Debug)]
struct Pacer;

impl CongestionControl for Pacer {
    fn name(&self) -> &'static str {
        "pacer"
    }
    fn ssthresh(&mut self, w: &Window) -> u32 {
        w.cwnd
    }
    fn cong_avoid(&mut self, _w: &mut Window, _acked: u32) {}
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u32) -> u32 {
        w.cwnd
    }
    fn needs_pacing(&self) -> bool {
        true
    }
}

/// The pacing timer the last poll asked for, if any.
fn pacing_timer(s: &mut TcpSender, now: SimTime) -> Option<(SimTime, u64)> {
    let mut out = Vec::new();
    s.poll_timers(now, &mut out);
    assert!(out.len() <= 1);
    out.first().map(|o| match *o {
        Output::Timer { at, token } => (at, token),
        ref other => panic!("{other:?}"),
    })
}

#[test]
fn a_control_that_asks_for_pacing_spaces_segments_at_its_rate_after_the_first_ten() {
    let (mut s, _) = conn(10, 1_000, 1_000);
    s.config.gso = false;
    s.open_established(SimTime::ZERO, 0, 100 * 1448, &mut Vec::new());
    let c = s.conns[0].as_mut().unwrap();
    (c.cc, c.pacing, c.paced, c.w.cwnd, c.w.pacing_rate) =
        (Box::new(Pacer), Some(Box::default()), true, 100, 1_448_000);
    // The first 10 leave at once; the 10th sets the next departure a segment's time later.
    assert_eq!(send_completing(&mut s, SimTime::ZERO), (0..10).collect::<Vec<_>>());
    let (at, token) = pacing_timer(&mut s, SimTime::ZERO).expect("the pacing timer");
    assert_eq!(at, ms(1));
    assert_eq!(pacing_timer(&mut s, SimTime::ZERO), None, "asked for once");
    s.on_timer(ms(1), token, &mut Vec::new());
    assert_eq!(send_completing(&mut s, ms(1)), vec![10]);
    let (at, token) = pacing_timer(&mut s, ms(1)).unwrap();
    assert_eq!(at, ms(2));
    // Woken 0.5 ms late, the next departure makes up half a segment's time (the credit).
    s.on_timer(SimTime(2_500_000), token, &mut Vec::new());
    assert_eq!(send_completing(&mut s, SimTime(2_500_000)), vec![11]);
    assert_eq!(pacing_timer(&mut s, SimTime(2_500_000)).unwrap().0, ms(3));
    // A stale or early pacing timer sends nothing.
    assert!(send_completing(&mut s, SimTime(2_600_000)).is_empty());
    // CUBIC asks for no pacing: all the windows allow leaves at once (the receiver's 64 KB).
    let (mut cubic, _) = conn(10, 1_000, 1_000);
    cubic.config.gso = false;
    cubic.open_established(SimTime::ZERO, 0, 100 * 1448, &mut Vec::new());
    cubic.conns[0].as_mut().unwrap().w.cwnd = 100;
    assert_eq!(send_completing(&mut cubic, SimTime::ZERO).len(), 65_535 / 1448);
    assert_eq!(pacing_timer(&mut cubic, SimTime::ZERO), None);
}

#[test]
fn a_send_the_hosts_queue_refuses_is_taken_back_and_the_window_reduced_without_a_retransmission() {
    // `__tcp_transmit_skb` hears NET_XMIT_DROP: the segment stays unsent (snd_nxt, the
    // retransmission queue), the connection enters CWR (ssthresh from the control, PRR), and
    // `tcp_write_xmit` breaks off: nothing more goes until an ACK. Then the same segment goes as
    // new data, no retransmission counted.
    let mut s = sent_window(false);
    s.conns[0].as_mut().unwrap().wmem = 0; // the window's TX completions (TCP small queues)
    let mut out = Vec::new();
    s.on_packet(ms(2), ack_with(2, &[], 0, ms(2)), &mut out); // 2 ACKed: room for 4 more (slow start)
    let p = s.poll_transmit(ms(2)).expect("new data");
    assert_eq!((p.seq, p.retransmit()), (10, false));
    s.on_tx_done(ms(2), &p, &mut out);
    let cwnd = s.conns[0].as_ref().unwrap().w.cwnd;
    assert!(s.unsent(ms(2), &p, &mut out));
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.snd_nxt, c.segs.len(), c.state, c.rp().undo_marker), (10, 8, CaState::Cwr, None));
    // CUBIC's ssthresh (beta 717/1024) of the window then, PRR from it.
    assert_eq!((c.rp().prior_cwnd, c.w.ssthresh), (cwnd, (cwnd * 717 / 1024).max(2)));
    assert_eq!((s.stats.segments_sent, s.stats.retransmits, s.stats.xmit_drops), (10, 0, 1));
    assert!(s.poll_transmit(ms(2)).is_none(), "tcp_write_xmit broke off");
    assert!(!s.unsent(ms(2), &p, &mut out), "only the last send is taken back");
    s.on_packet(ms(3), ack_with(4, &[], 0, ms(3)), &mut out);
    let again = s.poll_transmit(ms(3)).expect("an ACK calls tcp_write_xmit again");
    assert_eq!((again.seq, again.retransmit()), (10, false));
    // CWR ends once an ACK goes past the snd_nxt it began at (10).
    s.on_packet(ms(4), ack_with(11, &[], 0, ms(4)), &mut out);
    assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Open);
    assert_eq!((s.stats.retransmits, s.stats.fast_recoveries), (0, 0));
}

#[test]
fn a_refused_retransmission_stays_lost_and_uncounted() {
    // `tcp_retransmit_skb` fails: no TCPCB_RETRANS, no retrans_out, no total_retrans; the
    // segment is still lost, and goes again at the next call.
    let mut s = sent_window(false);
    s.conns[0].as_mut().unwrap().wmem = 0;
    let mut out = Vec::new();
    s.on_packet(ms(2), sack(0, (1, 10), ms(2)), &mut out); // 9 SACKed: 0 is lost (RACK / dupthresh)
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.state, lost_segments(&s)), (CaState::Recovery, vec![0]));
    let before = (c.seg(0).marks, c.retrans_out, c.rp().undo_retrans, c.rp().retrans_stamp, c.prr_out);
    let p = s.poll_transmit(ms(2)).expect("the retransmission");
    assert_eq!((p.seq, p.retransmit(), s.stats.retransmits), (0, true, 1));
    s.on_tx_done(ms(2), &p, &mut out);
    assert!(s.unsent(ms(2), &p, &mut out));
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.seg(0).marks, c.retrans_out, c.rp().undo_retrans, c.rp().retrans_stamp, c.prr_out), before);
    assert_eq!((c.state, s.stats.retransmits, c.retransmits), (CaState::Recovery, 0, 0), "in Recovery already");
    assert!(s.poll_transmit(ms(2)).is_none());
    s.on_packet(ms(3), sack(0, (1, 10), ms(3)), &mut out);
    let again = s.poll_transmit(ms(3)).expect("again at the next ACK");
    assert_eq!((again.seq, again.retransmit(), s.stats.retransmits), (0, true, 1));
}

#[test]
fn with_nothing_in_flight_a_refused_send_waits_for_the_probe_timer() {
    // `tcp_write_xmit` returns with packets_out = 0: `tcp_check_probe_timer` arms the probe at
    // `tcp_probe0_base` (the RTO, at least TCP_RTO_MIN), whose firing sends again.
    let (mut s, mut out) = one_flow();
    let p = s.poll_transmit(SimTime::ZERO).expect("the first segment");
    s.on_tx_done(SimTime::ZERO, &p, &mut out);
    out.clear();
    assert!(s.unsent(SimTime::ZERO, &p, &mut out));
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.packets_out(), c.timer_kind), (0, TimerKind::Rto));
    let at = c.timer.at();
    assert_eq!(at, SimTime::ZERO + c.backed_off_rto(&s.config).max(s.config.rto_min));
    assert!(s.poll_transmit(ms(1)).is_none());
    s.on_timer(at, timer_token(0, s.conns[0].as_ref().unwrap().timer.generation()), &mut out);
    let p = s.poll_transmit(at).expect("the probe timer calls it again");
    assert_eq!((p.seq, p.retransmit(), s.stats.rtos), (0, false, 0));
}

#[test]
fn a_dsacked_retransmission_counts_as_delivered_today_and_not_in_3x() {
    // `tcp_dsack_seen`: "A spurious retransmission is delivered" (`sack_delivered`, into
    // `tp->delivered`, the rate sample and `tcp_cong_control`'s count); 3.x had no such count.
    for (today, counted) in [(true, 1), (false, 0)] {
        let mut s = sent_window(false);
        s.config.era.dsack_delivered = today;
        s.conns[0].as_mut().unwrap().wmem = 0;
        let mut out = Vec::new();
        s.on_packet(ms(2), sack(0, (1, 10), ms(2)), &mut out);
        let p = s.poll_transmit(ms(2)).expect("segment 0 again");
        assert_eq!((p.seq, p.retransmit()), (0, true));
        s.on_packet(ms(3), ack_with(10, &[], 0, ms(3)), &mut out);
        let before = s.conns[0].as_ref().unwrap().delivered;
        // The original arrived after all: the receiver D-SACKs the retransmission.
        s.on_packet(ms(4), ack_with(10, &[(0, 1)], 0, ms(4)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.delivered - before, s.stats.dsacks_received), (counted, 1), "today: {today}");
    }
}

/// A sender (no GSO) of one flow of 100 segments opened by the world at time 0: the handshake.
fn handshaking() -> (TcpSender, Vec<Output>) {
    let (mut s, _) = conn(10, 1_000, 1_000);
    s.config.gso = false;
    let mut out = Vec::new();
    Endpoint::open(&mut s, SimTime::ZERO, 0, 100 * 1448, &mut out);
    (s, out)
}

#[test]
fn the_syn_ack_leaves_first_and_its_ack_gives_srtt_min_rtt_and_the_rto_before_any_data() {
    // `tcp_check_req` → `tcp_synack_rtt_meas`: the time since the SYN-ACK; `tcp_rtt_estimator`'s
    // first sample: RTO = SRTT + max(2·SRTT, tcp_rto_min).
    let (mut s, out) = handshaking();
    let syn_ack = s.poll_transmit(SimTime::ZERO).expect("the SYN-ACK");
    assert_eq!(syn_ack.kind, Kind::Handshake);
    assert_eq!(s.poll_transmit(SimTime::ZERO), None, "no data before the handshake's ACK");
    let timer = out.iter().find_map(|o| if let Output::Timer { at, .. } = o { Some(*at) } else { None });
    assert_eq!(timer, Some(ms(1_000)), "the SYN-ACK's timer: TCP_TIMEOUT_INIT");
    let mut out = Vec::new();
    s.on_packet(ms(4), ack_with(0, &[], ts_of(SimTime::ZERO), ms(4)), &mut out);
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.srtt(), c.min_rtt), (Some(ms(4)), Some(ms(4))));
    assert_eq!(c.rto, ms(204));
    // Data leaves now, as far as TCP small queues let it before any TX completion: the sample
    // gives a pacing rate (200% of 10 segments per 4 ms, 7.24 MB/s), whose 1/1024 s is a limit of
    // 7,070 bytes; with the SYN-ACK's 904 still counted (no TX completion here), a third buffer of
    // 2,344 passes it.
    let sent: Vec<Packet> = std::iter::from_fn(|| s.poll_transmit(ms(4))).collect();
    assert_eq!(sent.len(), 3, "TSQ's limit from the handshake's pacing rate");
    assert!(sent.iter().all(|p| p.kind == Kind::Data));
}

#[test]
fn a_syn_ack_sent_again_doubles_its_timeout_its_ack_samples_the_echo_and_after_two_cwnd_is_one() {
    // `reqsk_timer_handler`: 1 s, then 2 s (`tcp_reqsk_timeout`); `tcp_synack_rtt_meas` takes no
    // sample from a resent SYN-ACK's clock, `tcp_ack_update_rtt` the timestamp echo instead;
    // `tcp_init_transfer`: one segment after more than one retransmission.
    let (mut s, out) = handshaking();
    s.poll_transmit(SimTime::ZERO).expect("the SYN-ACK");
    let token =
        |out: &[Output]| out.iter().find_map(|o| if let Output::Timer { token, .. } = o { Some(*token) } else { None });
    let mut fired = Vec::new();
    s.on_timer(ms(1_000), token(&out).unwrap(), &mut fired);
    let again = s.poll_transmit(ms(1_000)).expect("sent again");
    assert!(again.kind == Kind::Handshake && again.retransmit());
    let next = fired.iter().find_map(|o| if let Output::Timer { at, .. } = o { Some(*at) } else { None });
    assert_eq!(next, Some(ms(3_000)), "2 s after the first retransmission");
    let mut fired2 = Vec::new();
    s.on_timer(ms(3_000), token(&fired).unwrap(), &mut fired2);
    s.poll_transmit(ms(3_000)).expect("sent a third time");
    // The ACK of the last SYN-ACK arrives 6 ms after it, echoing its timestamp.
    s.on_packet(ms(3_006), ack_with(0, &[], ts_of(ms(3_000)), ms(3_006)), &mut Vec::new());
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!(c.srtt(), Some(ms(6)), "the echo's 6 ticks");
    assert_eq!(c.w.cwnd, 1);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(ms(3_006))).count(), 1, "a window of one");
}

#[test]
fn without_a_sample_the_rto_falls_back_to_three_seconds() {
    // `tcp_init_metrics`: no RTT from the handshake (resent, no echo) → TCP_TIMEOUT_FALLBACK.
    let (mut s, out) = handshaking();
    s.poll_transmit(SimTime::ZERO);
    let token = out.iter().find_map(|o| if let Output::Timer { token, .. } = o { Some(*token) } else { None });
    s.on_timer(ms(1_000), token.unwrap(), &mut Vec::new());
    s.poll_transmit(ms(1_000));
    s.on_packet(ms(1_004), ack_with(0, &[], 0, ms(1_004)), &mut Vec::new());
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!((c.srtt(), c.rto), (None, ms(3_000)));
    assert_eq!(c.w.cwnd, 10, "one retransmission keeps the initial window");
}

/// A connection with `out` segments in flight (none SACKed or lost), cwnd `cwnd`, ssthresh 10,
/// reducing its window as `reduction` does.
fn reducing(reduction: Reduction, cwnd: u32, out: u32) -> (TcpSender, Conn) {
    let (mut s, mut c) = conn(cwnd, 1_000, 1_000);
    s.config.era.reduction = reduction;
    (c.w.ssthresh, c.w.cwnd_cnt, c.snd_nxt) = (10, 0, out);
    (s, c)
}

#[test]
fn rate_halving_takes_a_segment_off_every_second_ack_that_shows_progress() {
    // 2.6.32's `tcp_cwnd_down`: `decr = snd_cwnd_cnt + 1; snd_cwnd_cnt = decr & 1; decr >>= 1`,
    // only on an ACK with FLAG_ANY_PROGRESS or a D-SACK; 40 in flight keep the cap away.
    let (_, mut c) = reducing(Reduction::RateHalving, 20, 40);
    let path: Vec<u32> = [true, true, false, true, true, true]
        .into_iter()
        .map(|progress| {
            c.cwnd_down(progress);
            c.w.cwnd
        })
        .collect();
    assert_eq!(path, [20, 19, 19, 19, 18, 18], "an ACK without progress counts for nothing");
}

#[test]
fn rate_halving_stops_at_ssthresh_or_renos_half_of_it_but_caps_at_the_flight_plus_one() {
    // `tcp_cwnd_min`: ssthresh (CUBIC has no `min_cwnd`), Reno's `tcp_reno_min_cwnd` half of it.
    let (_, mut c) = reducing(Reduction::RateHalving, 10, 40);
    (0..4).for_each(|_| c.cwnd_down(true));
    assert_eq!(c.w.cwnd, 10, "at ssthresh: no more steps down");
    c.cc = Box::new(cc::newreno::NewReno);
    (0..4).for_each(|_| c.cwnd_down(true));
    assert_eq!(c.w.cwnd, 8, "Reno steps on below ssthresh, to 5");
    // `snd_cwnd = min(snd_cwnd, tcp_packets_in_flight(tp) + 1)` on every ACK with progress,
    // below the floor too; an ACK without progress leaves the window as it is.
    let (_, mut c) = reducing(Reduction::RateHalving, 20, 6);
    c.cwnd_down(false);
    assert_eq!(c.w.cwnd, 20);
    c.cwnd_down(true);
    assert_eq!(c.w.cwnd, 7, "6 in flight + 1, below ssthresh (10)");
}

#[test]
fn rate_halvings_end_keeps_a_window_below_ssthresh_where_prr_sets_ssthresh() {
    // 2.6.32's `tcp_complete_cwr`: `snd_cwnd = min(snd_cwnd, snd_ssthresh)`; today's
    // `tcp_end_cwnd_reduction`: `snd_cwnd = snd_ssthresh` (with an undo marker).
    for (reduction, cwnd, end) in [
        (Reduction::RateHalving, 14, 10),
        (Reduction::RateHalving, 7, 7),
        (Reduction::Prr, 14, 10),
        (Reduction::Prr, 7, 10),
    ] {
        let (s, mut c) = reducing(reduction, cwnd, 40);
        c.rp_mut().undo_marker = Some(0);
        c.end_cwnd_reduction(&s.config);
        assert_eq!(c.w.cwnd, end, "{reduction:?} from {cwnd}");
    }
    // 2.6.32's `tcp_enter_cwr` starts CWR at the flight plus one; PRR starts from the window.
    for (reduction, cwnd) in [(Reduction::RateHalving, 13), (Reduction::Prr, 20)] {
        let (s, mut c) = reducing(reduction, 20, 12);
        c.enter_cwr(&s.config);
        assert_eq!((c.state, c.w.cwnd), (CaState::Cwr, cwnd), "{reduction:?}");
    }
}

/// 20 segments sent at 0 by a connection without RACK (dupthresh) in congestion avoidance at
/// cwnd 20, reducing its window as `reduction` does, then SACKs of 1 to 14 one at a time (0 is
/// lost; the first two let two new segments out); the window after each ACK from the one that
/// starts Recovery (3 SACKed) on, and after what it let out.
fn recovery_path(reduction: Reduction) -> Vec<u32> {
    let (mut s, _) = conn(10, 1_000, 1_000);
    (s.config.gso, s.config.loss, s.config.era.reduction) = (false, LossDetection::Scoreboard, reduction);
    s.open_established(SimTime::ZERO, 0, 100 * 1448, &mut Vec::new());
    let c = s.conns[0].as_mut().unwrap();
    (c.w.cwnd, c.w.ssthresh) = (20, 20);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count(), 20);
    let c = s.conns[0].as_mut().unwrap();
    (c.wmem, c.snd_wnd) = (0, 1000);
    c.rtt_sample(&s.config, ms(20), ms(20));
    let mut path = Vec::new();
    for k in 1..=14 {
        let t = ms(20 + u64::from(k));
        s.on_packet(t, ack_with(0, &[(1, k + 1)], 0, t), &mut Vec::new());
        std::iter::from_fn(|| s.poll_transmit(t)).for_each(drop);
        let c = s.conns[0].as_mut().unwrap();
        c.wmem = 0; // off the host at once: TCP small queues hold nothing back
        if c.state == CaState::Recovery {
            assert_eq!(c.w.ssthresh, 20 * 717 / 1024, "CUBIC's ssthresh");
            path.push(c.w.cwnd);
        }
    }
    path
}

#[test]
fn rate_halving_brings_the_window_down_a_segment_every_second_ack_where_prr_follows_the_deliveries() {
    // Rate halving (2.6.32): at the entry the cap lets the retransmission out (18 in flight + 1),
    // then one step down every second ACK, one segment sent per two ACKs, until ssthresh (14);
    // from there one per ACK.
    let halving = recovery_path(Reduction::RateHalving);
    assert_eq!(halving, [19, 18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 14]);
    let prr = recovery_path(Reduction::Prr);
    assert_eq!(prr.len(), halving.len());
    assert_ne!(prr, halving, "PRR sends ssthresh/prior_cwnd of each delivery: a different path");
}

#[test]
fn before_3_2_a_dubious_ack_caps_the_window_at_the_flight_plus_the_reordering_degree() {
    // 2.6.32's `tcp_try_to_open` → `tcp_moderate_cwnd`: `snd_cwnd = min(snd_cwnd,
    // tcp_packets_in_flight(tp) + tcp_max_burst(tp))`, `tcp_max_burst` being `tp->reordering`.
    // An application-limited connection: cwnd 40, 20 segments out.
    let run = |reduction: Reduction| {
        let (mut s, _) = conn(10, 1_000, 1_000);
        (s.config.gso, s.config.loss, s.config.era.reduction) = (false, LossDetection::Scoreboard, reduction);
        s.config.era.moderates_cwnd = reduction == Reduction::RateHalving;
        s.open_established(SimTime::ZERO, 0, 20 * 1448, &mut Vec::new());
        s.conns[0].as_mut().unwrap().w.cwnd = 40;
        assert_eq!(std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count(), 20);
        let c = s.conns[0].as_mut().unwrap();
        (c.wmem, c.snd_wnd) = (0, 1000);
        // In Open an ACK that only moves snd_una on is not dubious: nothing is capped.
        s.on_packet(ms(1), ack_with(2, &[], 0, ms(1)), &mut Vec::new());
        let before = s.conns[0].as_ref().unwrap().w.cwnd;
        // A SACK is (FLAG_DATA_SACKED): Disorder, 17 in flight.
        s.on_packet(ms(2), ack_with(2, &[(3, 4)], 0, ms(2)), &mut Vec::new());
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.in_flight()), (CaState::Disorder, 17));
        (before, c.w.cwnd)
    };
    assert_eq!(run(Reduction::RateHalving), (40, 17 + 3));
    assert_eq!(run(Reduction::Prr), (40, 40));
}

#[test]
fn only_a_control_that_samples_rates_and_paces_carries_their_state() {
    // Issue 40: a flow's weight. CUBIC's and Reno's connections hold no rate sampling or pacing
    // state (8 bytes each for its absent box); BBR's holds both from the start.
    let (mut s, c) = conn(10, 1_000, 1_000);
    assert!(c.rates.is_none() && c.pacing.is_none(), "cubic");
    for (cc, boxed) in [("reno", false), ("bbr", true)] {
        s.config.cc = cc.to_string();
        let c = s.new_conn(0, 1 << 20, SimTime::ZERO);
        assert_eq!((c.rates.is_some(), c.pacing.is_some()), (boxed, boxed), "{cc}");
    }
}

#[test]
fn a_clean_window_makes_no_repairs_box_and_a_recovery_makes_it() {
    // Issue 40: a flow's weight. A window ACKed in order leaves the repairs' state unmade (every
    // read of it the initial values); entering recovery makes it, with the undo marker at snd_una.
    let mut s = sent_window_with_rtt(SimTime(1_000_000));
    let t = SimTime(5_000_000);
    s.on_packet(t, ack_with(2, &[], 0, t), &mut Vec::new());
    let c = s.conns[0].as_ref().unwrap();
    assert!(c.repair.is_none(), "a clean ACK");
    assert_eq!((c.rp().undo_marker, c.rp().undo_retrans, c.rp().prior_cwnd), (None, -1, 0));
    let cwnd = c.w.cwnd;
    s.on_packet(t, ack_with(2, &[(5, 10)], 0, t), &mut Vec::new());
    let c = s.conns[0].as_ref().unwrap();
    assert_eq!(c.state, CaState::Recovery);
    assert_eq!((c.repair.as_ref().map(|r| r.undo_marker), c.rp().prior_cwnd), (Some(Some(2)), cwnd));
}
