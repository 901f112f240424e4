//! The ARP monitor (`arp_interval`, `arp_ip_target`, `arp_validate`, `arp_all_targets`,
//! `arp_missed_max`), as `drivers/net/bonding/bond_main.c` runs it.
//!
//! Every `arp_interval` the monitor inspects each slave's last signs of life, commits the
//! verdicts, then sends ARP requests to every target: in active-backup
//! (`bond_activebackup_arp_mon`: `bond_ab_arp_inspect`, `bond_ab_arp_commit`,
//! `bond_ab_arp_probe`) on the active slave only, or, with none active, on one slave at a
//! time in rotation (`current_arp_slave`); in the load-balancing modes
//! (`bond_loadbalance_arp_mon`) on every slave with carrier. What counts as a sign of life
//! is `bond_rcv_validate` / `bond_arp_rcv`: any frame, only ARP frames (`filter`), or only
//! ARP traffic to or from a target (validation, per slave state). The world carries the
//! probes as real frames and tells the monitor what each slave sent and received; the
//! monitor never touches an event queue.

use crate::time::SimTime;

/// Bits of Linux's `arp_validate` (`BOND_ARP_VALIDATE_ACTIVE` = 1 << `BOND_STATE_ACTIVE`,
/// `..._BACKUP` = 1 << `BOND_STATE_BACKUP`, `BOND_ARP_FILTER` = 4).
pub const VALIDATE_ACTIVE: u8 = 1;
/// Backup slaves validate.
pub const VALIDATE_BACKUP: u8 = 2;
/// Slaves that do not validate count only ARP frames.
pub const FILTER: u8 = 4;

/// Which monitor routine runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArpMode {
    /// `bond_activebackup_arp_mon`.
    ActiveBackup,
    /// `bond_loadbalance_arp_mon` (balance-rr, balance-xor, broadcast and bondsim's own schedulers).
    LoadBalance,
    /// teamd's `arp_ping` link watch (`lw_psr_callback_periodic`, libteam
    /// `teamd/teamd_link_watch.c`): every port probes; a port is up at a check if a reply
    /// came since the last probe, down once more than `missed_max` checks in a row had none.
    /// Its socket takes ARP replies only. A port starts down (its private data is zeroed) and
    /// comes up at the first check after a reply.
    TeamdArpPing,
}

/// What a slave received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// A frame that is not ARP (data, an acknowledgement).
    Other,
    /// An ARP request from the bond to target `k` (another slave's probe, flooded by the switch).
    Request(usize),
    /// An ARP reply from target `k`.
    Reply(usize),
}

#[derive(Debug, Clone)]
struct Slave {
    up: bool,
    last_rx: SimTime,
    /// `target_last_arp_rx`: the last validated ARP of each target.
    target_rx: Vec<SimTime>,
    /// `slave->last_tx`: the last ARP request sent (`bond_arp_send` stamps it; both monitors
    /// test it since Linux 6.0, which tested the NIC's `dev_trans_start` before).
    last_tx: SimTime,
    /// `last_link_up`: when the slave came up or was made active.
    last_link_up: SimTime,
    /// teamd: a reply came since the last probe, and checks in a row without one.
    reply_received: bool,
    missed: u64,
}

/// The ARP monitor of every slave of a bond.
#[derive(Debug, Clone)]
pub struct ArpMonitor {
    interval: SimTime,
    missed_max: u64,
    validate: u8,
    all_targets: bool,
    mode: ArpMode,
    slaves: Vec<Slave>,
    current_arp_slave: Option<usize>,
    /// ARP requests sent (one per target per slave probed).
    pub probes_sent: u64,
    /// ARP replies that reached the bond.
    pub replies: u64,
}

