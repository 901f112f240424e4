//! BBR v1 (Bottleneck Bandwidth and RTT), as Linux 6.x's `net/ipv4/tcp_bbr.c`, function by
//! function and in its fixed point (`BBR_SCALE` 8 for gains, `BW_SCALE` 24 for bandwidths in
//! segments per µs), with its defaults. Read from the 6.x text (`tcp_snd_cwnd()`,
//! `get_random_u32_below()`, `GSO_LEGACY_MAX_SIZE`, the two-argument `bbr_main` of 6.4-6.9:
//! 6.10 only adds unused `ack`/`flag` arguments), checked against torvalds/linux's
//! `tcp_bbr.c` at 02dc96ef (5.x: the same rules, but `rtt_us <= min_rtt_us` before the 2020
//! change to `<`).
//!
//! On each ACK (`bbr_main`, the `cong_control` op) BBR updates its model of the path — the
//! windowed maximum delivery rate over 10 packet-timed rounds (`minmax_running_max`,
//! lib/win_minmax.c) and the minimum RTT over 10 s — and sets the pacing rate to `pacing_gain` ×
//! bandwidth (less 1%) and the window to `cwnd_gain` × BDP plus allowances. Its modes: STARTUP
//! (gain 2/ln 2) until the bandwidth stops growing by 25% for 3 rounds, DRAIN (gain ln 2 / 2)
//! until what is in flight falls to one BDP, PROBE_BW cycling 8 phases of pacing gain (5/4, 3/4,
//! then 1 six times, starting at a random phase other than 3/4), and PROBE_RTT (window of 4 for
//! 200 ms and a round) when the minimum RTT was not refreshed for 10 s. A long-term bandwidth
//! (`lt_bw`) replaces the filter's when two lossy intervals deliver at the same rate (a policer).
//!
//! What the model cannot show BBR, and the rule used instead:
//! * `tp->lost`: the model keeps no count of segments ever marked lost; BBR sums each ACK's
//!   `rs->losses` ([`RateSample::losses`], the marks of that ACK). A retransmission timeout's
//!   marks (`tcp_enter_loss` → `tcp_mark_skb_lost`) are missing from it, which only the
//!   long-term (policer) sampler reads.
//! * `rs->is_ack_delayed` (`FLAG_ACK_MAYBE_DELAYED`) is false: Linux sets it only for an ACK of a
//!   single runt segment (less than an MSS), and the model's segments are full-sized.
//! * The random start phase of PROBE_BW (`get_random_u32_below(bbr_cycle_rand)`): no seeded rng
//!   reaches a congestion control, so each connection draws from its own SplitMix64 seeded by the
//!   time it opened (deterministic: the same scenario and seed draw the same phases).
//! * `bbr_init` paces from the handshake's RTT sample (`sender/handshake.rs`: the control is
//!   initialised after it, as `tcp_init_transfer` does); a connection without one (a ping-pong's
//!   stream, a handshake whose resent SYN-ACK gave no sample) from the nominal 1 ms until the first
//!   ACK's, as Linux does.
//! * `bbr_tso_segs_goal` is Linux's (it reads only the pacing rate and the MSS), with
//!   `sk_pacing_shift` 10 and `MAX_TCP_HEADER` 320 (x86-64 with tunnels and Hyper-V: 128 +
//!   `MAX_HEADER` 176, cache-aligned); the header only matters above about 530 Mbit/s.
//! * Time: `tcp_jiffies32` at `HZ` = 1000 from `INITIAL_JIFFIES`, as CUBIC's; µs stamps are the
//!   model's nanoseconds truncated; `sk_max_pacing_rate` is unlimited.
//! * `bbr_get_info` (diagnostics) and `bbr_sndbuf_expand` (the model's send buffer is not
//!   autotuned) are not kept; [`Bbr::mode`] and the other accessors show the state.

use super::{CaEvent, CaState, CongestionControl, RateSample, Window};
use crate::time::SimTime;

/// `BW_SCALE`: bandwidths are segments per µs << 24.
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// `BBR_SCALE`: gains and fractions are /256.
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// `CYCLE_LEN`: phases in a pacing-gain cycle.
const CYCLE_LEN: u32 = 8;
/// `bbr_bw_rtts`: the bandwidth filter's window, in rounds.
const BBR_BW_RTTS: u32 = CYCLE_LEN + 2;
/// `bbr_min_rtt_win_sec`: the min_rtt filter's window.
const BBR_MIN_RTT_WIN_SEC: u32 = 10;
/// `bbr_probe_rtt_mode_ms`: the least time at `bbr_cwnd_min_target` in PROBE_RTT.
const BBR_PROBE_RTT_MODE_MS: u32 = 200;
/// `bbr_min_tso_rate`: below it (bits/s) one segment per buffer.
const BBR_MIN_TSO_RATE: u64 = 1_200_000;
/// `bbr_pacing_margin_percent`: pace 1% below the estimated bandwidth.
const BBR_PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain`: 2/ln(2), STARTUP's pacing and window gain (739/256).
pub const BBR_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain`: 1/high_gain, DRAIN's pacing gain (88/256).
pub const BBR_DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: PROBE_BW's window gain.
pub const BBR_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`: PROBE_BW's cycle (probe, drain, cruise × 6).
pub const BBR_PACING_GAIN: [u32; CYCLE_LEN as usize] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// `bbr_cycle_rand`: the start phase is drawn over this many phases.
const BBR_CYCLE_RAND: u32 = 7;
/// `bbr_cwnd_min_target`: the least window (and PROBE_RTT's).
pub const BBR_CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh`: growth of 25% means more bandwidth may be available.
const BBR_FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`: rounds without that growth before the pipe is deemed full.
const BBR_FULL_BW_CNT: u32 = 3;
/// `bbr_lt_intvl_min_rtts`: the fewest rounds in a long-term sampling interval.
const BBR_LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh`: lost/delivered above 50/256 (20%) is lossy.
const BBR_LT_LOSS_THRESH: u32 = 50;
/// `bbr_lt_bw_ratio`: two intervals within 1/8 are consistent.
const BBR_LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// `bbr_lt_bw_diff`: or within 4 kbit/s (bytes/s here).
const BBR_LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`: rounds to use `lt_bw` once policing is suspected.
const BBR_LT_BW_MAX_RTTS: u32 = 48;
/// `bbr_extra_acked_gain`: the gain on the ACK-aggregation allowance.
const BBR_EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts`: the aggregation filter's window, in rounds.
const BBR_EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh`.
const BBR_ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`: the aggregation allowance is at most 100 ms of bandwidth.
const BBR_EXTRA_ACKED_MAX_US: u64 = 100 * 1000;

