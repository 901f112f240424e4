//! The coupled congestion controls of MPTCP subflows, as the out-of-tree multipath-tcp.org kernel
//! (v0.95) runs them; Linux's own MPTCP has none (its subflows run uncoupled CUBIC, Reno or BBR),
//! so the emulator cannot run them:
//!
//! * [`Lia`], `lia`: the Linked Increases Algorithm of RFC 6356 §3 (net/mptcp/mptcp_coupled.c):
//!   in congestion avoidance a subflow grows by `min(α / cwnd_total, 1 / cwnd_i)` per ACK, with
//!   `α = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)²`;
//! * [`Olia`], `olia`: the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic,
//!   Le Boudec, "MPTCP is not Pareto-optimal", IEEE/ACM ToN 2013, §V; net/mptcp/mptcp_olia.c):
//!   `(cwnd_i / rtt_i²) / (Σ_p cwnd_p / rtt_p)² + α_i / cwnd_i` per ACK, where `α_i` moves
//!   window from the largest subflows to the best ones (most bytes between losses over rtt²)
//!   that are not the largest.
//!
//! Both halve the window on a loss as Reno (`tcp_reno_ssthresh`) and slow-start below
//! `ssthresh` (`tcp_in_slow_start`, RFC 6356 §3: "as TCP"). The modules test `snd_cwnd <=
//! snd_ssthresh`, written for 3.x's `tcp_slow_start`, which grew past `ssthresh`; since 3.18 it
//! stops there (net/ipv4/tcp_cong.c), so on the v0.95 kernel (4.19) a window that a recovery left
//! at `ssthresh` never grows again. The model keeps the RFC's rule, not that stall. The subflows of a connection
//! share a [`Group`] (Linux: the meta socket's `inet_csk_ca` and each subflow's `tcp_sock`, which
//! the controls read across subflows): the sender publishes each subflow's window there after
//! every event ([`Coupling::publish`]), and a control refreshes its own entry whenever it runs.

use std::sync::{Arc, Mutex};

use super::newreno::NewReno;
use super::{CaEvent, CaState, CongestionControl, Window};

/// The names [`build`] takes.
pub const NAMES: &[&str] = &["lia", "olia"];

/// One connection's subflows, as their coupled controls share them.
pub type Group = Arc<Mutex<Coupling>>;

/// A subflow as its siblings' controls read it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Path {
    /// Established and not closed (`mptcp_sk_can_send`; counted in `cnt_established`).
    pub open: bool,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// In fast recovery (OLIA then counts `ssthresh`, not the inflated window).
    pub recovery: bool,
    /// `srtt_us`: 8 × SRTT in µs (0: no sample yet, and the subflow counts as unable to send).
    pub srtt_us: u64,
    /// OLIA: `snd_una` (bytes) at the loss before last, the last loss and now
    /// (`mptcp_loss1..3`), and its ε as a fraction (`epsilon_num / epsilon_den`).
    loss: [u64; 3],
    eps_num: i64,
    eps_den: u64,
}

impl Path {
    /// `mptcp_ccc_sk_can_send` / `mptcp_olia_sk_can_send`: it can send and has an RTT.
    fn can_send(&self) -> bool {
        self.open && self.srtt_us != 0
    }

    /// `mptcp_get_crt_cwnd`: the window, or `ssthresh` while fast recovery inflates it.
    fn crt_cwnd(&self) -> u32 {
        if self.recovery {
            self.ssthresh
        } else {
            self.cwnd
        }
    }

    /// OLIA's bytes between losses: the larger of the last interval and the current one.
    fn inter_loss(&self) -> u64 {
        (self.loss[2] - self.loss[1]).max(self.loss[1] - self.loss[0])
    }
}

/// The state a connection's coupled controls share.
#[derive(Debug)]
pub struct Coupling {
    paths: Vec<Path>,
    /// LIA's α, scaled (`mptcp_ccc.alpha`), and whether it must be computed again before the
    /// next increase (`forced_update`).
    alpha: u64,
    forced: bool,
}

impl Coupling {
    /// A group of `subflows` subflows, none open yet.
    pub fn group(subflows: usize) -> Group {
        Arc::new(Mutex::new(Coupling { paths: vec![Path::default(); subflows], alpha: 1, forced: false }))
    }

