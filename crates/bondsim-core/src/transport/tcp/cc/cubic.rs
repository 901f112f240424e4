//! CUBIC (RFC 9438) with HyStart, as Linux's `net/ipv4/tcp_cubic.c` (the
//! default congestion control since 2.6.19), rule for rule and in Linux's
//! fixed-point units, with Linux's defaults (module parameters):
//! `beta = 717` (/1024, β ≈ 0.7), `bic_scale = 41` (/1024 → C ≈ 0.4),
//! `fast_convergence = 1`, `tcp_friendliness = 1`, `initial_ssthresh = 0`,
//! `hystart = 1` with `hystart_detect = ACK_TRAIN | DELAY`,
//! `hystart_low_window = 16`, `hystart_ack_delta_us = 2000`.
//!
//! Time: the CUBIC epoch runs on `tcp_jiffies32` (`HZ = 1000`, starting at
//! Linux's `INITIAL_JIFFIES`, 300 s before wrap), HyStart on the microsecond
//! clock `bictcp_clock_us()` (`tcp_mstamp`); both are 32-bit and compared
//! with wrapping arithmetic as Linux does. RTT samples come in microseconds.
//!
//! What the model cannot show Linux, and the rule used instead:
//! * `hystart_ack_delay()` derives a cushion from `sk_pacing_rate`, which Linux
//!   always computes (`tcp_update_pacing_rate`, 2·cwnd·mss/srtt in slow start)
//!   even when nothing paces: min(1 ms, 4·gso_max_size/rate), with the 64 KB
//!   `gso_max_size` of Linux's software GSO (on whatever the model's `gso`), so
//!   1 ms below ~260 MB/s. The rate is the one the sender holds when the ACK
//!   comes ([`Window::pacing_rate`]).
//! * `sk_pacing_status` is `SK_PACING_NONE` (CUBIC does not ask for pacing;
//!   no `fq` qdisc is modelled), so the ACK-train threshold is halved.
//! * `pr_debug` and the `LINUX_MIB_TCPHYSTART*` counters are not kept.

use super::{AckSample, CaEvent, CaState, CongestionControl, Window};
use crate::time::SimTime;

/// `BICTCP_BETA_SCALE`: β and the fast-convergence factor are /1024.
const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: the cubic function's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// `CONFIG_HZ`: jiffies per second (1000, the usual desktop/server setting).
const HZ: u32 = 1000;
/// `INITIAL_JIFFIES` (`include/linux/jiffies.h`): `(u32)(-300 * HZ)`.
const INITIAL_JIFFIES: u32 = (-300i64 * HZ as i64) as u32;

/// `sk_gso_max_size`: `GSO_LEGACY_MAX_SIZE` (64 KB), what a socket's route offers.
const GSO_MAX_SIZE: u64 = 65_536;

