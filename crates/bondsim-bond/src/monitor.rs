//! The bond's link monitor (`miimon`, `updelay`, `downdelay`), as
//! `bond_miimon_inspect`/`bond_miimon_commit` run it.
//!
//! The monitor checks every link's carrier every `miimon`; a change seen at a
//! check is committed `downdelay` (or `updelay`) later, both rounded down to
//! whole checks as the kernel stores them (`BOND_LINK_FAIL` / `BOND_LINK_BACK`
//! counting `slave->delay` down). A check that sees the carrier back aborts the
//! countdown ("recovered before downdelay expired"); a carrier that comes back and
//! goes again between two checks is never seen, and the countdown goes on.
//! `updelay` is skipped when the mode says so (the kernel's `ignore_updelay`), by one link per
//! check: `bond_miimon_inspect` walks the slaves in order and the first one whose carrier is
//! back takes it (`ignore_updelay = false` once it is up), so of links back at the same check
//! the lowest-numbered comes up at once and the others wait out their updelay.
//! With `miimon = 0` the bond never notices a failure. The checks are computed,
//! not simulated one by one, so a short `miimon` costs nothing.
//!
//! The checks run on the kernel's timer tick: `bond_mii_monitor` re-arms its delayed work
//! `msecs_to_jiffies(miimon)` jiffies ahead, so at `HZ` = 250 a `miimon` of 1 ms checks every
//! 4 ms and one of 10 ms every 12 ms ([`jiffies_period`]); `updelay` / `downdelay` stay counts
//! of checks (`bond_option_updelay_set` stores `value / miimon`), so they stretch alike.

use crate::time::SimTime;
use crate::LinkView;

/// `BOND_DEFAULT_MIIMON`, ms.
pub const DEFAULT_MIIMON_MS: f64 = 100.0;

/// The kernel's timer tick rates a kernel is built with (`CONFIG_HZ`, `kernel/Kconfig.hz`:
/// `HZ_100`, `HZ_250`, `HZ_300`, `HZ_1000`).
pub const HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];

/// The period of a delayed work re-armed every `ms` milliseconds on a kernel ticking `hz`
/// times a second: `msecs_to_jiffies(ms)` jiffies, which rounds up to whole jiffies
/// (`include/linux/jiffies.h`, `_msecs_to_jiffies`: `(m + MSEC_PER_SEC / HZ - 1) / (MSEC_PER_SEC /
/// HZ)`, and the same rounding up by multiplication for `HZ` = 300), in nanoseconds (rounded down
/// where a jiffy is no whole number of them: 3,333,333 ns at `HZ` = 300). `ms` is a whole number
/// (the bonding driver's options are integers of milliseconds); 0 stays 0.
pub fn jiffies_period(ms: f64, hz: u32) -> SimTime {
    usecs_to_jiffies(ms as u64 * 1000, hz)
}

/// `usecs_to_jiffies(us)` on a kernel ticking `hz` times a second: rounded up to whole jiffies,
/// in nanoseconds (as [`jiffies_period`], of which it is the microsecond form).
pub fn usecs_to_jiffies(us: u64, hz: u32) -> SimTime {
    let jiffies = (us * u64::from(hz)).div_ceil(1_000_000);
    SimTime(jiffies * 1_000_000_000 / u64::from(hz))
}

/// Whether Linux lets `mode` (a canonical scheduler name) run the ARP monitor:
/// `bond_mode_uses_arp` is false for 802.3ad, balance-tlb and balance-alb (their
/// slaves' MAC handling and LACP need the MII monitor). Modes Linux does not have
/// run the load-balancing ARP monitor.
pub fn mode_uses_arp(mode: &str) -> bool {
    !matches!(mode, "802.3ad" | "balance-tlb" | "balance-alb")
}

/// The `miimon` Linux runs `mode` with: `bond_check_params` (and `bond_option_mode_set`)
/// force it to 100 ms in the modes that cannot use the ARP monitor when none is set
/// ("miimon must be specified, otherwise bonding will not detect link failure, speed and
/// duplex which are essential for 802.3ad operation ... Forcing miimon to 100msec").
pub fn miimon_in_force(mode: &str, miimon_ms: f64) -> f64 {
    if miimon_ms == 0.0 && !mode_uses_arp(mode) {
        DEFAULT_MIIMON_MS
    } else {
        miimon_ms
    }
}

