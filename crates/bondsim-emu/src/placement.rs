//! Where the emulator's host holds the bond's queues, decided from the scenario (no I/O: the
//! rules are unit-tested without root).
//!
//! Two hosts can be built here (the trial behind them: `benchmarks/results/kernel-true.md`):
//!
//! * **Behind TUN** ([`HostQueues::Tun`]): the bond and every link's queue run in userspace
//!   behind the server's TUN device, where `tun_net_xmit` orphans each skb (`skb_orphan`,
//!   `drivers/net/tun.c`, 6.x): the host stops counting a frame as the bond is handed it. The
//!   model's `placement = "tun"`. Any mode.
//! * **Kernel queues** ([`HostQueues::Kernel`]): the server's TUN device has a queue per link
//!   (`IFF_MULTI_QUEUE`) and one more for packets of flows not yet placed; each link's queue
//!   is a kernel qdisc (`mq` at the root, an HTB class per link, a `pfifo` of the link's
//!   `txqueuelen` under it) that the socket is charged for until HTB hands the frame to
//!   `tun_net_xmit`; the mode runs in the kernel, as a TUN steering program
//!   (`TUNSETSTEERINGEBPF`, `tun_ebpf_select_queue`) ([`Steering`]). HTB hands a class's frame
//!   over while its tokens are not negative and charges them after (`htb_dequeue_tree`,
//!   `htb_charge_class`, `net/sched/sch_htb.c`, 6.x), so with a burst well under a frame the
//!   host stops counting a frame as the shaper starts it: the model's `placement = "shaper"`.
//!   The userspace link after it takes the frame's wire time (and a `downstream` line's).
//!
//! A `nic` link (counted until its last bit) cannot be built here: that needs the frame held
//! for its own transmit time after the qdisc lets it go, and a qdisc that holds a frame (netem)
//! is not in this kernel; HTB and TBF both let a backlogged frame go as it starts (measured).
//! So a scenario of `nic` links runs behind TUN, as before, and [`emulated_host`] tells the
//! model which host ran.

use bondsim_core::bond::registry;
use bondsim_core::scenario::{LinkModel, Placement, RateModel, Scenario};
use bondsim_core::{Error, Result};

/// How the mode picks a link in the kernel (a TUN steering program). MPTCP's subflows take
/// [`Steering::Flows`]: the fabric places a subflow by its client-side address
/// (`crate::fabric::subflow_ips`), the program looks it up after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steering {
    /// `balance-rr`: one counter for the bond, link `counter / per_slave % links`, the counter
    /// used before it is incremented (as [`bondsim_core::bond`]'s round robin).
    RoundRobin {
        /// `packets_per_slave` (1 or more).
        per_slave: u32,
    },
    /// A mode whose link is a function of the flow while no link fails (`balance-xor`,
    /// `802.3ad`, `active-backup`): the userspace bond picks for a flow's first packet (which
    /// the kernel sends on the extra queue) and the program looks the flow up after.
    Flows,
}

/// Where the server's host holds the bond's queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostQueues {
    /// In userspace behind TUN (placement `tun`).
    Tun,
    /// A kernel qdisc per link, the mode in the kernel (placement `shaper`).
    Kernel(Steering),
}

/// The host behind TUN, in words (`validate` prints it).
pub const TUN_PLACEMENT: &str =
    "tun: the host stops counting a frame at tun_net_xmit, the bond and the link's queue are beyond it";

/// The host with kernel queues, in words.
pub const KERNEL_PLACEMENT: &str = "shaper: an HTB class per link on a multi-queue TUN device, the mode in the \
    kernel (a TUN steering program); the host stops counting a frame as HTB starts it";

/// The modes the kernel can run: their names in the registry.
const FLOW_MODES: [&str; 3] = ["balance-xor", "802.3ad", "active-backup"];

/// How the mode of `scenario` runs in the kernel, if it can.
fn steering(scenario: &Scenario) -> Result<Option<Steering>> {
    let resolved = registry::resolve(&scenario.bond.mode, &scenario.bond.options)?;
    Ok(match resolved.info.name {
        "balance-rr" => match resolved.params.int("packets_per_slave") {
            0 => None, // a random link per packet: no program here draws the bond's stream
            n => Some(Steering::RoundRobin { per_slave: n as u32 }),
        },
        name if FLOW_MODES.contains(&name) => Some(Steering::Flows),
        _ => None,
    })
}

