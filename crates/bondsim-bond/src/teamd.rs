//! teamd runners (libteam's `teamd` + the Linux `team` driver).
//!
//! * `teamd:random` (`team_mode_random.c`, `rnd_transmit`): a uniformly random
//!   port per packet; a port whose link is down passes the packet to the next
//!   up port in port order (`team_get_first_port_txable_rcu`).
//! * `teamd:roundrobin` (`team_mode_roundrobin.c`): one packet counter, modulo
//!   the ports, with the same fall-forward.
//! * `teamd:loadbalance` (`teamd_runner_loadbalance.c`, `team_mode_loadbalance.c`,
//!   `teamd_balancer.c`): the bucket (0–255) is the XOR of every byte of the
//!   `tx_hash` fields; ports whose link is down are disabled. Without a
//!   balancer a bucket goes to `enabled[bucket % count]`. With
//!   `tx_balancer = "basic"`, every `balancing_interval` (tenths of a second,
//!   default 50) the buckets are repacked greedily: busiest bucket first (ties
//!   to the lowest index) onto the port with the least load placed so far this
//!   round (ties to the most recently added port, i.e. the highest id); idle
//!   buckets keep their port, idle unmapped ones go to the least loaded port.
//!   Unmapped buckets fall back to `bucket % count`.

use rand::RngExt;

use super::hash::{teamd_bucket, TEAMD_FRAGMENTS};
use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;
use crate::rng::Rng;
use crate::time::SimTime;

/// Registry entry of the random runner.
pub const RANDOM: SchedulerInfo = SchedulerInfo {
    name: "teamd:random",
    aliases: &[],
    summary: "teamd random runner: a random port per packet",
    params: &[],
    build: |_params, ctx| Ok(Box::new(Random { rng: ctx.rng() })),
};

/// Registry entry of the round-robin runner.
pub const ROUNDROBIN: SchedulerInfo = SchedulerInfo {
    name: "teamd:roundrobin",
    aliases: &[],
    summary: "teamd roundrobin runner: one packet counter over the ports",
    params: &[],
    build: |_params, _ctx| Ok(Box::new(RoundRobin { sent: 0 })),
};

/// Registry entry of the load-balance runner.
pub const LOADBALANCE: SchedulerInfo = SchedulerInfo {
    name: "teamd:loadbalance",
    aliases: &[],
    summary: "teamd loadbalance runner: 256 hash buckets, optional basic balancer",
    params: &[
        ParamSpec {
            name: "tx_hash",
            kind: ParamKind::List(TEAMD_FRAGMENTS),
            default: "eth+ipv4+ipv6",
            help: "header fields hashed (runner.tx_hash)",
        },
        ParamSpec {
            name: "tx_balancer",
            kind: ParamKind::Choice(&["none", "basic"]),
            default: "none",
            help: "runner.tx_balancer.name: basic repacks buckets by load",
        },
        ParamSpec {
            name: "balancing_interval",
            kind: ParamKind::Int { min: 1, max: 36000 },
            default: "50",
            help: "runner.tx_balancer.balancing_interval, tenths of a second",
        },
    ],
    build: build_loadbalance,
};

/// `teamd:random`.
pub struct Random {
    rng: Rng,
}

impl Scheduler for Random {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, _packet: &PacketInfo, bond: &BondView) -> Pick {
        let start = self.rng.random_range(0..bond.links.len());
        bond.first_usable_from(start).map_or(Pick::Drop, Pick::Link)
    }
}

/// `teamd:roundrobin`.
pub struct RoundRobin {
    sent: u32,
}

impl Scheduler for RoundRobin {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, _packet: &PacketInfo, bond: &BondView) -> Pick {
        let start = self.sent as usize % bond.links.len();
        self.sent = self.sent.wrapping_add(1);
        bond.first_usable_from(start).map_or(Pick::Drop, Pick::Link)
    }
}

fn build_loadbalance(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(LoadBalance {
        fragments: params.list("tx_hash").to_vec(),
        balancer: params.choice("tx_balancer") == "basic",
        interval: SimTime::from_secs_f64(params.int("balancing_interval") as f64 / 10.0),
        enabled: (0..ctx.links.len()).collect(),
        mapping: [None; 256],
        bytes: [0; 256],
    }))
}