    /// Subflow `me`'s window and state as they are now; `open` false once it closed.
    pub fn publish(&mut self, me: usize, w: &Window, state: CaState, open: bool) {
        let p = &mut self.paths[me];
        (p.open, p.cwnd, p.ssthresh, p.recovery, p.srtt_us) =
            (open, w.cwnd, w.ssthresh, state == CaState::Recovery, w.srtt_us);
    }

    /// `mpcb->cnt_established`.
    fn established(&self) -> u64 {
        self.paths.iter().filter(|p| p.open).count() as u64
    }
}

/// The coupled control `name` (one of [`NAMES`]) for subflow `me` of `group`.
pub fn build(name: &str, group: Group, me: usize) -> Option<Box<dyn CongestionControl>> {
    match name {
        "lia" => Some(Box::new(Lia { group, me, state: CaState::Open })),
        "olia" => Some(Box::new(Olia { group, me, state: CaState::Open, cnt: 0 })),
        _ => None,
    }
}

/// The window's own fields, written to the group before a control reads it.
fn sync<'a>(group: &'a Group, me: usize, w: &Window, state: CaState) -> std::sync::MutexGuard<'a, Coupling> {
    let mut g = group.lock().expect("a coupled control never panics holding the lock");
    g.publish(me, w, state, true);
    g
}

/// LIA (`lia`, mptcp_coupled.c).
#[derive(Debug)]
pub struct Lia {
    group: Group,
    me: usize,
    state: CaState,
}

/// LIA's α is scaled by 2^`ALPHA_SCALE` = 2^`ALPHA_SCALE_NUM` / (2^`ALPHA_SCALE_DEN`)².
const ALPHA_SCALE: u32 = 12;
const ALPHA_SCALE_NUM: u32 = 32;
const ALPHA_SCALE_DEN: u32 = 10;

/// `mptcp_ccc_recalc_alpha`: α over the subflows that can send, from the one with the largest
/// `cwnd / srtt²` (the last of equals); 1 with one subflow or none able to send. Integer
/// arithmetic as the module's (u64, wrapping as C's would).
fn lia_alpha(g: &Coupling) -> u64 {
    if g.established() <= 1 {
        return 1;
    }
    let paths = || g.paths.iter().filter(|p| p.can_send());
    let mut best: Option<(u64, u32, u64)> = None; // (numerator, cwnd, srtt)
    for p in paths() {
        let tmp = (u64::from(p.cwnd) << ALPHA_SCALE_NUM) / p.srtt_us.wrapping_mul(p.srtt_us);
        if best.is_none_or(|(max, _, _)| tmp >= max) {
            best = Some((tmp, p.cwnd, p.srtt_us));
        }
    }
    let Some((_, best_cwnd, best_rtt)) = best else { return 1 };
    let sum: u64 = paths().map(|p| (u64::from(p.cwnd) << ALPHA_SCALE_DEN).wrapping_mul(best_rtt) / p.srtt_us).sum();
    let den = sum.wrapping_mul(sum);
    match den {
        0 => 1,
        _ => ((u64::from(best_cwnd) << ALPHA_SCALE_NUM) / den).max(1),
    }
}

