//! What a user reads about a failover: one row per failure of a link (the
//! `failovers` table) and the summary's worst cases.
//!
//! The world feeds the log through thin hooks (`sim/`): a link's physical
//! failure and recovery, the bond's verdict on it (the monitor's commit), every
//! data packet that reaches the clients' wire with the link it came on, every
//! packet the application receives, every packet lost (with its cause); TCP's
//! timeouts come from the senders' statistics at the end. The log exists only
//! when a link can fail, so runs without failures pay nothing.
//!
//! Each failure has a window: from the physical failure (`down_at_s`) to the
//! link's recovery (`up_at_s`), or to the end of the run if it never recovers.
//!
//! * `detection_ms`: from the failure to the bond's verdict that the link is down
//!   (null if the bond never noticed: `miimon = 0`, or the link came back first).
//! * `switchover_ms`: seed 003 §4.3's flow switch-over time (FST), "the duration from the
//!   time of last data packets on old active slave (that is, just before link failure) to
//!   the time of the first data packets on new active slave", per flow that was using the
//!   failed link (the latest of its data packets to arrive before the failure came over it, at
//!   the same instant as over any other, and it was not finished when the link failed):
//!   from that flow's last data packet to arrive over the failed link before the failure to
//!   its first data packet to arrive over another link. Median and largest over those flows
//!   (null if none switched: the flow waited for the link, or ended).
//! * `lost_*`: packets lost (every copy dropped) in the window, by cause; for TCP these
//!   are segments its sender will repair, not losses at the application.
//! * `tcp_stall_ms`: for TCP, the longest gap in the application's in-order delivery of a
//!   flow in progress when the link failed (from its latest delivery before the failure, or
//!   from its start if nothing had reached the application yet), over the gaps that end after
//!   the failure and begin inside its window; a flow still waiting when the run ends counts
//!   its gap up to the end (the largest over flows).
//! * `rtos`, `spurious_rtos`: TCP retransmission timeouts that fired in the window, and
//!   the timeouts F-RTO found spurious in it.
//! * `throughput_bps`: payload bits the application received in the window per second.
//!
//! The table lists at most [`MAX_ROWS`] failures (a link failing at random with a tiny
//! `mtbf_s` fails without end); later failures are counted, not measured, and the summary
//! says `failovers_truncated`.

use serde::Serialize;

use crate::link::DropCause;
use crate::packet::Packet;
use crate::receiver::Receiver;
use crate::report::{count, flag, real, Declared, Report};
use crate::time::SimTime;

/// Failures the table lists at most (each row's measures, and the flows' pending measures
/// with them, are kept until the run ends).
pub const MAX_ROWS: usize = 100_000;

/// One failure of a link, as it is being measured.
#[derive(Debug, Clone)]
struct Row {
    link: usize,
    kind: &'static str,
    down: SimTime,
    up: Option<SimTime>,
    detected: Option<SimTime>,
    /// Per flow that switched: its switch-over time, ns.
    switchovers: Vec<u64>,
    stall: Option<SimTime>,
    lost: [u64; DropCause::COUNT],
    delivered_bytes: u64,
}

impl Row {
    /// A flow's delivery paused `gap` around this failure: the row keeps the longest.
    fn stalled(&mut self, gap: SimTime) {
        if self.stall.is_none_or(|s| gap > s) {
            self.stall = Some(gap);
        }
    }
}

/// The gaps `pending` was waiting in end at `at` (no delivery ended them: the run ended, or the
/// connection was given up).
fn close_stalls(rows: &mut [Row], pending: impl Iterator<Item = Pending>, at: SimTime) {
    for p in pending {
        if let Pending::Stall { row, prev } = p {
            rows[row].stalled(SimTime(at.0.saturating_sub(prev.0)));
        }
    }
}

/// A flow's measure still waiting for a packet.
#[derive(Debug, Clone, Copy)]
enum Pending {
    /// The flow's first packet over another link than `rows[row].link` ends it.
    Switch { row: usize, from: SimTime },
    /// The flow's next delivery ends a gap that began at `prev`.
    Stall { row: usize, prev: SimTime },
}