impl ArpMonitor {
    /// A monitor every `interval` over `links` slaves probing `targets` targets; all slaves
    /// start up, as `bond_enslave` sets a slave with carrier under the ARP monitor.
    pub fn new(
        interval: SimTime,
        missed_max: u32,
        targets: usize,
        validate: u8,
        all_targets: bool,
        mode: ArpMode,
        links: usize,
    ) -> ArpMonitor {
        let slave = Slave {
            up: true,
            last_rx: SimTime::ZERO,
            target_rx: vec![SimTime::ZERO; targets],
            last_tx: SimTime::ZERO,
            last_link_up: SimTime::ZERO,
            reply_received: false,
            missed: 0,
        };
        ArpMonitor {
            interval,
            missed_max: u64::from(missed_max),
            validate,
            all_targets,
            mode,
            slaves: vec![Slave { up: mode != ArpMode::TeamdArpPing, ..slave }; links],
            current_arp_slave: None,
            probes_sent: 0,
            replies: 0,
        }
    }

    /// The monitor's period.
    pub fn interval(&self) -> SimTime {
        self.interval
    }

    /// Which routine runs.
    pub fn mode(&self) -> ArpMode {
        self.mode
    }

    /// The monitor's verdict on `link`.
    pub fn is_up(&self, link: usize) -> bool {
        self.slaves[link].up
    }

    /// `bond_time_in_interval`: `now` lies in `[last - δ, last + k·δ + δ/2]`.
    fn in_interval(&self, now: SimTime, last: SimTime, k: u64) -> bool {
        let d = self.interval.0;
        now.0 + d >= last.0 && now.0 <= last.0 + k * d + d / 2
    }

    fn validates(&self, active: bool) -> bool {
        self.validate & if active { VALIDATE_ACTIVE } else { VALIDATE_BACKUP } != 0
    }

    /// `slave_last_rx` (include/net/bonding.h), which active-backup's monitor reads: with
    /// `arp_all_targets = all` the oldest of the targets' last validated ARP, whether or not the
    /// slave validates (only `bond_validate_arp` refreshes them, so a slave that does not validate
    /// keeps the times it started with: the kernel's code, which the documentation's "only for
    /// slaves with arp_validate" does not describe); otherwise the last sign of life. The
    /// load-balancing monitor reads `slave->last_rx` itself.
    fn last_rx(&self, link: usize) -> SimTime {
        let s = &self.slaves[link];
        if self.all_targets {
            s.target_rx.iter().copied().min().unwrap_or(s.last_rx)
        } else {
            s.last_rx
        }
    }

    /// `link` became the active slave (`bond_change_active_slave` sets `last_link_up`).
    pub fn made_active(&mut self, link: usize, now: SimTime) {
        self.slaves[link].last_link_up = now;
    }

    /// `link` received `frame` at `now`; `active` is the bond's active slave in active-backup
    /// (every slave is active in the load-balancing modes) (`bond_rcv_validate`, `bond_arp_rcv`,
    /// `bond_validate_arp`).
    pub fn received(&mut self, link: usize, now: SimTime, frame: Received, active: Option<usize>) {
        if matches!(frame, Received::Reply(_)) {
            self.replies += 1;
        }
        // While it searches, the slave being probed has the active flags (`bond_ab_arp_probe`).
        let is_active = self.mode != ArpMode::ActiveBackup
            || active == Some(link)
            || (active.is_none() && self.current_arp_slave == Some(link));
        let validates = self.validates(is_active);
        // `bond_arp_rcv`: a backup trusts the bond's own requests, flooded to it (tip = target,
        // the addresses swapped), only when the active slave has validated an ARP since it became
        // active ("to avoid endless looping when we can't reach the arp_ip_target and fool
        // ourselves with our own arp requests"); without that, a reply counts while a search
        // runs and the probed slave sent within the interval.
        let trusts_requests = active.is_some_and(|a| self.last_rx(a) > self.slaves[a].last_link_up);
        let searching = self.current_arp_slave.is_some_and(|c| self.in_interval(now, self.slaves[c].last_tx, 1));
        let s = &mut self.slaves[link];
        if self.mode == ArpMode::TeamdArpPing {
            s.reply_received |= matches!(frame, Received::Reply(_));
        } else if validates {
            let target = match frame {
                Received::Reply(k) if is_active => Some(k),
                Received::Request(k) if !is_active && trusts_requests => Some(k),
                Received::Reply(k) if !is_active && !trusts_requests && searching => Some(k),
                _ => None,
            };
            if let Some(k) = target {
                s.target_rx[k] = now;
                s.last_rx = now;
            }
        } else if self.validate & FILTER == 0 || frame != Received::Other {
            s.last_rx = now;
        }
    }

