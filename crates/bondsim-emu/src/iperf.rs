//! `--traffic iperf3`: the scenario's requests as iperf3 tests (Debian's `iperf3`, on the
//! PATH) instead of the emulator's own sockets. Each request is one test: a one-off
//! server (`iperf3 -s -1`) on its own port in the server's namespace, and a client in its
//! client's namespace that asks it to send the file (`-R`, reverse: the server sends;
//! `-n` bytes), TCP for `sender.kind = "tcp"` (`-C` the scenario's congestion control),
//! UDP at the flow's rate in `chunk_bytes` datagrams for `"cbr"` (`-u -b -l`). The
//! client's JSON report (`-J`) gives the figures: bytes received and iperf3's own rate,
//! the sender's retransmissions (TCP), datagrams sent, lost and out of order (UDP).
//!
//! Every iperf3 process is killed with its supervising thread (`PR_SET_PDEATHSIG`,
//! prctl(2)), and so with this process, however it ends.

use std::io::Read;
use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bondsim_core::scenario::Sender;
use bondsim_core::{Error, Result};
use serde_json::Value;

use crate::traffic::{Fetch, Shared};

/// The program.
pub const IPERF3: &str = "iperf3";

/// What iperf3 reported of one test. Its UDP counts are its own: the receiver stops reading
/// when the control connection says the test is over, so datagrams still queued on a slow
/// link count as lost, and a datagram below the highest one counts as out of order only
/// while iperf3 still reads (`iperf_udp_recv`, src/iperf_udp.c). The run's own figures
/// (`packets`, `delivered`, `wire_ooo_fraction`, ...) are the emulator's, on the wire.
#[derive(Debug, Clone, Copy, Default)]
pub struct Iperf3 {
    /// iperf3's own rate at the receiver (`end.sum_received.bits_per_second`; UDP `end.sum`).
    pub bits_per_second: f64,
    /// The sender's retransmissions (`end.sum_sent.retransmits`, TCP).
    pub retransmits: Option<u64>,
    /// UDP: datagrams iperf3 counted, lost and out of order (`end.sum.packets`,
    /// `lost_packets`, `end.streams[0].udp.out_of_order`).
    pub udp: Option<(u64, u64, u64)>,
    /// When its client ended, seconds from the start.
    pub ended_s: f64,
    /// Its server's port.
    pub server_port: u16,
}

/// The test's settings from the scenario's sender.
#[derive(Debug, Clone)]
pub struct Settings {
    args: Vec<String>,
    udp: bool,
}

impl Settings {
    /// iperf3's options for `sender` (TCP or `cbr`: `crate::check`), flow `flow`.
    pub fn new(sender: &Sender, flow: usize) -> Settings {
        match sender {
            Sender::Tcp(tcp) => Settings { args: vec!["-C".into(), tcp.tcp_congestion_control.clone()], udp: false },
            Sender::Cbr(cbr) => Settings {
                args: vec![
                    "-u".into(),
                    "-b".into(),
                    format!("{:.0}", cbr.rate_of(flow) * 1e6),
                    "-l".into(),
                    cbr.chunk_bytes.to_string(),
                ],
                udp: true,
            },
            _ => unreachable!("checked"),
        }
    }
}

/// Fails unless `iperf3` can be run.
pub fn preflight() -> Result<()> {
    match Command::new(IPERF3).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(s) if s.success() => Ok(()),
        _ => Err(Error::Io(format!(
            "emulator: --traffic iperf3 needs `{IPERF3}` on the PATH (Debian: apt-get install iperf3; `make tools`)"
        ))),
    }
}

/// `iperf3 ARGS` with its output piped, killed if the calling thread ends first.
fn spawn(args: &[String]) -> std::io::Result<Child> {
    let mut cmd = Command::new(IPERF3);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    cmd.spawn()
}

/// Waits for `child` (reading its output meanwhile), killing it if the run stops first.
/// Its standard output and error.
fn supervise(mut child: Child, shared: &Shared) -> (String, String) {
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) if shared.stopped() => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    (out.join().unwrap_or_default(), err.join().unwrap_or_default())
}

/// Whether a TCP socket listens on `port` in the calling thread's namespace
/// (`/proc/thread-self/net/tcp`: local address `IP:PORT` in hex, state `0A` = LISTEN).
fn listening(port: u16) -> bool {
    let Ok(text) = std::fs::read_to_string("/proc/thread-self/net/tcp") else { return false };
    let suffix = format!(":{port:04X}");
    text.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.len() > 3 && fields[1].ends_with(&suffix) && fields[3] == "0A"
    })
}

