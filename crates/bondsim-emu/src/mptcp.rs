//! The kernel's MPTCP (`sender.kind = "mptcp"`): the namespaces' path manager set-up, the
//! sockets, and what the kernel tells of each connection's subflows. Everything here is Linux
//! 6.18's (`net/mptcp`; the rules the model follows, and the trial this set-up comes from:
//! `benchmarks/results/mptcp-kernel-rules.md`, `benchmarks/results/mptcp-trial.md`).
//!
//! * **Addresses and subflows**, as the in-kernel path manager makes them: the client's
//!   namespace holds an address per subflow's link on its TUN device (`crate::fabric::subflow_ips`:
//!   link 0 its own, the initial subflow's source, pinned as the default route's `src`), and a
//!   `subflow` endpoint for each other one, bound to the device (`ip mptcp endpoint add ADDR dev
//!   bsim0 subflow [backup]`). Once the connection is fully established the client's path
//!   manager connects one subflow from each endpoint to the server's address (the initial
//!   subflow's remote: `mptcp_pm_create_subflow_or_signal_addr` → `select_local_address`,
//!   `fill_remote_addr`, `__mptcp_subflow_connect`, net/mptcp/pm_kernel.c and subflow.c), while
//!   its `extra_subflows` stays below its limit. The server keeps its one address and accepts a
//!   join while its own count is below its limit (`mptcp_pm_allow_new_subflow`, net/mptcp/pm.c):
//!   both ends get `ip mptcp limits set subflow K-1 add_addr_accepted 0` (K =
//!   `Scenario::mptcp_subflows`; no address is announced, so none is accepted).
//! * **Backups** (`sender.mptcp_backup`): a backup link's endpoint has the `backup` flag; a join
//!   from it carries MP_JOIN's B bit, which makes the server's subflow a backup
//!   (`subflow->backup`, net/mptcp/subflow.c `subflow_check_req`); the initial subflow's link as
//!   a backup is an endpoint of its address with `backup` alone, which the path manager accounts
//!   as the initial subflow's and answers with MP_PRIO (`mptcp_mpc_endpoint_setup`,
//!   net/mptcp/pm_kernel.c).
//! * **Sockets**: `socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)` at both ends, `TCP_CONGESTION`
//!   set on each: the connection passes it to every subflow it has or makes
//!   (`mptcp_setsockopt_sol_tcp_congestion`, `sync_socket_options`, net/mptcp/sockopt.c).
//! * **Figures**: `TCP_INFO` on an MPTCP socket is its first subflow's only
//!   (`mptcp_getsockopt_sol_tcp`), so every subflow's `tcp_info` and addresses come from
//!   `MPTCP_FULL_INFO` (`mptcp_getsockopt_full_info`, net/mptcp/sockopt.c; the layout of
//!   include/uapi/linux/mptcp.h).

use std::io::{Error as IoError, ErrorKind};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use crate::ns::{self, host_error, TUN_NAME};
use crate::traffic::TcpInfo;

/// `IPPROTO_MPTCP` (include/uapi/linux/in.h).
pub const IPPROTO_MPTCP: libc::c_int = 262;
/// `SOL_MPTCP` (include/linux/socket.h).
const SOL_MPTCP: libc::c_int = 284;
/// `MPTCP_FULL_INFO` (include/uapi/linux/mptcp.h).
const MPTCP_FULL_INFO: libc::c_int = 4;
/// Most subflows asked for: the first and 8 extra (`MPTCP_PM_ADDR_MAX`).
const MAX_SUBFLOWS: usize = 9;

