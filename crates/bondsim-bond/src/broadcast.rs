//! `broadcast`: every packet on every up link (`bond_xmit_broadcast` in
//! `drivers/net/bonding/bond_main.c`). Receivers see duplicates.

use super::params::Params;
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "broadcast",
    aliases: &["3"],
    summary: "Linux broadcast: a copy of every packet on every up link",
    params: &[],
    build,
};

fn build(_params: &Params, _ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(Broadcast))
}

/// The stateless broadcast mode.
pub struct Broadcast;

impl Scheduler for Broadcast {
    fn skips_updelay(&self, _link: LinkId, _bond: &BondView) -> bool {
        false // no usable array (`usable_slaves` is NULL outside the hash modes): updelay always applies
    }

    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, _packet: &PacketInfo, _bond: &BondView) -> Pick {
        Pick::All
    }
}