/// The measures of every failure of a run.
#[derive(Debug, Clone)]
pub struct FailoverLog {
    rows: Vec<Row>,
    /// Per link: its failure in progress (a row), if any.
    open: Vec<Option<usize>>,
    /// Per link: its latest failure (a row), for the verdict.
    latest: Vec<Option<usize>>,
    links: usize,
    /// Per flow and link: when the flow's latest data packet arrived over the link (`SimTime::MAX`: never).
    last_on: Vec<SimTime>,
    /// Per flow: its measures waiting for a packet.
    pending: Vec<Vec<Pending>>,
    /// Per flow: when it started (its request arrived; `SimTime::MAX`: not yet).
    started: Vec<SimTime>,
    /// Whether the application's deliveries are TCP's (in order, the stall is measured).
    reliable: bool,
    /// Failures past [`MAX_ROWS`]: counted, not measured.
    unlisted: u64,
}

impl FailoverLog {
    /// A log for `links` links and `flows` flows; `reliable`: the transport repairs losses (TCP).
    pub fn new(links: usize, flows: usize, reliable: bool) -> FailoverLog {
        FailoverLog {
            rows: Vec::new(),
            open: vec![None; links],
            latest: vec![None; links],
            links,
            last_on: vec![SimTime::MAX; links * flows],
            pending: vec![Vec::new(); flows],
            started: vec![SimTime::MAX; flows],
            reliable,
            unlisted: 0,
        }
    }

    /// Link `link` failed (`kind`: how) at `now`; `receiver` says which flows were receiving.
    pub fn down(&mut self, now: SimTime, link: usize, kind: &'static str, receiver: &Receiver) {
        if self.open[link].is_some() {
            return;
        }
        if self.rows.len() >= MAX_ROWS {
            // Not measured: nor may the bond's verdict on it land on an earlier row.
            self.unlisted += 1;
            self.latest[link] = None;
            return;
        }
        let row = self.rows.len();
        self.rows.push(Row {
            link,
            kind,
            down: now,
            up: None,
            detected: None,
            switchovers: Vec::new(),
            stall: None,
            lost: [0; DropCause::COUNT],
            delivered_bytes: 0,
        });
        self.open[link] = Some(row);
        self.latest[link] = Some(row);
        for (flow, rx) in receiver.flows().iter().enumerate() {
            if rx.resolved() {
                continue;
            }
            // The flow was using the link if the latest of its data packets came over it: not a
            // flow that had moved to another link before (after an earlier failure of this one,
            // or a rebalancing), whose packets over the other link only go on.
            let seen = &self.last_on[flow * self.links..(flow + 1) * self.links];
            let from = seen[link];
            if from != SimTime::MAX && seen.iter().all(|&t| t == SimTime::MAX || t <= from) {
                self.pending[flow].push(Pending::Switch { row, from });
            }
            // In progress: a stall runs from its latest delivery, or from its start.
            let prev = if rx.received > 0 { rx.last_at } else { self.started[flow] };
            if self.reliable && prev != SimTime::MAX {
                self.pending[flow].push(Pending::Stall { row, prev });
            }
        }
    }

    /// Flow `flow` started at `now` (its request arrived).
    pub fn started(&mut self, now: SimTime, flow: usize) {
        self.started[flow] = now;
    }

    /// Link `link` came back at `now`.
    pub fn up(&mut self, now: SimTime, link: usize) {
        if let Some(row) = self.open[link].take() {
            self.rows[row].up = Some(now);
        }
    }

    /// The bond's verdict on `link` changed at `now` (`up`: usable).
    pub fn verdict(&mut self, now: SimTime, link: usize, up: bool) {
        if let Some(row) = self.latest[link].filter(|_| !up) {
            self.rows[row].detected.get_or_insert(now);
        }
    }

    /// A data packet of `packet.flow` reached the clients' wire over `link` at `now`.
    pub fn arrived(&mut self, now: SimTime, link: usize, packet: &Packet) {
        if !packet.is_data() {
            return;
        }
        let flow = packet.flow as usize;
        self.last_on[flow * self.links + link] = now;
        let rows = &mut self.rows;
        self.pending[flow].retain(|p| match *p {
            Pending::Switch { row, from } if rows[row].link != link => {
                rows[row].switchovers.push(now.0 - from.0);
                false
            }
            _ => true,
        });
    }

    /// The application received `packet` (for the first time) at `now`.
    pub fn delivered(&mut self, now: SimTime, packet: &Packet) {
        for row in self.open.iter().flatten() {
            self.rows[*row].delivered_bytes += u64::from(packet.bytes);
        }
        let rows = &mut self.rows;
        self.pending[packet.flow as usize].retain_mut(|p| match p {
            Pending::Stall { row, prev } => {
                let r = &mut rows[*row];
                let gap = SimTime(now.0 - prev.0);
                r.stalled(gap);
                *prev = now;
                // Gaps that begin after the window has closed are not this failure's.
                r.up.is_none_or(|up| now < up)
            }
            Pending::Switch { .. } => true,
        });
    }

