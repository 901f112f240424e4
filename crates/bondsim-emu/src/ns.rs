//! Network namespaces and TUN devices, held only by this process.
//!
//! Each host (the server, each client) is an anonymous network namespace: a thread
//! calls `unshare(CLONE_NEWNET)` (unshare(2)) and the namespace is kept by a file
//! descriptor of `/proc/thread-self/ns/net`, never bound to a name under
//! `/run/netns`. The kernel frees a network namespace when nothing refers to it
//! (namespaces(7): "a network namespace is automatically torn down when the last
//! process in the namespace terminates" — or its last open file descriptor closes),
//! and with it every device in it (its TUN device, its loopback). So whatever way the
//! emulator ends — a normal exit, an error, Ctrl-C, a crash or SIGKILL, where no
//! handler runs — the kernel closes its descriptors and nothing is left behind:
//! nothing to clean up at the next start and nothing named that another run could
//! collide with. (The other way, names carrying the pid and a sweep of dead pids at
//! each start, leaves namespaces behind until a next start comes.)
//!
//! Work inside a namespace runs on a thread that entered it with `setns(2)` (a thread's
//! namespace is its own: the caller's thread is never moved); threads it spawns inherit
//! it, and so do processes it starts (`ip`, from iproute2, which configures addresses).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;
use std::process::Command;

use nix::sched::{setns, unshare, CloneFlags};

/// Name of the TUN device in every namespace.
pub const TUN_NAME: &str = "bsim0";

/// An error of the host's (not of the scenario): a message naming what failed.
pub fn host_error(what: &str, err: impl std::fmt::Display) -> bondsim_core::Error {
    bondsim_core::Error::Io(format!("emulator: {what}: {err}"))
}

/// An anonymous network namespace.
pub struct Netns {
    fd: OwnedFd,
}

impl Netns {
    /// A new, empty network namespace (only `lo`, down).
    pub fn new() -> bondsim_core::Result<Netns> {
        std::thread::spawn(|| -> bondsim_core::Result<Netns> {
            unshare(CloneFlags::CLONE_NEWNET).map_err(|e| host_error("unshare(CLONE_NEWNET)", e))?;
            let file = File::open("/proc/thread-self/ns/net").map_err(|e| host_error("/proc/thread-self/ns/net", e))?;
            Ok(Netns { fd: file.into() })
        })
        .join()
        .expect("namespace thread")
    }

    /// Moves the calling thread into this namespace (for good: call it on a thread of its own).
    pub fn enter(&self) -> bondsim_core::Result<()> {
        setns(self.fd.as_fd(), CloneFlags::CLONE_NEWNET).map_err(|e| host_error("setns", e))
    }

    /// Runs `f` on a thread inside this namespace and returns what it returns.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> bondsim_core::Result<T> + Send) -> bondsim_core::Result<T> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.enter()?;
                f()
            })
            .join()
            .expect("namespace thread")
        })
    }
}

/// Runs `ip ARGS` (iproute2) in the calling thread's namespace.
pub fn ip(args: &[&str]) -> bondsim_core::Result<()> {
    iproute2("ip", args).map(drop)
}

/// Runs iproute2's `tool ARGS` (`ip`, `tc`) in the calling thread's namespace; what it printed.
pub fn iproute2(tool: &str, args: &[&str]) -> bondsim_core::Result<String> {
    let out =
        Command::new(tool).args(args).output().map_err(|e| host_error(&format!("running `{tool}` (iproute2)"), e))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        return Err(host_error(&format!("{tool} {}", args.join(" ")), msg.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

nix::ioctl_write_ptr_bad!(tunsetiff, libc::TUNSETIFF, libc::ifreq);

/// Opens a queue of the TUN device `TUN_NAME` in the calling thread's namespace (`IFF_TUN |
/// IFF_NO_PI`: bare IP packets, Documentation/networking/tuntap.rst; `IFF_MULTI_QUEUE` when
/// `multi`: each opening attaches one more queue; `IFF_NAPI` when `napi`: see [`open_tun`]),
/// non-blocking.
fn tun_queue(multi: bool, napi: bool) -> bondsim_core::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .map_err(|e| host_error("/dev/net/tun", e))?;
    // SAFETY: ifreq is plain data; zeroed is its empty value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(TUN_NAME.bytes()) {
        *dst = src as libc::c_char;
    }
    let multi = if multi { libc::IFF_MULTI_QUEUE } else { 0 };
    let napi = if napi { libc::IFF_NAPI } else { 0 };
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI | multi | napi) as libc::c_short;
    // SAFETY: TUNSETIFF reads (and writes back the name into) the ifreq we own.
    unsafe { tunsetiff(file.as_raw_fd(), &req) }.map_err(|e| host_error("TUNSETIFF", e))?;
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK))
        .map_err(|e| host_error("O_NONBLOCK on the TUN device", e))?;
    Ok(file)
}

