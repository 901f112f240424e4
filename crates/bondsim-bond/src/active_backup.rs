//! `active-backup`: one link carries everything; another takes over when it
//! fails (`bond_xmit_activebackup`, `bond_select_active_slave`,
//! `bond_choose_primary_or_current` in `drivers/net/bonding/bond_main.c`).
//!
//! The active link is the `primary` if it is up, else the first up link in
//! order. When a link comes back, only the primary may take over, as
//! `primary_reselect` says: `always` (at once), `better` (if faster),
//! `failure` (only when the active link fails). Traffic goes to the active
//! link even before the monitor notices it failed, and is lost meanwhile.
//! The bond receives on the active link too.

use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Receive, Scheduler};
use crate::error::Result;
use crate::flow::FlowHeaders;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "active-backup",
    aliases: &["ab", "1"],
    summary: "Linux active-backup: one active link, failover to the next (primary, primary_reselect)",
    params: &[PRIMARY, PRIMARY_RESELECT],
    build,
};

/// `primary`: the link preferred as the active one (shared by tlb/alb).
pub const PRIMARY: ParamSpec =
    ParamSpec { name: "primary", kind: ParamKind::Text, default: "", help: "name of the preferred link; empty = none" };

/// `primary_reselect`: when a recovered primary takes over.
pub const PRIMARY_RESELECT: ParamSpec = ParamSpec {
    name: "primary_reselect",
    kind: ParamKind::Choice(&["always", "better", "failure"]),
    default: "always",
    help: "when a recovered primary takes over: always, better (if faster), failure (only on failure)",
};

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(ActiveBackup::new(params, ctx)?))
}

/// The active-link choice shared by active-backup, balance-tlb and balance-alb.
#[derive(Debug, Clone)]
pub struct ActiveLink {
    primary: Option<LinkId>,
    reselect: &'static str,
    /// The link in use (the kernel's `curr_active_slave`), none if all are down.
    pub active: Option<LinkId>,
}

impl ActiveLink {
    /// From the `primary` and `primary_reselect` parameters.
    pub fn new(params: &Params, ctx: &BuildContext) -> Result<ActiveLink> {
        let primary = match params.text("primary") {
            "" => None,
            name => Some(ctx.link_named("bond.primary", name)?),
        };
        // At enslave time the primary is always made active (`force_primary`).
        Ok(ActiveLink { primary, reselect: params.choice("primary_reselect"), active: Some(primary.unwrap_or(0)) })
    }

    fn best(&self, bond: &BondView) -> Option<LinkId> {
        match self.primary {
            Some(p) if bond.links[p].up => Some(p),
            _ => bond.monitored_up().next(),
        }
    }

    /// Applies the monitor's new verdict on `link`; returns true if the active link changed.
    pub fn on_link_change(&mut self, link: LinkId, bond: &BondView) -> bool {
        let before = self.active;
        if !bond.links[link].up {
            if self.active == Some(link) {
                self.active = self.best(bond);
            }
        } else {
            match self.active {
                None => self.active = self.best(bond),
                Some(current) if Some(link) == self.primary => {
                    let take_over = match self.reselect {
                        "always" => true,
                        "better" => bond.links[link].rate_bps > bond.links[current].rate_bps,
                        _ => false,
                    };
                    if take_over {
                        self.active = Some(link);
                    }
                }
                Some(_) => {}
            }
        }
        self.active != before
    }
}

/// State of `active-backup`.
pub struct ActiveBackup {
    link: ActiveLink,
}

impl ActiveBackup {
    fn new(params: &Params, ctx: &BuildContext) -> Result<ActiveBackup> {
        Ok(ActiveBackup { link: ActiveLink::new(params, ctx)? })
    }
}

impl Scheduler for ActiveBackup {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, _packet: &PacketInfo, _bond: &BondView) -> Pick {
        self.link.active.map_or(Pick::Drop, Pick::Link)
    }

    fn on_link_change(&mut self, link: LinkId, bond: &BondView) {
        self.link.on_link_change(link, bond);
    }

    fn rx_link(&mut self, _headers: &FlowHeaders, _bond: &BondView) -> Option<LinkId> {
        self.link.active
    }

    fn receive(&self) -> Receive {
        Receive::ActiveSlave
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, links, picks};
    use crate::time::SimTime;
    use crate::{BondView, Scheduler};

    fn change(s: &mut dyn Scheduler, view: &mut [crate::LinkView], link: usize, up: bool) {
        view[link].up = up;
        s.on_link_change(link, &BondView { now: SimTime::ZERO, links: view });
    }

    #[test]
    fn fails_over_to_the_first_up_link_and_stays() {
        let mut view = links(3);
        let mut ab = build("active-backup", &view);
        assert_eq!(picks(ab.as_mut(), &view, 3), [0, 0, 0]);
        change(ab.as_mut(), &mut view, 0, false);
        assert_eq!(picks(ab.as_mut(), &view, 2), [1, 1]);
        change(ab.as_mut(), &mut view, 0, true); // not the primary: no takeover
        assert_eq!(picks(ab.as_mut(), &view, 1), [1]);
    }

    #[test]
    fn primary_reselect_policies() {
        for (policy, expect) in [("always", 2), ("failure", 0), ("better", 0)] {
            let mut view = links(3);
            let mut ab = build(&format!("active-backup[primary=link2,primary_reselect={policy}]"), &view);
            assert_eq!(picks(ab.as_mut(), &view, 1), [2], "the primary starts active");
            change(ab.as_mut(), &mut view, 2, false);
            assert_eq!(picks(ab.as_mut(), &view, 1), [0]);
            change(ab.as_mut(), &mut view, 2, true);
            assert_eq!(picks(ab.as_mut(), &view, 1), [expect], "{policy}");
        }
        // better: a faster primary takes over.
        let mut view = links(2);
        view[1].rate_bps = 10e9;
        let mut ab = build("active-backup[primary=link1,primary_reselect=better]", &view);
        change(ab.as_mut(), &mut view, 1, false);
        change(ab.as_mut(), &mut view, 1, true);
        assert_eq!(picks(ab.as_mut(), &view, 1), [1]);
    }

    #[test]
    fn no_link_left_drops() {
        let mut view = links(1);
        let mut ab = build("ab", &view);
        change(ab.as_mut(), &mut view, 0, false);
        let h = crate::test_support::headers(1, 1);
        let bond = BondView { now: SimTime::ZERO, links: &view };
        assert_eq!(ab.pick(&crate::test_support::packet(&h), &bond), crate::Pick::Drop);
    }
}