impl CongestionControl for Lia {
    fn name(&self) -> &'static str {
        "lia"
    }

    /// `mptcp_ccc_init`: α back to 1 (each subflow's init resets the connection's).
    fn init(&mut self, w: &mut Window) {
        let mut g = sync(&self.group, self.me, w, self.state);
        (g.forced, g.alpha) = (false, 1);
    }

    /// `tcp_reno_ssthresh` (Reno's own).
    fn ssthresh(&mut self, w: &Window) -> u32 {
        NewReno.ssthresh(w)
    }

    /// `mptcp_ccc_cong_avoid`: nothing unless window-limited; slow start below `ssthresh` (α
    /// computed again; see the module's note on `<=`); else one more segment once
    /// `snd_cwnd_cnt` (one per ACK) reaches `max(2^12 / α, cwnd)` (α first computed again after
    /// a state change).
    fn cong_avoid(&mut self, w: &mut Window, acked: u32) {
        if !w.cwnd_limited {
            return;
        }
        let mut g = sync(&self.group, self.me, w, self.state);
        if w.in_slow_start() {
            w.slow_start(acked);
            g.publish(self.me, w, self.state, true);
            g.alpha = lia_alpha(&g);
            return;
        }
        if std::mem::take(&mut g.forced) {
            g.alpha = lia_alpha(&g);
        }
        let per = if g.established() > 1 {
            ((1u64 << ALPHA_SCALE) / g.alpha.max(1)).max(u64::from(w.cwnd))
        } else {
            u64::from(w.cwnd)
        };
        if u64::from(w.cwnd_cnt) >= per {
            if w.cwnd < w.cwnd_clamp {
                w.cwnd += 1;
                g.publish(self.me, w, self.state, true);
                g.alpha = lia_alpha(&g);
            }
            w.cwnd_cnt = 0;
        } else {
            w.cwnd_cnt += 1;
        }
    }

    /// `mptcp_ccc_set_state`: any change forces α to be computed again.
    fn set_state(&mut self, w: &Window, state: CaState) {
        self.state = state;
        sync(&self.group, self.me, w, state).forced = true;
    }

    /// `mptcp_ccc_cwnd_event`: a timeout (`CA_EVENT_LOSS`) computes α again.
    fn cwnd_event(&mut self, w: &mut Window, event: CaEvent) {
        if event == CaEvent::Loss {
            let mut g = sync(&self.group, self.me, w, self.state);
            g.alpha = lia_alpha(&g);
        }
    }

    /// `tcp_reno_undo_cwnd` (Reno's own).
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32 {
        NewReno.undo_cwnd(w, prior_cwnd)
    }
}

/// OLIA (`olia`, mptcp_olia.c).
#[derive(Debug)]
pub struct Olia {
    group: Group,
    me: usize,
    state: CaState,
    /// `mptcp_snd_cwnd_cnt`, in 2^-10 of a segment.
    cnt: i64,
}

/// OLIA's fixed point: 10 bits.
const OLIA_SCALE: u32 = 10;

/// `mptcp_get_epsilon`: with `M` the subflows of the largest window and `B` those with the most
/// bytes between losses per rtt² (the last of equals), each of `B` not in `M` gets
/// ε = 1 / (n · |B∖M|), each of `M` −1 / (n · |M|) (n: established subflows), the rest 0; all 0
/// when `B∖M` is empty. It writes every subflow's ε, as the module does.
fn olia_epsilon(g: &mut Coupling) {
    let n = g.established();
    let max_cwnd = g.paths.iter().filter(|p| p.can_send()).map(Path::crt_cwnd).max().unwrap_or(0);
    let (mut best_int, mut best_rtt) = (0u64, 1u64);
    for p in g.paths.iter().filter(|p| p.can_send()) {
        let (int, rtt) = (p.inter_loss(), p.srtt_us.wrapping_mul(p.srtt_us));
        if int.wrapping_mul(best_rtt) >= best_int.wrapping_mul(rtt) {
            (best_int, best_rtt) = (int, rtt);
        }
    }
    let best =
        |p: &Path| p.inter_loss().wrapping_mul(best_rtt) == best_int.wrapping_mul(p.srtt_us.wrapping_mul(p.srtt_us));
    let live = || g.paths.iter().filter(|p| p.can_send());
    let m = live().filter(|p| p.crt_cwnd() == max_cwnd).count() as u64;
    let b_not_m = live().filter(|p| p.crt_cwnd() != max_cwnd && best(p)).count() as u64;
    for i in 0..g.paths.len() {
        let p = g.paths[i];
        if !p.can_send() {
            continue;
        }
        let (num, den) = match () {
            _ if b_not_m == 0 => (0, 1),
            _ if p.crt_cwnd() < max_cwnd && best(&p) => (1, n * b_not_m),
            _ if p.crt_cwnd() == max_cwnd => (-1, n * m),
            _ => (0, 1),
        };
        (g.paths[i].eps_num, g.paths[i].eps_den) = (num, den);
    }
}