/// A verdict change to apply at `at` unless a check aborted it (`generation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commit {
    /// When the monitor commits the change.
    pub at: SimTime,
    /// Identifies the countdown; one aborted by a check is void.
    pub generation: u32,
}

#[derive(Debug, Clone, Copy)]
struct LinkState {
    verdict_up: bool,
    generation: u32,
    /// A countdown runs (`BOND_LINK_FAIL` or `BOND_LINK_BACK`).
    counting: bool,
    /// The carrier came back to the verdict at this time during the countdown; a check
    /// at or after it sees that and aborts the countdown.
    restored_at: Option<SimTime>,
    /// The countdown's first check and its commit.
    seen_at: SimTime,
    commit_at: SimTime,
    /// The countdown is an updelay skipped (`ignore_updelay`): its commit is its first check.
    skipped: bool,
}

impl LinkState {
    const UP: LinkState = LinkState {
        verdict_up: true,
        generation: 0,
        counting: false,
        restored_at: None,
        seen_at: SimTime::ZERO,
        commit_at: SimTime::ZERO,
        skipped: false,
    };
}

/// The monitor of every link of the bond.
#[derive(Debug, Clone)]
pub struct Monitor {
    period: SimTime,
    up_checks: u64,
    down_checks: u64,
    /// `ignore_updelay`: the bonding driver skips updelay when no link is usable; teamd does not.
    ignore_updelay: bool,
    links: Vec<LinkState>,
}

impl Monitor {
    /// A monitor checking every `miimon_ms` (0 = never) on a kernel ticking `hz` times a second
    /// ([`jiffies_period`]) for `links` links, all up.
    pub fn new(miimon_ms: f64, updelay_ms: f64, downdelay_ms: f64, hz: u32, links: usize) -> Monitor {
        let checks = |delay_ms: f64| if miimon_ms > 0.0 { (delay_ms / miimon_ms).floor() as u64 } else { 0 };
        Monitor {
            period: jiffies_period(miimon_ms, hz),
            up_checks: checks(updelay_ms),
            down_checks: checks(downdelay_ms),
            ignore_updelay: true,
            links: vec![LinkState::UP; links],
        }
    }

    /// How often the monitor checks (its `miimon` in whole jiffies; 0 without one).
    pub fn period(&self) -> SimTime {
        self.period
    }

    /// teamd's `ethtool` link watch (`lw_ethtool_event_watch_port_changed`): the kernel tells
    /// teamd of a carrier change at once (netlink, no polling), which takes effect `delay_up_ms`
    /// / `delay_down_ms` later unless the carrier changes back first; the delays always apply.
    pub fn ethtool(delay_up_ms: f64, delay_down_ms: f64, links: usize) -> Monitor {
        // A check every nanosecond: every instant is a check, the delays are exact (in whole ns).
        Monitor {
            period: SimTime(1),
            up_checks: SimTime::from_millis_f64(delay_up_ms).0,
            down_checks: SimTime::from_millis_f64(delay_down_ms).0,
            ignore_updelay: false,
            links: vec![LinkState::UP; links],
        }
    }