/// `teamd:loadbalance`.
pub struct LoadBalance {
    fragments: Vec<&'static str>,
    balancer: bool,
    interval: SimTime,
    enabled: Vec<LinkId>,
    mapping: [Option<LinkId>; 256],
    bytes: [u64; 256],
}

impl LoadBalance {
    /// `tb_rebalance`: greedy repack of this interval's bucket loads.
    fn rebalance(&mut self) {
        if self.enabled.is_empty() {
            return;
        }
        let mut order: Vec<usize> = (0..256).collect();
        order.sort_by(|&a, &b| self.bytes[b].cmp(&self.bytes[a]).then(a.cmp(&b)));
        let mut placed = vec![0u64; self.enabled.len()];
        for bucket in order {
            let delta = self.bytes[bucket];
            if delta == 0 && self.mapping[bucket].is_some() {
                continue; // idle mapped buckets stay where they are
            }
            // Least placed load; ties to the most recently added port (the highest id).
            let slot = (0..self.enabled.len()).rev().min_by_key(|&i| placed[i]).expect("some port");
            self.mapping[bucket] = Some(self.enabled[slot]);
            placed[slot] += delta;
        }
        self.bytes = [0; 256];
    }
}

impl Scheduler for LoadBalance {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, _bond: &BondView) -> Pick {
        if self.enabled.is_empty() {
            return Pick::Drop;
        }
        let bucket = usize::from(teamd_bucket(&self.fragments, packet.headers));
        let link = match (self.balancer, self.mapping[bucket]) {
            (true, Some(link)) => link,
            _ => self.enabled[bucket % self.enabled.len()],
        };
        self.bytes[bucket] += u64::from(packet.frame_bytes());
        Pick::Link(link)
    }

    fn tick_interval(&self) -> Option<SimTime> {
        self.balancer.then_some(self.interval)
    }

    fn on_tick(&mut self, _bond: &BondView) {
        self.rebalance();
    }

    fn on_link_change(&mut self, link: LinkId, bond: &BondView) {
        // The team driver's enabled ports: what teamd's link watch enabled, carrier or not
        // (`lb_transmit` sends on the port the hash maps to without testing `team_port_txable`).
        self.enabled = bond.monitored_up().collect();
        if !bond.links[link].up {
            self.mapping.iter_mut().filter(|m| **m == Some(link)).for_each(|m| *m = None);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, headers, links, packet, picks};
    use crate::time::SimTime;
    use crate::{BondView, Pick};

    #[test]
    fn random_runner_falls_forward_past_down_ports() {
        let mut view = links(3);
        view[1].up = false;
        let mut random = build("teamd:random", &view);
        let got = picks(random.as_mut(), &view, 300);
        let share = |l| got.iter().filter(|&&x| x == l).count();
        assert_eq!(share(1), 0);
        assert!(share(2) > share(0), "link 2 takes link 1's share: {} vs {}", share(2), share(0));
    }

    #[test]
    fn basic_balancer_separates_the_two_busiest_buckets() {
        let view = links(2);
        // With the default eth+ipv4 hash these two flows share a bucket (the client's MAC and IP
        // differ in the same last byte and cancel out), so hash MACs only.
        let mut lb = build("teamd:loadbalance[tx_balancer=basic,tx_hash=eth]", &view);
        let (a, b) = (headers(1, 1), headers(2, 1));
        let bond = BondView { now: SimTime::ZERO, links: &view };
        // Flow a sends twice what flow b sends (their buckets differ).
        for _ in 0..100 {
            lb.pick(&packet(&a), &bond);
            lb.pick(&packet(&a), &bond);
            lb.pick(&packet(&b), &bond);
        }
        lb.on_tick(&bond);
        let pa = lb.pick(&packet(&a), &bond);
        let pb = lb.pick(&packet(&b), &bond);
        assert_ne!(pa, pb);
        assert_eq!(pa, Pick::Link(1), "the busiest bucket first, ties to the most recently added port");
    }
}