    /// TCP gave up `flow`'s connection at `now`: nothing more will reach its application, and the
    /// gaps it was waiting in end here (after that the flow is resolved, and [`FailoverLog::finish`]
    /// would leave them out).
    pub fn abandoned(&mut self, now: SimTime, flow: usize) {
        close_stalls(&mut self.rows, self.pending[flow].drain(..), now);
    }

    /// A packet was lost (every copy dropped), for `cause`.
    pub fn lost(&mut self, cause: DropCause) {
        for row in self.open.iter().flatten() {
            self.rows[*row].lost[cause as usize] += 1;
        }
    }

    /// The table, the run having ended at `end`; `receiver`: which flows had ended; `timeouts`:
    /// a reliable transport's retransmission timeouts.
    pub fn finish(
        mut self,
        end: SimTime,
        names: &[String],
        receiver: &Receiver,
        timeouts: Option<Timeouts<'_>>,
    ) -> FailoverTable {
        // A flow still waiting at the end stalled at least until then.
        for (flow, pending) in self.pending.iter_mut().enumerate() {
            if !receiver.flows()[flow].resolved() {
                close_stalls(&mut self.rows, pending.drain(..), end);
            }
        }
        let mut t = FailoverTable { unlisted: self.unlisted, ..FailoverTable::default() };
        let ms = |ns: u64| ns as f64 / 1e6;
        for r in self.rows {
            let close = r.up.unwrap_or(end).max(r.down);
            let within = |at: &[SimTime]| at.iter().filter(|&&x| x >= r.down && x < close).count() as u64;
            let mut fst = r.switchovers;
            fst.sort_unstable();
            let window_s = (close.0 - r.down.0) as f64 / 1e9;
            t.link.push(r.link);
            t.name.push(names[r.link].clone());
            t.kind.push(r.kind);
            t.down_at_s.push(r.down.as_secs_f64());
            t.up_at_s.push(r.up.map(SimTime::as_secs_f64));
            t.detected_at_s.push(r.detected.map(SimTime::as_secs_f64));
            t.detection_ms.push(r.detected.map(|d| ms(d.0 - r.down.0)));
            // The median: the lower middle of an even count (nearest rank).
            t.switchover_ms.push((!fst.is_empty()).then(|| ms(fst[(fst.len() - 1) / 2])));
            t.switchover_ms_max.push(fst.last().map(|&x| ms(x)));
            t.switchover_flows.push(fst.len() as u32);
            t.lost_queue_full.push(r.lost[DropCause::QueueFull as usize]);
            t.lost_link_down.push(r.lost[DropCause::LinkDown as usize]);
            t.lost_no_link.push(r.lost[DropCause::NoLink as usize]);
            t.lost_random.push(r.lost[DropCause::Random as usize]);
            t.lost_silent.push(r.lost[DropCause::Silent as usize]);
            t.lost_switch_port.push(r.lost[DropCause::SwitchPort as usize]);
            t.tcp_stall_ms.push(r.stall.filter(|_| self.reliable).map(|s| ms(s.0)));
            t.rtos.push(timeouts.map(|s| within(s.rto_at)));
            t.spurious_rtos.push(timeouts.map(|s| within(s.spurious_rto_at)));
            t.window_s.push(window_s);
            t.throughput_bps.push(if window_s > 0.0 { r.delivered_bytes as f64 * 8.0 / window_s } else { 0.0 });
        }
        t
    }
}

/// A reliable transport's retransmission timeouts (its ends report them as instants).
#[derive(Debug, Clone, Copy)]
pub struct Timeouts<'a> {
    /// When each timeout fired.
    pub rto_at: &'a [SimTime],
    /// When F-RTO found a timeout spurious.
    pub spurious_rto_at: &'a [SimTime],
}

/// The summary figures of the failover measures (runs whose links can fail): failures of a link
/// (the table's rows, and any past its limit); whether the table stopped at [`MAX_ROWS`] (later
/// failures counted, not measured); the longest `detection_ms`, `switchover_ms_max` (seed 003
/// §4.3) and `tcp_stall_ms` of the table, ms.
pub const FIGURES: &[Declared] = &[
    count("failovers"),
    flag("failovers_truncated"),
    real("detection_ms_max"),
    real("switchover_ms_max"),
    real("tcp_stall_ms_max"),
];

