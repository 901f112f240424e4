//! Traffic from real sockets: the scenario's requests as TCP transfers between the
//! namespaces, with no outside tool. A client connects to the server, asks for its
//! file (request id and size, 12 bytes), reads it to the end and closes; the server
//! writes the file, waits for the client's close and reads the connection's `TCP_INFO`
//! (tcp(7), include/uapi/linux/tcp.h `struct tcp_info`). Every socket has a short
//! timeout, so that every thread sees the stop flag within a tenth of a second.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a blocked socket call waits before looking at the stop flag.
pub(crate) const POLL: Duration = Duration::from_millis(100);

/// What the kernel's `TCP_INFO` said of one connection at its end.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct TcpInfo {
    /// `tcpi_total_retrans`: segments retransmitted.
    pub total_retrans: u32,
    /// `tcpi_dsack_dups`: segments the peer reported as duplicates (D-SACK, RFC 2883).
    pub dsack_dups: u32,
    /// `tcpi_reordering`: the connection's reordering degree (`tp->reordering`).
    pub reordering: u32,
    /// `tcpi_rtt`: smoothed RTT, µs.
    pub rtt_us: u32,
    /// `tcpi_min_rtt`: the least RTT sample of the connection's windowed filter (`tcp_min_rtt`,
    /// 300 s by `tcp_min_rtt_wlen`), µs: the path's unloaded round trip as the kernel saw it.
    pub min_rtt_us: u32,
    /// `tcpi_snd_cwnd`: congestion window, segments.
    pub snd_cwnd: u32,
    /// `tcpi_reord_seen`: times reordering was detected.
    pub reord_seen: u32,
    /// `tcpi_rcv_ooopack`: out-of-order packets received (the client's socket).
    pub rcv_ooopack: u32,
    /// `tcpi_segs_out`: segments sent.
    pub segs_out: u32,
    /// `tcpi_total_rto`: retransmission timeouts (Linux 6.7 and later; 0 before).
    pub total_rto: u16,
}

/// `getsockopt(TCP_INFO)` of `stream`; fields a kernel does not fill stay 0 (it copies
/// `min(len, sizeof(struct tcp_info))`, net/ipv4/tcp.c `do_tcp_getsockopt`).
pub fn tcp_info(stream: &TcpStream) -> TcpInfo {
    // SAFETY: tcp_info is plain data; getsockopt writes at most `len` bytes into it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return TcpInfo::default();
    }
    TcpInfo::from_raw(&info)
}

impl TcpInfo {
    /// The fields kept of the kernel's `struct tcp_info`.
    pub fn from_raw(info: &libc::tcp_info) -> TcpInfo {
        TcpInfo {
            total_retrans: info.tcpi_total_retrans,
            dsack_dups: info.tcpi_dsack_dups,
            reordering: info.tcpi_reordering,
            rtt_us: info.tcpi_rtt,
            min_rtt_us: info.tcpi_min_rtt,
            snd_cwnd: info.tcpi_snd_cwnd,
            reord_seen: info.tcpi_reord_seen,
            rcv_ooopack: info.tcpi_rcv_ooopack,
            segs_out: info.tcpi_segs_out,
            total_rto: info.tcpi_total_rto,
        }
    }
}

/// One request's outcome.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Request id.
    pub id: u32,
    /// The client.
    pub client: u32,
    /// Bytes asked for.
    pub file_bytes: u64,
    /// Bytes the client's application read (UDP: payload of distinct datagrams).
    pub received: u64,
    /// When the client asked (connect), seconds from the start.
    pub start_s: Option<f64>,
    /// When its application read the last byte, seconds from the start.
    pub finish_s: Option<f64>,
    /// The server's socket at the end (TCP).
    pub server: Option<TcpInfo>,
    /// The stream's counts (UDP, the `cbr` sender).
    pub udp: Option<crate::udp::UdpCounts>,
    /// iperf3's report (`--traffic iperf3`).
    pub iperf3: Option<crate::iperf::Iperf3>,
    /// The client's socket at the end.
    pub client_info: Option<TcpInfo>,
    /// MPTCP: the server's subflows once the client had read the whole file
    /// (`crate::mptcp::full_info`), and the connection's bytes sent again at the data level.
    pub subflows: Option<(Vec<crate::mptcp::Subflow>, u64)>,
    /// MPTCP: the client's subflows once it had read the whole file.
    pub client_subflows: Option<Vec<crate::mptcp::Subflow>>,
    /// The client's port (the flow's 5-tuple with the addresses and the server's port).
    pub local_port: Option<u16>,
    /// The server's socket's congestion control (`TCP_CONGESTION`).
    pub congestion_control: Option<String>,
    /// What went wrong, if anything (a refused connection, a reset).
    pub error: Option<String>,
}