    /// Links whose carrier is back and whose updelay runs (`BOND_LINK_BACK`: seen by a check
    /// at or before `now`, carrier still up), with when their updelay ends.
    fn waiting_up(&self, now: SimTime) -> impl Iterator<Item = (usize, SimTime)> + '_ {
        self.links
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.counting && !s.verdict_up && s.restored_at.is_none() && s.seen_at <= now)
            .map(|(l, s)| (l, s.commit_at))
    }

    /// After a verdict took a link down: when no link of `links` is up, the bonding driver's
    /// `bond_select_active_slave` → `bond_find_best_slave` takes the `BOND_LINK_BACK` link (carrier
    /// up, updelay running) nearest the end of its updelay (the lowest-numbered of equals), and
    /// `bond_change_active_slave` makes it up at once ([`Monitor::promote`]); returns it, if any.
    /// Not for `mode`s of teamd and Open vSwitch, which watch their links themselves.
    pub fn promote_if_none_up(&mut self, mode: &str, links: &[LinkView], now: SimTime) -> Option<usize> {
        if mode.starts_with("teamd:") || mode.starts_with("ovs:") || links.iter().any(|l| l.up) {
            return None;
        }
        let (link, _) = self.waiting_up(now).min_by_key(|&(link, at)| (at, link))?;
        self.promote(link);
        Some(link)
    }

    /// `bond_change_active_slave` making a `BOND_LINK_BACK` slave active: it is up at once
    /// ("making interface the new active one %d ms earlier"), its updelay void.
    pub fn promote(&mut self, link: usize) {
        let state = &mut self.links[link];
        state.verdict_up = true;
        state.counting = false;
        state.skipped = false;
        state.restored_at = None;
        state.generation = state.generation.wrapping_add(1);
    }

    /// Whether the bond believes `link` is up.
    pub fn is_up(&self, link: usize) -> bool {
        self.links[link].verdict_up
    }

    /// The carrier of `link` changed at `now`; returns the commits to schedule, each for its
    /// link: `link`'s, if any, and the one of a higher-numbered link back at the same check
    /// whose skipped updelay `link` takes over (that link now waits out its updelay; its
    /// earlier commit is void). `skip_updelay`: the mode would skip the updelay now
    /// ([`Scheduler::skips_updelay`], the kernel's `ignore_updelay`; a monitor that never skips
    /// it, teamd's, disregards it).
    ///
    /// [`Scheduler::skips_updelay`]: crate::Scheduler::skips_updelay
    pub fn carrier_changed(
        &mut self,
        link: usize,
        now: SimTime,
        carrier_up: bool,
        skip_updelay: bool,
    ) -> impl Iterator<Item = (usize, Commit)> {
        let mut out = [None, None];
        out[0] = self.carrier_change(link, now, carrier_up, skip_updelay, &mut out[1]).map(|c| (link, c));
        out.into_iter().flatten()
    }

    fn carrier_change(
        &mut self,
        link: usize,
        now: SimTime,
        carrier_up: bool,
        skip_updelay: bool,
        demoted: &mut Option<(usize, Commit)>,
    ) -> Option<Commit> {
        let period = self.period.0;
        if period == 0 {
            return None;
        }
        let seen = now.0.div_ceil(period) * period;
        // Another link whose carrier is back and takes the skipped updelay at that same check.
        let rival = (0..self.links.len()).find(|&i| {
            let s = &self.links[i];
            i != link && s.counting && s.skipped && !s.verdict_up && s.restored_at.is_none() && s.seen_at.0 == seen
        });
        let state = &mut self.links[link];
        if state.verdict_up == carrier_up {
            // Back to what the bond believes: the next check sees it (in `commit` or below).
            if state.counting {
                state.restored_at = Some(now);
                if state.skipped && now < state.seen_at {
                    // Gone again before the check that was to make it up: that check walks on, and
                    // the next link back at it takes the skipped updelay.
                    state.skipped = false;
                    let check = state.seen_at;
                    *demoted = self.regrant_skip(link, check);
                }
            }
            return None;
        }
        if state.counting {
            if let Some(back) = state.restored_at.take() {
                // It was back since `back`: did a check (at a multiple of the period, a change at
                // the same instant coming first) fall before it went again?
                if back.0.div_ceil(period) * period >= now.0 {
                    return None; // unseen: the countdown goes on, its commit stands
                }
            }
        }
        state.generation = state.generation.wrapping_add(1);
        state.counting = true;
        state.restored_at = None;
        let skips = carrier_up && skip_updelay && self.ignore_updelay && rival.is_none_or(|r| r > link);
        state.skipped = skips;
        let checks = match (carrier_up, skips) {
            (false, _) => self.down_checks,
            (true, true) => 0,
            (true, false) => self.up_checks,
        };
        let at = SimTime(seen + checks * period);
        (state.seen_at, state.commit_at) = (SimTime(seen), at);
        let generation = state.generation;
        if let Some(r) = rival.filter(|_| skips) {
            // `link` comes first in the walk: the other waits out its updelay from that check.
            let other = &mut self.links[r];
            other.generation = other.generation.wrapping_add(1);
            other.skipped = false;
            other.commit_at = SimTime(seen + self.up_checks * period);
            *demoted = Some((r, Commit { at: other.commit_at, generation: other.generation }));
        }
        Some(Commit { at, generation })
    }

    /// The first link but `gone` whose carrier is back and seen at `check`, waiting out its
    /// updelay, now skips it: its new commit (at `check`).
    fn regrant_skip(&mut self, gone: usize, check: SimTime) -> Option<(usize, Commit)> {
        let next = (0..self.links.len()).find(|&i| {
            let s = &self.links[i];
            i != gone && s.counting && !s.verdict_up && !s.skipped && s.restored_at.is_none() && s.seen_at == check
        })?;
        let state = &mut self.links[next];
        state.generation = state.generation.wrapping_add(1);
        state.skipped = true;
        state.commit_at = check;
        Some((next, Commit { at: check, generation: state.generation }))
    }

    /// Applies `commit` for `link` if it still stands and the carrier still
    /// agrees; returns true if the verdict changed.
    pub fn commit(&mut self, link: usize, generation: u32, carrier_up: bool) -> bool {
        let state = &mut self.links[link];
        if state.generation != generation {
            return false;
        }
        state.counting = false;
        state.skipped = false;
        state.restored_at = None;
        if state.verdict_up == carrier_up {
            return false; // a check saw the carrier back: the countdown was aborted
        }
        state.verdict_up = carrier_up;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Monitor {
        /// `link`'s own commit from [`Monitor::carrier_changed`] (the tests of one link).
        fn changed(&mut self, link: usize, now: SimTime, up: bool, skip: bool) -> Option<Commit> {
            let commits: Vec<_> = self.carrier_changed(link, now, up, skip).collect();
            assert!(commits.iter().all(|&(l, _)| l == link), "no other link's commit");
            commits.first().map(|&(_, c)| c)
        }
    }

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn failure_is_committed_at_the_next_check_plus_downdelay() {
        let mut m = Monitor::new(100.0, 0.0, 200.0, 1000, 2);
        let c = m.changed(0, ms(1050), false, false).unwrap();
        assert_eq!(c.at, ms(1300)); // seen at 1100, committed two checks later
        assert!(m.is_up(0));
        assert!(m.commit(0, c.generation, false));
        assert!(!m.is_up(0));
    }

    #[test]
    fn checks_run_on_whole_jiffies() {
        // msecs_to_jiffies rounds up: 1 ms is one jiffy at every HZ, 10 ms three jiffies at 250.
        assert_eq!(jiffies_period(1.0, 1000), ms(1));
        assert_eq!(jiffies_period(1.0, 250), ms(4));
        assert_eq!(jiffies_period(10.0, 250), ms(12));
        assert_eq!(jiffies_period(100.0, 250), ms(100));
        assert_eq!(jiffies_period(1.0, 100), ms(10));
        assert_eq!(jiffies_period(1.0, 300), SimTime(3_333_333));
        assert_eq!(jiffies_period(10.0, 300), ms(10)); // 3 jiffies of 1/300 s
        assert_eq!(jiffies_period(11.0, 300), SimTime(13_333_333)); // 4 jiffies (3.3 rounded up)
        assert_eq!(jiffies_period(0.0, 250), SimTime::ZERO);
        // seed 003's miimon = 1 ms on Ubuntu's HZ = 250: a carrier lost at 5 ms is seen at the
        // 8 ms check, and a downdelay of 2 ms (2 checks) commits it at 16 ms, not at 7.
        let mut m = Monitor::new(1.0, 0.0, 2.0, 250, 1);
        assert_eq!(m.changed(0, ms(5), false, false).unwrap().at, ms(16));
        let mut m = Monitor::new(1.0, 0.0, 2.0, 1000, 1);
        assert_eq!(m.changed(0, ms(5), false, false).unwrap().at, ms(7));
    }

    #[test]
    fn delays_round_down_to_whole_checks() {
        let mut m = Monitor::new(100.0, 250.0, 0.0, 1000, 1);
        let down = m.changed(0, ms(100), false, false).unwrap();
        assert_eq!(down.at, ms(100)); // a check at the very moment sees it
        m.commit(0, down.generation, false);
        let up = m.changed(0, ms(430), true, false).unwrap();
        assert_eq!(up.at, ms(700)); // seen at 500, updelay 250 ms = 2 checks
    }

    #[test]
    fn carrier_back_before_the_commit_cancels_it() {
        let mut m = Monitor::new(100.0, 0.0, 300.0, 1000, 1);
        let c = m.changed(0, ms(10), false, false).unwrap();
        assert_eq!(m.changed(0, ms(150), true, false), None);
        assert!(!m.commit(0, c.generation, true), "the check at 200 saw the carrier back");
        assert!(m.is_up(0));
    }

    #[test]
    fn a_flap_between_two_checks_is_unseen_and_the_countdown_goes_on() {
        // `bond_miimon_inspect` reads the carrier at its checks only: in BOND_LINK_FAIL a check
        // that sees it back aborts ("recovered before downdelay expired"), else `delay--` goes on.
        let mut m = Monitor::new(100.0, 0.0, 300.0, 1000, 1);
        let c = m.changed(0, ms(10), false, false).unwrap();
        assert_eq!(c.at, ms(400), "seen at 100, 3 checks of downdelay");
        assert_eq!(m.changed(0, ms(120), true, false), None);
        assert_eq!(m.changed(0, ms(150), false, false), None, "no check in [120, 150): unseen");
        assert!(m.commit(0, c.generation, false), "the first countdown commits");
        assert!(!m.is_up(0));
        // Seen back by the check at 200 (aborted), gone again at 250: a new countdown.
        let mut m = Monitor::new(100.0, 0.0, 300.0, 1000, 1);
        let first = m.changed(0, ms(10), false, false).unwrap();
        assert_eq!(m.changed(0, ms(120), true, false), None);
        let second = m.changed(0, ms(250), false, false).expect("a new countdown");
        assert_eq!(second.at, ms(600));
        assert!(!m.commit(0, first.generation, false), "the aborted countdown is void");
        assert!(m.commit(0, second.generation, false));
        // A check at the very instant it goes again sees it gone (a carrier change comes first).
        let mut m = Monitor::new(100.0, 0.0, 300.0, 1000, 1);
        let c = m.changed(0, ms(10), false, false).unwrap();
        assert_eq!(m.changed(0, ms(150), true, false), None);
        assert_eq!(m.changed(0, ms(200), false, false), None, "the check at 200 sees it gone");
        assert!(m.commit(0, c.generation, false));
        // updelay alike (BOND_LINK_BACK: "link status down again after %d ms").
        let mut m = Monitor::new(100.0, 200.0, 0.0, 1000, 1);
        let down = m.changed(0, ms(0), false, false).unwrap();
        assert!(m.commit(0, down.generation, false));
        let up = m.changed(0, ms(310), true, false).unwrap();
        assert_eq!(up.at, ms(600));
        assert_eq!(m.changed(0, ms(320), false, false), None);
        assert_eq!(m.changed(0, ms(390), true, false), None, "no check in [320, 390): unseen");
        assert!(m.commit(0, up.generation, true));
    }

    #[test]
    fn updelay_is_skipped_when_nothing_is_usable() {
        let mut m = Monitor::new(10.0, 1000.0, 0.0, 1000, 1);
        let c = m.changed(0, ms(0), false, false).unwrap();
        m.commit(0, c.generation, false);
        assert_eq!(m.changed(0, ms(55), true, true).unwrap().at, ms(60));
    }

    /// A monitor of `links` links (miimon 10 ms, updelay 50 ms), every one down since 100 ms.
    fn all_down(links: usize) -> Monitor {
        let mut m = Monitor::new(10.0, 50.0, 0.0, 1000, links);
        for link in 0..links {
            let c = m.changed(link, ms(100), false, false).unwrap();
            assert!(m.commit(link, c.generation, false));
        }
        m
    }

    #[test]
    fn of_links_back_at_one_check_only_the_first_skips_its_updelay() {
        // miimon 10 ms, updelay 50 ms, both links down. Link 1's carrier is back at 201.2 ms, link
        // 0's at 205.1 ms: the check at 210 walks link 0 first, which takes `ignore_updelay` and is
        // up at once; link 1 counts its 5 checks (up at 260). Link 1's skip granted at 201.2 is void.
        let mut m = all_down(2);
        let first = m.changed(1, SimTime(201_200_000), true, true).unwrap();
        assert_eq!(first.at, ms(210));
        let got: Vec<_> = m.carrier_changed(0, SimTime(205_100_000), true, true).collect();
        assert_eq!(got.len(), 2);
        let (zero, one) = (got[0], got[1]);
        assert_eq!((zero.0, zero.1.at), (0, ms(210)));
        assert_eq!((one.0, one.1.at), (1, ms(260)));
        assert!(!m.commit(1, first.generation, true), "the skip it was granted went to link 0");
        assert!(m.commit(0, zero.1.generation, true));
        assert!(m.commit(1, one.1.generation, true));
        // A lower-numbered link back first keeps its skip; the later one waits.
        let mut m = all_down(2);
        assert_eq!(m.changed(0, SimTime(201_200_000), true, true).unwrap().at, ms(210));
        assert_eq!(m.changed(1, SimTime(205_100_000), true, true).unwrap().at, ms(260));
        // Back at different checks, each is alone at its own and skips (the mode decides whether
        // the second still may: by then the first is up).
        let mut m = all_down(2);
        assert_eq!(m.changed(1, SimTime(201_200_000), true, true).unwrap().at, ms(210));
        assert_eq!(m.changed(0, SimTime(211_000_000), true, true).unwrap().at, ms(220));
    }

    #[test]
    fn a_link_gone_again_before_its_check_hands_the_skip_to_the_next() {
        // Link 1 back at 201.2 ms, link 0 at 205.1 ms (takes the skip, link 1 demoted), link 0
        // gone again at 207 ms: the check at 210 sees link 0 down and walks on to link 1, which
        // then skips its updelay (up at 210, not 260).
        let mut m = all_down(2);
        m.changed(1, SimTime(201_200_000), true, true).unwrap();
        let got: Vec<_> = m.carrier_changed(0, SimTime(205_100_000), true, true).collect();
        let zero = got[0].1;
        let back: Vec<_> = m.carrier_changed(0, ms(207), false, false).collect();
        assert_eq!(back.len(), 1, "link 1's new commit");
        let (link, commit) = back[0];
        assert_eq!((link, commit.at), (1, ms(210)));
        assert!(!m.commit(0, zero.generation, false), "link 0 is down at its check: no change");
        assert!(m.commit(1, commit.generation, true));
        // Gone again after its check: it was up by then; nothing moves.
        let mut m = all_down(2);
        m.changed(1, SimTime(201_200_000), true, true).unwrap();
        let got: Vec<_> = m.carrier_changed(0, SimTime(205_100_000), true, true).collect();
        assert!(m.commit(0, got[0].1.generation, true));
        assert_eq!(m.carrier_changed(0, ms(211), false, false).count(), 1, "its own down countdown only");
    }

    #[test]
    fn linux_forces_miimon_in_the_modes_that_cannot_use_arp() {
        for mode in ["802.3ad", "balance-tlb", "balance-alb"] {
            assert!(!mode_uses_arp(mode));
            assert_eq!(miimon_in_force(mode, 0.0), 100.0);
            assert_eq!(miimon_in_force(mode, 10.0), 10.0);
        }
        assert_eq!(miimon_in_force("active-backup", 0.0), 0.0, "active-backup keeps miimon = 0: no monitor");
        assert!(mode_uses_arp("balance-rr"));
    }

    #[test]
    fn teamds_ethtool_watch_sees_the_carrier_at_once_and_always_waits_its_delays() {
        let mut m = Monitor::ethtool(250.0, 30.0, 1);
        let down = m.changed(0, SimTime(1_050_000_123), false, false).unwrap();
        assert_eq!(down.at, SimTime(1_080_000_123), "no miimon grid: the delay from the very instant");
        m.commit(0, down.generation, false);
        // No usable link left, yet delay_up applies (the bonding driver would skip it).
        assert_eq!(m.changed(0, ms(2000), true, true).unwrap().at, ms(2250));
    }

    #[test]
    fn miimon_zero_never_notices() {
        let mut m = Monitor::new(0.0, 0.0, 0.0, 1000, 1);
        assert_eq!(m.changed(0, ms(5), false, false), None);
        assert!(m.is_up(0));
    }
}