/// `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE` and `MAX_TCP_HEADER` (see the module's notes).
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
const MAX_TCP_HEADER: u64 = 320;
/// `sk_pacing_shift`'s default (`sk->sk_pacing_shift = 10`).
const SK_PACING_SHIFT: u32 = 10;
/// `CONFIG_HZ` and `INITIAL_JIFFIES` (as [`super::cubic`]'s).
const HZ: u32 = 1000;
const INITIAL_JIFFIES: u32 = (-300i64 * HZ as i64) as u32;

/// `tcp_jiffies32` at `now`.
fn jiffies32(now: SimTime) -> u32 {
    INITIAL_JIFFIES.wrapping_add((now.0 / 1_000_000) as u32)
}

/// `msecs_to_jiffies()` at `HZ` = 1000.
fn msecs_to_jiffies(ms: u32) -> u32 {
    ms * (HZ / 1000)
}

/// A µs stamp (`tcp_mstamp`, `delivered_mstamp`: `tcp_clock_us()`).
fn us(t: SimTime) -> u64 {
    t.0 / 1_000
}

/// `tcp_stamp_us_delta(t1, t0)`: `max_t(s64, t1 - t0, 0)` as u32.
fn stamp_us_delta(t1: u64, t0: u64) -> u32 {
    (t1.wrapping_sub(t0) as i64).max(0) as u32
}

/// `before(seq1, seq2)` and `after()`: wrapping 32-bit comparisons.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
fn after(a: u32, b: u32) -> bool {
    before(b, a)
}

/// The order of `enum tcp_ca_state` (BBR compares states: `prev_ca_state < TCP_CA_Recovery`).
fn ca_rank(s: CaState) -> u8 {
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

/// One sample of a windowed min/max tracker (`struct minmax_sample`, include/linux/win_minmax.h).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct MinmaxSample {
    t: u32,
    v: u32,
}

/// Kathleen Nichols' windowed max tracker (`struct minmax`, lib/win_minmax.c): the best, second
/// and third best samples of the window, as Linux keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Minmax {
    s: [MinmaxSample; 3],
}

impl Minmax {
    /// `minmax_get`.
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_reset`.
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        self.s = [MinmaxSample { t, v: meas }; 3];
        self.s[0].v
    }

    /// `minmax_subwin_update`: as time advances, update the 1st, 2nd and 3rd choices.
    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // Passed the entire window without a new val: the 2nd choice is the new one.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new val: a 2nd choice from the 2nd quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window without a new val: a 3rd choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_max`: a new sample `meas` at time `t` over a window of `win`.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas); // a new max, or nothing left in the window
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

/// BBR's modes (`enum bbr_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    #[default]
    Startup,
    /// Drain the queue STARTUP created.
    Drain,
    /// Discover and share bandwidth: pace around the estimate.
    ProbeBw,
    /// Cut what is in flight to the minimum to probe min_rtt.
    ProbeRtt,
}

impl Mode {
    /// The mode's name, as `ss -i` prints BBR's state (lowercase).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// The parts of `struct rate_sample` the long-term sampler reads (`bbr_set_state` builds one
/// with `.losses = 1` alone).
#[derive(Debug, Clone, Copy)]
struct LtSample {
    losses: u32,
    is_app_limited: bool,
}

/// BBR's congestion-control block (`struct bbr`), plus what the model gives it in place of
/// `tcp_sock` fields it lacks (see the module's notes).
#[derive(Debug, Clone)]
pub struct Bbr {
    /// `min_rtt_us` (`~0U` before a sample) and when it was taken (`min_rtt_stamp`, jiffies).
    min_rtt_us: u32,
    min_rtt_stamp: u32,
    /// `probe_rtt_done_stamp`: the end of PROBE_RTT (jiffies, 0 = not yet set).
    probe_rtt_done_stamp: u32,
    /// `bw`: the max recent delivery rate, segments/µs << 24.
    bw: Minmax,
    /// `rtt_cnt`: packet-timed rounds elapsed; `next_rtt_delivered`: `tp->delivered` ending the round.
    rtt_cnt: u32,
    next_rtt_delivered: u32,
    /// `cycle_mstamp`: when this cycle phase started (µs).
    cycle_mstamp: u64,
    mode: Mode,
    /// `prev_ca_state`: the congestion state on the previous ACK.
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    /// `lt_rtt_cnt` (7 bits): rounds in the long-term interval.
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    /// `lt_bw`: the long-term delivery rate, segments/µs << 24.
    lt_bw: u32,
    lt_last_delivered: u32,
    /// `lt_last_stamp`: `delivered_mstamp` in ms.
    lt_last_stamp: u32,
    lt_last_lost: u32,
    /// `pacing_gain` and `cwnd_gain` (10 bits each, /256).
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    /// `full_bw_cnt` (2 bits).
    full_bw_cnt: u32,
    /// `cycle_idx` (3 bits).
    cycle_idx: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: u64,
    extra_acked: [u16; 2],
    /// `ack_epoch_acked` (20 bits), `extra_acked_win_rtts` (5 bits), `extra_acked_win_idx`.
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// `icsk_ca_state` as the last `set_state` made it (BBR reads the connection's state).
    ca_state: CaState,
    /// `tp->lost` as the sum of the samples' losses (see the module's notes).
    lost: u32,
    /// The start-phase draw's generator (SplitMix64).
    rng: u64,
}

impl Default for Bbr {
    fn default() -> Bbr {
        Bbr {
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: Minmax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: 0,
            cwnd_gain: 0,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            ca_state: CaState::Open,
            lost: 0,
            rng: 0,
        }
    }
}

impl Bbr {
    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// `pacing_gain` and `cwnd_gain` (/256), as `bbr_get_info` reports them.
    pub fn gains(&self) -> (u32, u32) {
        (self.pacing_gain, self.cwnd_gain)
    }

    /// `bbr_bw()` in bytes per second (`bbr_get_info`'s `bbr_bw_lo/hi`: `bw · mss · 10^6 >> 24`).
    pub fn bw_bytes_per_sec(&self, mss: u32) -> u64 {
        u64::from(self.bw()).wrapping_mul(u64::from(mss)).wrapping_mul(1_000_000) >> BW_SCALE
    }

    /// `min_rtt_us` (`u32::MAX` before a sample).
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }

    /// `full_bw_reached`: STARTUP filled the pipe.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// `cycle_idx`: the PROBE_BW phase.
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }

    /// `get_random_u32_below(n)` from the connection's own generator (SplitMix64, then Linux's
    /// multiply-shift reduction).
    fn random_below(&mut self, n: u32) -> u32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((u64::from(z as u32) * u64::from(n)) >> 32) as u32
    }

    /// `bbr_max_bw`: the windowed max recent bandwidth, segments/µs << 24.
    fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// `bbr_bw`: the estimated bandwidth (the long-term one while policed).
    fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_extra_acked`: the max extra acked of the past 5 to 10 rounds.
    fn extra_acked(&self) -> u16 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: a rate (segments/µs << 24) with a gain, in bytes per second,
    /// 1% below (`bbr_pacing_margin_percent`); the order avoids u64 overflow as Linux's does.
    fn rate_bytes_per_sec(w: &Window, rate: u64, gain: u32) -> u64 {
        let mut rate = rate.wrapping_mul(u64::from(w.mss));
        rate = rate.wrapping_mul(u64::from(gain));
        rate >>= BBR_SCALE;
        rate = rate.wrapping_mul(1_000_000 / 100 * (100 - BBR_PACING_MARGIN_PERCENT));
        rate >> BW_SCALE
    }

    /// `bbr_bw_to_pacing_rate` (`sk_max_pacing_rate` unlimited).
    fn bw_to_pacing_rate(w: &Window, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(w, u64::from(bw), gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / SRTT (1 ms before any sample).
    fn init_pacing_rate_from_rtt(&mut self, w: &mut Window) {
        let rtt_us = if w.srtt_us != 0 {
            self.has_seen_rtt = true;
            (w.srtt_us >> 3).max(1)
        } else {
            1_000
        };
        let bw = u64::from(w.cwnd) * BW_UNIT / rtt_us;
        // (`bbr_bw_to_pacing_rate` takes a u32 bandwidth.)
        w.pacing_rate = Self::bw_to_pacing_rate(w, bw as u32, BBR_HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: pace at `gain` × `bw`; before the pipe is full only ever faster.
    fn set_pacing_rate(&mut self, w: &mut Window, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(w, bw, gain);
        if !self.has_seen_rtt && w.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(w);
        }
        if self.full_bw_reached || rate > w.pacing_rate {
            w.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`: 1 below `bbr_min_tso_rate`, else 2.
    fn min_tso_segs(w: &Window) -> u32 {
        if w.pacing_rate < (BBR_MIN_TSO_RATE >> 3) {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: about 1 ms of the pacing rate (`>> sk_pacing_shift`), in segments,
    /// at most a legacy GSO buffer and 127.
    fn tso_segs_goal(w: &Window) -> u32 {
        let bytes = (w.pacing_rate >> SK_PACING_SHIFT).min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER) as u32;
        let segs = (bytes / w.mss.max(1)).max(Self::min_tso_segs(w));
        segs.min(0x7f)
    }

    /// `bbr_save_cwnd`: the last known good window, restored after recovery or PROBE_RTT.
    fn save_cwnd(&mut self, w: &Window) {
        if ca_rank(self.prev_ca_state) < ca_rank(CaState::Recovery) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = w.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(w.cwnd);
        }
    }

    /// `bbr_bdp`: `ceil(bw × min_rtt × gain)`, segments (`TCP_INIT_CWND` before an RTT sample).
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u64::from(bw) * u64::from(self.min_rtt_us);
        // Apply the gain, remove the BW_SCALE shift, rounding up (Linux's `(x + BW_UNIT - 1) /
        // BW_UNIT`; x < 2^56, so nothing wraps).
        (w.wrapping_mul(u64::from(gain)) >> BBR_SCALE).div_ceil(BW_UNIT) as u32
    }

    /// `bbr_quantization_budget`: room for 3 offload buffers, rounded up to even, and 2 more in
    /// PROBE_BW's probing phase.
    fn quantization_budget(&self, w: &Window, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.wrapping_add(3 * Self::tso_segs_goal(w));
        cwnd = cwnd.wrapping_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the in-flight target for `bw` and `gain`.
    fn inflight(&self, w: &Window, bw: u32, gain: u32) -> u32 {
        let inflight = self.bdp(bw, gain);
        self.quantization_budget(w, inflight)
    }

    /// `bbr_packets_in_net_at_edt`: of `inflight_now`, what may still be in the network at the
    /// next departure time (`tcp_wstamp_ns`), counting the buffer leaving then when probing.
    fn packets_in_net_at_edt(&self, w: &Window, inflight_now: u32) -> u32 {
        let now_ns = w.now.0;
        let edt_ns = w.wstamp.0.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1_000;
        let interval_delivered = (u64::from(self.bw()).wrapping_mul(interval_us) >> BW_SCALE) as u32;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += Self::tso_segs_goal(w);
        }
        if interval_delivered >= inflight_at_edt {
            return 0;
        }
        inflight_at_edt - interval_delivered
    }

    /// `bbr_ack_aggregation_cwnd`: the window's allowance for ACK aggregation, once the pipe
    /// is full, at most 100 ms of bandwidth.
    fn ack_aggregation_cwnd(&self) -> u32 {
        let mut aggr_cwnd = 0;
        if BBR_EXTRA_ACKED_GAIN != 0 && self.full_bw_reached {
            let max_aggr_cwnd = (u64::from(self.bw()) * BBR_EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
            aggr_cwnd = (BBR_EXTRA_ACKED_GAIN * u32::from(self.extra_acked())) >> BBR_SCALE;
            aggr_cwnd = aggr_cwnd.min(max_aggr_cwnd);
        }
        aggr_cwnd
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: deduct losses; packet conservation in the first
    /// round of Recovery; restore the saved window on leaving recovery. Returns whether packet
    /// conservation sets the window, and the window.
    fn set_cwnd_to_recover_or_restore(&mut self, w: &Window, rs: &RateSample, acked: u32) -> (bool, u32) {
        let prev_state = self.prev_ca_state;
        let state = self.ca_state;
        let mut cwnd = w.cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd.wrapping_sub(rs.losses) as i32).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // Starting the first round of Recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = w.delivered; // start the round now
            cwnd = w.packets_in_flight + acked;
        } else if ca_rank(prev_state) >= ca_rank(CaState::Recovery) && ca_rank(state) < ca_rank(CaState::Recovery) {
            // Leaving loss recovery: restore the window saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(w.packets_in_flight + acked));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: slow-start toward the target window (the BDP × gain plus allowances), or
    /// snap down to it once the pipe was full; at least 4, PROBE_RTT's at most 4.
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = w.cwnd;
        'done: {
            if acked == 0 {
                break 'done; // nothing fully ACKed: just apply the caps
            }
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(w, rs, acked);
            cwnd = c;
            if conserving {
                break 'done;
            }
            let mut target_cwnd = self.bdp(bw, gain);
            target_cwnd = target_cwnd.wrapping_add(self.ack_aggregation_cwnd());
            target_cwnd = self.quantization_budget(w, target_cwnd);
            if self.full_bw_reached {
                cwnd = cwnd.wrapping_add(acked).min(target_cwnd);
            } else if cwnd < target_cwnd || w.delivered < TCP_INIT_CWND {
                cwnd = cwnd.wrapping_add(acked);
            }
            cwnd = cwnd.max(BBR_CWND_MIN_TARGET);
        }
        w.cwnd = cwnd.min(w.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(BBR_CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`: a phase ends after a min_rtt (gain 1); the probing phase also
    /// needs its in-flight target reached (or a loss), the draining one ends early once what is
    /// in flight is down to the BDP.
    fn is_next_cycle_phase(&self, w: &Window, rs: &RateSample) -> bool {
        let is_full_length = stamp_us_delta(us(w.delivered_mstamp), self.cycle_mstamp) > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(w, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(w, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(w, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, w: &Window) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = us(w.delivered_mstamp);
    }

    /// `bbr_update_cycle_phase`: gain cycling in PROBE_BW.
    fn update_cycle_phase(&mut self, w: &Window, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(w, rs) {
            self.advance_cycle_phase(w);
        }
    }

    /// `bbr_reset_startup_mode`.
    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// `bbr_reset_probe_bw_mode`: PROBE_BW from a random phase other than the draining one
    /// (`cycle_idx = CYCLE_LEN - 1 - get_random_u32_below(bbr_cycle_rand)`, then advanced).
    fn reset_probe_bw_mode(&mut self, w: &Window) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(BBR_CYCLE_RAND);
        self.advance_cycle_phase(w);
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, w: &Window) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(w);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, w: &Window) {
        self.lt_last_stamp = (us(w.delivered_mstamp) / 1_000) as u32;
        self.lt_last_delivered = w.delivered;
        self.lt_last_lost = self.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, w: &Window) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(w);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals: policed, use their average.
    fn lt_bw_interval_done(&mut self, w: &Window, bw: u32) {
        if self.lt_bw != 0 {
            // (Linux's abs() of a u32 difference takes it as an int.)
            let diff = (bw.wrapping_sub(self.lt_bw) as i32).unsigned_abs();
            if diff.wrapping_mul(BBR_UNIT) <= BBR_LT_BW_RATIO.wrapping_mul(self.lt_bw)
                || Self::rate_bytes_per_sec(w, u64::from(diff), BBR_UNIT) <= BBR_LT_BW_DIFF
            {
                self.lt_bw = bw.wrapping_add(self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(w);
    }

    /// `bbr_lt_bw_sampling`: detect a token-bucket policer (two intervals of 4 to 16 rounds,
    /// each ended by a loss, losing 20% or more, delivering at a consistent rate).
    fn lt_bw_sampling(&mut self, w: &Window, rs: LtSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start && {
                self.lt_rtt_cnt += 1;
                self.lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS
            } {
                self.reset_lt_bw_sampling(w); // stop using lt_bw
                self.reset_probe_bw_mode(w); // restart gain cycling
            }
            return;
        }
        // Wait for the first loss before sampling, to let the policer exhaust its tokens.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(w);
            self.lt_is_sampling = true;
        }
        // To avoid underestimates, reset sampling if we run out of data.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(w);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(w); // interval is too long
            return;
        }
        // End the interval at a loss (the policer's tokens are then exhausted).
        if rs.losses == 0 {
            return;
        }
        let lost = self.lost.wrapping_sub(self.lt_last_lost);
        let delivered = w.delivered.wrapping_sub(self.lt_last_delivered);
        if delivered == 0 || (lost << BBR_SCALE) < BBR_LT_LOSS_THRESH.wrapping_mul(delivered) {
            return;
        }
        let mut t = ((us(w.delivered_mstamp) / 1_000) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return; // less than a ms: wait
        }
        if t >= u32::MAX / 1_000 {
            self.reset_lt_bw_sampling(w); // too long to multiply
            return;
        }
        t *= 1_000;
        let bw = u64::from(delivered) * BW_UNIT / u64::from(t);
        self.lt_bw_interval_done(w, bw as u32);
    }

    /// `bbr_update_bw`: count rounds, sample the long-term rate, and feed the sample's delivery
    /// rate to the max filter (an application-limited one only if it raises it).
    fn update_bw(&mut self, w: &Window, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval_us)) = (rs.delivered, interval_us(rs)) else {
            return; // not a valid observation
        };
        if !before(rs.prior_delivered, self.next_rtt_delivered) {
            self.next_rtt_delivered = w.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(w, LtSample { losses: rs.losses, is_app_limited: rs.is_app_limited });
        let bw = u64::from(delivered) * BW_UNIT / interval_us;
        if !rs.is_app_limited || bw >= u64::from(self.max_bw()) {
            self.bw.running_max(BBR_BW_RTTS, self.rtt_cnt, bw as u32);
        }
    }

    /// `bbr_update_ack_aggregation`: the windowed max of data ACKed beyond what the bandwidth
    /// explains since the epoch began (5 to 10 rounds), at most the window.
    fn update_ack_aggregation(&mut self, w: &Window, rs: &RateSample) {
        if BBR_EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered.is_none() || interval_us(rs).is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = stamp_us_delta(us(w.delivered_mstamp), self.ack_epoch_mstamp);
        let mut expected_acked = (u64::from(self.bw()) * u64::from(epoch_us) / BW_UNIT) as u32;
        // Reset the epoch if the ACK rate is below the expected one, or after very many ACKs.
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= BBR_ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = us(w.delivered_mstamp);
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra_acked = (self.ack_epoch_acked - expected_acked).min(w.cwnd);
        let i = self.extra_acked_win_idx;
        if extra_acked > u32::from(self.extra_acked[i]) {
            self.extra_acked[i] = extra_acked as u16;
        }
    }

    /// `bbr_check_full_bw_reached`: the pipe is full once 3 non-application-limited rounds in a
    /// row failed to raise the max bandwidth by 25%.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((u64::from(self.full_bw) * u64::from(BBR_FULL_BW_THRESH)) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt = (self.full_bw_cnt + 1) & 3;
        self.full_bw_reached = self.full_bw_cnt >= BBR_FULL_BW_CNT;
    }

    /// `bbr_check_drain`: a full pipe ends STARTUP (ssthresh to the BDP's in-flight target);
    /// DRAIN ends once what is in the network at the next departure is down to it.
    fn check_drain(&mut self, w: &mut Window) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(w, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(w, w.packets_in_flight) <= self.inflight(w, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(w); // the queue is estimated drained
        }
    }

    /// `bbr_check_probe_rtt_done`: after 200 ms and a round, restore the window and leave.
    fn check_probe_rtt_done(&mut self, w: &mut Window) {
        if !(self.probe_rtt_done_stamp != 0 && after(jiffies32(w.now), self.probe_rtt_done_stamp)) {
            return;
        }
        self.min_rtt_stamp = jiffies32(w.now); // wait a while until PROBE_RTT
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.reset_mode(w);
    }

    /// `bbr_update_min_rtt`: the 10 s min_rtt filter; its expiry (unless restarting from idle)
    /// enters PROBE_RTT, which holds at most 4 in flight for 200 ms and a round and marks the
    /// connection application-limited meanwhile.
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample) {
        let now = jiffies32(w.now);
        let filter_expired = after(now, self.min_rtt_stamp.wrapping_add(BBR_MIN_RTT_WIN_SEC * HZ));
        let rtt_us = rs.rtt.map_or(-1, |r| (r.0 / 1_000) as i64);
        let is_ack_delayed = false;
        if rtt_us >= 0 && (rtt_us < i64::from(self.min_rtt_us) || (filter_expired && !is_ack_delayed)) {
            self.min_rtt_us = rtt_us as u32;
            self.min_rtt_stamp = now;
        }
        if BBR_PROBE_RTT_MODE_MS > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // dip, drain the queue
            self.save_cwnd(w); // to restore it
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            w.app_limited = w.delivered.wrapping_add(w.packets_in_flight).max(1);
            // Keep the minimum in flight for max(200 ms, 1 round).
            if self.probe_rtt_done_stamp == 0 && w.packets_in_flight <= BBR_CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = now.wrapping_add(msecs_to_jiffies(BBR_PROBE_RTT_MODE_MS));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = w.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w);
                }
            }
        }
        // A restart after idle ends only with a new S/ACK of data.
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`: each mode's pacing and window gains.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (BBR_HIGH_GAIN, BBR_HIGH_GAIN),
            Mode::Drain => (BBR_DRAIN_GAIN, BBR_HIGH_GAIN),
            Mode::ProbeBw => {
                (if self.lt_use_bw { BBR_UNIT } else { BBR_PACING_GAIN[self.cycle_idx as usize] }, BBR_CWND_GAIN)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, w: &mut Window, rs: &RateSample) {
        self.update_bw(w, rs);
        self.update_ack_aggregation(w, rs);
        self.update_cycle_phase(w, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(w);
        self.update_min_rtt(w, rs);
        self.update_gains();
    }
}

/// The sample's `interval_us` when positive (`rs->interval_us <= 0` is no observation).
fn interval_us(rs: &RateSample) -> Option<u64> {
    rs.interval.map(|i| i.0 / 1_000).filter(|&i| i > 0)
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn mode(&self) -> Option<&'static str> {
        Some(self.mode.name())
    }

    /// `bbr_init`: STARTUP with an empty filter, ssthresh infinite, pacing from the RTT (or the
    /// nominal 1 ms), and the start-phase generator seeded by the opening time.
    fn init(&mut self, w: &mut Window) {
        *self = Bbr { rng: w.now.0 ^ 0x6262_725f_696e_6974, ..Bbr::default() };
        self.prior_cwnd = 0;
        w.ssthresh = u32::MAX; // TCP_INFINITE_SSTHRESH, as the model spells it
        self.rtt_cnt = 0;
        self.next_rtt_delivered = w.delivered;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = w.min_rtt.map_or(u32::MAX, |m| (m.0 / 1_000) as u32);
        self.min_rtt_stamp = jiffies32(w.now);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(w);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(w);
        self.reset_startup_mode();
        self.ack_epoch_mstamp = us(w.now);
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
    }

    /// `bbr_ssthresh`: entering loss recovery, save the window; the threshold stays.
    fn ssthresh(&mut self, w: &Window) -> u32 {
        self.save_cwnd(w);
        w.ssthresh
    }

    /// BBR has no `cong_avoid` (Linux's `tcp_cong_control` calls `cong_control` instead).
    fn cong_avoid(&mut self, _w: &mut Window, _acked: u32) {}

    /// `bbr_set_state`: a timeout ends a round, restarts full-pipe detection and counts as a
    /// loss for the long-term sampler. (The state is also noted: BBR reads `icsk_ca_state`.)
    fn set_state(&mut self, w: &Window, state: CaState) {
        if state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true; // treat an RTO like the end of a round
            self.lt_bw_sampling(w, LtSample { losses: 1, is_app_limited: false });
        }
        self.ca_state = state;
    }

    /// `bbr_cwnd_event`: restarting after idle while application-limited, pace at the estimated
    /// bandwidth in PROBE_BW (or see whether PROBE_RTT is done).
    fn cwnd_event(&mut self, w: &mut Window, event: CaEvent) {
        if event == CaEvent::TxStart && w.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = us(w.now);
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(w, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(w);
            }
        }
    }

    /// `bbr_main`: update the model, then the pacing rate and the window.
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        self.lost = self.lost.wrapping_add(rs.losses);
        self.update_model(w, rs);
        let bw = self.bw();
        self.set_pacing_rate(w, bw, self.pacing_gain);
        self.set_cwnd(w, rs, rs.acked_sacked, bw, self.cwnd_gain);
        true
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_init` sets `SK_PACING_NEEDED` (no fq qdisc is modelled): the sender paces.
    fn needs_pacing(&self) -> bool {
        true
    }

    /// `bbr_undo_cwnd`: a spurious slow-down restarts full-pipe detection and the long-term
    /// sampler; the window stays.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u32) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(w);
        w.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    const MS: u64 = 1_000_000;

    /// A connection at `now_ms` with `cwnd`, delivered count `delivered` and `in_flight` out.
    fn window(now_ms: u64, cwnd: u32, delivered: u32, in_flight: u32) -> Window {
        Window {
            cwnd,
            mss: MSS,
            now: SimTime(now_ms * MS),
            delivered,
            delivered_mstamp: SimTime(now_ms * MS),
            packets_in_flight: in_flight,
            srtt_us: 8 * 10_000,
            wstamp: SimTime(now_ms * MS),
            ..Window::new(cwnd, u32::MAX)
        }
    }

    /// An ACK's sample: `delivered` segments over `interval_ms`, from `prior_delivered`, with
    /// an RTT of `rtt_ms`.
    fn sample(prior_delivered: u32, delivered: u32, interval_ms: u64, rtt_ms: u64, prior_in_flight: u32) -> RateSample {
        RateSample {
            prior_delivered,
            prior_mstamp: Some(SimTime::ZERO),
            delivered: Some(delivered),
            interval: Some(SimTime(interval_ms * MS)),
            rtt: Some(SimTime(rtt_ms * MS)),
            acked_sacked: delivered.min(10),
            prior_in_flight,
            ..RateSample::default()
        }
    }

    /// `bw` in BBR's unit for `segments` per `ms`.
    fn bw_of(segments: u64, ms: u64) -> u32 {
        (segments * BW_UNIT / (ms * 1_000)) as u32
    }

    fn started(now_ms: u64) -> (Bbr, Window) {
        let mut bbr = Bbr::default();
        let mut w = window(now_ms, 10, 0, 0);
        w.srtt_us = 0;
        bbr.init(&mut w);
        (bbr, w)
    }

    /// One round (one ACK that ends the previous round) of a flow that delivers `per_round`
    /// segments per 10 ms round trip at `now_ms`, `in_flight` out after it.
    fn round(bbr: &mut Bbr, w: &mut Window, now_ms: u64, per_round: u32, in_flight: u32) {
        let prior = w.delivered;
        w.delivered += per_round;
        (w.now, w.delivered_mstamp, w.wstamp) = (SimTime(now_ms * MS), SimTime(now_ms * MS), SimTime(now_ms * MS));
        w.packets_in_flight = in_flight;
        w.srtt_us = 8 * 10_000;
        bbr.cong_control(w, &sample(prior, per_round, 10, 10, in_flight + per_round));
    }

    #[test]
    fn fixed_point_gains_are_linuxs() {
        assert_eq!((BBR_HIGH_GAIN, BBR_DRAIN_GAIN, BBR_CWND_GAIN), (739, 88, 512));
        assert_eq!(BBR_PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
        // bbr_rate_bytes_per_sec: 1 segment/µs at gain 1 is 1448 · 10^6 bytes/s less 1%.
        let w = window(0, 10, 0, 0);
        assert_eq!(Bbr::rate_bytes_per_sec(&w, BW_UNIT, BBR_UNIT), 1448 * 990_000);
        // bbr_bdp rounds up: 8.3 segments/ms × 10 ms = 83.3 → 84 (gain 1), 2× → 167.
        let bbr = Bbr { min_rtt_us: 10_000, ..Bbr::default() };
        let bw = bw_of(25, 3);
        assert_eq!((bbr.bdp(bw, BBR_UNIT), bbr.bdp(bw, BBR_CWND_GAIN)), (84, 167));
        assert_eq!(Bbr::default().bdp(bw, BBR_UNIT), TCP_INIT_CWND, "no RTT sample yet");
    }

    #[test]
    fn the_max_filter_forgets_a_peak_older_than_ten_rounds() {
        let mut m = Minmax::default();
        m.reset(0, 0);
        assert_eq!(m.running_max(BBR_BW_RTTS, 0, 100), 100);
        for t in 1..=10 {
            assert_eq!(m.running_max(BBR_BW_RTTS, t, 50), 100, "round {t}: the peak is in the window");
        }
        // Round 11 is more than 10 rounds after the peak: the best later choice takes over.
        assert_eq!(m.running_max(BBR_BW_RTTS, 11, 40), 50);
        // A new max replaces everything at once.
        assert_eq!(m.running_max(BBR_BW_RTTS, 12, 70), 70);
        assert_eq!(m.running_max(BBR_BW_RTTS, 13, 60), 70);
        // Nothing at all for more than a window: the sample alone.
        assert_eq!(m.running_max(BBR_BW_RTTS, 40, 5), 5);
    }

    #[test]
    fn init_paces_at_high_gain_over_the_nominal_rtt_and_starts_up() {
        let (bbr, w) = started(0);
        assert_eq!(bbr.mode(), Mode::Startup);
        assert_eq!(bbr.min_rtt_us(), u32::MAX);
        assert_eq!(w.ssthresh, u32::MAX);
        // 10 segments per ms × 739/256 × 1448 bytes, less 1%.
        let bw = 10 * BW_UNIT / 1_000;
        assert_eq!(w.pacing_rate, (((bw * 1448 * 739) >> 8) * 990_000) >> 24);
        assert!(bbr.needs_pacing() && bbr.has_cong_control());
    }

    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth_then_drains() {
        let (mut bbr, mut w) = started(0);
        let mut now = 0;
        // Rounds doubling the delivery rate: STARTUP goes on.
        for per_round in [10, 20, 40, 80] {
            now += 10;
            round(&mut bbr, &mut w, now, per_round, 2 * per_round);
            assert_eq!(bbr.mode(), Mode::Startup);
            assert!(!bbr.full_bw_reached());
        }
        // Then less than 25% over the 80 of the last growth (the threshold is 100), three rounds:
        // the third fills the pipe.
        let mut startup_w = w;
        for (i, per_round) in [96, 98, 98].into_iter().enumerate() {
            now += 10;
            startup_w = w;
            round(&mut bbr, &mut w, now, per_round, 400);
            assert_eq!(bbr.full_bw_reached(), i == 2, "round {i}");
        }
        // DRAIN, at 1/high_gain, while more than the BDP is in the network; ssthresh is the
        // in-flight target of one BDP (its offload budget at the pacing rate STARTUP left).
        assert_eq!(bbr.mode(), Mode::Drain);
        assert_eq!(bbr.gains(), (BBR_DRAIN_GAIN, BBR_HIGH_GAIN));
        let bdp = bbr.bdp(bbr.max_bw(), BBR_UNIT);
        assert_eq!(bdp, 98);
        assert_eq!(w.ssthresh, (bdp + 3 * Bbr::tso_segs_goal(&startup_w) + 1) & !1);
        let target = bbr.inflight(&w, bbr.max_bw(), BBR_UNIT);
        now += 1;
        round(&mut bbr, &mut w, now, 5, target + 50);
        assert_eq!(bbr.mode(), Mode::Drain, "{} in flight, target {target}", target + 50);
        // Down to the target: PROBE_BW, at a phase other than the draining one.
        now += 1;
        round(&mut bbr, &mut w, now, 5, target - 10);
        assert_eq!(bbr.mode(), Mode::ProbeBw);
        assert_ne!(bbr.cycle_idx(), 1);
        assert_eq!(bbr.gains().1, BBR_CWND_GAIN);
        // The window snaps to 2 BDP plus the allowances once the pipe is full.
        let bw = bbr.bw();
        assert!(w.cwnd <= bbr.quantization_budget(&w, bbr.bdp(bw, BBR_CWND_GAIN) + bbr.ack_aggregation_cwnd()));
    }

    /// A flow in PROBE_BW at phase `idx`, min_rtt 10 ms, 10 segments/ms.
    fn probing(idx: u32) -> (Bbr, Window) {
        let (mut bbr, mut w) = started(0);
        bbr.bw.reset(0, bw_of(10, 1));
        (bbr.min_rtt_us, bbr.min_rtt_stamp, bbr.full_bw_reached) = (10_000, jiffies32(SimTime::ZERO), true);
        bbr.mode = Mode::ProbeBw;
        bbr.cycle_idx = idx;
        bbr.cycle_mstamp = 0;
        bbr.update_gains();
        w.pacing_rate = Bbr::bw_to_pacing_rate(&w, bbr.bw(), bbr.pacing_gain);
        w.cwnd = 200;
        (bbr, w)
    }

    #[test]
    fn the_gain_cycle_advances_a_phase_per_min_rtt_probing_until_the_target_is_in_flight() {
        // Cruising (gain 1): the phase ends after a min_rtt, whatever is in flight.
        let (mut bbr, mut w) = probing(3);
        round(&mut bbr, &mut w, 10, 10, 100);
        assert_eq!(bbr.cycle_idx(), 3, "10 ms is not more than min_rtt");
        round(&mut bbr, &mut w, 11, 10, 100);
        assert_eq!((bbr.cycle_idx(), bbr.gains().0), (4, BBR_UNIT));
        // Probing (5/4): after a min_rtt only once 5/4 BDP is in flight (or a loss).
        let (mut bbr, mut w) = probing(0);
        let target = bbr.inflight(&w, bbr.max_bw(), BBR_PACING_GAIN[0]);
        round(&mut bbr, &mut w, 20, 10, 50);
        assert_eq!(bbr.cycle_idx(), 0, "{} in flight short of {target}", 60);
        round(&mut bbr, &mut w, 21, 10, target);
        assert_eq!((bbr.cycle_idx(), bbr.gains().0), (1, BBR_UNIT * 3 / 4));
        // Draining (3/4): ends early once no more than the BDP is in flight.
        w.wstamp = w.now;
        round(&mut bbr, &mut w, 22, 10, 40);
        assert_eq!((bbr.cycle_idx(), bbr.gains().0), (2, BBR_UNIT));
        // ... and the cycle wraps: 7 → 0.
        let (mut bbr, mut w) = probing(7);
        round(&mut bbr, &mut w, 11, 10, 100);
        assert_eq!((bbr.cycle_idx(), bbr.gains().0), (0, BBR_UNIT * 5 / 4));
    }

    #[test]
    fn probe_bw_starts_at_a_random_phase_never_the_draining_one() {
        let mut seen = [0u32; 8];
        for open_ms in 0..2_000 {
            let (mut bbr, w) = started(open_ms);
            bbr.reset_probe_bw_mode(&w);
            seen[bbr.cycle_idx() as usize] += 1;
        }
        assert_eq!(seen[1], 0, "{seen:?}");
        for (i, n) in seen.iter().enumerate().filter(|&(i, _)| i != 1) {
            assert!((200..400).contains(n), "phase {i}: {seen:?}");
        }
        // The same opening time draws the same phases (determinism).
        let draw = |open_ms| {
            let (mut bbr, w) = started(open_ms);
            (0..10)
                .map(|_| {
                    bbr.reset_probe_bw_mode(&w);
                    bbr.cycle_idx()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
    }

    #[test]
    fn an_expired_min_rtt_enters_probe_rtt_for_200_ms_and_a_round_then_returns() {
        let (mut bbr, mut w) = probing(2);
        w.cwnd = 180;
        // RTT samples above min_rtt for 10 s: the filter expires after 10 s (not at 10 s).
        round(&mut bbr, &mut w, 10_000, 10, 150);
        assert_eq!(bbr.mode(), Mode::ProbeBw);
        round(&mut bbr, &mut w, 10_001, 10, 150);
        assert_eq!(bbr.mode(), Mode::ProbeRtt);
        assert_eq!(bbr.min_rtt_us(), 10_000, "the expired filter takes the new sample (10 ms)");
        assert_eq!(w.cwnd, BBR_CWND_MIN_TARGET);
        assert_eq!(bbr.gains(), (BBR_UNIT, BBR_UNIT));
        assert_ne!(w.app_limited, 0, "PROBE_RTT's samples are application-limited");
        // Still more than 4 in flight: the 200 ms have not started.
        round(&mut bbr, &mut w, 10_020, 10, 100);
        assert_eq!(bbr.probe_rtt_done_stamp, 0);
        // 4 in flight: 200 ms from now, and a round.
        round(&mut bbr, &mut w, 10_040, 2, 4);
        assert_eq!(bbr.probe_rtt_done_stamp, jiffies32(SimTime(10_040 * MS)) + 200);
        round(&mut bbr, &mut w, 10_240, 2, 4);
        assert_eq!(bbr.mode(), Mode::ProbeRtt, "200 ms not yet past");
        round(&mut bbr, &mut w, 10_241, 2, 4);
        // Back to PROBE_BW (the pipe was full), the window restored, the filter restarted.
        assert_eq!(bbr.mode(), Mode::ProbeBw);
        assert!(w.cwnd >= 180, "{}", w.cwnd);
        assert_eq!(bbr.min_rtt_stamp, jiffies32(SimTime(10_241 * MS)));
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_then_restores_the_window() {
        let (mut bbr, mut w) = probing(2);
        w.cwnd = 150;
        bbr.prior_cwnd = 0;
        // Loss recovery starts: ssthresh saves the window (and stays), set_state notes Recovery.
        let ssthresh = bbr.ssthresh(&w);
        assert_eq!((ssthresh, bbr.prior_cwnd), (w.ssthresh, 150));
        bbr.set_state(&w, CaState::Recovery);
        let prior = w.delivered;
        w.delivered += 2;
        w.packets_in_flight = 100;
        let mut rs = sample(prior, 2, 10, 10, 110);
        (rs.acked_sacked, rs.losses) = (2, 3);
        bbr.cong_control(&mut w, &rs);
        assert_eq!(w.cwnd, 102, "packet conservation: in flight plus what was delivered");
        // Recovery ends: the saved window comes back, and grows by what this ACK delivered.
        bbr.set_state(&w, CaState::Open);
        round(&mut bbr, &mut w, 30, 10, 80);
        assert_eq!(w.cwnd, 150 + 10);
    }

    #[test]
    fn two_lossy_intervals_at_one_rate_switch_to_the_long_term_bandwidth_for_48_rounds() {
        // A policer: every 10 ms round delivers 100 segments and loses 30 (over 20%).
        let (mut bbr, mut w) = probing(2);
        let mut now = 0;
        let mut lossy_round = |bbr: &mut Bbr, w: &mut Window, losses: u32| {
            now += 10;
            let prior = w.delivered;
            w.delivered += 100;
            (w.now, w.delivered_mstamp, w.wstamp) = (SimTime(now * MS), SimTime(now * MS), SimTime(now * MS));
            let mut rs = sample(prior, 100, 10, 10, 150);
            rs.losses = losses;
            bbr.cong_control(w, &rs);
        };
        // The first loss starts sampling (that round counts as the interval's first); its fourth
        // round ends the interval (30 ms of data after the start), 4 more the second, at the same
        // rate: policed.
        for i in 0..7 {
            lossy_round(&mut bbr, &mut w, 30);
            assert!(!bbr.lt_use_bw, "round {i}");
        }
        lossy_round(&mut bbr, &mut w, 30);
        assert!(bbr.lt_use_bw);
        assert_eq!(bbr.lt_bw, bw_of(100, 10));
        assert_eq!((bbr.bw(), bbr.gains().0), (bbr.lt_bw, BBR_UNIT));
        // 48 rounds in PROBE_BW later it goes back to the max filter and gain cycling.
        for _ in 0..47 {
            lossy_round(&mut bbr, &mut w, 0);
        }
        assert!(bbr.lt_use_bw);
        lossy_round(&mut bbr, &mut w, 0);
        assert!(!bbr.lt_use_bw);
        assert_eq!(bbr.mode(), Mode::ProbeBw);
    }

    #[test]
    fn data_acked_beyond_the_bandwidth_raises_the_window_for_5_to_10_rounds() {
        // 10 segments/ms; an ACK 1 ms into the epoch delivers 50 at once (aggregation).
        let (mut bbr, mut w) = probing(2);
        let ack = |bbr: &mut Bbr, w: &mut Window, now_us: u64, acked: u32| {
            let prior = w.delivered;
            w.delivered += acked;
            let now = SimTime(now_us * 1_000);
            (w.now, w.delivered_mstamp, w.wstamp) = (now, now, now);
            let mut rs = sample(prior, acked, 10, 10, 150);
            rs.acked_sacked = acked;
            bbr.cong_control(w, &rs);
        };
        ack(&mut bbr, &mut w, 1_000, 50);
        // 1 ms later 5 more: 55 since the epoch began, 10 expected: the max stays 50.
        ack(&mut bbr, &mut w, 2_000, 5);
        assert_eq!(bbr.extra_acked(), 50);
        assert_eq!(bbr.ack_aggregation_cwnd(), 50, "at most 100 ms of bandwidth: 1000");
        // The window grows by what is ACKed (200 + 50 + 5) toward its target: 2 BDP (200) plus
        // the 50 plus the offload budget.
        let target = bbr.quantization_budget(&w, bbr.bdp(bbr.bw(), BBR_CWND_GAIN) + 50);
        assert_eq!(w.cwnd, 255);
        assert_eq!(target, (200 + 50 + 3 * Bbr::tso_segs_goal(&w) + 1) & !1);
        assert!(target > 255);
        // Smooth rounds of 10 per 10 ms: the 50 ages out of both windows; what is left is these
        // rounds' own excess (10 or 11: the truncated bandwidth expects 9 per 10 ms).
        for i in 0..12 {
            round(&mut bbr, &mut w, 20 + 10 * i, 10, 100);
        }
        assert!(bbr.extra_acked() <= 11, "{}", bbr.extra_acked());
    }

    #[test]
    fn restarting_from_idle_in_probe_bw_paces_at_the_estimate() {
        let (mut bbr, mut w) = probing(0);
        let probing_rate = w.pacing_rate;
        w.app_limited = 5;
        bbr.cwnd_event(&mut w, CaEvent::TxStart);
        assert!(bbr.idle_restart);
        assert_eq!(w.pacing_rate, Bbr::bw_to_pacing_rate(&w, bbr.bw(), BBR_UNIT));
        assert!(w.pacing_rate < probing_rate);
    }
}

#[cfg(test)]
mod end_to_end {
    use crate::{run, RunResult, Scenario};
    use serde_json::json;

    /// One flow of `bytes` over one 100 Mbit/s link with 10 ms of delay each way and a deep
    /// transmit queue (2000 packets, 12 BDPs of 172 packets). TCP small queues would keep any
    /// flow's queue in the host to about 1 ms of data; they are given the 3.12 rule with a
    /// `tcp_limit_output_bytes` of 100 MB, so that the queue shows what the sender puts there.
    fn lone_flow(cc: &str, bytes: u64) -> RunResult {
        let value = json!({
            "seed": 1,
            "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": bytes}},
            "sender": {"kind": "tcp", "tcp_congestion_control": cc, "small_queues": "linux-3.12",
                       "tcp_limit_output_bytes": 100_000_000u64},
            "bond": {"mode": "balance-rr"},
            "links": [{"rate_mbps": 100.0, "delay_us": 10000.0, "txqueuelen": 2000}],
            "trace": {"link_ms": 100.0},
        });
        run(&Scenario::from_json(&value.to_string()).unwrap()).unwrap()
    }

    /// The longest queue after `from_s` (the link trace's buckets).
    fn queue_max_after(r: &RunResult, from_s: f64) -> u32 {
        let t = r.link_trace.as_ref().expect("traced");
        t.t_s.iter().zip(&t.queue_max_pkts).filter(|(t, _)| **t > from_s).map(|(_, q)| *q).max().unwrap()
    }

    #[test]
    fn a_lone_flow_fills_100_mbit_with_a_queue_far_smaller_than_cubics() {
        let bbr = lone_flow("bbr", 60_000_000);
        let cubic = lone_flow("cubic", 60_000_000);
        // A 1500-byte IP packet carries 1448 payload bytes and takes 1538 bytes of wire time.
        let capacity = 100e6 * 1448.0 / 1538.0;
        let goodput = bbr.requests.file_bytes[0] as f64 * 8.0 / bbr.summary.fct_mean_s.unwrap();
        assert!(goodput > 0.9 * capacity, "goodput {goodput:.4e} vs payload capacity {capacity:.4e}");
        assert_eq!((bbr.summary.drops_queue_full, bbr.summary.count("tcp_retransmits")), (0, Some(0)));
        // STARTUP's overshoot (2/ln 2) is BBR's longest queue, still well short of CUBIC's.
        let (b, c) = (bbr.links.max_queue_pkts[0], cubic.links.max_queue_pkts[0]);
        assert!(2 * b < c, "longest queue: BBR {b}, CUBIC {c}");
        // After STARTUP and DRAIN, PROBE_BW keeps the queue to its 5/4 probing (a quarter of the
        // BDP, 43, plus the offload budget) although its window (2 BDP, 344) would let a
        // window-limited sender keep a whole BDP queued: the pacing holds it.
        let (b, c) = (queue_max_after(&bbr, 2.0), queue_max_after(&cubic, 2.0));
        assert!(b < 172 / 2, "BBR's queue after 2 s: {b} packets");
        assert!(10 * b < c, "queue after 2 s: BBR {b}, CUBIC {c}");
    }

    #[test]
    fn the_same_scenario_runs_the_same() {
        let strip = |mut r: RunResult| {
            r.summary.wall_s = 0.0;
            r.to_json()
        };
        assert_eq!(strip(lone_flow("bbr", 5_000_000)), strip(lone_flow("bbr", 5_000_000)));
    }
}