/// The servers, one per port (in the calling thread's namespace, bound to `ip`): started,
/// then `ready` is told when every one listens (or why not), then each is waited for.
pub fn serve(ip: [u8; 4], ports: Vec<u16>, shared: &Shared, ready: std::sync::mpsc::Sender<Result<()>>) {
    let addr = Ipv4Addr::from(ip).to_string();
    let mut children = Vec::new();
    for &port in &ports {
        match spawn(&["-s".into(), "-1".into(), "-p".into(), port.to_string(), "-B".into(), addr.clone()]) {
            Ok(child) => children.push(child),
            Err(e) => {
                let _ = ready.send(Err(crate::ns::host_error("starting iperf3 -s", e)));
                return;
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !ports.iter().all(|&p| listening(p)) {
        if Instant::now() > deadline {
            let _ = ready.send(Err(Error::Io("emulator: the iperf3 servers did not listen within 5 s".into())));
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = ready.send(Ok(()));
    for child in children {
        supervise(child, shared);
    }
}

/// One client slot (in the calling thread's namespace): runs its requests' tests one
/// after the other, each not before its arrival; `settings(id)` and `port(id)` say how.
pub fn fetch(server: [u8; 4], ids: Vec<Fetch>, settings: impl Fn(u32) -> (Settings, u16), shared: &Shared) {
    for (id, arrival_s, bytes) in ids {
        if !shared.wait_until(arrival_s) {
            return;
        }
        let (settings, port_of_server) = settings(id);
        let mut args: Vec<String> = ["-c", &Ipv4Addr::from(server).to_string(), "-p", &port_of_server.to_string()]
            .into_iter()
            .map(String::from)
            .collect();
        args.extend(["-R", "-J", "-i", "0", "-n"].map(String::from));
        args.push(bytes.to_string());
        args.extend(settings.args.iter().cloned());
        let started = shared.now_s();
        let (out, err) = match spawn(&args) {
            Ok(child) => supervise(child, shared),
            Err(e) => (String::new(), e.to_string()),
        };
        let ended = shared.now_s();
        let mut outcomes = shared.outcomes.lock().expect("outcomes");
        let o = &mut outcomes[id as usize];
        o.start_s = Some(started);
        match read_report(&out, settings.udp) {
            Ok((received, figures, port)) => {
                o.received = received;
                o.local_port = port;
                o.iperf3 = Some(Iperf3 { ended_s: ended, server_port: port_of_server, ..figures });
                if received >= bytes {
                    o.finish_s = Some(ended);
                }
            }
            Err(why) => o.error = Some(if err.trim().is_empty() { why } else { err.trim().to_string() }),
        }
    }
}

type Report = (u64, Iperf3, Option<u16>);

/// The figures of an iperf3 client's JSON report (`iperf_json_finish`, src/iperf_api.c).
fn read_report(text: &str, udp: bool) -> std::result::Result<Report, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| format!("iperf3 gave no JSON report ({e})"))?;
    if let Some(error) = json.get("error").and_then(Value::as_str) {
        return Err(format!("iperf3: {error}"));
    }
    let end = &json["end"];
    let number = |v: &Value| v.as_f64().unwrap_or(0.0);
    let port = json["start"]["connected"][0]["local_port"].as_u64().map(|p| p as u16);
    if udp {
        // The receiver's view of the stream (`end.sum`): datagrams, lost, and those that came
        // with a number below the highest before them (`iperf_udp_recv`: out of order).
        let sum = &end["sum"];
        let counts = (
            number(&sum["packets"]) as u64,
            number(&sum["lost_packets"]) as u64,
            number(&end["streams"][0]["udp"]["out_of_order"]) as u64,
        );
        let figures =
            Iperf3 { bits_per_second: number(&sum["bits_per_second"]), udp: Some(counts), ..Iperf3::default() };
        return Ok((number(&sum["bytes"]) as u64, figures, port));
    }
    let received = &end["sum_received"];
    let figures = Iperf3 {
        bits_per_second: number(&received["bits_per_second"]),
        retransmits: end["sum_sent"]["retransmits"].as_u64(),
        ..Iperf3::default()
    };
    Ok((number(&received["bytes"]) as u64, figures, port))
}