    /// One run of the monitor at `now`: inspects and commits (`bond_ab_arp_inspect` +
    /// `bond_ab_arp_commit`, or `bond_loadbalance_arp_mon`). `active` is the bond's active
    /// slave (active-backup); `carrier` each slave's carrier. Returns the slaves whose
    /// verdict changed, with the new verdict.
    pub fn inspect(&mut self, now: SimTime, active: Option<usize>, carrier: &[bool]) -> Vec<(usize, bool)> {
        let mut changes = Vec::new();
        let m = self.missed_max;
        for (link, &has_carrier) in carrier.iter().enumerate().take(self.slaves.len()) {
            let is_active = self.mode != ArpMode::ActiveBackup || active == Some(link);
            let last_rx = self.last_rx(link);
            if self.mode == ArpMode::TeamdArpPing {
                let s = &mut self.slaves[link];
                s.missed = if std::mem::take(&mut s.reply_received) { 0 } else { s.missed + 1 };
            }
            let s = &self.slaves[link];
            let verdict = match self.mode {
                ArpMode::TeamdArpPing => s.missed == 0 || (s.up && s.missed <= m),
                // `bond_loadbalance_arp_mon` reads `slave->last_rx`, never `slave_last_rx`.
                ArpMode::LoadBalance if !s.up => {
                    self.in_interval(now, s.last_tx, 1) && self.in_interval(now, s.last_rx, 1)
                }
                ArpMode::LoadBalance => self.in_interval(now, s.last_tx, m) && self.in_interval(now, s.last_rx, m),
                ArpMode::ActiveBackup if !s.up => self.in_interval(now, last_rx, 1),
                // Slaves get 2δ after coming up or being made active.
                ArpMode::ActiveBackup if self.in_interval(now, s.last_link_up, 2) => true,
                // A backup is down after missed_max + 1 intervals without a sign of life, unless
                // the monitor is searching for a new active slave.
                ArpMode::ActiveBackup if !is_active => {
                    self.current_arp_slave.is_some() || self.in_interval(now, last_rx, m + 1)
                }
                // The active slave is down after missed_max intervals without sending a probe or
                // receiving.
                ArpMode::ActiveBackup => self.in_interval(now, s.last_tx, m) && self.in_interval(now, last_rx, m),
            };
            // A slave without carrier cannot be brought up (`bond_slave_is_up` in the probe).
            let verdict = verdict && (s.up || has_carrier);
            if verdict != s.up {
                let s = &mut self.slaves[link];
                s.up = verdict;
                if verdict {
                    s.last_link_up = now;
                }
                changes.push((link, verdict));
                if self.mode == ArpMode::ActiveBackup && (verdict || active == Some(link)) {
                    // bond_ab_arp_commit: a new active slave ends the search, a failed active starts it.
                    self.current_arp_slave = None;
                }
            }
        }
        changes
    }

