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
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;
use crate::rng::Rng;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "balance-rr",
    aliases: &["rr", "0"],
    summary: "Linux balance-rr: one global pointer stripes packets over the links in turn",
    params: &[ParamSpec {
        name: "packets_per_slave",
        kind: ParamKind::Int { min: 0, max: 65535 },
        default: "1",
        help: "packets sent on a link before moving to the next; 0 = a random link per packet",
    }],
    build,
};

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(RoundRobin { counter: 0, packets_per_slave: params.int("packets_per_slave") as u32, rng: ctx.rng() }))
}

/// State of `balance-rr`.
pub struct RoundRobin {
    counter: u32,
    packets_per_slave: u32,
    rng: Rng,
}

impl Scheduler for RoundRobin {
    fn skips_updelay(&self, _link: LinkId, _bond: &BondView) -> bool {
        false // no usable array (`usable_slaves` is NULL outside the hash modes): updelay always applies
    }

    fn reads_link_load(&self) -> bool {
        false
    }

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
    use crate::test_support::{build, links, picks};

    #[test]
    fn stripes_in_turn_from_link_zero() {
        assert_eq!(picks(build("rr", &links(4)).as_mut(), &links(4), 9), [0, 1, 2, 3, 0, 1, 2, 3, 0]);
    }

    #[test]
    fn packets_per_slave_groups_packets() {
        let mut rr = build("balance-rr[packets_per_slave=3]", &links(2));
        assert_eq!(picks(rr.as_mut(), &links(2), 8), [0, 0, 0, 1, 1, 1, 0, 0]);
    }

    #[test]
    fn down_link_share_goes_to_next_usable_link() {
        let mut view = links(3);
        view[1].up = false;
        // ids 0,1,2 map to links 0,2,2: the kernel's walk, not a re-striping over the up links.
        assert_eq!(picks(build("rr", &view).as_mut(), &view, 6), [0, 2, 2, 0, 2, 2]);
        view.iter_mut().for_each(|l| l.up = false);
        let h = crate::test_support::headers(1, 1);
        let bond = crate::BondView { now: crate::time::SimTime::ZERO, links: &view };
        let pick = build("rr", &view).pick(&crate::test_support::packet(&h), &bond);
        assert_eq!(pick, crate::Pick::Drop);
    }

    #[test]
    fn random_mode_is_seeded_and_covers_every_link() {
        let run = || picks(build("rr[packets_per_slave=0]", &links(4)).as_mut(), &links(4), 64);
        assert_eq!(run(), run());
        assert!((0..4).all(|l| run().contains(&l)));
        assert_ne!(run(), picks(build("rr", &links(4)).as_mut(), &links(4), 64));
    }
}
