//! `null`: no bonding at all: one link wrapped in a bond (Andresen &
//! Hanenkamp, "Heterogeneous Channel Bonding Revisited", the Null mode) — the
//! baseline the other schedulers are measured against.

use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "null",
    aliases: &[],
    summary: "seed 002's Null: every packet on one link (default: the fastest), no bonding",
    params: &[ParamSpec {
        name: "link",
        kind: ParamKind::Text,
        default: "",
        help: "name of the one link used; empty = the fastest",
    }],
    build,
};

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    let link = match params.text("link") {
        "" => ctx.fastest(),
        name => ctx.link_named("bond.link", name)?,
    };
    Ok(Box::new(Null { link }))
}

/// The one link.
pub struct Null {
    link: LinkId,
}

impl Scheduler for Null {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, _packet: &PacketInfo, bond: &BondView) -> Pick {
        if bond.links[self.link].can_tx() {
            Pick::Link(self.link)
        } else {
            Pick::Drop
        }
    }
}