    /// The slave the probes go out on after the commit (`bond_ab_arp_probe`, or every slave
    /// with carrier in `bond_loadbalance_arp_mon`); counts them (`targets` each).
    pub fn probe(&mut self, now: SimTime, active: Option<usize>, carrier: &[bool], targets: usize) -> Vec<usize> {
        let on: Vec<usize> = match (self.mode, active) {
            (ArpMode::LoadBalance | ArpMode::TeamdArpPing, _) => {
                (0..self.slaves.len()).filter(|&l| carrier[l]).collect()
            }
            (ArpMode::ActiveBackup, Some(a)) => vec![a],
            (ArpMode::ActiveBackup, None) => {
                // No active slave: try the next slave with carrier after the last one tried, the
                // first slave standing for it when none was (`bond_ab_arp_probe`:
                // `curr_arp_slave = bond_first_slave_rcu(bond)`, then the next one after it). The
                // slave probed is made active for the time (`last_link_up`).
                let n = self.slaves.len();
                let from = self.current_arp_slave.unwrap_or(0) + 1;
                let next = (0..n).map(|k| (from + k) % n).find(|&l| carrier[l]);
                if let Some(l) = next {
                    self.slaves[l].last_link_up = now;
                }
                self.current_arp_slave = next.or(self.current_arp_slave);
                next.into_iter().collect()
            }
        };
        for &link in &on {
            self.slaves[link].last_tx = now;
        }
        self.probes_sent += (on.len() * targets) as u64;
        on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// Runs the monitor on two slaves every 100 ms until `until`, slave 0 active; a probe
    /// on a slave that `passes(link, t)` is answered 1 ms later, and in active-backup the
    /// switch floods it to the other slave if that one passes. Returns when each slave failed.
    fn run(mode: ArpMode, validate: u8, until: u64, passes: impl Fn(usize, u64) -> bool) -> [Option<u64>; 2] {
        let mut m = ArpMonitor::new(ms(100), 2, 1, validate, false, mode, 2);
        let carrier = [true, true];
        let mut failed = [None, None];
        let mut active = Some(0);
        for t in (0..=until).step_by(100) {
            for (link, up) in m.inspect(ms(t), active, &carrier) {
                if !up {
                    failed[link].get_or_insert(t);
                    if active == Some(link) {
                        active = (0..2).find(|&l| m.is_up(l));
                        if let Some(a) = active {
                            m.made_active(a, ms(t));
                        }
                    }
                }
            }
            for link in m.probe(ms(t), active, &carrier, 1) {
                if !passes(link, t) {
                    continue;
                }
                m.received(link, ms(t + 1), Received::Reply(0), active);
                if mode == ArpMode::ActiveBackup && passes(1 - link, t) {
                    m.received(1 - link, ms(t + 1), Received::Request(0), active);
                }
            }
        }
        failed
    }

    #[test]
    fn active_backup_fails_the_silent_active_after_missed_max_plus_one_intervals_at_most() {
        // The last reply arrives at 1001 ms; the active slave is down at the first check more
        // than missed_max·δ + δ/2 = 250 ms later: 1300 ms; its backup takes over.
        let failed = run(ArpMode::ActiveBackup, 0, 3000, |link, t| link != 0 || t < 1050);
        assert_eq!(failed, [Some(1300), None], "the backup hears the new active's replies: it stays up");
        // Validating every slave changes nothing here: the traffic is the targets'.
        let failed =
            run(ArpMode::ActiveBackup, VALIDATE_ACTIVE | VALIDATE_BACKUP, 3000, |link, t| link != 0 || t < 1050);
        assert_eq!(failed, [Some(1300), None]);
    }

    #[test]
    fn a_healthy_bond_never_fails_a_slave() {
        assert_eq!(run(ArpMode::ActiveBackup, 0, 10_000, |_, _| true), [None, None]);
        assert_eq!(run(ArpMode::LoadBalance, 0, 10_000, |_, _| true), [None, None]);
        assert_eq!(run(ArpMode::ActiveBackup, VALIDATE_ACTIVE | VALIDATE_BACKUP, 10_000, |_, _| true), [None, None]);
    }

    #[test]
    fn a_backup_that_hears_nothing_fails_one_interval_later_than_an_active_would() {
        // Backup slave 1 stops hearing the flooded requests after 1001 ms: down once more than
        // (missed_max + 1)·δ + δ/2 = 350 ms passed, at the check of 1400 ms.
        let failed = run(ArpMode::ActiveBackup, 0, 3000, |link, t| link != 1 || t < 1050);
        assert_eq!(failed, [None, Some(1400)]);
    }

    #[test]
    fn load_balancing_fails_each_silent_slave_after_missed_max_intervals() {
        let failed = run(ArpMode::LoadBalance, 0, 3000, |link, t| link != 1 || t < 2000);
        assert_eq!(failed, [None, Some(2200)], "last reply at 1901 ms + 250 ms: the check at 2200 ms");
    }

    #[test]
    fn teamd_arp_ping_fails_a_port_after_more_than_missed_max_checks_without_a_reply() {
        // missed_max 2: answered until the probe of 900 ms; checks at 1000 (reply seen), then
        // 1100, 1200 missed (1, 2: still up), 1300 the third: down. A port starts down and comes
        // up at the first check after a reply: at 100 ms.
        let mut m = ArpMonitor::new(ms(100), 2, 1, 0, false, ArpMode::TeamdArpPing, 1);
        assert!(!m.is_up(0));
        let mut changes = Vec::new();
        for t in (0..=2000).step_by(100) {
            changes.extend(m.inspect(ms(t), None, &[true]).into_iter().map(|c| (t, c.1)));
            m.probe(ms(t), None, &[true], 1);
            m.received(0, ms(t + 1), Received::Request(0), None); // requests do not count
            if t < 1000 {
                m.received(0, ms(t + 1), Received::Reply(0), None);
            }
        }
        assert_eq!(changes, [(100, true), (1300, false)]);
    }

    #[test]
    fn validation_ignores_traffic_that_is_not_the_targets() {
        let mut m = ArpMonitor::new(ms(100), 2, 1, VALIDATE_ACTIVE | VALIDATE_BACKUP, false, ArpMode::ActiveBackup, 1);
        m.received(0, ms(50), Received::Other, Some(0));
        assert_eq!(m.slaves[0].last_rx, SimTime::ZERO, "a data frame is no sign of life to a validating slave");
        m.received(0, ms(60), Received::Request(0), Some(0));
        assert_eq!(m.slaves[0].last_rx, SimTime::ZERO, "the active slave validates replies only");
        m.received(0, ms(70), Received::Reply(0), Some(0));
        assert_eq!(m.slaves[0].last_rx, ms(70));
        let mut f = ArpMonitor::new(ms(100), 2, 1, FILTER, false, ArpMode::ActiveBackup, 1);
        f.received(0, ms(50), Received::Other, Some(0));
        assert_eq!(f.slaves[0].last_rx, SimTime::ZERO, "filter: only ARP counts");
        f.received(0, ms(60), Received::Request(0), Some(0));
        assert_eq!(f.slaves[0].last_rx, ms(60));
    }

    #[test]
    fn all_targets_needs_every_target_to_answer() {
        let mut m = ArpMonitor::new(ms(100), 2, 2, VALIDATE_ACTIVE, true, ArpMode::ActiveBackup, 1);
        for t in (0..=2000).step_by(100) {
            m.inspect(ms(t), Some(0), &[true]);
            m.probe(ms(t), Some(0), &[true], 2);
            m.received(0, ms(t + 1), Received::Reply(0), Some(0)); // target 1 never answers
        }
        assert!(!m.is_up(0), "target 1 is silent: the slave is down under arp_all_targets = all");
        let mut any = ArpMonitor::new(ms(100), 2, 2, VALIDATE_ACTIVE, false, ArpMode::ActiveBackup, 1);
        for t in (0..=2000).step_by(100) {
            any.inspect(ms(t), Some(0), &[true]);
            any.probe(ms(t), Some(0), &[true], 2);
            any.received(0, ms(t + 1), Received::Reply(0), Some(0));
        }
        assert!(any.is_up(0), "one target answering is enough under any");
    }

    #[test]
    fn the_load_balancing_monitor_disregards_arp_all_targets() {
        // Target 0 answers on link 0 only, target 1 on link 1 only: under `all` each link misses
        // a target, but `bond_loadbalance_arp_mon` reads `slave->last_rx`: both stay up.
        let mut m = ArpMonitor::new(ms(100), 2, 2, VALIDATE_ACTIVE, true, ArpMode::LoadBalance, 2);
        let mut changes = Vec::new();
        for t in (0..=2000).step_by(100) {
            changes.extend(m.inspect(ms(t), None, &[true, true]));
            for l in m.probe(ms(t), None, &[true, true], 2) {
                m.received(l, ms(t + 1), Received::Reply(l), None);
            }
        }
        assert_eq!(changes, []);
    }

    #[test]
    fn under_all_targets_a_backup_that_does_not_validate_keeps_its_first_times_and_fails() {
        // `slave_last_rx` takes the oldest target time under `all` whatever the validation, and
        // only `bond_validate_arp` refreshes it: a backup under `arp_validate = active` hears the
        // flooded requests (last_rx moves) but its target times stay at the start: down at the
        // first check more than (missed_max + 1)·δ + δ/2 after them, 400 ms.
        let mut m = ArpMonitor::new(ms(100), 2, 1, VALIDATE_ACTIVE, true, ArpMode::ActiveBackup, 2);
        let mut changes = Vec::new();
        for t in (0..=2000).step_by(100) {
            changes.extend(m.inspect(ms(t), Some(0), &[true, true]).into_iter().map(|c| (t, c)));
            for l in m.probe(ms(t), Some(0), &[true, true], 1) {
                m.received(l, ms(t + 1), Received::Reply(0), Some(0));
                m.received(1, ms(t + 1), Received::Request(0), Some(0));
            }
        }
        assert_eq!(changes, [(400, (1, false))]);
    }

    #[test]
    fn the_active_slave_is_judged_by_the_probes_it_sends_not_its_nics_transmissions() {
        // Linux ≥ 6.0 tests `slave_last_tx` (stamped by `bond_arp_send`) for the active slave too:
        // it probes every interval, so only a silence from the targets fails it.
        let mut m = ArpMonitor::new(ms(100), 2, 1, 0, false, ArpMode::ActiveBackup, 2);
        let mut changes = Vec::new();
        for t in (0..=2000).step_by(100) {
            changes.extend(m.inspect(ms(t), Some(0), &[true, true]));
            m.probe(ms(t), Some(0), &[true, true], 1);
            m.received(0, ms(t + 1), Received::Reply(0), Some(0));
            m.received(1, ms(t + 1), Received::Request(0), Some(0));
        }
        assert_eq!(changes, []);
    }

    #[test]
    fn a_backup_trusts_flooded_requests_only_once_the_active_slave_heard_a_target() {
        // The target is gone: slave 0 (active) hears nothing and fails; slave 1 takes over and
        // hears nothing either, so its probes flooded to slave 0 are no sign of life there
        // (`bond_arp_rcv`: the active must have validated an ARP since it became active). Linux
        // ends with no slave up; trusting every request would bring slave 0 back and flap.
        let mut m = ArpMonitor::new(ms(100), 2, 1, VALIDATE_ACTIVE | VALIDATE_BACKUP, false, ArpMode::ActiveBackup, 2);
        let mut active = Some(0);
        let mut log = Vec::new();
        for t in (0..=3000).step_by(100) {
            for (l, up) in m.inspect(ms(t), active, &[true, true]) {
                log.push((t, l, up));
                if !up && active == Some(l) {
                    active = (0..2).find(|&k| m.is_up(k));
                    if let Some(a) = active {
                        m.made_active(a, ms(t));
                    }
                }
            }
            for l in m.probe(ms(t), active, &[true, true], 1) {
                m.received(1 - l, ms(t + 1), Received::Request(0), active); // flooded; no reply
            }
        }
        assert!(!log.iter().any(|&(_, l, up)| l == 0 && up), "slave 0 never comes back: {log:?}");
        assert!(!m.is_up(0) && !m.is_up(1));
    }

    #[test]
    fn with_no_active_slave_probes_rotate_and_an_answer_brings_a_slave_back() {
        let mut m = ArpMonitor::new(ms(100), 2, 1, 0, false, ArpMode::ActiveBackup, 3);
        for l in 0..3 {
            m.slaves[l].up = false;
        }
        let carrier = [true, false, true];
        // The first slave stands for the last one tried: the search starts after it, and slave 1
        // has no carrier (`bond_slave_is_up`): slave 2, then round to slave 0.
        assert_eq!(m.probe(ms(0), None, &carrier, 1), [2]);
        assert_eq!(m.probe(ms(100), None, &carrier, 1), [0]);
        assert_eq!(m.probe(ms(200), None, &carrier, 1), [2]);
        m.received(2, ms(201), Received::Reply(0), None);
        assert_eq!(m.inspect(ms(300), None, &carrier), [(2, true)]);
        assert_eq!(m.probes_sent, 3);
        let mut all_up = ArpMonitor::new(ms(100), 2, 1, 0, false, ArpMode::ActiveBackup, 3);
        assert_eq!(all_up.probe(ms(0), None, &[true; 3], 1), [1], "not the first slave itself");
    }
}