/// Addresses the TUN device `addr/32` with `mtu`, up, with the default route through it:
/// every other address is behind the bond.
fn configure_tun(addr: [u8; 4], mtu: u32) -> bondsim_core::Result<()> {
    let addr = format!("{}.{}.{}.{}/32", addr[0], addr[1], addr[2], addr[3]);
    ip(&["link", "set", "lo", "up"])?;
    ip(&["addr", "add", &addr, "dev", TUN_NAME])?;
    ip(&["link", "set", TUN_NAME, "mtu", &mtu.to_string(), "up"])?;
    ip(&["route", "add", "default", "dev", TUN_NAME])
}

/// Opens a TUN device in the calling thread's namespace, addressed `addr/32` with `mtu`
/// ([`configure_tun`]).
///
/// With `gro_flush_timeout_ns` the device receives through NAPI and GRO (`IFF_NAPI`): Linux 6.18's
/// `tun_get_user` (drivers/net/tun.c) queues each written frame for the queue's NAPI and schedules
/// it (`more` is false for a `write()`), so the poll, run as the write returns, takes that one frame
/// through `napi_gro_receive`; `napi_complete_done` (net/core/dev.c) then flushes what GRO holds
/// unless the device's `gro_flush_timeout` is above 0, when it flushes only skbs older than a jiffy
/// and re-arms a timer of that length, whose poll (no frame) flushes everything. Frames written
/// closer together than the timeout thus merge as one poll's would. Without it the device hands
/// each frame to the stack alone (`tun_rx_batched` → `netif_receive_skb`: no GRO).
pub fn open_tun(addr: [u8; 4], mtu: u32, gro_flush_timeout_ns: Option<u64>) -> bondsim_core::Result<File> {
    let file = tun_queue(false, gro_flush_timeout_ns.is_some())?;
    configure_tun(addr, mtu)?;
    if let Some(ns) = gro_flush_timeout_ns {
        set_gro_flush_timeout(ns)?;
    }
    Ok(file)
}

/// Sets the TUN device's `gro_flush_timeout` (ns; `netdev_set_gro_flush_timeout` passes it to each
/// of its NAPI instances) in the calling thread's namespace, and reads it back. sysfs shows the
/// devices of the network namespace that mounted it, so the thread mounts one of its own, in a
/// mount namespace of its own (`unshare(CLONE_NEWNS)` on this thread only, its mounts private):
/// call it on a thread that ends with the namespace's set-up ([`Netns::run`]).
fn set_gro_flush_timeout(ns: u64) -> bondsim_core::Result<()> {
    use nix::mount::{mount, MsFlags};
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| host_error("unshare(CLONE_NEWNS)", e))?;
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|e| host_error("making this thread's mounts private", e))?;
    mount(Some("sysfs"), "/sys", Some("sysfs"), MsFlags::empty(), None::<&str>)
        .map_err(|e| host_error("mounting the namespace's sysfs", e))?;
    let path = format!("/sys/class/net/{TUN_NAME}/gro_flush_timeout");
    std::fs::write(&path, ns.to_string()).map_err(|e| host_error(&path, e))?;
    let read = std::fs::read_to_string(&path).map_err(|e| host_error(&path, e))?;
    if read.trim() != ns.to_string() {
        return Err(host_error(&path, format!("wrote {ns}, reads {}", read.trim())));
    }
    Ok(())
}

