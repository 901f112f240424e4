//! `power-of-two`: the power of two choices (Mitzenmacher, "The power of two
//! choices in randomized load balancing", IEEE TPDS 2001; Azar et al. 1994):
//! draw two different usable links at random and send on the less loaded.
//! `by` sets the load: `packets` (queue length, the classic rule), `bytes`
//! (queued bytes) or `finish` (when the packet would arrive, so heterogeneous
//! links compare fairly). Ties go to the first drawn.

use rand::RngExt;

use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;
use crate::rng::Rng;
use crate::time::SimTime;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "power-of-two",
    aliases: &["p2c"],
    summary: "power of two choices: two random links, the less loaded one (Mitzenmacher)",
    params: &[ParamSpec {
        name: "by",
        kind: ParamKind::Choice(&["packets", "bytes", "finish"]),
        default: "packets",
        help: "load compared: queued packets, queued bytes, or predicted arrival time",
    }],
    build,
};

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(PowerOfTwo { by: params.choice("by"), rng: ctx.rng(), usable: Vec::new() }))
}

/// State: the random stream and a scratch list of usable links.
pub struct PowerOfTwo {
    by: &'static str,
    rng: Rng,
    usable: Vec<LinkId>,
}

impl PowerOfTwo {
    fn load(&self, bond: &BondView, id: LinkId, l3_bytes: u32) -> (u64, SimTime) {
        let l = &bond.links[id];
        match self.by {
            "packets" => (u64::from(l.queue_len_pkts), SimTime::ZERO),
            "bytes" => (l.queue_bytes, SimTime::ZERO),
            _ => (0, l.arrival_if_sent(bond.now, l3_bytes)),
        }
    }
}

impl Scheduler for PowerOfTwo {
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        self.usable.clear();
        self.usable.extend(bond.usable());
        let n = self.usable.len();
        match n {
            0 => Pick::Drop,
            1 => Pick::Link(self.usable[0]),
            _ => {
                let a = self.rng.random_range(0..n);
                let b = (a + 1 + self.rng.random_range(0..n - 1)) % n;
                let (a, b) = (self.usable[a], self.usable[b]);
                let pick =
                    if self.load(bond, b, packet.l3_bytes) < self.load(bond, a, packet.l3_bytes) { b } else { a };
                Pick::Link(pick)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, links, picks};

    #[test]
    fn never_picks_the_most_loaded_of_three() {
        let mut view = links(3);
        view[2].queue_len_pkts = 50;
        let got = picks(build("power-of-two", &view).as_mut(), &view, 200);
        assert!(!got.contains(&2));
        assert!(got.contains(&0) && got.contains(&1));
    }
}
