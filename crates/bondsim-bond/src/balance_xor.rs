//! `balance-xor`: each flow on `usable[hash % count]` (`bond_xmit_3ad_xor_slave_get`
//! in `drivers/net/bonding/bond_main.c`), with the kernel's `xmit_hash_policy`
//! hashes ([`super::hash`]). `usable` holds the links the monitor sees up, in
//! order; when it changes, flows are re-mapped by plain modulo (most move).

use super::hash::{linux_xmit_hash, HashPolicy, POLICY_NAMES};
use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "balance-xor",
    aliases: &["xor", "2"],
    summary: "Linux balance-xor: each flow on usable[xmit_hash % count] (xmit_hash_policy)",
    params: &[XMIT_HASH_POLICY],
    build,
};

/// `xmit_hash_policy`, shared by balance-xor, 802.3ad and balance-tlb.
pub const XMIT_HASH_POLICY: ParamSpec = ParamSpec {
    name: "xmit_hash_policy",
    kind: ParamKind::Choice(POLICY_NAMES),
    default: "layer2",
    help: "fields hashed to choose a flow's link",
};

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(BalanceXor {
        policy: HashPolicy::from_name(params.choice("xmit_hash_policy")),
        usable: (0..ctx.links.len()).collect(),
    }))
}

/// State of `balance-xor`: the usable-link array.
pub struct BalanceXor {
    policy: HashPolicy,
    usable: Vec<LinkId>,
}

impl Scheduler for BalanceXor {
    fn skips_updelay(&self, _link: LinkId, bond: &BondView) -> bool {
        bond.usable().next().is_none() // `usable_slaves->count == 0`
    }

    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, _bond: &BondView) -> Pick {
        if self.usable.is_empty() {
            return Pick::Drop;
        }
        let hash = linux_xmit_hash(self.policy, packet.headers);
        Pick::Link(self.usable[hash as usize % self.usable.len()])
    }

    fn on_link_change(&mut self, _link: LinkId, bond: &BondView) {
        self.usable = bond.usable_ids();
    }

    fn on_carrier_change(&mut self, _link: LinkId, bond: &BondView) {
        self.usable = bond.usable_ids(); // bond_update_slave_arr at NETDEV_CHANGE
    }
}

#[cfg(test)]
mod tests {
    use crate::hash::{linux_xmit_hash, HashPolicy};
    use crate::test_support::{build, headers, links, packet};
    use crate::time::SimTime;
    use crate::{BondView, Pick};

    #[test]
    fn flows_stay_on_their_hashed_link_and_remap_by_modulo() {
        let mut view = links(3);
        let mut xor = build("balance-xor[xmit_hash_policy=layer3+4]", &view);
        let h = headers(9, 40123);
        let expect = linux_xmit_hash(HashPolicy::Layer34, &h) as usize % 3;
        let pick = |s: &mut dyn crate::Scheduler, v: &[crate::LinkView], _seq| {
            s.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: v })
        };
        assert!((0..5).all(|seq| pick(xor.as_mut(), &view, seq) == Pick::Link(expect)));
        view[1].up = false;
        xor.on_link_change(1, &BondView { now: SimTime::ZERO, links: &view });
        let usable = [0, 2];
        let remapped = usable[linux_xmit_hash(HashPolicy::Layer34, &h) as usize % 2];
        assert_eq!(pick(xor.as_mut(), &view, 9), Pick::Link(remapped));
    }

    #[test]
    fn layer2_puts_every_flow_of_a_client_on_one_link() {
        let view = links(4);
        let mut xor = build("xor", &view);
        let links_used: std::collections::HashSet<_> = (0..50u16)
            .map(|port| {
                let h = headers(7, 30000 + port);
                xor.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: &view })
            })
            .collect();
        assert_eq!(links_used.len(), 1);
    }
}