/// `HYSTART_ACK_TRAIN`, `HYSTART_DELAY`: the two detection methods.
const HYSTART_ACK_TRAIN: u32 = 0x1;
const HYSTART_DELAY: u32 = 0x2;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX`, in µs.
const HYSTART_DELAY_MIN: u32 = 4000;
const HYSTART_DELAY_MAX: u32 = 16000;

/// Module parameters at their defaults.
const FAST_CONVERGENCE: bool = true;
const BETA: u32 = 717;
const BIC_SCALE: u32 = 41;
const TCP_FRIENDLINESS: bool = true;
const HYSTART_DETECT: u32 = HYSTART_ACK_TRAIN | HYSTART_DELAY;
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA_US: i32 = 2000;

/// `cubictcp_register`: `beta_scale = 8·(1024 + β)/3/(1024 − β)` (= 15), the
/// Reno-friendly estimate's ACKs per segment ×8 (RFC 9438 §4.3's
/// α = 3(1 − β)/(1 + β), as 8/15).
const BETA_SCALE: u32 = 8 * (BICTCP_BETA_SCALE + BETA) / 3 / (BICTCP_BETA_SCALE - BETA);
/// `cubictcp_register`: `cube_rtt_scale = bic_scale · 10` (= 410, C·2^10).
const CUBE_RTT_SCALE: u32 = BIC_SCALE * 10;
/// `cubictcp_register`: `cube_factor = 2^(10 + 3·BICTCP_HZ) / (bic_scale · 10)`,
/// so that `cubic_root(cube_factor · ΔW)` is K in 2^-10 s.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE as u64 * 10);

/// `tcp_jiffies32` at `now`.
fn jiffies32(now: SimTime) -> u32 {
    INITIAL_JIFFIES.wrapping_add((now.0 / 1_000_000) as u32)
}

/// `bictcp_clock_us()`: `tcp_mstamp` (µs) truncated to 32 bits.
fn clock_us(now: SimTime) -> u32 {
    (now.0 / 1_000) as u32
}

/// `usecs_to_jiffies()` for `HZ` dividing 10^6: rounds up.
fn usecs_to_jiffies(us: u32) -> u32 {
    let per = 1_000_000 / HZ;
    u64::from(us).div_ceil(u64::from(per)) as u32
}

/// `fls64()`: 1-based index of the highest set bit, 0 for 0.
fn fls64(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// `cubic_root()`: Linux's cube root, a 64-entry table of cbrt(x << 18) − 1
/// (refined by hand by Willy Tarreau) for the top bits, then one
/// Newton-Raphson step; average error ~0.2 %.
fn cubic_root(a: u64) -> u32 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164, 168, 170, 173, 176,
        179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224,
        225, 227, 229, 231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = fls64(a);
    if b < 7 {
        // a in [0, 63]
        return (u32::from(V[a as usize]) + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((u32::from(V[shift]) + 10) << b) >> 6;
    // x' = (2x + a / x²) / 3, with x(x − 1) for x² and ·341/1024 for /3.
    let x = (2 * x).wrapping_add((a / (u64::from(x) * u64::from(x - 1))) as u32);
    x.wrapping_mul(341) >> 10
}

/// CUBIC with HyStart (Linux: `cubic`); the fields are `struct bictcp`.
#[derive(Debug, Clone)]
pub struct Cubic {
    /// The `hystart` module parameter (on by default).
    hystart: bool,
    /// Grow the window by one segment per `cnt` acked segments.
    cnt: u32,
    /// W_max: the window before the last reduction (after fast convergence).
    last_max_cwnd: u32,
    /// The window at the last `bictcp_update`.
    last_cwnd: u32,
    /// When `last_cwnd` was taken (jiffies).
    last_time: u32,
    /// The cubic function's plateau (W_max of the current epoch).
    bic_origin_point: u32,
    /// K, in 2^-10 s from the start of the epoch.
    bic_k: u32,
    /// The lowest RTT seen (µs); 0 before the first sample.
    delay_min: u32,
    /// Start of the congestion-avoidance epoch (jiffies); 0: none.
    epoch_start: u32,
    /// Segments acked since the Reno estimate last grew.
    ack_cnt: u32,
    /// W_est: the Reno-friendly window estimate (RFC 9438 §4.3).
    tcp_cwnd: u32,
    /// HyStart: RTT samples taken in this round.
    sample_cnt: u8,
    /// HyStart: the exit point was found (no more HyStart until reset).
    found: bool,
    /// HyStart: when this round started (µs).
    round_start: u32,
    /// HyStart: the round ends when `snd_una` passes this (`snd_nxt` at its start).
    end_seq: u64,
    /// HyStart: the last ACK of the current ACK train (µs).
    last_ack: u32,
    /// HyStart: the lowest RTT of this round (µs).
    curr_rtt: u32,
}

impl Default for Cubic {
    /// Linux's defaults, in the state `cubictcp_init` leaves at time 0 with
    /// nothing sent.
    fn default() -> Self {
        Cubic {
            hystart: true,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: u32::MAX,
        }
    }
}

impl Cubic {
    /// CUBIC with HyStart on or off (the `hystart` module parameter).
    pub fn with_hystart(hystart: bool) -> Self {
        Cubic { hystart, ..Cubic::default() }
    }

    /// `bictcp_reset`: clear everything before `unused` in `struct bictcp`
    /// (the CUBIC state, not HyStart's round), and `found`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = 0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset`: a new round starts now and ends when
    /// everything sent so far (`snd_nxt`) is acknowledged.
    fn hystart_reset(&mut self, w: &Window) {
        let now = clock_us(w.now);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = w.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: the ACKs per one-segment increase (`cnt`) that take
    /// the window to the cubic target one RTT ahead (RFC 9438 §4.2, §4.4,
    /// §4.5), or to the Reno-friendly estimate when that is larger (§4.3).
    fn update(&mut self, cwnd: u32, acked: u32, now: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);

        // Nothing changed and at most HZ/32 since the last update: keep cnt.
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }

        // The cubic part runs at most once per jiffy; a reduction clears
        // epoch_start, which forces it.
        if !(self.epoch_start != 0 && now == self.last_time) {
            self.cubic_cnt(cwnd, acked, now);
        }

        // `tcp_friendliness`: W_est grows by one segment per
        // cwnd·beta_scale/8 acked segments (α = 8/15 per RTT, RFC 9438
        // §4.3); if it is ahead of cwnd, grow at least as fast as reaching
        // it in one RTT. (Linux's `while (ack_cnt > delta)` loop, closed form.)
        if TCP_FRIENDLINESS {
            let delta = (cwnd.wrapping_mul(BETA_SCALE)) >> 3;
            if delta > 0 && self.ack_cnt > delta {
                let n = (self.ack_cnt - 1) / delta;
                self.ack_cnt -= n * delta;
                self.tcp_cwnd = self.tcp_cwnd.wrapping_add(n);
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }

        // At most one segment per two acked: ×1.5 per RTT (RFC 9438 §4.2's
        // target ≤ 1.5·cwnd).
        self.cnt = self.cnt.max(2);
    }

    /// The cubic part of `bictcp_update` (before its `tcp_friendliness:` label).
    fn cubic_cnt(&mut self, cwnd: u32, acked: u32, now: u32) {
        self.last_cwnd = cwnd;
        self.last_time = now;

        // First ACK of an epoch: its start, W_est = cwnd_epoch, and K, the
        // origin (RFC 9438 §4.2 Figure 2; after a timeout W_max is 0, so K = 0
        // and the origin is cwnd, §4.8).
        if self.epoch_start == 0 {
            self.epoch_start = now;
            self.ack_cnt = acked;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.bic_k = 0;
                self.bic_origin_point = cwnd;
            } else {
                self.bic_k = cubic_root(CUBE_FACTOR.wrapping_mul(u64::from(self.last_max_cwnd - cwnd)));
                self.bic_origin_point = self.last_max_cwnd;
            }
        }

        // t = time since the epoch plus delay_min (the target is W(t + RTT)),
        // in 2^-10 s.
        let mut t = i64::from(now.wrapping_sub(self.epoch_start) as i32) as u64;
        t = t.wrapping_add(u64::from(usecs_to_jiffies(self.delay_min)));
        t = (t << BICTCP_HZ) / u64::from(HZ);

        let k = u64::from(self.bic_k);
        let offs = t.abs_diff(k); // |t − K|

        // C·(t − K)³ in segments: 410·offs³ >> 40.
        let delta = (u64::from(CUBE_RTT_SCALE).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
            >> (10 + 3 * BICTCP_HZ)) as u32;
        let bic_target = if t < k {
            self.bic_origin_point.wrapping_sub(delta) // concave, below the origin
        } else {
            self.bic_origin_point.wrapping_add(delta) // convex, above it
        };

        // cwnd grows by (target − cwnd)/cwnd per acked segment (RFC 9438
        // §4.4/§4.5); at or above the target, very slowly.
        self.cnt = if bic_target > cwnd { cwnd / (bic_target - cwnd) } else { cwnd.wrapping_mul(100) };

        // No loss yet (W_max unknown): at least 5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// `hystart_ack_delay`: Linux's cushion for TSO/GRO, in µs, from `sk_pacing_rate`:
    /// `min(USEC_PER_MSEC, sk_gso_max_size * 4 * USEC_PER_SEC / rate)`, 0 without a rate.
    fn hystart_ack_delay(w: &Window) -> u32 {
        if w.pacing_rate == 0 {
            return 0;
        }
        (GSO_MAX_SIZE * 4 * 1_000_000 / w.pacing_rate).min(1_000) as u32
    }

    /// `hystart_update`: leave slow start (`ssthresh = cwnd`) when a round's
    /// ACK train lasts beyond delay_min/2, or its lowest RTT exceeds
    /// delay_min by clamp(delay_min/8, 4 ms, 16 ms).
    fn hystart_update(&mut self, w: &mut Window, delay: u32) {
        // A new round once snd_una passes the round's end (`after()`).
        if w.snd_una > self.end_seq {
            self.hystart_reset(w);
        }

        // HyStart only from hystart_low_window segments on.
        if w.cwnd < HYSTART_LOW_WINDOW {
            return;
        }

        if HYSTART_DETECT & HYSTART_ACK_TRAIN != 0 {
            let now = clock_us(w.now);
            // ACKs at most hystart_ack_delta_us apart continue the train.
            if (now.wrapping_sub(self.last_ack) as i32) <= HYSTART_ACK_DELTA_US {
                self.last_ack = now;
                let mut threshold = self.delay_min.wrapping_add(Self::hystart_ack_delay(w));
                // sk_pacing_status == SK_PACING_NONE: half of delay_min.
                threshold >>= 1;
                // Linux compares (s32) with u32 here, hence unsigned.
                if now.wrapping_sub(self.round_start) > threshold {
                    self.found = true;
                    w.ssthresh = w.cwnd;
                }
            }
        }

        if HYSTART_DETECT & HYSTART_DELAY != 0 {
            // The round's lowest RTT, judged after HYSTART_MIN_SAMPLES samples.
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if self.curr_rtt
                > self.delay_min.wrapping_add((self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX))
            {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init`: reset, and start a HyStart round. (`initial_ssthresh`
    /// is 0 by default, so ssthresh is left alone.)
    fn init(&mut self, w: &mut Window) {
        self.reset();
        if self.hystart {
            self.hystart_reset(w);
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch; W_max = cwnd, or with fast
    /// convergence cwnd·(1 + β)/2 when cwnd is below the last W_max (RFC 9438
    /// §4.7); ssthresh = max(cwnd·β, 2) (§4.6, Linux uses cwnd, not flight size).
    fn ssthresh(&mut self, w: &Window) -> u32 {
        self.epoch_start = 0;
        if w.cwnd < self.last_max_cwnd && FAST_CONVERGENCE {
            self.last_max_cwnd = w.cwnd.wrapping_mul(BICTCP_BETA_SCALE + BETA) / (2 * BICTCP_BETA_SCALE);
        } else {
            self.last_max_cwnd = w.cwnd;
        }
        (w.cwnd.wrapping_mul(BETA) / BICTCP_BETA_SCALE).max(2)
    }

    /// `cubictcp_cong_avoid`: only when cwnd-limited; slow start
    /// (`tcp_slow_start`) below ssthresh, the rest of the ACK by
    /// `tcp_cong_avoid_ai(tp, ca->cnt, acked)` after `bictcp_update`.
    fn cong_avoid(&mut self, w: &mut Window, acked: u32) {
        if !w.cwnd_limited {
            return;
        }
        let mut acked = acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(w.cwnd, acked, jiffies32(w.now));
        let cnt = self.cnt;
        w.cong_avoid_ai(cnt, acked);
    }

    /// `cubictcp_state`: entering Loss (a timeout) forgets everything,
    /// W_max included (RFC 9438 §4.8), and restarts HyStart's round.
    fn set_state(&mut self, w: &Window, state: CaState) {
        if state == CaState::Loss {
            self.reset();
            self.hystart_reset(w);
        }
    }

    /// `cubictcp_cwnd_event` (`cwnd_event_tx_start` in the newest kernels):
    /// after an idle period, shift the epoch by the idle time so the cubic
    /// curve does not count it (RFC 9438 §4.2, §5.8), never past now.
    fn cwnd_event(&mut self, w: &mut Window, event: CaEvent) {
        match event {
            CaEvent::Loss => {}
            CaEvent::TxStart => {
                let now = jiffies32(w.now);
                let delta = now.wrapping_sub(jiffies32(w.lsndtime)) as i32;
                if self.epoch_start != 0 && delta > 0 {
                    self.epoch_start = self.epoch_start.wrapping_add(delta as u32);
                    // after(epoch_start, now)
                    if (self.epoch_start.wrapping_sub(now) as i32) > 0 {
                        self.epoch_start = now;
                    }
                }
            }
        }
    }

    /// `cubictcp_acked`: track delay_min from each RTT sample (not within a
    /// second of an epoch's start, "right after fast recovery"), and run
    /// HyStart while in slow start until it has found its exit.
    fn pkts_acked(&mut self, w: &mut Window, sample: &AckSample) {
        // rtt_us < 0: no sample.
        let Some(rtt) = sample.rtt else {
            return;
        };
        if self.epoch_start != 0 && (jiffies32(w.now).wrapping_sub(self.epoch_start) as i32) < HZ as i32 {
            return;
        }
        let delay = u32::try_from(rtt.0 / 1_000).unwrap_or(u32::MAX).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && w.in_slow_start() && self.hystart {
            self.hystart_update(w, delay);
        }
    }

    /// `tcp_reno_undo_cwnd` (CUBIC has no undo of its own):
    /// `max(snd_cwnd, prior_cwnd)`.
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32 {
        w.cwnd.max(prior_cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn window(cwnd: u32, ssthresh: u32) -> Window {
        Window::new(cwnd, ssthresh)
    }

    /// A sender that keeps `cwnd` segments in flight and gets one ACK per
    /// segment, each carrying the same RTT sample.
    struct Flow {
        cc: Cubic,
        w: Window,
    }

    impl Flow {
        fn new(cc: Cubic, cwnd: u32, ssthresh: u32) -> Flow {
            let mut f = Flow { cc, w: window(cwnd, ssthresh) };
            f.cc.init(&mut f.w);
            f.w.snd_nxt = u64::from(cwnd);
            f
        }

        fn in_flight(&self) -> u64 {
            self.w.snd_nxt - self.w.snd_una
        }

        /// One ACK at `now` for the oldest segment: `pkts_acked` (with snd_una
        /// advanced), then `cong_avoid` if `grow`, then refill the window.
        fn ack(&mut self, now: u64, rtt: u64, grow: bool) {
            self.w.now = SimTime(now);
            self.w.snd_una += 1;
            let sample = AckSample { acked: 1, rtt: Some(SimTime(rtt)), in_flight: self.in_flight() as u32 + 1 };
            self.cc.pkts_acked(&mut self.w, &sample);
            if grow {
                self.cc.cong_avoid(&mut self.w, 1);
            }
            self.w.snd_nxt = self.w.snd_nxt.max(self.w.snd_una + u64::from(self.w.cwnd));
            self.w.lsndtime = self.w.now;
        }

        /// One round trip from `start`: the ACKs of what is in flight spread
        /// evenly over `rtt` (a full pipe). Returns the round's end.
        fn round_spread(&mut self, start: u64, rtt: u64) -> u64 {
            let n = self.in_flight();
            for i in 1..=n {
                self.ack(start + rtt * i / n, rtt, true);
            }
            start + rtt
        }

        /// One round of slow start from `start`: the ACKs come back in a burst
        /// `gap` apart, `rtt` after the round was sent. Returns the next
        /// round's start.
        fn round_burst(&mut self, start: u64, rtt: u64, gap: u64) -> u64 {
            let n = self.in_flight();
            for i in 0..n {
                self.ack(start + rtt + i * gap, rtt, true);
            }
            start + rtt
        }
    }

    #[test]
    fn loss_at_100_segments_sets_ssthresh_70() {
        let mut cc = Cubic::default();
        let w = window(100, u32::MAX);
        // β = 717/1024, floored: 100·717 = 71700, /1024 = 70.02.
        assert_eq!(cc.ssthresh(&w), 71_700 / 1024);
        assert_eq!(cc.ssthresh(&w), 70);
        // The first loss remembers W_max = cwnd.
        assert_eq!(cc.last_max_cwnd, 100);
        // Floor of two segments.
        assert_eq!(cc.ssthresh(&window(2, u32::MAX)), 2);
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_the_previous_maximum() {
        let mut cc = Cubic::default();
        cc.ssthresh(&window(100, u32::MAX));
        assert_eq!(cc.last_max_cwnd, 100);
        // A second loss at 80 < 100: W_max = 80·(1 + β)/2 = 80·1741/2048 = 68.
        let ss = cc.ssthresh(&window(80, u32::MAX));
        assert_eq!(cc.last_max_cwnd, 80 * (1024 + 717) / 2048);
        assert_eq!(cc.last_max_cwnd, 68);
        assert_eq!(ss, 80 * 717 / 1024);
        // A loss above the last W_max just remembers cwnd.
        cc.ssthresh(&window(90, u32::MAX));
        assert_eq!(cc.last_max_cwnd, 90);
    }

    #[test]
    fn window_follows_the_cubic_curve_through_concave_plateau_and_convex() {
        // W_max = 1000 with a 100 ms RTT: the cubic term dominates the
        // Reno-friendly estimate (≈ 700 + 0.53 per RTT) for all of this run.
        let rtt = 100 * MS;
        let mut f = Flow::new(Cubic::default(), 1000, u32::MAX);
        let ss = f.cc.ssthresh(&f.w);
        f.w.cwnd = ss;
        f.w.ssthresh = ss;
        f.w.snd_nxt = f.w.snd_una + u64::from(ss);

        // RFC 9438 Figures 1 and 2 with C = 0.4, β = 0.7.
        let (c, beta, w_max) = (0.4_f64, 0.7_f64, 1000.0_f64);
        let k = (w_max * (1.0 - beta) / c).cbrt();
        let w_cubic = |t: f64| c * (t - k).powi(3) + w_max;

        // The epoch starts with the first ACK, at the first round's first ACK.
        let epoch = rtt / u64::from(ss);
        let checks = [1.0, 2.0, 4.0, 6.0, k, 11.0, 13.0, 15.0, 16.0];
        let mut next = 0;
        let mut start = 0;
        while next < checks.len() {
            start = f.round_spread(start, rtt);
            let t = (start - epoch) as f64 / 1e9;
            if t >= checks[next] {
                let want = w_cubic(t);
                let got = f64::from(f.w.cwnd);
                // Linux's C = 410/1024, K from its table-driven cube root, and
                // the one-RTT lag of cwnd behind W(t + RTT) stay within this.
                assert!((got - want).abs() <= 3.0, "t = {t:.2} s: cwnd {got}, W(t) = {want:.1}");
                next += 1;
            }
        }
    }

    #[test]
    fn reno_friendly_region_dominates_small_windows_with_short_rtts() {
        // W_max = 40, RTT 2 ms: after 1 s the cubic curve is still below
        // W_max (K = cbrt(40·0.3/0.4) ≈ 3.1 s), the Reno estimate is far above.
        let rtt = 2 * MS;
        let mut f = Flow::new(Cubic::default(), 40, u32::MAX);
        let ss = f.cc.ssthresh(&f.w);
        f.w.cwnd = ss;
        f.w.ssthresh = ss;
        f.w.snd_nxt = f.w.snd_una + u64::from(ss);

        let rounds = 500;
        let mut start = 0;
        for _ in 0..rounds {
            start = f.round_spread(start, rtt);
        }
        let (c, beta) = (0.4_f64, 0.7_f64);
        let k = (40.0 * (1.0 - beta) / c).cbrt();
        let t = start as f64 / 1e9;
        let w_cubic = c * (t - k).powi(3) + 40.0;
        // RFC 9438 §4.3: W_est grows by α = 3(1 − β)/(1 + β) per RTT.
        let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
        let w_est = f64::from(ss) + alpha * f64::from(rounds);
        let got = f64::from(f.w.cwnd);
        assert!(w_cubic < 40.0 && got > 4.0 * w_cubic, "cwnd {got}, W_cubic {w_cubic:.1}");
        assert!((got - w_est).abs() <= 0.03 * w_est, "cwnd {got}, W_est {w_est:.1}");
    }

    #[test]
    fn without_a_loss_the_window_grows_at_least_five_percent_per_rtt() {
        // Congestion avoidance with W_max unknown (HyStart's exit): cnt ≤ 20.
        let rtt = 100 * MS;
        let mut f = Flow::new(Cubic::with_hystart(false), 200, 200);
        let mut start = 0;
        for _ in 0..3 {
            start = f.round_spread(start, rtt);
        }
        // 200 → 210 → 220.5 → 231.5 at 1/20 per acked segment.
        let want = 200.0 * 1.05_f64.powi(3);
        assert!((f64::from(f.w.cwnd) - want).abs() <= 3.0, "cwnd {}", f.w.cwnd);
    }

    #[test]
    fn growth_is_capped_at_one_segment_per_two_acked() {
        // Far into the convex region the target is huge; cnt floors at 2.
        let mut f = Flow::new(Cubic::with_hystart(false), 100, 100);
        f.cc.last_max_cwnd = 100;
        f.cc.epoch_start = jiffies32(SimTime::ZERO);
        f.cc.bic_origin_point = 100;
        f.cc.bic_k = 0;
        let start = 30_000 * MS;
        for i in 0..100 {
            f.ack(start + i * MS, 100 * MS, true);
        }
        assert_eq!(f.w.cwnd, 150);
    }

    /// Slow start from 10 segments, ACKs in bursts 50 µs apart, with the
    /// given RTT per round.
    fn slow_start(cc: Cubic, rtts_ms: &[u64]) -> Flow {
        let mut f = Flow::new(cc, 10, u32::MAX);
        let mut start = 0;
        for &r in rtts_ms {
            start = f.round_burst(start, r * MS, 50_000);
        }
        f
    }

    #[test]
    fn hystart_delay_ends_slow_start_when_rtt_rises_past_the_threshold() {
        // delay_min = 40 ms: threshold clamp(40/8 = 5 ms, 4, 16) = 5 ms. In the
        // third round (cwnd 40 at its start) the RTT is 46 ms; the test runs on
        // the 9th sample, when cwnd has grown by 8.
        let f = slow_start(Cubic::default(), &[40, 40, 46, 46]);
        assert_eq!(f.w.ssthresh, 10 * 2 * 2 + 8);
        assert!(f.cc.found);
    }

    #[test]
    fn hystart_delay_keeps_slow_start_when_rtt_is_flat_or_rises_less() {
        let f = slow_start(Cubic::default(), &[40, 40, 40, 40, 40]);
        assert_eq!(f.w.ssthresh, u32::MAX);
        assert_eq!(f.w.cwnd, 10 << 5);
        // +4 ms < 5 ms threshold.
        let f = slow_start(Cubic::default(), &[40, 40, 44, 44, 44]);
        assert_eq!(f.w.ssthresh, u32::MAX);
    }

    #[test]
    fn hystart_off_keeps_slow_start_when_rtt_rises() {
        let f = slow_start(Cubic::with_hystart(false), &[40, 40, 46, 46]);
        assert_eq!(f.w.ssthresh, u32::MAX);
        assert_eq!(f.w.cwnd, 10 << 4);
    }

    /// A fixed window (no growth) acked twice over: `cwnd` ACKs at 40 ms RTT,
    /// then `cwnd` at 100 ms, 50 µs apart.
    fn rtt_jump_at_fixed_window(cwnd: u32) -> Window {
        let mut f = Flow::new(Cubic::default(), cwnd, u32::MAX);
        for round in 0..2u64 {
            let rtt = if round == 0 { 40 * MS } else { 100 * MS };
            for i in 0..u64::from(cwnd) {
                f.ack(round * 200 * MS + i * 50_000, rtt, false);
            }
        }
        f.w
    }

    #[test]
    fn hystart_does_nothing_below_16_segments() {
        assert_eq!(rtt_jump_at_fixed_window(15).ssthresh, u32::MAX);
        assert_eq!(rtt_jump_at_fixed_window(16).ssthresh, 16);
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_past_half_the_minimum_rtt() {
        // 32 segments acked 1 ms apart (a full pipe), RTT 40 ms: the train is
        // longer than 40/2 = 20 ms at the ACK 21 ms after the round's first.
        let mut f = Flow::new(Cubic::default(), 32, u32::MAX);
        for i in 0..32u64 {
            f.ack(i * MS, 40 * MS, false);
            let want = if i * 1000 > 40_000 / 2 { 32 } else { u32::MAX };
            assert_eq!(f.w.ssthresh, want, "ACK {i}");
        }
    }

    #[test]
    fn hystart_ack_train_allows_the_pacing_rates_offload_cushion() {
        // A LAN: RTT 60 µs, ACKs 10 µs apart. With a pacing rate of 524.288 MB/s the cushion is
        // 4 · 64 KB / rate = 500 µs: the train must outlast (60 + 500) / 2 = 280 µs; without a
        // rate (none yet) half of 60 µs is enough.
        for (rate, last_in_slow_start) in [(524_288_000, 28u64), (0, 3)] {
            let mut f = Flow::new(Cubic::default(), 32, u32::MAX);
            f.w.pacing_rate = rate;
            for i in 0..32u64 {
                f.ack(i * 10_000, 60_000, false);
                let want = if i <= last_in_slow_start { u32::MAX } else { 32 };
                assert_eq!(f.w.ssthresh, want, "rate {rate}, ACK {i}");
            }
        }
    }

    #[test]
    fn delay_min_ignores_samples_in_the_first_second_of_an_epoch() {
        let mut f = Flow::new(Cubic::with_hystart(false), 20, 10);
        f.ack(0, 50 * MS, true); // epoch starts here (after the sample)
        assert_eq!(f.cc.delay_min, 50_000);
        f.ack(500 * MS, 30 * MS, true);
        assert_eq!(f.cc.delay_min, 50_000);
        f.ack(1_000 * MS, 30 * MS, true);
        assert_eq!(f.cc.delay_min, 30_000);
    }

    #[test]
    fn timeout_forgets_w_max_and_restarts_hystart() {
        let mut cc = Cubic::default();
        let mut w = window(100, u32::MAX);
        cc.ssthresh(&w);
        cc.delay_min = 10_000;
        cc.found = true;
        w.snd_nxt = 123;
        w.now = SimTime(5_000 * MS);
        cc.set_state(&w, CaState::Loss);
        assert_eq!((cc.last_max_cwnd, cc.delay_min, cc.epoch_start), (0, 0, 0));
        assert!(!cc.found);
        assert_eq!((cc.end_seq, cc.round_start, cc.curr_rtt), (123, 5_000_000, u32::MAX));
        // Other states leave it alone.
        cc.last_max_cwnd = 7;
        cc.set_state(&w, CaState::Recovery);
        assert_eq!(cc.last_max_cwnd, 7);
    }

    #[test]
    fn idle_time_shifts_the_epoch_but_not_past_now() {
        let mut cc = Cubic::default();
        let mut w = window(100, 50);
        cc.epoch_start = jiffies32(SimTime(1_000 * MS));
        w.lsndtime = SimTime(2_500 * MS);
        w.now = SimTime(3_000 * MS);
        cc.cwnd_event(&mut w, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, jiffies32(SimTime(1_500 * MS)));
        // An epoch that began 100 ms ago, idle 500 ms: clamped to now.
        cc.epoch_start = jiffies32(SimTime(2_900 * MS));
        cc.cwnd_event(&mut w, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, jiffies32(w.now));
        // No epoch: nothing to shift.
        cc.epoch_start = 0;
        cc.cwnd_event(&mut w, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, 0);
    }

    #[test]
    fn undo_returns_the_larger_of_cwnd_and_prior_cwnd() {
        let mut cc = Cubic::default();
        assert_eq!(cc.undo_cwnd(&window(70, 70), 100), 100);
        assert_eq!(cc.undo_cwnd(&window(120, 70), 100), 120);
    }

    #[test]
    fn cubic_root_is_within_a_percent() {
        for a in (1u64..2000).chain((10..60).map(|s| (1u64 << s) + 12_345)) {
            let want = (a as f64).cbrt();
            let got = f64::from(cubic_root(a));
            assert!((got - want).abs() <= 0.01 * want + 1.0, "cbrt({a}) = {got}, want {want}");
        }
    }

    #[test]
    fn constants_are_linuxs() {
        assert_eq!(BETA_SCALE, 15);
        assert_eq!(CUBE_RTT_SCALE, 410);
        assert_eq!(CUBE_FACTOR, (1u64 << 40) / 410);
        assert_eq!(INITIAL_JIFFIES, 0u32.wrapping_sub(300_000));
        assert_eq!(usecs_to_jiffies(100_001), 101);
    }

    #[test]
    fn registry_builds_cubic_first() {
        assert_eq!(super::super::NAMES[0], "cubic");
        assert_eq!(super::super::build("cubic", true).unwrap().name(), "cubic");
    }
}
