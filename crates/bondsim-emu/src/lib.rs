//! bondsim-emu: the bond's schedulers over the Linux kernel's own TCP.
//!
//! `bondsim emulate` runs a scenario on a real data path: the server and each client
//! are network namespaces of this machine with a TUN device each; the kernel's TCP
//! in those namespaces carries the scenario's requests between real sockets; this
//! process reads every IP packet the server's TUN device emits, asks the scenario's
//! scheduler (the bond crate's code, unchanged) for a link, holds the packet for the
//! time the emulated link takes (the simulator's own rate-link model, in real time)
//! and writes it to the client's TUN device when it is due. The clients' packets
//! (ACKs) come back the same way on the reverse links. Under `sender.kind = "mptcp"` the
//! kernel's MPTCP runs instead (one subflow per link from an address of the client's per link,
//! each placed on its link by that address: [`fabric`], [`realtime`]).
//!
//! ```text
//!  server ns: TCP ─▶ bsim0 ─▶ read ─▶ Fabric: scheduler ─▶ forward RateLink ─▶ due ─▶ write ─▶ bsim0 ─▶ TCP: client ns
//!                    bsim0 ◀─ write ◀─ due ◀─ reverse RateLink ◀─ peer (rx_link / layer2+3) ◀─ read ◀─ bsim0
//! ```
//!
//! * [`fabric`]: the bond and its emulated links, sans-IO (unit-tested with made-up times), and
//!   the clients' NICs under `[host]`.
//! * [`clients`]: what the emulator makes of `[host]` (the NIC's ring and moderation, the kernel's GRO).
//! * [`placement`]: where the host holds the bond's queues (behind TUN, or kernel qdiscs per link).
//! * [`steer`]: the kernel side of the second: the TUN steering programs (eBPF), the qdiscs.
//! * [`ns`]: anonymous namespaces, TUN devices, per-namespace sysctls and SNMP counters.
//! * [`traffic`]: the request/response transfers over real sockets, `TCP_INFO`.
//! * [`mptcp`]: the kernel's MPTCP: the path manager's set-up, MPTCP sockets, `MPTCP_FULL_INFO`.
//! * [`udp`]: the `cbr` sender's streams over real UDP sockets.
//! * [`iperf`]: the same requests as iperf3 tests (`--traffic iperf3`).
//! * [`realtime`]: the loop on the monotonic clock, timing honesty (lateness), the result.

#![recursion_limit = "256"]

pub mod clients;
pub mod fabric;
#[cfg(target_os = "linux")]
pub mod iperf;
#[cfg(target_os = "linux")]
pub mod mptcp;
#[cfg(target_os = "linux")]
pub mod ns;
pub mod placement;
#[cfg(target_os = "linux")]
pub mod realtime;
#[cfg(target_os = "linux")]
pub mod steer;
#[cfg(target_os = "linux")]
pub mod traffic;
#[cfg(target_os = "linux")]
pub mod udp;

use bondsim_core::network::Clients;
use bondsim_core::scenario::{
    AckPath, Arrivals, CbrSender, FailureKind, Lag, LinkModel, Protocol, RateModel, Scenario, Sender, TcpSender,
    Workload,
};
use bondsim_core::{Error, Result};
pub use placement::{emulated_host, HostQueues, KERNEL_PLACEMENT, TUN_PLACEMENT};

/// Most requests one emulation may have: each is a real connection with a thread at each end.
pub const MAX_REQUESTS: u32 = 512;
/// Most clients (namespaces) one emulation may have.
pub const MAX_CLIENTS: u32 = 64;