/// Sets up the client's namespace (the calling thread's) for MPTCP: `addrs[i]` is its address on
/// link `i` (`addrs[0]` the TUN device's own, made by `ns::open_tun`), `backup[i]` whether link
/// `i`'s subflow is a backup. Returns the commands run, in order.
pub fn setup_client(addrs: &[[u8; 4]], backup: &[bool]) -> bondsim_core::Result<Vec<String>> {
    let text = |a: &[u8; 4]| Ipv4Addr::from(*a).to_string();
    let extra = addrs.len().saturating_sub(1).to_string();
    let mut run: Vec<Vec<String>> = Vec::new();
    for a in &addrs[1..] {
        run.push(["addr", "add", &format!("{}/32", text(a)), "dev", TUN_NAME].map(String::from).to_vec());
    }
    // The initial subflow leaves from the client's own address (source-address selection
    // takes the route's `src`).
    run.push(["route", "replace", "default", "dev", TUN_NAME, "src", &text(&addrs[0])].map(String::from).to_vec());
    run.push(["mptcp", "limits", "set", "subflow", &extra, "add_addr_accepted", "0"].map(String::from).to_vec());
    for (i, a) in addrs.iter().enumerate() {
        let mut endpoint: Vec<String> =
            ["mptcp", "endpoint", "add", &text(a), "dev", TUN_NAME].map(String::from).to_vec();
        match (i, backup.get(i).copied().unwrap_or(false)) {
            (0, false) => continue,
            (0, true) => endpoint.push("backup".into()),
            (_, false) => endpoint.push("subflow".into()),
            (_, true) => endpoint.extend(["subflow".into(), "backup".into()]),
        }
        run.push(endpoint);
    }
    for args in &run {
        ns::ip(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
    }
    Ok(run.into_iter().map(|args| format!("ip {}", args.join(" "))).collect())
}

/// Sets up the server's namespace (the calling thread's): it accepts `extra` joins per
/// connection and no announced address.
pub fn setup_server(extra: u32) -> bondsim_core::Result<String> {
    let extra = extra.to_string();
    let args = ["mptcp", "limits", "set", "subflow", &extra, "add_addr_accepted", "0"];
    ns::ip(&args)?;
    Ok(format!("ip {}", args.join(" ")))
}

/// A new MPTCP socket (`IPPROTO_MPTCP`) with congestion control `cc` (`TCP_CONGESTION`).
fn socket(cc: &str) -> std::io::Result<OwnedFd> {
    // SAFETY: socket(2) with constant arguments; the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, IPPROTO_MPTCP) };
    if fd < 0 {
        return Err(IoError::last_os_error());
    }
    // SAFETY: a fresh descriptor no one else holds.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    ns::set_congestion_control(&fd, cc).map_err(|e| IoError::other(e.to_string()))?;
    Ok(fd)
}

fn sockaddr(addr: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr.ip().octets()) },
        sin_zero: [0; 8],
    }
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(IoError::last_os_error())
    } else {
        Ok(())
    }
}

/// An MPTCP listener on `addr` (in the calling thread's namespace) whose connections use `cc`.
pub fn listen(addr: SocketAddrV4, cc: &str) -> bondsim_core::Result<TcpListener> {
    let fd = socket(cc).map_err(|e| host_error("an MPTCP socket (IPPROTO_MPTCP)", e))?;
    let one: libc::c_int = 1;
    let sa = sockaddr(addr);
    // SAFETY: setsockopt, bind and listen read the values we own, of the sizes given.
    let result = unsafe {
        check(libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ))
        .and_then(|()| {
            check(libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            ))
        })
        .and_then(|()| check(libc::listen(fd.as_raw_fd(), 1024)))
    };
    result.map_err(|e| host_error("listening on the server's port (MPTCP)", e))?;
    Ok(TcpListener::from(fd))
}