/// Shared between the loop and the traffic threads.
pub struct Shared {
    /// Set when the run ends: every thread returns.
    pub stop: AtomicBool,
    /// Outcomes by request id.
    pub outcomes: Mutex<Vec<Outcome>>,
    /// The run's time origin.
    pub start: Instant,
}

impl Shared {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub(crate) fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Sleeps until `at_s` seconds from the start; false if the run stopped first.
    pub(crate) fn wait_until(&self, at_s: f64) -> bool {
        loop {
            if self.stopped() {
                return false;
            }
            let left = at_s - self.now_s();
            if left <= 0.0 {
                return true;
            }
            std::thread::sleep(Duration::from_secs_f64(left.min(POLL.as_secs_f64())));
        }
    }
}

fn zeros() -> &'static [u8] {
    static ZEROS: [u8; 65536] = [0; 65536];
    &ZEROS
}

/// The server: accepts on `addr` (in the calling thread's namespace) until stopped; one
/// thread per connection, each started in this thread's namespace. `mptcp`: the listener is
/// an MPTCP socket's ([`crate::mptcp::listen`]), and each connection ends as
/// [`serve_one`] says.
pub fn serve(listener: TcpListener, shared: Arc<Shared>, nodelay: bool, mptcp: bool) {
    listener.set_nonblocking(true).expect("non-blocking listener");
    std::thread::scope(|s| {
        while !shared.stopped() {
            match listener.accept() {
                Ok((stream, _)) => {
                    let shared = &shared;
                    s.spawn(move || serve_one(stream, shared, nodelay, mptcp));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(2)),
                Err(_) => std::thread::sleep(POLL),
            }
        }
    });
}

/// Sends the file the client asks for. TCP: then closes its side and, once the client has
/// closed too (every retransmission done), reads `TCP_INFO`. MPTCP: keeps its side open until
/// the client answers one byte (it has read the whole file), reads every subflow's figures while
/// every subflow is still open, then closes (a DATA_FIN exchange may close subflows,
/// `mptcp_check_data_fin`, net/mptcp/protocol.c, and `MPTCP_FULL_INFO` lists the open ones).
fn serve_one(mut stream: TcpStream, shared: &Shared, nodelay: bool, mptcp: bool) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(POLL));
    let _ = stream.set_write_timeout(Some(POLL));
    let _ = stream.set_nodelay(nodelay);
    let mut head = [0u8; 12];
    let mut got = 0;
    while got < head.len() {
        match stream.read(&mut head[got..]) {
            Ok(0) => return,
            Ok(n) => got += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) && !shared.stopped() => {}
            Err(_) => return,
        }
    }
    let id = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
    let mut left = u64::from_le_bytes(head[4..].try_into().expect("8 bytes"));
    while left > 0 && !shared.stopped() {
        let chunk = &zeros()[..left.min(65536) as usize];
        match stream.write(chunk) {
            Ok(n) => left -= n as u64,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    if !mptcp {
        let _ = stream.shutdown(Shutdown::Write);
    }
    // The client closes (TCP) or answers (MPTCP) once it has everything: then every
    // retransmission is counted.
    let mut sink = [0u8; 64];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => break,
            Ok(_) if mptcp => break,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) && !shared.stopped() => {}
            Err(_) => break,
        }
    }
    if mptcp {
        let subflows = crate::mptcp::full_info(&stream);
        let _ = stream.shutdown(Shutdown::Write);
        if let Some(o) = shared.outcomes.lock().expect("outcomes").get_mut(id) {
            o.subflows = Some(subflows.unwrap_or_default());
            o.congestion_control = crate::ns::congestion_control(&stream);
        }
        return;
    }
    let info = tcp_info(&stream);
    if let Some(o) = shared.outcomes.lock().expect("outcomes").get_mut(id) {
        o.server = Some(info);
        o.congestion_control = crate::ns::congestion_control(&stream);
    }
}

