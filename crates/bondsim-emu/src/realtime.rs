//! The emulation in real time: namespaces up, traffic threads started, then one loop
//! on the host's monotonic clock moves packets between the TUN devices through the
//! [`Fabric`]; at the end, the result with the same field names as `bondsim run`'s
//! where they mean the same thing.
//!
//! Timing honesty: every packet written to a TUN device is written at or after the time
//! its emulated link delivers it; how much after (its lateness) is recorded, and the
//! result gives the percentiles and warns when the host could not keep up.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bondsim_core::network::Clients;
use bondsim_core::report::{Figure, Figures};
use bondsim_core::result::{LinkSummary, Summary};
use bondsim_core::scenario::{Arrivals, MptcpSender, Scenario, Sender, TcpSender, Workload};
use bondsim_core::time::SimTime;
use bondsim_core::workload::{self, PENDING};
use bondsim_core::{Error, Result};
use hdrhistogram::Histogram;
use nix::poll::{PollFd, PollFlags};
use serde_json::{json, Map, Value};

use crate::fabric::{self, Delivery, Dest, Fabric};
use crate::mptcp;
use crate::ns::{self, host_error, Netns};
use crate::placement::{self, HostQueues};
use crate::steer::{self, Steerer};
use crate::traffic::{self, Outcome, Shared, TcpInfo};
use crate::udp;
use crate::{iperf, Traffic};
use crate::{Options, Progress};

/// Lateness above which a delivery counts as late in the warning, µs: a tenth of a
/// millisecond is below any delay a scenario's links give TCP to see.
const LATE_US: u64 = 1000;