impl FailoverTable {
    /// Reports the table's figures ([`FIGURES`]).
    pub fn report(&self, r: &mut Report) {
        r.add("failovers", self.link.len() as u64 + self.unlisted);
        r.first("failovers_truncated", self.unlisted > 0);
        r.first("detection_ms_max", FailoverTable::max(&self.detection_ms));
        r.first("switchover_ms_max", FailoverTable::max(&self.switchover_ms_max));
        r.first("tcp_stall_ms_max", FailoverTable::max(&self.tcp_stall_ms));
    }
}

/// One row per failure of a link (see the module's notes for each measure).
#[derive(Debug, Clone, Default, Serialize)]
pub struct FailoverTable {
    /// The failed link's id.
    pub link: Vec<usize>,
    /// Its name.
    pub name: Vec<String>,
    /// How it failed (`carrier`: the carrier went).
    pub kind: Vec<&'static str>,
    /// When it failed, seconds.
    pub down_at_s: Vec<f64>,
    /// When it came back, seconds (null: never).
    pub up_at_s: Vec<Option<f64>>,
    /// When the bond's monitor declared it down, seconds (null: never).
    pub detected_at_s: Vec<Option<f64>>,
    /// `detected_at_s - down_at_s`, ms.
    pub detection_ms: Vec<Option<f64>>,
    /// Seed 003's flow switch-over time, median over the flows that switched, ms.
    pub switchover_ms: Vec<Option<f64>>,
    /// The largest flow switch-over time, ms.
    pub switchover_ms_max: Vec<Option<f64>>,
    /// Flows that were using the link and reached the clients over another one.
    pub switchover_flows: Vec<u32>,
    /// Packets lost in the window to a full transmit queue.
    pub lost_queue_full: Vec<u64>,
    /// … to a link without carrier (in flight at the failure, or sent into it before the bond knew).
    pub lost_link_down: Vec<u64>,
    /// … because the bond had no usable link.
    pub lost_no_link: Vec<u64>,
    /// … on a wire at random.
    pub lost_random: Vec<u64>,
    /// Packets lost in the window to a silent port (dropped with the carrier up).
    pub lost_silent: Vec<u64>,
    /// Packets lost in the window at a switch port that did not forward (spanning tree).
    pub lost_switch_port: Vec<u64>,
    /// TCP: the longest gap in a flow's in-order delivery around the failure, ms.
    pub tcp_stall_ms: Vec<Option<f64>>,
    /// TCP: retransmission timeouts in the window.
    pub rtos: Vec<Option<u64>>,
    /// TCP: timeouts in the window that F-RTO found spurious.
    pub spurious_rtos: Vec<Option<u64>>,
    /// The window's length: to `up_at_s`, or to the end of the run, seconds.
    pub window_s: Vec<f64>,
    /// Payload bits the application received in the window per second.
    pub throughput_bps: Vec<f64>,
    /// Failures past [`MAX_ROWS`], not listed (not a column).
    #[serde(skip)]
    pub unlisted: u64,
}

crate::columnar!(FailoverTable: link, name, kind, down_at_s, up_at_s, detected_at_s, detection_ms, switchover_ms,
    switchover_ms_max, switchover_flows, lost_queue_full, lost_link_down, lost_no_link, lost_random, lost_silent,
    lost_switch_port, tcp_stall_ms, rtos, spurious_rtos, window_s, throughput_bps);

