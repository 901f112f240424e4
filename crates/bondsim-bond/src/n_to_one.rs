//! Ratio striping for heterogeneous bonds (Andresen & Hanenkamp,
//! "Heterogeneous Channel Bonding Revisited"):
//!
//! * `n-to-1` (N:1): round-robin with a ratio: `n` packets on the primary (the
//!   fastest link), then one on each other link, in turn. The paper's motivating
//!   N is 10, for a Gigabit link beside a Fast Ethernet one.
//! * `n-to-1-primary` (N:1/Primary): packets of at least `cutoff_bytes` of
//!   payload always take the primary; smaller ones follow N:1. The paper gives
//!   neither the cut-off nor N for this mode; 512 bytes and 10 are bondsim's
//!   choices.
//!
//! A link the monitor sees down is skipped.

use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;

/// `n`: packets on the primary per packet on each other link.
pub const N: ParamSpec = ParamSpec {
    name: "n",
    kind: ParamKind::Int { min: 1, max: 1_000_000 },
    default: "10",
    help: "packets on the primary per packet on each other link",
};

/// `primary`: the fast link (default: the fastest).
pub const PRIMARY: ParamSpec = ParamSpec {
    name: "primary",
    kind: ParamKind::Text,
    default: "",
    help: "name of the primary link; empty = the fastest",
};

/// `cutoff_bytes`: packets this large (payload) always take the primary.
pub const CUTOFF: ParamSpec = ParamSpec {
    name: "cutoff_bytes",
    kind: ParamKind::Int { min: 0, max: 1_000_000 },
    default: "512",
    help: "payload bytes from which a packet always takes the primary (the paper gives no value)",
};

/// Registry entry of N:1.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "n-to-1",
    aliases: &["n:1"],
    summary: "seed 002's N:1: n packets on the fastest link, then one on each other link",
    params: &[N, PRIMARY],
    build: |params, ctx| Ok(Box::new(NToOne::new(params, ctx, None)?)),
};

/// Registry entry of N:1/Primary.
pub const PRIMARY_INFO: SchedulerInfo = SchedulerInfo {
    name: "n-to-1-primary",
    aliases: &["n:1/primary"],
    summary: "seed 002's N:1/Primary: large packets on the primary, small ones by N:1",
    params: &[N, PRIMARY, CUTOFF],
    build: |params, ctx| {
        let cutoff = params.int("cutoff_bytes") as u32;
        Ok(Box::new(NToOne::new(params, ctx, Some(cutoff))?))
    },
};

/// The primary link named by `primary` (or the fastest).
pub fn primary_link(params: &Params, ctx: &BuildContext) -> Result<LinkId> {
    match params.text("primary") {
        "" => Ok(ctx.fastest()),
        name => ctx.link_named("bond.primary", name),
    }
}

/// State of N:1 (and N:1/Primary).
pub struct NToOne {
    n: u64,
    primary: LinkId,
    cutoff: Option<u32>,
    /// Position in the cycle: 0..n on the primary, then one per other link.
    position: u64,
}

impl NToOne {
    fn new(params: &Params, ctx: &BuildContext, cutoff: Option<u32>) -> Result<NToOne> {
        Ok(NToOne { n: params.int("n") as u64, primary: primary_link(params, ctx)?, cutoff, position: 0 })
    }
}

impl Scheduler for NToOne {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        let primary_up = bond.links[self.primary].can_tx();
        if primary_up && self.cutoff.is_some_and(|c| packet.bytes >= c) {
            return Pick::Link(self.primary);
        }
        let others = bond.links.len() as u64 - 1;
        let cycle = self.n + others;
        for _ in 0..cycle {
            let k = self.position;
            self.position = (self.position + 1) % cycle;
            let link = if k < self.n {
                self.primary
            } else {
                let j = (k - self.n) as usize;
                if j < self.primary {
                    j
                } else {
                    j + 1
                }
            };
            if bond.links[link].can_tx() {
                return Pick::Link(link);
            }
        }
        Pick::Drop
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, headers, links, picks};
    use crate::time::SimTime;
    use crate::{BondView, PacketInfo, Pick};

    #[test]
    fn on_equal_links_n_is_a_fixed_ratio_not_a_speed_ratio() {
        // The league's "77% out of order on four equal links": N = 10 puts 10 of every 13 packets on
        // the primary (the lowest id among equals), so every packet sent on an idle side link overtakes
        // the primary's queue: n / (n + 3) = 0.77 of packets arrive late. The paper's N suits
        // Gigabit beside Fast Ethernet; this is the scheduler as specified, not a simulator fault.
        let v = links(4);
        let got = picks(build("n-to-1", &v).as_mut(), &v, 13);
        assert_eq!(got.iter().filter(|&&l| l == 0).count(), 10, "{got:?}");
        assert_eq!(got[10..], [1, 2, 3]);
    }

    #[test]
    fn ten_to_one_on_the_fastest_link() {
        let mut view = links(2);
        view[0].rate_bps = 100e6;
        let mut s = build("n-to-1", &view);
        let got = picks(s.as_mut(), &view, 22);
        assert_eq!(got.iter().filter(|&&l| l == 1).count(), 20);
        assert_eq!(&got[..11], &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn large_packets_take_the_primary() {
        let mut view = links(2);
        view[0].rate_bps = 100e6;
        let mut s = build("n-to-1-primary[n=1]", &view);
        let h = headers(1, 1);
        let bond = BondView { now: SimTime::ZERO, links: &view };
        let small = PacketInfo { bytes: 64, l3_bytes: 104, headers: &h };
        let large = PacketInfo { bytes: 1400, l3_bytes: 1440, headers: &h };
        assert_eq!([s.pick(&small, &bond), s.pick(&small, &bond)], [Pick::Link(1), Pick::Link(0)]);
        assert!((0..5).all(|_| s.pick(&large, &bond) == Pick::Link(1)));
    }
}