/// The sysctls set in every namespace from the scenario's TCP fields (their Linux
/// names, Documentation/networking/ip-sysctl.rst), as `(name, value)`.
fn sysctls(tcp: &TcpSender) -> Vec<(String, String)> {
    let triple = |v: [u64; 3]| format!("{} {} {}", v[0], v[1], v[2]);
    [
        ("net.ipv4.tcp_congestion_control", tcp.tcp_congestion_control.clone()),
        ("net.ipv4.tcp_reordering", tcp.tcp_reordering.to_string()),
        ("net.ipv4.tcp_max_reordering", tcp.tcp_max_reordering.to_string()),
        ("net.ipv4.tcp_recovery", tcp.tcp_recovery.to_string()),
        ("net.ipv4.tcp_early_retrans", tcp.tcp_early_retrans.to_string()),
        ("net.ipv4.tcp_frto", tcp.tcp_frto.to_string()),
        ("net.ipv4.tcp_sack", u8::from(tcp.tcp_sack).to_string()),
        ("net.ipv4.tcp_dsack", u8::from(tcp.tcp_dsack).to_string()),
        ("net.ipv4.tcp_moderate_rcvbuf", u8::from(tcp.tcp_moderate_rcvbuf).to_string()),
        ("net.ipv4.tcp_rmem", triple(tcp.tcp_rmem)),
        ("net.ipv4.tcp_wmem", triple(tcp.tcp_wmem)),
        ("net.ipv4.tcp_limit_output_bytes", tcp.tcp_limit_output_bytes.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// MPTCP's sysctls set in every namespace from the scenario's `sender.mptcp_*` fields
/// (Documentation/networking/mptcp-sysctl.rst), after TCP's.
fn mptcp_sysctls(m: &bondsim_core::scenario::Mptcp) -> Vec<(String, String)> {
    [
        ("net.mptcp.enabled", "1".to_string()),
        ("net.mptcp.scheduler", m.mptcp_scheduler.clone()),
        ("net.mptcp.stale_loss_cnt", m.mptcp_stale_loss_cnt.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Sets `list` in the calling thread's namespace; returns what became of each.
fn set_sysctls(list: &[(String, String)]) -> Vec<(String, ns::Sysctl)> {
    list.iter().map(|(name, value)| (name.clone(), ns::sysctl(name, value))).collect()
}

/// The counters' growth from `before` to `after`, the ones that moved.
fn counter_delta(before: &[(String, i64)], after: &[(String, i64)]) -> Map<String, Value> {
    let start: std::collections::HashMap<&str, i64> = before.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    after
        .iter()
        .filter_map(|(k, v)| {
            let d = v - start.get(k.as_str()).copied().unwrap_or(0);
            (d != 0).then(|| (k.clone(), json!(d)))
        })
        .collect()
}

/// Fails unless this process may make namespaces and TUN devices.
pub fn preflight() -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        return Err(Error::Io(
            "emulator: needs root (it makes network namespaces and TUN devices); run it as root".into(),
        ));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(Error::Io(
            "emulator: no /dev/net/tun on this machine (the tun module): cannot make TUN devices".into(),
        ));
    }
    Ok(())
}

/// How the deliveries kept to their times.
struct Timing {
    /// Lateness in µs, up to a minute (later ones count as a minute).
    lateness: Histogram<u64>,
    /// Per forward link: wire bytes delivered, first and last delivery (seconds from the start).
    delivered: Vec<(u64, f64, f64)>,
}

impl Timing {
    fn new(links: usize) -> Timing {
        Timing {
            lateness: Histogram::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds"),
            delivered: vec![(0, f64::NAN, 0.0); links],
        }
    }

    /// Writes `out` to the TUN devices, each packet now (its time has come), noting how late.
    fn write(&mut self, out: &mut Vec<Delivery>, server: &mut ServerTun, client_tuns: &mut [File], start: Instant) {
        for d in out.drain(..) {
            let tun = match d.dest {
                Dest::Server => &mut server.queues[0],
                Dest::Client(c) => &mut client_tuns[c],
            };
            // A full TUN queue on the way in drops, as a NIC's ring would.
            let _ = tun.write(&d.bytes);
            let written = start.elapsed();
            self.lateness.saturating_record((written.as_nanos() as u64).saturating_sub(d.due.0) / 1000);
            if let (Dest::Client(_), Some(link)) = (d.dest, d.link) {
                let entry = &mut self.delivered[link];
                entry.0 += d.wire_bytes;
                if entry.1.is_nan() {
                    entry.1 = written.as_secs_f64();
                }
                entry.2 = written.as_secs_f64();
            }
        }
    }
}

/// Most packets read from one TUN device before the loop looks at the clock again: a
/// burst from the kernel must not hold back deliveries that are due.
const READ_BURST: usize = 32;

/// Reads the packets waiting on `tun`, at most [`READ_BURST`].
fn drain(tun: &mut File, buf: &mut [u8], mut each: impl FnMut(Vec<u8>)) -> Result<()> {
    for _ in 0..READ_BURST {
        match tun.read(buf) {
            Ok(n) => each(buf[..n].to_vec()),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(host_error("reading a TUN device", e)),
        }
    }
    Ok(())
}

/// Runs `scenario` on the emulator; `progress` is called about four times a second and
/// stops the run (`Error::Interrupted`) when it returns false. Returns the result as
/// JSON: `summary`, `requests` and `links` (columns), as `bondsim run`'s.
pub fn emulate(scenario: &Scenario, options: &Options, progress: &mut dyn FnMut(Progress) -> bool) -> Result<Value> {
    crate::check(scenario)?;
    // TCP's fields: TCP's, or each MPTCP subflow's.
    let tcp = scenario.sender.tcp();
    let mptcp = match &scenario.sender {
        Sender::Mptcp(m) => Some(&m.mptcp),
        _ => None,
    };
    if mptcp.is_some() && options.traffic == Traffic::Iperf3 {
        return Err(Error::Io(
            "--traffic iperf3: MPTCP runs over the emulator's own sockets (IPPROTO_MPTCP) only: leave --traffic \
             sockets"
                .into(),
        ));
    }
    preflight()?;
    let Workload::Requests(w) = &scenario.workload else { unreachable!("checked") };
    let limit_s = options.seconds.or(scenario.stop_s).unwrap_or(60.0);
    let requests = workload::generate(w, scenario.seed);
    let clients = Clients::new(&scenario.network, w.clients, scenario.seed);
    let mut fabric = Fabric::new(scenario, clients.clone())?;
    let mtu = scenario.mtu();
    let mut wanted = tcp.map(sysctls).unwrap_or_default();
    wanted.extend(mptcp.map(mptcp_sysctls).unwrap_or_default());
    // MPTCP: each client's address on each subflow's link, and which links' subflows are backups.
    let subflow_ips = fabric::subflow_ips(scenario, &clients)?;
    let backup: Vec<bool> = (0..scenario.mptcp_subflows() as usize)
        .map(|id| mptcp.is_some_and(|m| m.mptcp_backup.contains(&scenario.link_name(id))))
        .collect();
    let mut mptcp_commands = Vec::new();

    // The hosts: the server's namespace, then one per client.
    let server_ns = Netns::new()?;
    let server_ip = fabric_server_ip(scenario)?;
    let port = scenario.network.server_port;
    let iperf3 = options.traffic == Traffic::Iperf3;
    if iperf3 {
        iperf::preflight()?;
    }
    // iperf3's servers listen on a port each, from the scenario's server port on.
    let iperf3_port = move |id: u32| port.wrapping_add(id as u16);
    if iperf3 && u32::from(port) + requests.len() as u32 > u32::from(u16::MAX) {
        return Err(Error::scenario(
            "network.server_port",
            format!(
                "--traffic iperf3 needs a port per request from it: at most {}",
                u16::MAX as usize - requests.len()
            ),
        ));
    }
    let host = placement::host_queues(scenario)?;
    let (mut server_tun, set, server_before, server_socket) = server_ns.run(|| {
        let set = set_sysctls(&wanted);
        let tun = ServerTun::open(scenario, host, server_ip, mtu)?;
        let addr = traffic::server_addr(server_ip, port);
        let socket = match tcp {
            _ if iperf3 => ServerSocket::Iperf3,
            Some(tcp) if mptcp.is_some() => {
                mptcp_commands.push(format!("server: {}", mptcp::setup_server(scenario.mptcp_subflows() - 1)?));
                ServerSocket::Tcp(mptcp::listen(addr, &tcp.tcp_congestion_control)?)
            }
            Some(tcp) => {
                let listener =
                    std::net::TcpListener::bind(addr).map_err(|e| host_error("listening on the server's port", e))?;
                // The sender's congestion control, whatever the namespace's default could be set to.
                ns::set_congestion_control(&listener, &tcp.tcp_congestion_control)?;
                ServerSocket::Tcp(listener)
            }
            None => ServerSocket::Udp(
                std::net::UdpSocket::bind(addr).map_err(|e| host_error("binding the server's UDP port", e))?,
            ),
        };
        Ok((tun, set, ns::counters()?, socket))
    })?;
    let mut client_ns = Vec::new();
    let mut client_tuns = Vec::new();
    let mut clients_before = Vec::new();
    for (c, &ip) in clients.ips.iter().enumerate() {
        let netns = Netns::new()?;
        let (tun, before) = netns.run(|| {
            set_sysctls(&wanted);
            let tun = ns::open_tun(ip, mtu, crate::clients::gro_flush_timeout_ns(&scenario.host))?;
            if let Some(addrs) = subflow_ips.get(c) {
                let commands = mptcp::setup_client(addrs, &backup)?;
                if c == 0 {
                    mptcp_commands.extend(commands.into_iter().map(|line| format!("client 0: {line}")));
                }
            }
            Ok((tun, ns::counters()?))
        })?;
        client_ns.push(Arc::new(netns));
        client_tuns.push(tun);
        clients_before.push(before);
    }

    // The traffic: the server's accept loop and the clients' slots (TCP), or a sender and a
    // receiver per stream (UDP).
    let shared = Arc::new(Shared {
        stop: Default::default(),
        outcomes: Mutex::new(
            requests
                .iter()
                .map(|r| Outcome { id: r.id, client: r.client, file_bytes: r.file_bytes, ..Outcome::default() })
                .collect(),
        ),
        start: Instant::now(),
    });
    let mut threads = Vec::new();
    let server_ns = Arc::new(server_ns);
    match (server_socket, &scenario.sender) {
        (ServerSocket::Tcp(listener), Sender::Tcp(tcp) | Sender::Mptcp(MptcpSender { tcp, .. })) => {
            let (shared_tx, netns, nodelay) = (shared.clone(), server_ns.clone(), tcp.nodelay);
            let is_mptcp = mptcp.is_some();
            threads.push(std::thread::spawn(move || {
                if netns.enter().is_ok() {
                    traffic::serve(listener, shared_tx, nodelay, is_mptcp);
                }
            }));
            for (client, ids) in slots(&requests, &w.arrivals, w.clients) {
                let (shared, netns) = (shared.clone(), client_ns[client as usize].clone());
                let addr = traffic::server_addr(server_ip, port);
                let cc = is_mptcp.then(|| tcp.tcp_congestion_control.clone());
                threads.push(std::thread::spawn(move || {
                    if netns.enter().is_ok() {
                        traffic::fetch(addr, ids, shared, cc);
                    }
                }));
            }
        }
        (ServerSocket::Udp(socket), Sender::Cbr(cbr)) => {
            threads.extend(udp_streams(scenario, cbr, socket, &requests, &clients, &client_ns, &shared)?);
        }
        (ServerSocket::Iperf3, sender) => {
            let (ready, started) = std::sync::mpsc::channel();
            let ports: Vec<u16> = requests.iter().map(|r| iperf3_port(r.id)).collect();
            let (shared_tx, netns) = (shared.clone(), server_ns.clone());
            threads.push(std::thread::spawn(move || match netns.enter() {
                Ok(()) => iperf::serve(server_ip, ports, &shared_tx, ready),
                Err(e) => {
                    let _ = ready.send(Err(e));
                }
            }));
            if let Err(e) = started.recv().unwrap_or_else(|_| Err(Error::Io("iperf3 servers: no answer".into()))) {
                shared.stop.store(true, Ordering::Relaxed);
                for t in threads {
                    let _ = t.join();
                }
                return Err(e);
            }
            for (client, ids) in slots(&requests, &w.arrivals, w.clients) {
                let (shared, netns, sender) = (shared.clone(), client_ns[client as usize].clone(), sender.clone());
                threads.push(std::thread::spawn(move || {
                    if netns.enter().is_ok() {
                        let settings = |id: u32| (iperf::Settings::new(&sender, id as usize), iperf3_port(id));
                        iperf::fetch(server_ip, ids, settings, &shared);
                    }
                }));
            }
        }
        _ => unreachable!("the server's socket is the sender's"),
    }

    // The loop.
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack (prctl(2)):
    // 1 ns instead of 50 µs, so ppoll wakes when a delivery is due.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
    let realtime = realtime_priority();
    let start = shared.start;
    let mut timing = Timing::new(fabric.names.len());
    let mut out: Vec<Delivery> = Vec::new();
    let mut buf = vec![0u8; 65536];
    let mut last_progress = Instant::now();
    let total = requests.len() as u32;
    let mut interrupted = false;
    let mut drained = false;
    let mut loop_error = None;
    let clock = || SimTime(start.elapsed().as_nanos() as u64);
    loop {
        fabric.advance(clock(), &mut out);
        timing.write(&mut out, &mut server_tun, &mut client_tuns, start);
        // Each packet enters the fabric at the time it was read.
        if let Err(e) = server_tun.drain(&mut buf, &mut fabric, &clock, &mut out) {
            loop_error = Some(e);
            break;
        }
        for (c, tun) in client_tuns.iter_mut().enumerate() {
            let from_client = drain(tun, &mut buf, |p| fabric.from_client(clock(), c, p, &mut out));
            if let Err(e) = from_client {
                loop_error = Some(e);
            }
        }
        timing.write(&mut out, &mut server_tun, &mut client_tuns, start);
        if loop_error.is_some() {
            break;
        }
        let elapsed = start.elapsed().as_secs_f64();
        if last_progress.elapsed() >= Duration::from_millis(250) {
            last_progress = Instant::now();
            let done = finished(&shared);
            if !progress(Progress { done: done.0, total, elapsed_s: elapsed }) {
                interrupted = true;
                break;
            }
            if done.1 == total || elapsed >= limit_s {
                break;
            }
            // Nothing comes back to say a datagram is lost: the streams are over once every
            // datagram was sent and the links were empty at two checks in a row (the
            // receivers had a check's time to read the last ones).
            let empty = tcp.is_none() && fabric.in_flight() == 0 && udp_sent_all(&shared);
            if empty && drained {
                break;
            }
            drained = empty;
        }
        // Sleep until the next delivery is due or a TUN device has a packet (at most 50 ms).
        let now = SimTime(start.elapsed().as_nanos() as u64);
        let wait = fabric.next_deadline().map_or(50_000_000, |t| t.0.saturating_sub(now.0)).min(50_000_000);
        if wait > 0 {
            let mut fds: Vec<PollFd> = server_tun
                .queues
                .iter()
                .chain(client_tuns.iter())
                .map(|f| PollFd::new(f.as_fd(), PollFlags::POLLIN))
                .collect();
            let timeout = nix::sys::time::TimeSpec::from_duration(Duration::from_nanos(wait));
            let _ = nix::poll::ppoll(&mut fds, Some(timeout), None);
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    shared.stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    if interrupted {
        return Err(Error::Interrupted);
    }
    if let Some(e) = loop_error {
        return Err(e);
    }
    let server_after = server_ns.run(ns::counters)?;
    if server_tun.steerer.is_some() {
        // The kernel's queues dropped what did not fit: the links' queue drops.
        fabric.count_queue_drops(&server_ns.run(|| steer::queue_drops(fabric.names.len()))?);
    }
    let mut clients_delta = Map::new();
    for (netns, before) in client_ns.iter().zip(&clients_before) {
        for (k, v) in counter_delta(before, &netns.run(ns::counters)?) {
            let sum = clients_delta.get(&k).and_then(Value::as_i64).unwrap_or(0) + v.as_i64().unwrap_or(0);
            clients_delta.insert(k, json!(sum));
        }
    }
    let outcomes = std::mem::take(&mut *shared.outcomes.lock().expect("outcomes"));
    let value = |name: &str| wanted.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default();
    let kernel = Kernel {
        sysctls: set.iter().filter(|(_, s)| *s == ns::Sysctl::Set).map(|(k, _)| (k.clone(), value(k))).collect(),
        not_set: set
            .iter()
            .filter_map(|(k, s)| match s {
                ns::Sysctl::Set => None,
                ns::Sysctl::Missing => Some((k.clone(), "this kernel has no such sysctl".to_string())),
                ns::Sysctl::Refused(why) => Some((k.clone(), why.clone())),
            })
            .collect(),
        congestion_control: outcomes.iter().find_map(|o| o.congestion_control.clone()),
        realtime,
        traffic: options.traffic,
        placement: host.placement().1,
        server: counter_delta(&server_before, &server_after),
        clients: clients_delta,
        mptcp_commands,
    };
    Ok(result(scenario, &fabric, &outcomes, &kernel, &timing.lateness, &timing.delivered, wall_s, limit_s))
    // Dropping the namespaces' descriptors and the TUN devices here frees them all.
}

/// The server's TUN device: one queue with the bond and its links' queues in userspace
/// (`HostQueues::Tun`), or a queue per link whose kernel qdisc holds the link's queue, the mode in
/// the kernel, and one more queue for packets of flows the kernel has no link for yet
/// (`HostQueues::Kernel`, `crate::steer`).
struct ServerTun {
    queues: Vec<File>,
    steerer: Option<Steerer>,
}

impl ServerTun {
    /// Opens it in the calling thread's namespace, addressed `addr` with `mtu`.
    fn open(scenario: &Scenario, host: HostQueues, addr: [u8; 4], mtu: u32) -> Result<ServerTun> {
        let HostQueues::Kernel(steering) = host else {
            return Ok(ServerTun { queues: vec![ns::open_tun(addr, mtu, None)?], steerer: None });
        };
        let links = scenario.each_link().count(); // (a spec's `count` expanded)
        let queues = ns::open_tun_queues(addr, mtu, links + 1)?;
        steer::set_qdiscs(scenario)?;
        let steerer = Steerer::attach(steering, links as u32, &queues[0])?;
        Ok(ServerTun { queues, steerer: Some(steerer) })
    }

    /// Reads what waits on each queue into `fabric`, at `clock()`: a link's queue's packets go
    /// on that link's wire; the others to the bond, and where it puts a flow on one link the
    /// kernel's program is told (flows placed in the kernel).
    fn drain(
        &mut self,
        buf: &mut [u8],
        fabric: &mut Fabric,
        clock: &impl Fn() -> SimTime,
        out: &mut Vec<Delivery>,
    ) -> Result<()> {
        let links = if self.steerer.is_some() { self.queues.len() - 1 } else { 0 };
        let mut placed = Vec::new();
        for (i, queue) in self.queues.iter_mut().enumerate() {
            drain(queue, buf, |p| {
                if i < links {
                    fabric.from_kernel_queue(clock(), i, p, out);
                } else {
                    placed.extend(fabric.from_server(clock(), p, out));
                }
            })?;
        }
        if let Some(steerer) = &self.steerer {
            for p in placed {
                steerer.place(p.dst_ip, p.src_port, p.dst_port, p.link)?;
            }
        }
        Ok(())
    }
}

/// The server's socket: a TCP listener, or the UDP socket every stream is sent from; none
/// of ours for iperf3 (its servers bind their own).
enum ServerSocket {
    Tcp(std::net::TcpListener),
    Udp(std::net::UdpSocket),
    Iperf3,
}

/// Starts a sender and a receiver thread per request of the `cbr` sender: each client's
/// socket is bound in its namespace first, on the port the model gives the flow
/// (`network::flow_headers`, so that the hash policies see the model's ports), so no
/// datagram is sent before its receiver is there.
fn udp_streams(
    scenario: &Scenario,
    cbr: &bondsim_core::scenario::CbrSender,
    socket: std::net::UdpSocket,
    requests: &[workload::Request],
    clients: &Clients,
    client_ns: &[Arc<Netns>],
    shared: &Arc<Shared>,
) -> Result<Vec<std::thread::JoinHandle<()>>> {
    let headers = bondsim_core::network::flow_headers(&scenario.network, clients, requests, scenario.seed);
    let cutter = bondsim_core::transport::Cutter::for_scenario(scenario);
    let socket = Arc::new(socket);
    let mut threads = Vec::new();
    for (r, h) in requests.iter().zip(&headers) {
        let ip = clients.ips[r.client as usize];
        let receiver = client_ns[r.client as usize]
            .run(|| udp::bind(ip, h.dst_port).map_err(|e| host_error("binding a client's UDP socket", e)))?;
        let to = receiver.local_addr().map_err(|e| host_error("a client's UDP socket", e))?;
        let std::net::SocketAddr::V4(to) = to else { unreachable!("bound to an IPv4 address") };
        {
            let mut outcomes = shared.outcomes.lock().expect("outcomes");
            let o = &mut outcomes[r.id as usize];
            (o.local_port, o.start_s) = (Some(to.port()), Some(r.arrival.as_secs_f64()));
        }
        let (id, bytes) = (r.id, r.file_bytes);
        let shared_rx = shared.clone();
        threads.push(std::thread::spawn(move || udp::receive(receiver, id, bytes, cutter, &shared_rx)));
        let stream =
            udp::Stream { id, to, bytes, arrival_s: r.arrival.as_secs_f64(), rate_bps: cbr.rate_of(id as usize) * 1e6 };
        let (socket, shared) = (socket.clone(), shared.clone());
        threads.push(std::thread::spawn(move || udp::send(&socket, stream, cutter, &shared)));
    }
    Ok(threads)
}

/// The fabric's packet trace as the simulator's `packet_trace` table, each row's flow the
/// request whose flow it is (`keys_of`: its flows, an MPTCP connection's subflows; null for
/// one of no request, as iperf3's control).
fn packet_trace(
    fabric: &Fabric,
    outcomes: &[Outcome],
    keys_of: impl Fn(&Outcome) -> Vec<bondsim_core::bond::FlowKey>,
) -> Value {
    let request: rustc_hash::FxHashMap<_, u32> =
        outcomes.iter().flat_map(|o| keys_of(o).into_iter().map(|k| (k, o.id))).collect();
    let t = &fabric.trace;
    let mut table = serde_json::to_value(&t.rows).expect("plain data");
    let flows: Vec<Value> = t.rows.flow.iter().map(|&f| json!(request.get(&t.flows[f as usize]))).collect();
    table["flow"] = Value::Array(flows);
    table
}

fn fabric_server_ip(scenario: &Scenario) -> Result<[u8; 4]> {
    bondsim_core::network::parse_ip("network.server_ip", &scenario.network.server_ip)
}

/// Puts the calling thread (the loop) in the real-time class, `SCHED_FIFO` at a low
/// priority (sched(7)): it sleeps in `ppoll` until a delivery is due and must then run
/// before the host's ordinary work (a build beside it) does; the kernel's RT throttling
/// (`sched_rt_runtime_us`, 95% by default) keeps a loop that cannot keep up from taking a
/// whole core. Returns whether the kernel agreed (root may; a container may not).
fn realtime_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: 0 is the calling thread; `param` is a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Requests whose file arrived whole, and requests that ended (whole, or failed) with the
/// server's socket closed (TCP) or its last datagram sent (UDP) too.
fn finished(shared: &Shared) -> (u32, u32) {
    let outcomes = shared.outcomes.lock().expect("outcomes");
    let whole = outcomes.iter().filter(|o| o.finish_s.is_some()).count() as u32;
    let closed =
        |o: &Outcome| o.server.is_some() || o.subflows.is_some() || o.udp.is_some_and(|u| u.sent_all_s.is_some());
    // An iperf3 test has ended when its client has (its report is there).
    let ended = outcomes
        .iter()
        .filter(|o| o.error.is_some() || o.iperf3.is_some() || (o.finish_s.is_some() && closed(o)))
        .count();
    (whole, ended as u32)
}

/// Whether every UDP stream has sent its last datagram.
fn udp_sent_all(shared: &Shared) -> bool {
    shared.outcomes.lock().expect("outcomes").iter().all(|o| o.udp.is_some_and(|u| u.sent_all_s.is_some()))
}

/// The client slots: `(client, [(request, arrival_s, bytes)])`. Open arrivals: one slot per
/// request, at its arrival time. A closed loop (`arrivals.kind = "closed"`): `active`
/// slots per client, each fetching its client's requests one after the other (request
/// `i` is client `i % clients`'s, `workload::generate`), the next at once when one ends.
fn slots(requests: &[workload::Request], arrivals: &Arrivals, clients: u32) -> Vec<(u32, Vec<traffic::Fetch>)> {
    match arrivals {
        Arrivals::Closed { active } => {
            let n = (active * clients) as usize;
            (0..n.min(requests.len()))
                .map(|slot| {
                    let ids = requests.iter().skip(slot).step_by(n).map(|r| (r.id, 0.0, r.file_bytes)).collect();
                    (requests[slot].client, ids)
                })
                .collect()
        }
        _ => requests
            .iter()
            .map(|r| {
                debug_assert_ne!(r.arrival, PENDING);
                (r.client, vec![(r.id, r.arrival.as_secs_f64(), r.file_bytes)])
            })
            .collect(),
    }
}

/// What the kernel was set to and counted.
struct Kernel {
    sysctls: Vec<(String, String)>,
    not_set: Vec<(String, String)>,
    congestion_control: Option<String>,
    /// The loop ran in the real-time class (`SCHED_FIFO`).
    realtime: bool,
    /// What carried the requests.
    traffic: Traffic,
    /// The host the emulator built, in words (`placement::TUN_PLACEMENT`, `KERNEL_PLACEMENT`).
    placement: &'static str,
    server: Map<String, Value>,
    clients: Map<String, Value>,
    /// MPTCP: the path manager's set-up, the server's and client 0's commands (the other clients'
    /// differ in their addresses only).
    mptcp_commands: Vec<String>,
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Nearest-rank percentile of sorted `values`.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    (!sorted.is_empty()).then(|| sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1])
}

/// The clients' hosts' figures under `[host]` (`bondsim_core::host::FIGURES`, as the model's): the
/// frames their NICs let go to the TUN devices and dropped, the most one held, and the skbs the
/// kernel's IP took (`Ip.InReceives`: one per skb, GRO's merged ones once, `ip_rcv_core`); the
/// kernel's CPU time is not measured (`host_cpu_busy_max` stays null). With GRO, the TUN devices'
/// `gro_flush_timeout` (`emu_gro_flush_timeout_us`).
fn host_figures(figures: &mut Figures, scenario: &Scenario, fabric: &Fabric, kernel: &Kernel) {
    let Some(nic) = fabric.nic_counts() else { return };
    let skbs = kernel.clients.get("Ip.InReceives").and_then(Value::as_u64).unwrap_or(0);
    figures.push("host_rx_frames", nic.frames);
    figures.push("host_rx_skbs", skbs);
    figures.push("host_drops", nic.drops);
    figures.push("host_queue_max", nic.queue_max);
    let timeout = crate::clients::gro_flush_timeout_ns(&scenario.host);
    figures.push("emu_gro_flush_timeout_us", timeout.map(|ns| ns as f64 / 1e3));
}

#[allow(clippy::too_many_arguments)]
fn result(
    scenario: &Scenario,
    fabric: &Fabric,
    outcomes: &[Outcome],
    kernel: &Kernel,
    lateness: &Histogram<u64>,
    delivered_link: &[(u64, f64, f64)],
    wall_s: f64,
    limit_s: f64,
) -> Value {
    let port = scenario.network.server_port;
    let server_ip = fabric_server_ip(scenario).expect("checked");
    let rates = fabric.rates_bps();
    let capacity: f64 = rates.iter().sum();
    let is_tcp = scenario.sender.tcp().is_some();
    let is_mptcp = scenario.mptcp_subflows() > 0;
    let finishes: Vec<f64> = outcomes.iter().filter_map(|o| o.finish_s).collect();
    let makespan = finishes.iter().copied().fold(0.0, f64::max);
    let complete = outcomes.iter().all(|o| o.finish_s.is_some());
    // A UDP stream that lost datagrams still ends: at its last arrival, as the simulator's.
    let udp: Vec<udp::UdpCounts> = outcomes.iter().filter_map(|o| o.udp).collect();
    let last_arrival = udp
        .iter()
        .filter_map(|u| u.last_arrival_s)
        .chain(outcomes.iter().filter_map(|o| Some(o.iperf3?.ended_s)))
        .fold(makespan, f64::max);
    let duration =
        if complete || (!is_tcp && last_arrival > 0.0) { last_arrival } else { wall_s.min(limit_s).max(makespan) };
    let received: u64 = outcomes.iter().map(|o| o.received.min(o.file_bytes)).sum();
    let mut fct: Vec<f64> = outcomes.iter().filter_map(|o| Some(o.finish_s? - o.start_s?)).collect::<Vec<_>>();
    fct.sort_by(f64::total_cmp);
    // The server's sockets: a TCP connection's, or every subflow of an MPTCP connection (each
    // a TCP socket of its own: the connection's counts are their sums, as the model's).
    let sockets = |o: &Outcome| -> Vec<TcpInfo> {
        match &o.subflows {
            Some((list, _)) => list.iter().map(|s| s.info).collect(),
            None => o.server.into_iter().collect(),
        }
    };
    let server: Vec<TcpInfo> = outcomes.iter().flat_map(sockets).collect();
    // The client's: its TCP socket, or its subflows.
    let client_sockets = |o: &Outcome| -> Vec<TcpInfo> {
        match &o.client_subflows {
            Some(list) => list.iter().map(|s| s.info).collect(),
            None => o.client_info.into_iter().collect(),
        }
    };
    let sum = |f: fn(&TcpInfo) -> u64| server.iter().map(f).sum::<u64>();
    let reordering: Vec<f64> = server.iter().map(|i| f64::from(i.reordering)).collect();
    let forward: Vec<_> = fabric.forward_stats().collect();
    let reverse: Vec<_> = fabric.reverse_stats().collect();
    let wire_bits: f64 = forward.iter().map(|s| s.wire_bytes as f64 * 8.0).sum();
    // A request's flows on the wire (iperf3's: its data connection or stream, on its server's
    // port; MPTCP's: its subflows, as the server's socket lists them).
    let keys_of = |o: &Outcome| -> Vec<bondsim_core::bond::FlowKey> {
        let proto = if is_tcp { etherparse::IpNumber::TCP.0 } else { etherparse::IpNumber::UDP.0 };
        if let Some((list, _)) = &o.subflows {
            return list
                .iter()
                .map(|s| bondsim_core::bond::FlowKey {
                    src_ip: s.local.ip().octets(),
                    dst_ip: s.remote.ip().octets(),
                    src_port: s.local.port(),
                    dst_port: s.remote.port(),
                    ip_proto: proto,
                })
                .collect();
        }
        o.local_port
            .map(|dst_port| bondsim_core::bond::FlowKey {
                src_ip: server_ip,
                dst_ip: fabric.client_ip(o.client as usize),
                src_port: o.iperf3.map_or(port, |r| r.server_port),
                dst_port,
                ip_proto: proto,
            })
            .into_iter()
            .collect()
    };
    let flows_of = |o: &Outcome| -> Vec<&crate::fabric::FlowStats> {
        keys_of(o).iter().filter_map(|k| fabric.flows.get(k)).collect()
    };
    // One flow's figure for a request (TCP, UDP), none for an MPTCP connection's subflows.
    let flow_of = |o: &Outcome| match flows_of(o)[..] {
        [one] if o.subflows.is_none() => Some(one),
        _ => None,
    };
    let flows_sum = |o: &Outcome, f: fn(&crate::fabric::FlowStats) -> u64| flows_of(o).into_iter().map(f).sum::<u64>();
    // The requests' data flows: every flow, but only the tests' own under iperf3 (its control
    // connections carry data too).
    let flows: Vec<_> = if outcomes.iter().any(|o| o.iperf3.is_some()) {
        outcomes.iter().flat_map(flows_of).collect()
    } else {
        fabric.flows.values().collect()
    };
    let data_packets: u64 = flows.iter().map(|f| f.packets).sum();
    let data_delivered: u64 = flows.iter().map(|f| f.delivered).sum();
    let ooo: u64 = flows.iter().map(|f| f.out_of_order).sum();
    let late = |q: f64| lateness.value_at_quantile(q) as f64;
    let late_share =
        if lateness.is_empty() { 0.0 } else { 1.0 - lateness.count_between(0, LATE_US) as f64 / lateness.len() as f64 };
    let mut warnings = Vec::new();
    if late_share > 0.01 {
        warnings.push(format!(
            "the host could not keep up: {:.1}% of the packets reached their TUN device more than {} ms after \
             their emulated link delivered them (p99 {:.0} µs); lower the links' rates or load the machine less",
            late_share * 100.0,
            LATE_US / 1000,
            late(0.99)
        ));
    }
    if !complete && is_tcp {
        let left = outcomes.iter().filter(|o| o.finish_s.is_none()).count();
        warnings.push(format!("{left} of {} requests did not finish within {limit_s} s", outcomes.len()));
    }
    for o in outcomes.iter().filter(|o| o.error.is_some()).take(3) {
        warnings.push(format!("request {}: {}", o.id, o.error.as_deref().unwrap_or_default()));
    }
    if scenario.trace.link_ms.is_some() {
        // Said rather than refused: `bondsim validate` runs the same scenario in the simulator,
        // which does record it.
        warnings.push(
            "trace.link_ms: the emulator records no per-link time series (not yet): this run has no link trace"
                .to_string(),
        );
    }
    // UDP: the receiving applications' counts (the simulator's receiver), TCP's figures none.
    let udp_sum = |f: fn(&udp::UdpCounts) -> u64| udp.iter().map(f).sum::<u64>();
    let (sent, read, in_order) = (udp_sum(|u| u.sent), udp_sum(|u| u.received), udp_sum(|u| u.in_order));
    // TCP_INFO's figures come from the emulator's own sockets: none under iperf3, whose
    // report gives the sender's retransmissions only.
    let iperf3: Vec<&iperf::Iperf3> = outcomes.iter().filter_map(|o| o.iperf3.as_ref()).collect();
    let own_tcp = is_tcp && iperf3.is_empty();
    let tcp_figure = |v: u64| own_tcp.then_some(v);
    // iperf3's own UDP counts, summed (none unless iperf3 carried UDP).
    let iperf3_udp = |f: fn(&(u64, u64, u64)) -> u64| {
        (!iperf3.is_empty()).then(|| iperf3.iter().try_fold(0, |n, r| Some(n + f(r.udp.as_ref()?)))).flatten()
    };
    let retransmits = if own_tcp {
        Some(sum(|i| u64::from(i.total_retrans)))
    } else if is_tcp {
        Some(iperf3.iter().filter_map(|r| r.retransmits).sum::<u64>())
    } else {
        None
    };
    // The receiving applications' counts: UDP's own (the simulator's receiver); TCP, or UDP
    // under iperf3: the bond's and the clients' wire counts (UDP's losses among them).
    let own_udp = !(is_tcp || udp.is_empty());
    let (packets, delivered) = if own_udp { (sent, read) } else { (data_packets, data_delivered) };
    let udp_only = |v: u64| own_udp.then_some(v);
    let texts = |list: &[(String, String)]| {
        Figure::Map(list.iter().map(|(k, v)| (k.clone(), Figure::Text(v.clone()))).collect())
    };
    // SNMP counters' growth: integers.
    let counters = |map: &Map<String, Value>| {
        Figure::Map(map.iter().map(|(k, v)| (k.clone(), Figure::Signed(v.as_i64().unwrap_or(0)))).collect())
    };
    let mut figures = Figures::default();
    figures.push("tcp_segments_sent", tcp_figure(sum(|i| u64::from(i.segs_out))));
    figures.push("tcp_retransmits", retransmits);
    // A D-SACK reports a segment that arrived twice; on a bond that copies nothing, only a
    // retransmitted segment can, and the kernel itself counts D-SACKs beyond the
    // retransmissions as dubious (`tcp_dsack_seen`, net/ipv4/tcp_input.c: "Skip the
    // DSACK if dup segs weren't retransmitted by sender").
    figures.push("tcp_spurious_retransmits", tcp_figure(sum(|i| u64::from(i.dsack_dups.min(i.total_retrans)))));
    figures.push("tcp_dsacks_received", tcp_figure(sum(|i| u64::from(i.dsack_dups))));
    // The receivers' PAWS discards: `TcpExt.PAWSEstab` (LINUX_MIB_PAWSESTABREJECTED, counted by
    // `tcp_validate_incoming`) of the clients' namespaces; absent from the moved counters: none.
    let paws = kernel.clients.get("TcpExt.PAWSEstab").and_then(Value::as_u64).unwrap_or(0);
    figures.push("tcp_paws_drops", is_tcp.then_some(paws));
    figures.push("tcp_rtos", tcp_figure(sum(|i| u64::from(i.total_rto))));
    figures.push("tcp_reordering_mean", mean(&reordering));
    figures.push("tcp_reordering_max", server.iter().map(|i| i.reordering).max());
    figures.push("tcp_rtt_mean_us", mean(&server.iter().map(|i| f64::from(i.rtt_us)).collect::<Vec<_>>()));
    figures.push("tcp_min_rtt_min_us", server.iter().map(|i| i.min_rtt_us).filter(|&v| v > 0).min());
    figures.push("tcp_cwnd_mean", mean(&server.iter().map(|i| f64::from(i.snd_cwnd)).collect::<Vec<_>>()));
    figures.push(
        "tcp_rcv_ooopack",
        tcp_figure(outcomes.iter().flat_map(client_sockets).map(|i| u64::from(i.rcv_ooopack)).sum::<u64>()),
    );
    // The kernel's MPTCP counters (`MPTcpExt`, net/mptcp/mib.c) of the namespace that counts each:
    // the data sender's (the server) and the data receiver's (the clients, summed); a counter that
    // did not move is 0.
    let mib =
        |of: &Map<String, Value>, name: &str| of.get(&format!("MPTcpExt.{name}")).and_then(Value::as_u64).unwrap_or(0);
    let server_mib = |name: &str| mib(&kernel.server, name);
    let client_mib = |name: &str| mib(&kernel.clients, name);
    if is_mptcp {
        // The model's names where the kernel counts the same: a subflow marked stale
        // (`mptcp_pm_subflows_chk_stale`, net/mptcp/pm.c), one back in use
        // (`mptcp_subflow_set_active` from `mptcp_subflow_active`, net/mptcp/protocol.c), data
        // the connection's receiver dropped as already had (`MPTCP_MIB_DUPDATA`, protocol.c and
        // subflow.c).
        figures.push("mptcp_stale", server_mib("SubflowStale"));
        figures.push("mptcp_recovered", server_mib("SubflowRecover"));
        figures.push("mptcp_duplicates", client_mib("DuplicateData"));
    }
    host_figures(&mut figures, scenario, fabric, kernel);
    figures.push("emulated", true);
    figures.push("emu_lateness_p50_us", late(0.5));
    figures.push("emu_lateness_p99_us", late(0.99));
    figures.push("emu_lateness_p999_us", late(0.999));
    figures.push("emu_lateness_max_us", lateness.max() as f64);
    figures.push("emu_late_share", late_share);
    figures.push("emu_realtime_priority", kernel.realtime);
    figures.push("emu_sysctls", texts(&kernel.sysctls));
    figures.push("emu_sysctls_not_set", texts(&kernel.not_set));
    figures.push("emu_congestion_control", kernel.congestion_control.clone());
    figures.push("emu_kernel_server", counters(&kernel.server));
    figures.push("emu_kernel_clients", counters(&kernel.clients));
    figures.push("emu_foreign_packets", fabric.foreign);
    if is_mptcp {
        // The kernel's own: segments the receiver put in its connection-level out-of-order queue
        // (`mptcp_data_queue_ofo`, protocol.c), data fragments the sender's MPTCP timer sent again
        // (`__mptcp_retrans`, protocol.c), joins the server completed (`MPJoinAckRx`,
        // `subflow_syn_recv_sock`, subflow.c) and refused (`MPJoinRejected`), joins the clients
        // began (`MPJoinSynTx`, `__mptcp_subflow_connect`).
        figures.push("emu_mptcp_ofo_queue", client_mib("OFOQueue"));
        figures.push("emu_mptcp_retrans", server_mib("MPTCPRetrans"));
        figures.push("emu_mptcp_joins", server_mib("MPJoinAckRx"));
        figures.push("emu_mptcp_joins_rejected", server_mib("MPJoinRejected"));
        figures.push("emu_mptcp_join_syns", client_mib("MPJoinSynTx"));
        // Every connection's subflows at the end (`MPTCP_FULL_INFO`) and its bytes sent again at
        // the data level (`mptcpi_bytes_retrans`), summed; none where no connection was read.
        let read: Vec<&(Vec<mptcp::Subflow>, u64)> = outcomes.iter().filter_map(|o| o.subflows.as_ref()).collect();
        figures
            .push("emu_mptcp_subflows", (!read.is_empty()).then(|| read.iter().map(|r| r.0.len() as u64).sum::<u64>()));
        figures.push("emu_mptcp_bytes_retrans", (!read.is_empty()).then(|| read.iter().map(|r| r.1).sum::<u64>()));
        figures
            .push("emu_mptcp_setup", Figure::List(kernel.mptcp_commands.iter().cloned().map(Figure::Text).collect()));
    }
    figures.push("emu_warnings", Figure::List(warnings.into_iter().map(Figure::Text).collect()));
    figures.push("emu_traffic", Traffic::NAMES[kernel.traffic as usize].to_string());
    figures.push("emu_placement", kernel.placement.to_string());
    // iperf3's own rate at each receiver, summed (tests that start together overlap).
    figures.push("emu_iperf3_bps", (!iperf3.is_empty()).then(|| iperf3.iter().map(|r| r.bits_per_second).sum::<f64>()));
    figures.push("emu_iperf3_udp_lost", iperf3_udp(|u| u.1));
    figures.push("emu_iperf3_udp_out_of_order", iperf3_udp(|u| u.2));
    if own_udp {
        figures.push("emu_udp_send_errors", udp_sum(|u| u.send_errors));
    }
    // `bondsim run`'s summary; what the emulator cannot measure is left out.
    let summary = Summary {
        scenario: scenario.name.clone(),
        scheduler: fabric.scheduler_label().to_string(),
        seed: scenario.seed,
        link_count: rates.len(),
        requests: outcomes.len() as u32,
        packets,
        delivered,
        dropped: (!is_tcp).then(|| packets.saturating_sub(delivered)),
        duplicates: udp_only(udp_sum(|u| u.duplicates)),
        undelivered: None,
        in_order: udp_only(in_order),
        out_of_order: udp_only(read - in_order),
        wire_out_of_order: ooo,
        wire_ooo_fraction: if data_delivered > 0 { ooo as f64 / data_delivered as f64 } else { 0.0 },
        reverse_packets: fabric.reverse_packets,
        reverse_delivered: fabric.reverse_delivered,
        ooo_fraction: own_udp.then(|| if read > 0 { (read - in_order) as f64 / read as f64 } else { 0.0 }),
        reorder_extent_mean: None,
        reorder_extent_max: None,
        reorder_density: None,
        drops_queue_full: forward.iter().map(|s| s.drops_queue_full).sum::<u64>(),
        drops_link_down: forward.iter().map(|s| s.drops_link_down).sum::<u64>(),
        drops_random: forward.iter().map(|s| s.drops_random).sum::<u64>(),
        drops_silent: None,
        drops_downstream: forward.iter().map(|s| s.drops_downstream).sum::<u64>(),
        drops_no_link: fabric.drops_no_link,
        miimon_ms: None,
        arp_probes_sent: None,
        arp_replies: None,
        drops_switch_port: None,
        switch_mac_moves: None,
        switch_flooded: None,
        switch_drops_to_bond: None,
        bond_drops_inactive_slave: None,
        grat_arps_sent: None,
        makespan_s: makespan,
        duration_s: duration,
        capacity_bps: capacity,
        throughput_bps: if duration > 0.0 { wire_bits / duration } else { 0.0 },
        goodput_bps: if duration > 0.0 { received as f64 * 8.0 / duration } else { 0.0 },
        utilisation: if duration > 0.0 && capacity > 0.0 { wire_bits / duration / capacity } else { 0.0 },
        jain_index: None,
        max_mean_ratio: None,
        delay_mean_us: None,
        delay_p50_us: None,
        delay_p90_us: None,
        delay_p99_us: None,
        delay_p999_us: None,
        delay_max_us: None,
        flows_complete: finishes.len() as u32,
        flows_with_loss: own_udp.then(|| udp.iter().filter(|u| u.received < u.sent).count() as u32),
        reseq_max_held: None,
        fct_mean_s: mean(&fct),
        fct_p50_s: percentile(&fct, 0.5),
        fct_p99_s: percentile(&fct, 0.99),
        figures,
        trace_truncated: None,
        events: None,
        wall_s,
        links: fabric
            .names
            .iter()
            .enumerate()
            .map(|(link, name)| LinkSummary { link, name: name.clone(), packets_sent: forward[link].packets_sent })
            .collect(),
    };
    let summary = serde_json::to_value(&summary).expect("summaries always serialise");
    let col = |f: &dyn Fn(&Outcome) -> Value| Value::Array(outcomes.iter().map(f).collect());
    let requests = json!({
        "request": col(&|o| json!(o.id)),
        "client": col(&|o| json!(o.client)),
        "file_bytes": col(&|o| json!(o.file_bytes)),
        // TCP: the segments on the client's wire; UDP: the datagrams its application read.
        // (An MPTCP connection's: its subflows' together, each counted in its own sequence space.)
        "packets": col(&|o| json!(o.udp.map_or_else(|| flows_sum(o, |f| f.packets), |u| u.sent))),
        "received": col(&|o| json!(o.udp.map_or_else(|| flows_sum(o, |f| f.delivered), |u| u.received))),
        "in_order": col(&|o| {
            json!(o.udp.map_or_else(|| flows_sum(o, |f| f.delivered - f.out_of_order), |u| u.in_order))
        }),
        "out_of_order": col(&|o| {
            json!(o.udp.map_or_else(|| flows_sum(o, |f| f.out_of_order), |u| u.received - u.in_order))
        }),
        "wire_out_of_order": col(&|o| json!(flows_sum(o, |f| f.out_of_order))),
        "arrival_s": col(&|o| json!(o.start_s)),
        "finish_s": col(&|o| json!(o.finish_s)),
        "link_switches": col(&|o| json!(flows_sum(o, |f| u64::from(f.link_switches)))),
        "last_link": col(&|o| json!(flow_of(o).and_then(|f| f.last_link))),
        "rx_link": col(&|o| json!(flow_of(o).and_then(|f| fabric.rx_link(f)))),
        "bytes_received": col(&|o| json!(o.received)),
        // An MPTCP connection's: its subflows' sums (retransmissions, D-SACKs, out-of-order
        // packets), their largest reordering; RTT and cwnd are a subflow's own (none here).
        "tcp_retransmits": col(&|o| {
            let s = sockets(o);
            json!((!s.is_empty()).then(|| s.iter().map(|i| u64::from(i.total_retrans)).sum::<u64>()))
        }),
        "tcp_dsack_dups": col(&|o| {
            let s = sockets(o);
            json!((!s.is_empty()).then(|| s.iter().map(|i| u64::from(i.dsack_dups)).sum::<u64>()))
        }),
        "tcp_reordering": col(&|o| json!(sockets(o).iter().map(|i| i.reordering).max())),
        "tcp_rtt_us": col(&|o| json!(o.server.map(|i| i.rtt_us))),
        "tcp_min_rtt_us": col(&|o| json!(o.server.map(|i| i.min_rtt_us))),
        "tcp_cwnd": col(&|o| json!(o.server.map(|i| i.snd_cwnd))),
        "tcp_rcv_ooopack": col(&|o| {
            let s = client_sockets(o);
            json!((!s.is_empty()).then(|| s.iter().map(|i| u64::from(i.rcv_ooopack)).sum::<u64>()))
        }),
        "mptcp_subflows": col(&|o| json!(o.subflows.as_ref().map(|(list, _)| list.len()))),
        "iperf3_bps": col(&|o| json!(o.iperf3.map(|r| r.bits_per_second))),
        "error": col(&|o| json!(o.error)),
    });
    let lc = |f: &dyn Fn(usize) -> Value| Value::Array((0..rates.len()).map(f).collect());
    let links = json!({
        "link": lc(&|i| json!(i)),
        "name": lc(&|i| json!(fabric.names[i])),
        "kind": lc(&|_| json!("rate")),
        "capacity_bps": lc(&|i| json!(rates[i])),
        "packets_sent": lc(&|i| json!(forward[i].packets_sent)),
        "bytes_sent": lc(&|i| json!(forward[i].bytes_sent)),
        "wire_bytes": lc(&|i| json!(forward[i].wire_bytes)),
        "busy_s": lc(&|i| json!(forward[i].busy_ns as f64 / 1e9)),
        "utilisation": lc(&|i| json!(if duration > 0.0 { forward[i].wire_bytes as f64 * 8.0 / duration / rates[i] } else { 0.0 })),
        "max_queue_pkts": lc(&|i| json!(forward[i].max_queue_pkts)),
        "drops_queue_full": lc(&|i| json!(forward[i].drops_queue_full)),
        "drops_link_down": lc(&|i| json!(forward[i].drops_link_down)),
        "drops_random": lc(&|i| json!(forward[i].drops_random)),
        "failures": lc(&|i| json!(forward[i].failures)),
        "reverse_packets_sent": lc(&|i| json!(reverse[i].packets_sent)),
        "reverse_drops": lc(&|i| json!(reverse[i].drops_queue_full + reverse[i].drops_link_down + reverse[i].drops_random)),
        // What the link delivered to the clients' TUN devices, wire bits per second between
        // its first and last delivery on the host's clock (the rate the emulation held).
        "delivered_wire_bps": lc(&|i| {
            let (bytes, first, last) = delivered_link[i];
            json!(if last > first { bytes as f64 * 8.0 / (last - first) } else { 0.0 })
        }),
    });
    let mut out = json!({"summary": summary, "requests": requests, "links": links});
    if scenario.trace.packets > 0 {
        out["packet_trace"] = packet_trace(fabric, outcomes, keys_of);
    }
    out
}