/// `mptcp_get_rate`: `(1 + Σ_p crt_cwnd_p · 2^10 · srtt_me / srtt_p)²`.
fn olia_rate(g: &Coupling, srtt_me: u64) -> u64 {
    let sum = g
        .paths
        .iter()
        .filter(|p| p.can_send())
        .map(|p| (u64::from(p.crt_cwnd()) << OLIA_SCALE).wrapping_mul(srtt_me) / p.srtt_us)
        .fold(1u64, u64::wrapping_add);
    sum.wrapping_mul(sum)
}

impl CongestionControl for Olia {
    fn name(&self) -> &'static str {
        "olia"
    }

    /// `mptcp_olia_init`: no losses yet (all three marks at `snd_una`), ε = 0.
    fn init(&mut self, w: &mut Window) {
        let mut g = sync(&self.group, self.me, w, self.state);
        let una = w.snd_una * u64::from(w.mss);
        let p = &mut g.paths[self.me];
        (p.loss, p.eps_num, p.eps_den) = ([una; 3], 0, 1);
        self.cnt = 0;
    }

    /// `tcp_reno_ssthresh` (Reno's own).
    fn ssthresh(&mut self, w: &Window) -> u32 {
        NewReno.ssthresh(w)
    }

    /// `mptcp_olia_set_state`: entering Loss, Recovery or CWR closes an inter-loss interval
    /// (not on a timeout's repeats: Linux tests `icsk_retransmits`, which only backed-off
    /// timeouts leave non-zero, here a Loss entered while in Loss).
    fn set_state(&mut self, w: &Window, state: CaState) {
        let repeat = state == CaState::Loss && self.state == CaState::Loss;
        self.state = state;
        let mut g = sync(&self.group, self.me, w, state);
        let p = &mut g.paths[self.me];
        if matches!(state, CaState::Loss | CaState::Recovery | CaState::Cwr) && p.loss[2] != p.loss[1] && !repeat {
            (p.loss[0], p.loss[1]) = (p.loss[1], p.loss[2]);
        }
    }

    /// `mptcp_olia_cong_avoid`: the current mark follows `snd_una`; nothing more unless
    /// window-limited; slow start below `ssthresh` (the module's note on `<=`); else the increase
    /// above, in
    /// 2^-10 of a segment, a whole segment up (or down, for the largest windows) once it adds up.
    fn cong_avoid(&mut self, w: &mut Window, acked: u32) {
        let mut g = sync(&self.group, self.me, w, self.state);
        g.paths[self.me].loss[2] = w.snd_una * u64::from(w.mss);
        if !w.cwnd_limited {
            return;
        }
        if w.in_slow_start() {
            w.slow_start(acked);
            return;
        }
        olia_epsilon(&mut g);
        let rate = olia_rate(&g, w.srtt_us);
        let (eps_num, eps_den) = (g.paths[self.me].eps_num, g.paths[self.me].eps_den);
        let scaled = u64::from(w.cwnd) << OLIA_SCALE;
        let square = eps_den.wrapping_mul(scaled).wrapping_mul(scaled);
        let den = match eps_den.wrapping_mul(u64::from(w.cwnd)).wrapping_mul(rate) {
            0 => 1,
            d => d,
        };
        let step = |num: u64| ((num << OLIA_SCALE) / den) as i64;
        if eps_num == -1 {
            if square < rate {
                self.cnt -= step(rate - square);
            } else {
                self.cnt += step(square - rate);
            }
        } else {
            self.cnt += step((eps_num as u64).wrapping_mul(rate).wrapping_add(square));
        }
        if self.cnt >= (1 << OLIA_SCALE) - 1 {
            if w.cwnd < w.cwnd_clamp {
                w.cwnd += 1;
            }
            self.cnt = 0;
        } else if self.cnt <= 1 - (1 << OLIA_SCALE) {
            w.cwnd = w.cwnd.saturating_sub(1).max(1);
            self.cnt = 0;
        }
    }

    /// `tcp_reno_undo_cwnd` (Reno's own).
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32 {
        NewReno.undo_cwnd(w, prior_cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(cwnd: u32, srtt_ms: u64) -> Window {
        Window { srtt_us: srtt_ms * 8_000, mss: 1000, ..Window::new(cwnd, 1) }
    }

    fn group_of(paths: &[(u32, u64)]) -> Group {
        let g = Coupling::group(paths.len());
        for (i, &(cwnd, srtt)) in paths.iter().enumerate() {
            g.lock().unwrap().publish(i, &window(cwnd, srtt), CaState::Open, true);
        }
        g
    }

    #[test]
    fn the_schema_names_the_controls_built_here() {
        assert_eq!(NAMES, crate::scenario::COUPLED_CONGESTION_CONTROLS);
        for name in NAMES {
            assert_eq!(build(name, Coupling::group(2), 1).unwrap().name(), *name);
        }
    }

    #[test]
    fn lia_alpha_is_rfc_6356s() {
        // Two equal paths: α = 2w · (w/r²) / (2w/r)² = 1/2, so an ACK adds α / cwnd_total =
        // 1 / (4w): one segment per 4w ACKs, half of Reno's per subflow (RFC 6356 §3).
        let g = group_of(&[(10, 10), (10, 10)]);
        let alpha = lia_alpha(&g.lock().unwrap());
        assert_eq!((1u64 << ALPHA_SCALE) / alpha, 40);
        // One path: Reno (α = 1 in the module's scale: the window's own count rules).
        assert_eq!(lia_alpha(&group_of(&[(10, 10)]).lock().unwrap()), 1);
        // A path 10× slower with the same window barely counts: α / cwnd_total =
        // (w / r²) / (w/r + w/10r)² = 1 / (w · 1.1²), one segment per 12.1 ACKs, near Reno's w.
        let g = group_of(&[(10, 10), (10, 100)]);
        let per = (1u64 << ALPHA_SCALE) / lia_alpha(&g.lock().unwrap());
        assert_eq!(per, 12);
    }

    #[test]
    fn lia_grows_a_subflow_more_slowly_than_reno_would() {
        let g = group_of(&[(10, 10), (10, 10)]);
        let mut lia = build("lia", g.clone(), 0).unwrap();
        let mut w = window(10, 10);
        w.ssthresh = 5;
        lia.set_state(&w, CaState::Open);
        let mut acks = 0;
        while w.cwnd == 10 {
            lia.cong_avoid(&mut w, 1);
            acks += 1;
        }
        assert_eq!(acks, 41, "max(2^12 / α, cwnd) = 40 counted, then the increase");
    }

    #[test]
    fn olia_moves_window_from_the_largest_path_to_the_best_other() {
        // Path 0: the largest window, few bytes between losses. Path 1: a smaller window, the
        // most bytes between losses per rtt²: the best path not among the largest.
        let g = group_of(&[(20, 10), (10, 10)]);
        {
            let mut c = g.lock().unwrap();
            c.paths[0].loss = [0, 1_000, 2_000];
            c.paths[1].loss = [0, 50_000, 60_000];
            olia_epsilon(&mut c);
            assert_eq!((c.paths[0].eps_num, c.paths[0].eps_den), (-1, 2));
            assert_eq!((c.paths[1].eps_num, c.paths[1].eps_den), (1, 2));
            c.paths[1].loss = [0, 1_000, 2_000];
            c.paths[0].loss = [0, 50_000, 60_000];
            olia_epsilon(&mut c);
            assert_eq!(c.paths[1].eps_num, 0, "the best path is the largest: B∖M empty");
        }
    }

    #[test]
    fn olia_on_one_path_is_nearly_reno() {
        // ε = 0 and the rate is (1 + 2^10 w)²: each ACK adds (2^10 w)² · 2^10 / (w (1 + 2^10 w)²)
        // = 102 (integer) to the counter, which fires at 2^10 − 1: at the 11th ACK (Reno: 10th).
        let g = group_of(&[(10, 10)]);
        let mut olia = build("olia", g, 0).unwrap();
        let mut w = window(10, 10);
        w.ssthresh = 5;
        olia.init(&mut w);
        let mut acks = 0;
        while w.cwnd == 10 {
            olia.cong_avoid(&mut w, 1);
            acks += 1;
        }
        assert_eq!(acks, 11);
    }
}