/// Says which part of `scenario` the emulator cannot carry out, naming the field and why.
pub fn check(scenario: &Scenario) -> Result<()> {
    let Workload::Requests(w) = &scenario.workload else {
        return Err(Error::scenario("workload.kind", "the emulator runs `requests` workloads only (not pingpong yet)"));
    };
    if scenario.upload() {
        return Err(Error::scenario("workload.direction", "the emulator runs downloads only (not uploads yet)"));
    }
    clients::check(scenario)?;
    if scenario.sender.tcp().is_some_and(|t| t.message_bytes.is_some()) {
        return Err(Error::scenario(
            "sender.message_bytes",
            "the emulator's TCP application writes each file at once (not a stream of messages yet)",
        ));
    }
    if w.requests > MAX_REQUESTS {
        return Err(Error::scenario(
            "workload.requests",
            format!("the emulator opens a real connection per request: at most {MAX_REQUESTS}"),
        ));
    }
    if w.clients > MAX_CLIENTS {
        return Err(Error::scenario(
            "workload.clients",
            format!("the emulator makes a network namespace per client: at most {MAX_CLIENTS}"),
        ));
    }
    if let Arrivals::Closed { active } = w.arrivals {
        if u64::from(active) * u64::from(w.clients) > u64::from(MAX_REQUESTS) {
            return Err(Error::scenario(
                "workload.arrivals.active",
                format!("at most {MAX_REQUESTS} connections at once"),
            ));
        }
    }
    match &scenario.sender {
        Sender::Tcp(tcp) => check_tcp(tcp)?,
        Sender::Mptcp(m) => {
            check_tcp(&m.tcp)?;
            let cc = m.tcp.tcp_congestion_control.as_str();
            if bondsim_core::scenario::COUPLED_CONGESTION_CONTROLS.contains(&cc) {
                return Err(Error::scenario(
                    "sender.tcp_congestion_control",
                    format!(
                        "`{cc}` is the out-of-tree multipath-tcp.org kernel's coupled control, which Linux's MPTCP \
                         lacks (its subflows run cubic, reno or bbr uncoupled); only the model runs it"
                    ),
                ));
            }
            let sched = bondsim_core::transport::mptcp::sched::info(&m.mptcp.mptcp_scheduler);
            if !sched.upstream {
                return Err(Error::scenario(
                    "sender.mptcp_scheduler",
                    format!(
                        "the kernel here runs Linux's own MPTCP scheduler, `default`; `{}` is the out-of-tree \
                         multipath-tcp.org kernel's, which only the model runs",
                        sched.name
                    ),
                ));
            }
            // Each client's address per subflow's link (the fabric's plan, checked here first).
            fabric::subflow_ips(scenario, &Clients::new(&scenario.network, w.clients, scenario.seed))?;
        }
        Sender::Cbr(cbr) => check_cbr(scenario, cbr, &w.arrivals)?,
        other => {
            return Err(Error::scenario(
                "sender.kind",
                format!(
                    "the emulator's senders are the kernel's TCP, MPTCP and UDP: set sender.kind = \"tcp\", \
                     \"mptcp\" or \"cbr\" (not `{}`)",
                    other.kind()
                ),
            ))
        }
    }
    if scenario.measure_from_s.is_some() {
        return Err(Error::scenario(
            "measure_from_s",
            "the emulator counts goodput over the whole run (not supported yet)",
        ));
    }
    for (id, spec) in scenario.each_link() {
        if matches!(spec.model, LinkModel::Paced(_)) {
            return Err(Error::scenario(
                format!("links.{id}.kind"),
                "the emulator emulates rate links only (a paced link has no wire a real packet could cross)",
            ));
        }
        if let LinkModel::Rate(m) = &spec.model {
            check_placement(id, m)?;
        }
        if spec.base.random_failures.is_some() {
            return Err(Error::scenario(
                format!("links.{id}.random_failures"),
                "the emulator takes scheduled failures only (links.N.failures)",
            ));
        }
        if spec.base.flapping.is_some() {
            return Err(Error::scenario(
                format!("links.{id}.flapping"),
                "the emulator takes scheduled failures only (links.N.failures)",
            ));
        }
        if let Some(k) = spec.base.failures.iter().position(|f| f.kind != FailureKind::Carrier) {
            return Err(Error::scenario(
                format!("links.{id}.failures.{k}.kind"),
                "the emulator fails a link's carrier only (kind = \"carrier\"; silent ports not yet)",
            ));
        }
        if spec.base.carrier_latency_ms != 0.0 {
            return Err(Error::scenario(
                format!("links.{id}.carrier_latency_ms"),
                "the emulator's monitor sees the carrier at once: set it 0 (not emulated yet)",
            ));
        }
    }
    placement::host_queues(scenario)?;
    let b = &scenario.bond;
    if b.arp_interval != 0.0 || b.link_watch.is_some() {
        let field = if b.arp_interval != 0.0 { "bond.arp_interval" } else { "bond.link_watch" };
        return Err(Error::scenario(
            field,
            "the emulator's bond watches its links with miimon only (not yet ARP probes)",
        ));
    }
    if scenario.lag() == Lag::Unaware {
        return Err(Error::scenario(
            "switch.lag",
            "the emulator's switch is LAG-aware (static or lacp); an unaware switch is a model only (not yet)",
        ));
    }
    Ok(())
}