impl FailoverTable {
    /// The largest of a column's values (null if none).
    pub fn max(column: &[Option<f64>]) -> Option<f64> {
        column.iter().flatten().copied().reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(flow: u32, seq: u32) -> Packet {
        Packet::data(flow, seq, 1000, SimTime::ZERO)
    }

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn a_stall_runs_from_a_flows_start_and_to_the_runs_end() {
        // One TCP flow of two packets, started at 1 ms; the link fails at 5 ms and is back at
        // 100 ms; `before`: packet 0 reached the application at 2 ms; `after`: when the packets
        // reach it after the failure; the run ends at 500 ms.
        let stall = |started: u64, before: bool, after: &[u64]| {
            let mut receiver = Receiver::new(&[2]);
            let mut log = FailoverLog::new(1, 1, true);
            if started < 5 {
                log.started(ms(started), 0);
            }
            let mut seq = 0;
            if before {
                receiver.deliver(ms(2), &data(0, 0));
                seq = 1;
            }
            log.down(ms(5), 0, "carrier", &receiver);
            if started >= 5 {
                log.started(ms(started), 0);
            }
            log.up(ms(100), 0);
            for &at in after {
                receiver.deliver(ms(at), &data(0, seq));
                log.delivered(ms(at), &data(0, seq));
                seq += 1;
            }
            log.finish(ms(500), &["eth0".into()], &receiver, None).tcp_stall_ms[0]
        };
        assert_eq!(stall(1, true, &[40]), Some(38.0), "from its delivery before the failure");
        assert_eq!(stall(1, false, &[30, 300]), Some(270.0), "from its start: 29 ms, then 270 ms");
        assert_eq!(stall(1, false, &[300, 301]), Some(299.0), "from its start at 1 ms");
        assert_eq!(stall(1, true, &[]), Some(498.0), "still waiting at the end");
        assert_eq!(stall(1, false, &[20]), Some(480.0), "still waiting for packet 1 at the end");
        assert_eq!(stall(1, true, &[400]), Some(398.0), "ended at 400 ms: no wait to the end");
        assert_eq!(stall(6, false, &[300, 301]), None, "not started at the failure");
        // A connection given up at 250 ms: its gap ends there, though the flow is resolved at the end.
        let mut receiver = Receiver::new(&[2]);
        let mut log = FailoverLog::new(1, 1, true);
        log.started(ms(1), 0);
        receiver.deliver(ms(2), &data(0, 0));
        log.down(ms(5), 0, "carrier", &receiver);
        receiver.abandon(0);
        log.abandoned(ms(250), 0);
        assert_eq!(log.finish(ms(500), &["eth0".into()], &receiver, None).tcp_stall_ms[0], Some(248.0));
    }

    #[test]
    fn failures_past_the_row_limit_are_counted_not_listed() {
        let receiver = Receiver::new(&[100]);
        let mut log = FailoverLog::new(1, 1, false);
        for k in 0..MAX_ROWS as u64 + 2 {
            log.down(ms(2 * k), 0, "carrier", &receiver);
            log.up(ms(2 * k + 1), 0);
        }
        // The last failure is not listed: the bond's verdict on it lands on no earlier row.
        let last_listed = MAX_ROWS - 1;
        log.verdict(ms(2 * MAX_ROWS as u64 + 3), 0, false);
        let t = log.finish(ms(3 * MAX_ROWS as u64), &["eth0".into()], &receiver, None);
        assert_eq!((t.link.len(), t.unlisted), (MAX_ROWS, 2));
        assert_eq!(t.detection_ms[last_listed], None);
        assert_eq!(t.down_at_s[last_listed], ms(2 * last_listed as u64).as_secs_f64());
    }

    #[test]
    fn a_flow_switches_only_from_the_link_its_latest_packet_came_over() {
        // Flow 0 stays on link 0; flow 1 moves to link 1 before the failure; flow 2's copies come
        // over both links at once (broadcast).
        let receiver = Receiver::new(&[100, 100, 100]);
        let mut log = FailoverLog::new(2, 3, false);
        log.arrived(ms(1), 0, &data(0, 0));
        log.arrived(ms(1), 0, &data(1, 0));
        log.arrived(ms(2), 1, &data(1, 1));
        log.arrived(ms(3), 0, &data(2, 0));
        log.arrived(ms(3), 1, &data(2, 0));
        log.down(ms(4), 0, "carrier", &receiver);
        log.arrived(ms(5), 1, &data(2, 1)); // 5 - 3 = 2 ms
        log.arrived(ms(6), 1, &data(1, 2)); // flow 1 only goes on: not a switch
        log.arrived(ms(9), 1, &data(0, 1)); // 9 - 1 = 8 ms
        log.up(ms(10), 0);
        // Link 0 fails again; no flow has come over it since its first failure.
        log.arrived(ms(11), 1, &data(0, 2));
        log.down(ms(12), 0, "carrier", &receiver);
        log.arrived(ms(13), 1, &data(0, 3));
        let t = log.finish(ms(20), &["eth0".into(), "eth1".into()], &receiver, None);
        assert_eq!(t.switchover_flows, vec![2, 0]);
        assert_eq!(t.switchover_ms, vec![Some(2.0), None]);
        assert_eq!(t.switchover_ms_max, vec![Some(8.0), None]);
    }
}