/// The rate links of `scenario`, with their ids.
fn rate_links(scenario: &Scenario) -> impl Iterator<Item = (usize, &RateModel)> {
    scenario.each_link().filter_map(|(id, spec)| match &spec.model {
        LinkModel::Rate(m) => Some((id, m)),
        _ => None,
    })
}

/// Where the emulator holds the bond's queues for `scenario`, or which field it cannot carry
/// out and why. A `shaper` link needs kernel queues, and so the mode in the kernel; a
/// `downstream` line gets them where the mode can run there (its NIC stage is then a kernel
/// qdisc at the link's rate), else the bond runs in userspace behind TUN with the line
/// beyond it.
pub fn host_queues(scenario: &Scenario) -> Result<HostQueues> {
    let shaper = rate_links(scenario).find(|(_, m)| m.placement == Placement::Shaper).map(|(id, _)| id);
    let downstream = rate_links(scenario).any(|(_, m)| m.downstream.is_some());
    if shaper.is_none() && !downstream {
        return Ok(HostQueues::Tun);
    }
    if scenario.mptcp_subflows() > 0 {
        // MPTCP: no bond; each subflow's link is a function of its addresses, which the flows'
        // program looks up once the userspace fabric has placed the subflow's first packet.
        check_kernel_links(scenario)?;
        return Ok(HostQueues::Kernel(Steering::Flows));
    }
    let Some(steering) = steering(scenario)? else {
        return match shaper {
            Some(id) => Err(Error::scenario(
                format!("links.{id}.placement"),
                format!(
                    "placement = \"shaper\" needs a kernel qdisc per link, and so the mode in the kernel: the \
                     emulator runs balance-rr (packets_per_slave >= 1), {} there, not `{}` (it runs behind TUN \
                     with placement = \"tun\", or with a downstream line)",
                    FLOW_MODES.join(", "),
                    scenario.bond.mode
                ),
            )),
            None => Ok(HostQueues::Tun),
        };
    };
    check_kernel_links(scenario)?;
    Ok(HostQueues::Kernel(steering))
}

/// What kernel queues cannot carry out: a failover (the program in the kernel does not follow
/// the bond's monitor yet) and a link whose rate is not constant (an HTB class has one rate).
fn check_kernel_links(scenario: &Scenario) -> Result<()> {
    let refuse = |field: String, what: &str| {
        Err(Error::scenario(field, format!("with kernel queues (placement = \"shaper\", or a downstream line) {what}")))
    };
    for (id, spec) in scenario.each_link() {
        if !spec.base.failures.is_empty() {
            let why = if scenario.mptcp_subflows() > 0 {
                "a link's kernel qdisc goes on sending what it holds when the carrier goes, where the model's \
                 queue empties: no failures (they run behind TUN: placement = \"tun\" and no downstream line)"
            } else {
                "the mode runs in the kernel and does not follow a failover yet: no failures"
            };
            return refuse(format!("links.{id}.failures"), why);
        }
        if spec.base.slowdown != 1.0 || !spec.base.slow_windows.is_empty() {
            let field = if spec.base.slowdown != 1.0 { "slowdown" } else { "slow_windows" };
            return refuse(format!("links.{id}.{field}"), "each link's rate is an HTB class's, one rate: no slowdowns");
        }
        if matches!(&spec.model, LinkModel::Rate(m) if m.per_packet_us != 0.0) {
            return refuse(format!("links.{id}.per_packet_us"), "an HTB class charges bytes only: set it 0");
        }
    }
    Ok(())
}

impl HostQueues {
    /// The placement the model runs for this host, and the host in words.
    pub fn placement(self) -> (Placement, &'static str) {
        match self {
            HostQueues::Kernel(_) => (Placement::Shaper, KERNEL_PLACEMENT),
            HostQueues::Tun => (Placement::Tun, TUN_PLACEMENT),
        }
    }
}

/// `scenario` as the emulator runs it, for the model to run the same host, and that host in
/// words: behind TUN every rate link is `placement = "tun"`; with kernel queues every rate link
/// is `"shaper"` (a `nic` link among them is shaped so too). Nothing else changes (a
/// `downstream` line stays). A scenario the emulator refuses is given the host behind TUN.
pub fn emulated_host(scenario: &Scenario) -> (Scenario, &'static str) {
    let (placement, words) = host_queues(scenario).unwrap_or(HostQueues::Tun).placement();
    let mut host = scenario.clone();
    for spec in &mut host.links {
        if let LinkModel::Rate(m) = &mut spec.model {
            m.placement = placement;
        }
    }
    (host, words)
}