/// A request as a client slot fetches it: id, arrival (seconds from the start), bytes.
pub type Fetch = (u32, f64, u64);

/// One client slot: fetches `ids` one after the other (in the calling thread's
/// namespace), each not before its arrival time (seconds from the start). `mptcp`: over an
/// MPTCP socket with that congestion control ([`crate::mptcp::connect`]).
pub fn fetch(server: SocketAddrV4, ids: Vec<Fetch>, shared: Arc<Shared>, mptcp: Option<String>) {
    for (id, arrival_s, bytes) in ids {
        if !shared.wait_until(arrival_s) {
            return;
        }
        let result = fetch_one(server, id, bytes, &shared, mptcp.as_deref());
        let mut outcomes = shared.outcomes.lock().expect("outcomes");
        let o = &mut outcomes[id as usize];
        o.start_s = Some(arrival_s.max(0.0));
        match result {
            Ok(Fetched { received, finish_s, info, port, subflows }) => {
                o.local_port = Some(port);
                o.received = received;
                o.finish_s = finish_s;
                o.client_info = info;
                o.client_subflows = subflows;
            }
            Err(e) => o.error = Some(e.to_string()),
        }
    }
}

/// What a client's fetch gives.
struct Fetched {
    /// Bytes its application read.
    received: u64,
    /// When it read the last byte of the file, seconds from the start.
    finish_s: Option<f64>,
    /// Its socket's `TCP_INFO` at the end (TCP).
    info: Option<TcpInfo>,
    /// Its port.
    port: u16,
    /// MPTCP: its subflows once it had the whole file.
    subflows: Option<Vec<crate::mptcp::Subflow>>,
}

fn fetch_one(
    server: SocketAddrV4,
    id: u32,
    bytes: u64,
    shared: &Shared,
    mptcp: Option<&str>,
) -> std::io::Result<Fetched> {
    let connect = |timeout| match mptcp {
        Some(cc) => crate::mptcp::connect(server, cc, timeout),
        None => TcpStream::connect_timeout(&server.into(), timeout),
    };
    let mut stream = loop {
        match connect(Duration::from_secs(1)) {
            Ok(s) => break s,
            // The SYN may be lost (a link that is down, a full queue): connect again, as a
            // client's SYN retransmission would.
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) && !shared.stopped() => {}
            Err(e) => return Err(e),
        }
    };
    stream.set_read_timeout(Some(POLL))?;
    let port = stream.local_addr()?.port();
    let mut head = [0u8; 12];
    head[..4].copy_from_slice(&id.to_le_bytes());
    head[4..].copy_from_slice(&bytes.to_le_bytes());
    stream.write_all(&head)?;
    let mut buf = vec![0u8; 65536];
    let mut received = 0u64;
    let mut finish = None;
    let mut subflows = None;
    while !shared.stopped() {
        match stream.read(&mut buf) {
            Ok(0) => {
                if received >= bytes && finish.is_none() {
                    finish = Some(shared.now_s());
                }
                break;
            }
            Ok(n) => {
                received += n as u64;
                if received >= bytes && finish.is_none() {
                    finish = Some(shared.now_s());
                    if mptcp.is_some() {
                        // The whole file: the subflows' figures, then one byte tells the server,
                        // which then reads its own and closes (`serve_one`).
                        subflows = crate::mptcp::full_info(&stream).map(|(list, _)| list);
                        stream.write_all(&[1])?;
                    }
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    let info = mptcp.is_none().then(|| tcp_info(&stream));
    Ok(Fetched { received, finish_s: finish, info, port, subflows })
}

/// The server's address.
pub fn server_addr(ip: [u8; 4], port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::from(ip), port)
}
