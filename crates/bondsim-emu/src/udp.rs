//! The `cbr` sender over real UDP sockets: each request is a stream of datagrams from
//! the server to its client at the flow's constant rate, cut and paced as the
//! simulator's `cbr` sender cuts and paces it (`transport::Cutter`, `transport::cbr`:
//! packet `k` of a file carries `Cutter::packet_bytes(file, k)` bytes, and the next
//! leaves that many bytes' time at the flow's rate later). Nothing comes back: the
//! client's socket counts what its application reads, by the simulator's receiver rules
//! (`receiver::Receiver::deliver`): a datagram is in order when its number is at least
//! one past the highest number read so far, and one read again is a duplicate.
//!
//! Each datagram starts with the request id and its number (little-endian `u32`s), so a
//! payload is at least 8 bytes (a shorter last piece is padded to 8 on the wire).

use std::io::ErrorKind;
use std::net::{SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

use bondsim_core::transport::Cutter;

use crate::traffic::{Shared, POLL};

/// Bytes of the datagram header: request id and datagram number.
const HEADER: usize = 8;

/// What one stream's two ends counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct UdpCounts {
    /// Datagrams the server's socket sent.
    pub sent: u64,
    /// Of those, the kernel refused (`sendto` failed: a full queue below the socket).
    pub send_errors: u64,
    /// When the server sent its last datagram, seconds from the start.
    pub sent_all_s: Option<f64>,
    /// Distinct datagrams the client's application read.
    pub received: u64,
    /// Datagrams read again.
    pub duplicates: u64,
    /// Distinct datagrams read in order (number at least one past the highest before).
    pub in_order: u64,
    /// When the client read its last datagram, seconds from the start.
    pub last_arrival_s: Option<f64>,
}

/// One stream: request `id` of `bytes` to `to`, from `arrival_s` on at `rate_bps` (payload).
#[derive(Debug, Clone, Copy)]
pub struct Stream {
    /// Request id.
    pub id: u32,
    /// The client's socket.
    pub to: SocketAddrV4,
    /// File bytes.
    pub bytes: u64,
    /// Start, seconds from the run's start.
    pub arrival_s: f64,
    /// The flow's payload rate, bits/s (`sender.rate_mbps`, `flow_rates_mbps`).
    pub rate_bps: f64,
}

/// The server's end of `stream` (in the calling thread's namespace, on `socket`).
pub fn send(socket: &UdpSocket, stream: Stream, cutter: Cutter, shared: &Shared) {
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack (prctl(2)):
    // 1 ns instead of 50 µs, so each datagram leaves when it is due.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
    let packets = cutter.packets(stream.bytes);
    let mut due = stream.arrival_s;
    let mut counts = UdpCounts::default();
    let mut datagram = Vec::new();
    for k in 0..packets {
        if !shared.wait_until(due) {
            break;
        }
        let bytes = cutter.packet_bytes(stream.bytes, k);
        datagram.clear();
        datagram.extend_from_slice(&stream.id.to_le_bytes());
        datagram.extend_from_slice(&(k as u32).to_le_bytes());
        datagram.resize((bytes as usize).max(HEADER), 0);
        match socket.send_to(&datagram, stream.to) {
            Ok(_) => counts.sent += 1,
            Err(_) => counts.send_errors += 1,
        }
        // The simulator's pacing (`transport::cbr`, `next_packet`): this packet's bytes at the rate.
        due += f64::from(bytes.max(1)) * 8.0 / stream.rate_bps;
    }
    counts.sent_all_s = Some(shared.now_s());
    let mut outcomes = shared.outcomes.lock().expect("outcomes");
    let udp = outcomes[stream.id as usize].udp.get_or_insert_default();
    (udp.sent, udp.send_errors, udp.sent_all_s) = (counts.sent, counts.send_errors, counts.sent_all_s);
}

/// A receive buffer no stream of the emulator fills: the simulator's receiver reads
/// whatever arrives, so the socket must not drop what its application is slow to read
/// (`SO_RCVBUFFORCE`, socket(7), root may exceed `rmem_max`).
const RCVBUF: libc::c_int = 8 << 20;

/// The client's socket for request `id`: bound to `ip` and `port` (the model's port for the
/// flow, `network::flow_headers`), else any port if that one is taken.
pub fn bind(ip: [u8; 4], port: u16) -> std::io::Result<UdpSocket> {
    let socket = UdpSocket::bind(SocketAddrV4::new(ip.into(), port))
        .or_else(|_| UdpSocket::bind(SocketAddrV4::new(ip.into(), 0)))?;
    // SAFETY: the option value is a c_int we own, its length given.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&RCVBUF as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    socket.set_read_timeout(Some(POLL))?;
    Ok(socket)
}

/// The client's end of request `id` (`bytes` of file) on `socket`, until stopped.
pub fn receive(socket: UdpSocket, id: u32, bytes: u64, cutter: Cutter, shared: &Shared) {
    let packets = cutter.packets(bytes);
    let mut seen = vec![false; packets as usize];
    let mut counts = UdpCounts::default();
    let mut payload = 0u64;
    let mut next_expected = 0u64;
    let mut buf = vec![0u8; 65536];
    while !shared.stopped() {
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                continue
            }
            Err(_) => break,
        };
        let (Some(who), Some(k)) = (buf.get(..4), buf.get(4..HEADER)) else { continue };
        let k = u64::from(u32::from_le_bytes(k.try_into().expect("4 bytes")));
        if u32::from_le_bytes(who.try_into().expect("4 bytes")) != id || k >= packets || n < HEADER {
            continue;
        }
        if std::mem::replace(&mut seen[k as usize], true) {
            counts.duplicates += 1;
            continue;
        }
        counts.received += 1;
        payload += u64::from(cutter.packet_bytes(bytes, k));
        if k >= next_expected {
            counts.in_order += 1;
            next_expected = k + 1;
        }
        counts.last_arrival_s = Some(shared.now_s());
        if counts.received == packets {
            let mut outcomes = shared.outcomes.lock().expect("outcomes");
            outcomes[id as usize].finish_s = counts.last_arrival_s;
        }
    }
    let mut outcomes = shared.outcomes.lock().expect("outcomes");
    let o = &mut outcomes[id as usize];
    o.received = payload;
    let udp = o.udp.get_or_insert_default();
    (udp.received, udp.duplicates, udp.in_order, udp.last_arrival_s) =
        (counts.received, counts.duplicates, counts.in_order, counts.last_arrival_s);
}