/// What the emulator cannot do with a rate link's placement ([`placement`] decides the host).
fn check_placement(id: usize, m: &RateModel) -> Result<()> {
    if m.tx_coalesce_us > 0.0 {
        return Err(Error::scenario(
            format!("links.{id}.tx_coalesce_us"),
            "TX-completion coalescing holds a sent frame a while longer, and this kernel has no qdisc that \
             holds a frame (no netem): set it 0",
        ));
    }
    if m.rx_coalesce_us > 0.0 {
        return Err(Error::scenario(
            format!("links.{id}.rx_coalesce_us"),
            "throttles a NIC's receive interrupts in the model; the emulator's links are TUN devices the \
             kernel reads at once: set it 0",
        ));
    }
    Ok(())
}

/// What the emulator cannot do with the kernel's TCP sender.
fn check_tcp(tcp: &TcpSender) -> Result<()> {
    if tcp.gso {
        return Err(Error::scenario(
            "sender.gso",
            "the emulator's TUN devices have no offload (IFF_VNET_HDR): set it false",
        ));
    }
    if tcp.ack_path == AckPath::Ideal {
        return Err(Error::scenario(
            "sender.ack_path",
            "the emulator's ACKs take the reverse links: `ideal` is a model only",
        ));
    }
    Ok(())
}

/// What the emulator cannot do with the `cbr` sender (real UDP streams, [`udp`]).
fn check_cbr(scenario: &Scenario, cbr: &CbrSender, arrivals: &Arrivals) -> Result<()> {
    if matches!(arrivals, Arrivals::Closed { .. }) {
        return Err(Error::scenario(
            "workload.arrivals.kind",
            "the emulator's UDP streams start at their arrival times (open arrivals); a closed loop not yet",
        ));
    }
    let headers = Protocol::Udp.header_bytes();
    if cbr.chunk_bytes + headers > scenario.mtu() {
        return Err(Error::scenario(
            "sender.chunk_bytes",
            format!(
                "the emulator sends whole datagrams: at most {} bytes (the MTU less {headers} of IP and UDP \
                 headers; fragments not yet)",
                scenario.mtu().saturating_sub(headers)
            ),
        ));
    }
    Ok(())
}

/// How an emulation runs (not part of the scenario).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stop after this many seconds of real time (default: the scenario's `stop_s`, else 60).
    pub seconds: Option<f64>,
    /// What carries the requests.
    pub traffic: Traffic,
}

/// What carries the scenario's requests between the namespaces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Traffic {
    /// The emulator's own sockets (TCP transfers, UDP streams), with `TCP_INFO`.
    #[default]
    Sockets,
    /// iperf3 tests, one per request (`iperf`).
    Iperf3,
}

impl Traffic {
    /// The names `--traffic` takes, in declaration order (the default first).
    pub const NAMES: [&'static str; 2] = ["sockets", "iperf3"];

    /// From its name.
    pub fn from_name(name: &str) -> Result<Traffic> {
        match name {
            "sockets" => Ok(Traffic::Sockets),
            "iperf3" => Ok(Traffic::Iperf3),
            _ => Err(Error::Io(format!("--traffic: one of {}, not `{name}`", Traffic::NAMES.join(", ")))),
        }
    }
}

/// Where an emulation is, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Requests whose file has arrived whole.
    pub done: u32,
    /// Requests in all.
    pub total: u32,
    /// Seconds since the start.
    pub elapsed_s: f64,
}

#[cfg(test)]
mod tests;
