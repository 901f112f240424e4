//! `balance-rr`: the Linux bonding driver's round-robin striping
//! (`bond_xmit_roundrobin_slave_get` + `bond_get_slave_by_id` in
//! `drivers/net/bonding/bond_main.c`), and the thesis's `rr`
//! (`queue_packet_to_iface_rr`: one global next-interface pointer).
//!
//! One counter for the whole bond picks link `counter / packets_per_slave %
//! links` (a random link if `packets_per_slave` is 0). The modulus counts every
//! link, up or down; a link the monitor sees down is skipped by walking to the
//! next usable one, wrapping around, so that link takes the dead link's share.
//! The counter starts at 0 and is used before it is incremented, as in the
//! thesis and in kernels before 5.15; since 5.15 the kernel keeps one counter
//! per CPU and increments it first, which only rotates the start by one link.

use rand::RngExt;

use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, PacketInfo, Pick, Scheduler};
use crate::rng::Rng;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "balance-rr",
    aliases: &["rr"],
    summary: "Linux balance-rr: one global pointer stripes packets over the links in turn",
    params: &[ParamSpec {
        name: "packets_per_slave",
        kind: ParamKind::Int { min: 0, max: 65535 },
        default: "1",
        help: "packets sent on a link before moving to the next; 0 = a random link per packet",
    }],
    build,
};

fn build(params: &Params, ctx: &BuildContext) -> Box<dyn Scheduler> {
    Box::new(RoundRobin { counter: 0, packets_per_slave: params.int("packets_per_slave") as u32, rng: ctx.rng() })
}

/// State of `balance-rr`.
pub struct RoundRobin {
    counter: u32,
    packets_per_slave: u32,
    rng: Rng,
}

impl Scheduler for RoundRobin {
    fn pick(&mut self, _packet: &PacketInfo, bond: &BondView) -> Pick {
        let id = match self.packets_per_slave {
            0 => self.rng.random::<u32>(),
            1 => self.counter,
            n => self.counter / n,
        };
        self.counter = self.counter.wrapping_add(1);
        bond.first_usable_from(id as usize % bond.links.len()).map_or(Pick::Drop, Pick::Link)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bond::test_support::{links, picks};

    #[test]
    fn stripes_in_turn_from_link_zero() {
        let mut rr = build(&Params::defaults(INFO.params), &BuildContext { links: 4, seed: 1 });
        assert_eq!(picks(rr.as_mut(), &links(4), 9), [0, 1, 2, 3, 0, 1, 2, 3, 0]);
    }

    #[test]
    fn packets_per_slave_groups_packets() {
        let mut p = Params::defaults(INFO.params);
        p.set_text("bond.mode", "packets_per_slave", "3", "balance-rr").unwrap();
        let mut rr = build(&p, &BuildContext { links: 2, seed: 1 });
        assert_eq!(picks(rr.as_mut(), &links(2), 8), [0, 0, 0, 1, 1, 1, 0, 0]);
    }

    #[test]
    fn down_link_share_goes_to_next_usable_link() {
        let mut view = links(3);
        view[1].up = false;
        let mut rr = build(&Params::defaults(INFO.params), &BuildContext { links: 3, seed: 1 });
        // ids 0,1,2 map to links 0,2,2: the kernel's walk, not a re-striping over the up links.
        assert_eq!(picks(rr.as_mut(), &view, 6), [0, 2, 2, 0, 2, 2]);
    }

    #[test]
    fn random_mode_is_seeded() {
        let mut p = Params::defaults(INFO.params);
        p.set_text("bond.mode", "packets_per_slave", "0", "balance-rr").unwrap();
        let run = |seed| picks(build(&p, &BuildContext { links: 4, seed }).as_mut(), &links(4), 64);
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
        assert!((0..4).all(|l| run(5).contains(&l)));
    }
}
