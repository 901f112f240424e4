//! `drr-stripe`: striping by surplus round-robin with a resequencing receiver
//! (Adiseshu, Parulkar and Varghese, "A Reliable and Scalable Striping
//! Protocol", SIGCOMM 1996, after Shreedhar and Varghese's deficit round-robin).
//!
//! Each link has a quantum of bytes proportional to its speed
//! (`quantum_bytes` for the slowest). The bond sends on the current link while
//! its deficit counter is positive, subtracting each packet's size (it may go
//! negative: the surplus is paid back next round), then moves to the next up
//! link and adds that link's quantum. The receiver runs the same algorithm
//! (the paper's logical reception) and so hands packets on in the order the
//! bond sent them; bondsim models that as a buffer releasing packets in send
//! order, skipping lost ones (the paper's marker packets resynchronise after a
//! loss). Turn `resequence` off to see the striping's raw reordering.

use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "drr-stripe",
    aliases: &["srr"],
    summary: "surplus round-robin striping with a resequencing receiver (Adiseshu, Parulkar, Varghese 1996)",
    params: &[
        ParamSpec {
            name: "quantum_bytes",
            kind: ParamKind::Int { min: 1, max: 100_000_000 },
            default: "1500",
            help: "bytes per round for the slowest link; faster links get more in proportion",
        },
        ParamSpec {
            name: "resequence",
            kind: ParamKind::Bool,
            default: "true",
            help: "the receiver restores the bond's sending order",
        },
    ],
    build,
};

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    let slowest = ctx.links.iter().map(|l| l.rate_bps).fold(f64::INFINITY, f64::min);
    let base = params.int("quantum_bytes") as f64;
    let quantum: Vec<i64> = ctx.links.iter().map(|l| (base * l.rate_bps / slowest).round() as i64).collect();
    let mut deficit = vec![0; quantum.len()];
    deficit[0] = quantum[0];
    Ok(Box::new(DrrStripe { quantum, deficit, current: 0, resequence: params.flag("resequence") }))
}

/// State of the striping sender.
pub struct DrrStripe {
    quantum: Vec<i64>,
    deficit: Vec<i64>,
    current: LinkId,
    resequence: bool,
}

impl Scheduler for DrrStripe {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        if bond.usable().next().is_none() {
            return Pick::Drop;
        }
        let n = self.quantum.len();
        while !(bond.links[self.current].can_tx() && self.deficit[self.current] > 0) {
            self.current = (self.current + 1) % n;
            if bond.links[self.current].can_tx() {
                self.deficit[self.current] += self.quantum[self.current];
            }
        }
        self.deficit[self.current] -= i64::from(packet.l3_bytes);
        Pick::Link(self.current)
    }

    fn resequences(&self) -> bool {
        self.resequence
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, links, picks};

    #[test]
    fn shares_bytes_in_proportion_to_speed() {
        let mut view = links(2);
        view[1].rate_bps = 3e9;
        let s = build("drr-stripe[quantum_bytes=1064]", &view);
        assert!(s.resequences());
        let mut s = s;
        let got = picks(s.as_mut(), &view, 400);
        let fast = got.iter().filter(|&&l| l == 1).count();
        assert!((fast as f64 / 400.0 - 0.75).abs() < 0.01, "{fast}");
        assert_eq!(&got[..5], &[0, 1, 1, 1, 0]);
        assert!(!build("drr-stripe[resequence=false]", &view).resequences());
    }
}