/// Opens a TUN device of `queues` queues in the calling thread's namespace, addressed as
/// [`open_tun`]'s, whose TCP sends one segment per skb (`gso_max_segs 1`: the kernel picks a
/// queue per skb, before segmentation, and the bond picks per segment, as the model's).
pub fn open_tun_queues(addr: [u8; 4], mtu: u32, queues: usize) -> bondsim_core::Result<Vec<File>> {
    let files = (0..queues).map(|_| tun_queue(true, false)).collect::<bondsim_core::Result<Vec<File>>>()?;
    ip(&["link", "set", TUN_NAME, "gso_max_segs", "1"])?;
    configure_tun(addr, mtu)?;
    Ok(files)
}

/// What became of a sysctl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sysctl {
    /// Written.
    Set,
    /// This kernel has no such sysctl.
    Missing,
    /// The kernel refused it (the reason).
    Refused(String),
}

/// Writes `value` to the sysctl `name` (dotted, under `net.`) of the calling thread's
/// namespace (`/proc/sys/net` is per network namespace).
pub fn sysctl(name: &str, value: &str) -> Sysctl {
    let path = Path::new("/proc/sys").join(name.replace('.', "/"));
    if !path.exists() {
        return Sysctl::Missing;
    }
    match std::fs::write(&path, value) {
        Ok(()) => Sysctl::Set,
        Err(e) => Sysctl::Refused(e.to_string()),
    }
}

/// Sets a socket's congestion control (`TCP_CONGESTION`, tcp(7)): a namespace other than
/// the first may not make an algorithm its default unless the first allows it
/// (`tcp_set_default_congestion_control`, net/ipv4/tcp_cong.c: "Only init netns can set
/// default to a restricted algorithm"), but a privileged socket may use any loaded one,
/// and a listener's choice passes to the connections it accepts (`tcp_ca_openreq_child`
/// keeps a congestion control set by setsockopt).
pub fn set_congestion_control(fd: &impl AsRawFd, name: &str) -> bondsim_core::Result<()> {
    // SAFETY: the option value is the name's bytes, its length given.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(host_error(&format!("TCP_CONGESTION {name}"), std::io::Error::last_os_error()));
    }
    Ok(())
}

/// A socket's congestion control (`TCP_CONGESTION`).
pub fn congestion_control(fd: &impl AsRawFd) -> Option<String> {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `buf`.
    let rc = unsafe {
        libc::getsockopt(fd.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_CONGESTION, buf.as_mut_ptr().cast(), &mut len)
    };
    (rc == 0).then(|| String::from_utf8_lossy(&buf[..len as usize]).trim_end_matches('\0').to_string())
}

/// The calling thread's namespace's SNMP counters: `/proc/thread-self/net/snmp` and
/// `netstat` (`/proc/net` is the thread group leader's namespace, not this thread's), as
/// `Group.Name` (`Tcp.RetransSegs`, `TcpExt.TCPDSACKRecv`, …): header lines name the
/// counters of the value lines that follow them (net/ipv4/proc.c, `snmp_seq_show`).
pub fn counters() -> bondsim_core::Result<Vec<(String, i64)>> {
    let mut out = Vec::new();
    for file in ["snmp", "netstat"] {
        let path = format!("/proc/thread-self/net/{file}");
        let text = std::fs::read_to_string(&path).map_err(|e| host_error(&path, e))?;
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.chunks(2) {
            let [names, values] = pair else { continue };
            let mut names = names.split_whitespace();
            let mut values = values.split_whitespace();
            let (Some(group), Some(_)) = (names.next(), values.next()) else { continue };
            let group = group.trim_end_matches(':');
            for (name, value) in names.zip(values) {
                if let Ok(v) = value.parse() {
                    out.push((format!("{group}.{name}"), v));
                }
            }
        }
    }
    Ok(out)
}