/// Connects an MPTCP socket using `cc` to `server`, waiting at most `timeout` (`TimedOut` then,
/// as `TcpStream::connect_timeout`).
pub fn connect(server: SocketAddrV4, cc: &str, timeout: Duration) -> std::io::Result<TcpStream> {
    let fd = socket(cc)?;
    let sa = sockaddr(server);
    let stream = TcpStream::from(fd);
    stream.set_nonblocking(true)?;
    // SAFETY: connect reads the address we own, of the size given.
    let rc = unsafe {
        libc::connect(
            stream.as_raw_fd(),
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        let e = IoError::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        let mut fds = [libc::pollfd { fd: stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 }];
        // SAFETY: poll(2) on the one descriptor we own.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, timeout.as_millis() as libc::c_int) };
        if n == 0 {
            return Err(IoError::new(ErrorKind::TimedOut, "connect timed out"));
        }
        check(n)?;
        if let Some(e) = stream.take_error()? {
            return Err(e);
        }
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// One subflow of a connection, as `MPTCP_FULL_INFO` tells it.
#[derive(Debug, Clone, Copy)]
pub struct Subflow {
    /// This end's address and port.
    pub local: SocketAddrV4,
    /// The peer's.
    pub remote: SocketAddrV4,
    /// Its `tcp_info`.
    pub info: TcpInfo,
}

/// `struct mptcp_full_info` (include/uapi/linux/mptcp.h): the head the caller fills, then the
/// connection's `struct mptcp_info` (96 bytes).
#[repr(C)]
struct FullInfo {
    size_tcpinfo_kernel: u32,
    size_tcpinfo_user: u32,
    size_sfinfo_kernel: u32,
    size_sfinfo_user: u32,
    num_subflows: u32,
    size_arrays_user: u32,
    subflow_info: u64,
    tcp_info: u64,
    mptcp_info: [u8; 96],
}

/// `struct mptcp_subflow_info`: the subflow's id, then two `sockaddr_storage` (128 bytes each,
/// 8-aligned): the local and the remote address.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct SubflowInfo {
    id: u32,
    local: [u8; 132],
    remote: [u8; 128],
}

/// An IPv4 `sockaddr_in` at the start of `bytes` (family, port in network order, address).
fn sockaddr_v4(bytes: &[u8]) -> Option<SocketAddrV4> {
    let family = u16::from_ne_bytes([bytes[0], bytes[1]]);
    (family == libc::AF_INET as u16).then(|| {
        SocketAddrV4::new(
            Ipv4Addr::new(bytes[4], bytes[5], bytes[6], bytes[7]),
            u16::from_be_bytes([bytes[2], bytes[3]]),
        )
    })
}

/// Every subflow of the MPTCP connection `stream` (`MPTCP_FULL_INFO`), with the connection's
/// `mptcpi_bytes_retrans` (bytes sent again at the data level); None if the kernel refused.
pub fn full_info(stream: &TcpStream) -> Option<(Vec<Subflow>, u64)> {
    // SAFETY: tcp_info and the subflow records are plain data; zeroed is a valid value of each.
    let mut infos: [libc::tcp_info; MAX_SUBFLOWS] = unsafe { std::mem::zeroed() };
    let mut subflows = [SubflowInfo { id: 0, local: [0; 132], remote: [0; 128] }; MAX_SUBFLOWS];
    let mut full = FullInfo {
        size_tcpinfo_kernel: 0,
        size_tcpinfo_user: std::mem::size_of::<libc::tcp_info>() as u32,
        size_sfinfo_kernel: 0,
        size_sfinfo_user: std::mem::size_of::<SubflowInfo>() as u32,
        num_subflows: 0,
        size_arrays_user: MAX_SUBFLOWS as u32,
        subflow_info: subflows.as_mut_ptr() as u64,
        tcp_info: infos.as_mut_ptr() as u64,
        mptcp_info: [0; 96],
    };
    let mut len = std::mem::size_of::<FullInfo>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `full` and at most `size_arrays_user`
    // records of the sizes given into the two arrays, which outlive the call.
    let rc = unsafe {
        libc::getsockopt(stream.as_raw_fd(), SOL_MPTCP, MPTCP_FULL_INFO, (&mut full as *mut FullInfo).cast(), &mut len)
    };
    if rc != 0 {
        return None;
    }
    let n = (full.num_subflows as usize).min(MAX_SUBFLOWS);
    let list = (0..n)
        .filter_map(|i| {
            // (The local address starts after the id's 4 bytes of padding.)
            let local = sockaddr_v4(&subflows[i].local[4..])?;
            let remote = sockaddr_v4(&subflows[i].remote)?;
            Some(Subflow { local, remote, info: TcpInfo::from_raw(&infos[i]) })
        })
        .collect();
    // mptcpi_bytes_retrans: at byte 48 of struct mptcp_info.
    let bytes_retrans = u64::from_ne_bytes(full.mptcp_info[48..56].try_into().expect("8 bytes"));
    Some((list, bytes_retrans))
}
