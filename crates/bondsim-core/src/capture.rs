//! Packet captures: pcapng files of the frames that passed given points of the fabric,
//! with real Ethernet / IPv4 / TCP or UDP headers built from each flow's headers
//! ([`crate::network`]), so that Wireshark and tshark read a run as they read a capture.
//!
//! Capture points (each file's interface description names its own):
//!
//! * `{link}.fwd.pcapng`: the bond's end of a link, sending. Linux hands an outgoing
//!   frame to packet taps (`tcpdump -i eth0` on a slave) in `dev_queue_xmit_nit`, called
//!   by `xmit_one` as the frame goes to the driver: frames a full transmit queue dropped
//!   never reach it, frames later lost on the wire do. A frame is written when the link
//!   has sent it (its transmission ended; the paced interface's send), stamped then, so
//!   the file holds exactly the link's `packets_sent` (a frame cut short by a carrier
//!   loss is not sent and not written).
//! * `{link}.rev.pcapng`: the same for the link's reverse direction (the switch's port
//!   sending towards the bond; rate links only: the thesis's paced interface has none).
//! * `receivers.pcapng`: each client host's NIC, one interface per client (named
//!   `client{N}`; one file, not one per host, as a scenario may have thousands of
//!   clients): every frame that reached it (inbound: every copy, in arrival order,
//!   before any resequencing) and every acknowledgement its stack sent (outbound, stamped
//!   when handed over, as `dev_queue_xmit_nit` sees it). The direction is in each
//!   frame's `epb_flags` (pcapng §4.3.1: inbound 1, outbound 2).
//!
//! Headers: Ethernet II (802.1Q tag when the scenario has a VLAN), IPv4 (TTL 64,
//! Linux's `net.ipv4.ip_default_ttl`; DF set, as Linux's path MTU discovery does;
//! valid header checksum), TCP or UDP with valid checksums (RFC 9293 §3.1, RFC 768:
//! over the pseudo-header and a payload of zero bytes). The model counts TCP sequence
//! numbers in packets; the capture turns them into bytes: a segment's sequence number
//! is ISN + 1 + the bytes of its flow before it ([`Cutter::offset`]: `seq · mss` for
//! full segments), the ACK number, SACK blocks (RFC 2018 §3) and the data's ACK number
//! likewise. Each end's ISN is drawn per flow from the seed (stream `pcap.isn`; RFC 6528
//! §3 asks for a keyed hash of the connection and a clock: the seed is the key, the
//! clock is left out so captures are deterministic). TCP segments carry the timestamp
//! option (RFC 7323 §3: TSval the sender's clock when made, TSecr as the model echoed
//! it) laid out as Linux's `tcp_options_write` does (NOP, NOP, TS; NOP, NOP, SACK). The
//! window field is the receiver's advertised window scaled down by the shift Linux's
//! `tcp_select_initial_window` picks (`ilog2(max(tcp_rmem[2], rmem_max)) - 15`, at most
//! 14). The data sender's handshake segment is captured (a download's SYN-ACK, an upload's
//! SYN: flags, the ISN, MSS, SACK-permitted, timestamp and window-scale options); the other
//! end's SYN is not (the model's flow opens as it arrives), so tshark cannot learn the shift
//! from the handshake and the section comment tells it
//! (`tshark -o tcp.default_window_scaling:N`). Data segments advertise 65535 (the
//! server's receive window is not modelled). Retransmissions carry the comment
//! `retransmission` (the model's mark; real captures have none). An MPTCP run's flows are its
//! subflows, each carrying the MPTCP option Linux writes last ([`mptcp_options`]).
//!
//! Timestamps are simulated time in nanoseconds (`if_tsresol` = 9) from 0, i.e. from
//! 1970-01-01. By default only the headers are written (the original length is
//! recorded); with `payload` the frames are whole, their payload zero bytes. The run's
//! thread builds frames into batches of about 256 kB, each frame from its flow's headers
//! built once by etherparse ([`Template`], a cache of the flows in flight) with the fields
//! that change written in and the checksums completed from the template's sums (RFC 1624);
//! a writer thread turns them into pcapng blocks (the `pcap-file` crate) and streams them to
//! disk through buffered writers. The batches are a fixed few, reused (memory stays bounded).
//! `max_packets` (per file) and a time window keep files small.
//!
//! Files are written whole or not at all (issue 39): each as `NAME.pcapng.part`, renamed to its
//! name when the run has ended and every file is flushed ([`Capture::finish`]), when an earlier
//! run's captures in the directory go too; a run that fails or is stopped removes its part files
//! ([`PartFiles`]) and leaves an earlier run's captures as they were.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use byteorder_slice::BigEndian;
use etherparse::checksum::Sum16BitWords;
use etherparse::{EtherType, Ethernet2Header, IpNumber, Ipv4Header, SingleVlanHeader, TcpHeader, UdpHeader, VlanId};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::blocks::ENHANCED_PACKET_BLOCK;
use pcap_file::pcapng::{PcapNgBlock, PcapNgWriter, RawBlock};
use pcap_file::{DataLink, PcapError};
use rand::RngExt;

use crate::error::{Error, Result};
use crate::network::{format_mac, FlowHeaders, Mac};
use crate::packet::{Kind, Packet};
use crate::rng;
use crate::scenario::{CaptureOptions, Scenario};
use crate::time::SimTime;
use crate::transport::{tcp, Cutter};
use crate::workload::Request;

/// Payload bytes, all zero: what the checksums are taken over and what `payload` writes.
static ZEROS: [u8; 65_536] = [0; 65_536];

/// The longest headers a frame has: Ethernet 14, 802.1Q 4, IPv4 20, TCP 60.
const MAX_HEADERS: u32 = 98;

/// Snap length of headers-only files (at least [`MAX_HEADERS`]).
const HEADERS_SNAPLEN: u32 = 128;

/// Snap length of whole-frame files: libpcap's `MAXIMUM_SNAPLEN`.
const FULL_SNAPLEN: u32 = 262_144;

/// IPv4 time to live: Linux's `net.ipv4.ip_default_ttl`.
const TTL: u8 = 64;

/// Linux's `net.core.rmem_max` default (`SK_RMEM_MAX`, 212992 bytes on 64-bit), one
/// bound of the window scale `tcp_select_initial_window` picks.
const RMEM_MAX: u64 = 212_992;

/// pcapng `epb_flags` direction bits (pcapng §4.3.1).
const INBOUND: u32 = 1;
const OUTBOUND: u32 = 2;

/// What the capture needs of one flow.
#[derive(Debug, Clone, Copy)]
struct Flow {
    headers: FlowHeaders,
    /// The headers of the flow's data segments (the clients' in an upload).
    data_headers: FlowHeaders,
    client: u32,
    file_bytes: u64,
    /// Initial sequence numbers: the data sender's, the data receiver's.
    isn: [u32; 2],
    /// An MPTCP subflow's connection (none for a TCP or UDP flow).
    mptcp: Option<Subflow>,
}

/// One pcapng file being written (to its part file).
struct Sink {
    writer: PcapNgWriter<BufWriter<File>>,
    /// Its name once complete: what errors name.
    path: PathBuf,
}

/// The part files of a capture, `(part, name)`: those still listed when it is dropped are removed
/// (a capture that did not finish leaves none behind).
#[derive(Default)]
struct PartFiles(Vec<(PathBuf, PathBuf)>);

/// What a file is called while it is being written.
const PART_SUFFIX: &str = ".part";

impl PartFiles {
    /// Creates the part file of `path`.
    fn create(&mut self, path: PathBuf) -> Result<File> {
        let mut part = path.clone().into_os_string();
        part.push(PART_SUFFIX);
        let part = PathBuf::from(part);
        let file = File::create(&part).map_err(|e| io_error(&path, e))?;
        self.0.push((part, path));
        Ok(file)
    }

    /// Renames every part file to its name, then removes the earlier captures in `dir` that this
    /// run has not replaced (of other links, perhaps: they would sit beside this run's as if they
    /// were of it).
    fn commit(&mut self, dir: &Path) -> Result<()> {
        let ours: Vec<String> =
            self.0.iter().filter_map(|(_, path)| Some(path.file_name()?.to_string_lossy().into_owned())).collect();
        for k in 0..self.0.len() {
            let (part, path) = &self.0[k];
            if let Err(e) = std::fs::rename(part, path) {
                let failed = io_error(path, e);
                self.0.drain(..k); // (in place: not removed)
                return Err(failed);
            }
        }
        self.0.clear();
        remove_captures(dir, |name| !ours.iter().any(|n| n == name), "")
    }
}

impl Drop for PartFiles {
    fn drop(&mut self) {
        for (part, _) in &self.0 {
            let _ = std::fs::remove_file(part);
        }
    }
}

/// Removes the files in `dir` named as captures are (with `suffix` after the name: `.part` for
/// part files) for which `remove` is true.
fn remove_captures(dir: &Path, remove: impl Fn(&str) -> bool, suffix: &str) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Some(stem) = name.strip_suffix(suffix) else { continue };
        let capture = stem == RECEIVERS_FILE || stem.ends_with(FWD_SUFFIX) || stem.ends_with(REV_SUFFIX);
        if capture && remove(stem) {
            std::fs::remove_file(&path).map_err(|e| io_error(&path, e))?;
        }
    }
    Ok(())
}

/// Frames handed to the writer thread at once, about this many bytes.
const BATCH_BYTES: usize = 1 << 18;

/// Batches a capture has at most: the one being filled, the others on their way to the
/// writer thread or being written. What the capture holds in memory is bounded by this many
/// batches, made once and reused (fresh ones would cost the kernel a page fault per page).
const BATCHES: usize = 4;

/// What the writer thread is asked to write, in order.
enum Item {
    /// A frame: `bytes[start..end]` of its batch.
    Frame { file: u32, iface: u32, ns: u64, original: u32, flags: u32, retransmit: bool, start: u32, end: u32 },
    /// A new interface of a file.
    Interface { file: u32, name: String, what: String },
}

/// Frames built by the simulation's thread, written by the writer thread (which hands the
/// emptied batch back, so that their memory is reused).
struct Batch {
    items: Vec<Item>,
    bytes: Vec<u8>,
}

impl Batch {
    fn new() -> Batch {
        // Room for a full batch and one more whole frame: filling it never reallocates.
        Batch { items: Vec::with_capacity(BATCH_BYTES / 64), bytes: Vec::with_capacity(BATCH_BYTES + (1 << 16)) }
    }
}

/// The captures of one run.
pub struct Capture {
    flows: Vec<Flow>,
    cutter: Cutter,
    /// The transport is TCP (its segments carry the timestamp option, its ACKs the window).
    tcp: bool,
    /// The timestamp option's clock (`sender.ts_clock`).
    ts: tcp::TsTicks,
    mss: u64,
    wscale: u8,
    /// Data flows from the clients (`workload.direction = "upload"`): the handshake segment the
    /// model sends is the client's SYN, else the server's SYN-ACK.
    upload: bool,
    payload: bool,
    start: SimTime,
    stop: SimTime,
    max_packets: u64,
    /// Frames written to each file so far: each link's forward direction, then the reverse
    /// directions that exist, then `receivers.pcapng`.
    written: Vec<u64>,
    /// Each link's reverse direction's file.
    reverse: Vec<Option<u32>>,
    /// The file `receivers.pcapng`.
    receivers: u32,
    /// Interface of each client in `receivers.pcapng` (`u32::MAX`: none yet), added when it first sees a frame.
    client_ifaces: Vec<u32>,
    /// Interfaces in `receivers.pcapng` so far.
    client_count: u32,
    /// Each flow's headers, per direction (a direct-mapped cache of [`TEMPLATES`]).
    templates: Vec<Template>,
    /// Frames built and not yet handed to the writer thread.
    batch: Batch,
    /// The way to the writer thread (`None` once it stopped: a write failed).
    to_writer: Option<std::sync::mpsc::SyncSender<Batch>>,
    /// Batches the writer thread has emptied.
    emptied: std::sync::mpsc::Receiver<Batch>,
    /// Batches made so far (at most [`BATCHES`]).
    batches: usize,
    /// The writer thread: every file's [`PcapNgWriter`] is its own; it ends with the first
    /// error, if any. Serialising and the kernel's writes run beside the simulation. (`None`
    /// once joined.)
    writer: Option<std::thread::JoinHandle<Result<()>>>,
    /// The directory and the files being written in it. (Last: dropped after `Drop::drop` has
    /// joined the writer thread, so that each file is closed before it is removed.)
    dir: PathBuf,
    parts: PartFiles,
}

/// A link as the capture names it.
pub struct LinkInfo<'a> {
    /// Its output name (`links.csv`'s `name`).
    pub name: &'a str,
    /// Nominal speed, bits per second.
    pub speed_bps: f64,
    /// Whether it has a reverse direction (rate links).
    pub reverse: bool,
}

/// An MPTCP subflow's connection-level facts, for its options (RFC 8684).
#[derive(Debug, Clone, Copy)]
struct Subflow {
    /// Its number in the connection: 0 the initial subflow (MP_CAPABLE), else a join (MP_JOIN).
    index: u32,
    /// The connection's data (its data sequence space), bytes.
    conn_bytes: u64,
    /// The server's key (its SYN-ACK's MP_CAPABLE) and the initial data sequence numbers of both
    /// ends: the least significant 64 bits of the SHA-256 of each key (RFC 8684 §3.1).
    key: u64,
    idsn: [u64; 2],
    /// A join's SYN-ACK: truncated HMAC (8 bytes) and nonce (4): drawn, not computed (the
    /// client's SYN, with its nonce, is not captured).
    join: [u8; 12],
}

/// RFC 8684 §3.1: an initial data sequence number is the least significant 64 bits of the SHA-256
/// hash of the key (as Linux's `mptcp_crypto_key_sha`).
fn idsn_of(key: u64) -> u64 {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(key.to_be_bytes());
    u64::from_be_bytes(hash[24..32].try_into().expect("8 bytes"))
}

/// The file names a capture writes (what a capture directory's earlier files are known by).
const FWD_SUFFIX: &str = ".fwd.pcapng";
const REV_SUFFIX: &str = ".rev.pcapng";
const RECEIVERS_FILE: &str = "receivers.pcapng";

fn io_error(path: &std::path::Path, err: impl std::fmt::Display) -> Error {
    Error::Io(format!("pcap: {}: {err}", path.display()))
}

/// A capture file that could not be written, and why, in the operating system's words: pcap-file
/// says "Error reading bytes" of any I/O error (`PcapError::IoError`), a write's too.
fn write_error(path: &std::path::Path, err: PcapError) -> Error {
    match err {
        PcapError::IoError(os) => io_error(path, format_args!("cannot write it: {os}")),
        other => io_error(path, format_args!("cannot write it: {other}")),
    }
}

impl Capture {
    /// Opens the files of a run of `scenario` with these flows and links.
    pub fn new(
        options: &CaptureOptions,
        scenario: &Scenario,
        label: &str,
        requests: &[Request],
        headers: &[FlowHeaders],
        links: &[LinkInfo],
    ) -> Result<Capture> {
        options.validate()?;
        if Cutter::for_scenario(scenario).coalesces() {
            // The capture's sequence numbers are the byte offsets the cutter gives ahead of the run.
            return Err(Error::scenario(
                "pcap",
                "a TCP stream of messages (sender.message_bytes) is cut into segments as it runs, which \
                 the capture's sequence numbers do not follow yet: capture it without message_bytes",
            ));
        }
        let chunk = scenario.chunk_bytes();
        if chunk + MAX_HEADERS > u32::from(u16::MAX) {
            return Err(Error::scenario(
                "pcap",
                format!("packets of {chunk} bytes do not fit an IPv4 datagram (65535 bytes): cannot capture them"),
            ));
        }
        std::fs::create_dir_all(&options.dir).map_err(|e| io_error(&options.dir, e))?;
        // Part files a killed run left (an earlier run's captures go once this run's are complete).
        remove_captures(&options.dir, |_| true, PART_SUFFIX)?;
        let mut parts = PartFiles::default();
        let mut isn_rng = rng::stream(scenario.seed, "pcap.isn");
        // MPTCP: a flow per subflow (`transport::mptcp::wire_flow`), each connection's keys drawn.
        let k = scenario.mptcp_subflows().max(1) as usize;
        let mut key_rng = rng::stream(scenario.seed, "pcap.mptcp");
        // The connection's: the server's key and both ends' IDSNs (a new pair at its first subflow).
        let mut keys = (0u64, [0u64; 2]);
        let flows = headers
            .iter()
            .enumerate()
            .map(|(w, h)| {
                let r = &requests[w / k];
                let mptcp = (scenario.mptcp_subflows() > 0).then(|| {
                    if w % k == 0 {
                        let pair: [u64; 2] = [key_rng.random(), key_rng.random()];
                        keys = (pair[0], pair.map(idsn_of));
                    }
                    Subflow {
                        index: (w % k) as u32,
                        conn_bytes: r.file_bytes,
                        key: keys.0,
                        idsn: keys.1,
                        join: key_rng.random(),
                    }
                });
                Flow {
                    headers: *h,
                    // An upload's data goes from the client to the server (`workload.direction`).
                    data_headers: if scenario.upload() { h.reversed() } else { *h },
                    client: r.client,
                    // A subflow's segments are all whole (its stream is as long as any connection's).
                    file_bytes: if mptcp.is_some() { tcp::sender::SUBFLOW_STREAM_BYTES } else { r.file_bytes },
                    isn: [isn_rng.random(), isn_rng.random()],
                    mptcp,
                }
            })
            .collect();
        let tcp = scenario.sender.tcp().is_some();
        let ts = scenario.sender.tcp().map_or(tcp::TsTicks::MS, |t| tcp::TsTicks::of(t.ts_clock, scenario.bond.hz));
        // tcp_select_initial_window: the shift that fits the largest window into 16 bits.
        let space = scenario.sender.tcp().map_or(RMEM_MAX, |t| t.tcp_rmem[2].max(RMEM_MAX));
        let wscale = (space.ilog2() as i64 - 15).clamp(0, 14) as u8;
        let snaplen = if options.payload { FULL_SNAPLEN } else { HEADERS_SNAPLEN };
        let comment = format!(
            "bondsim {} run of scenario `{}` (seed {}, scheduler {label}). Simulated time from 0 (1970-01-01), \
             nanoseconds. {}. The client's SYN is not captured: TCP windows are scaled by 2^{wscale} \
             (tshark -o tcp.default_window_scaling:{wscale}).",
            env!("CARGO_PKG_VERSION"),
            scenario.name,
            scenario.seed,
            if options.payload {
                "Whole frames, payload zero bytes"
            } else {
                "Headers only; original lengths recorded"
            },
        );
        let mut open = |file: String| -> Result<Sink> {
            let path = options.dir.join(file);
            let out = parts.create(path.clone())?;
            let section = SectionHeaderBlock {
                options: vec![
                    SectionHeaderOption::UserApplication(Cow::Owned(format!("bondsim {}", env!("CARGO_PKG_VERSION")))),
                    SectionHeaderOption::Comment(Cow::Owned(comment.clone())),
                ],
                ..SectionHeaderBlock::default()
            };
            let writer = PcapNgWriter::with_section_header(BufWriter::with_capacity(1 << 16, out), section)
                .map_err(|e| write_error(&path, e))?;
            Ok(Sink { writer, path })
        };
        let mut stems: Vec<String> = Vec::new();
        let mut forward = Vec::new();
        let mut reverse_sinks = Vec::new();
        for (id, link) in links.iter().enumerate() {
            // File names from link names: anything but letters, digits, `-`, `_` becomes `_`;
            // a name already taken gets the link's number.
            let mut stem: String = link
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                .collect();
            if stems.contains(&stem) {
                stem = format!("{stem}-{id}");
            }
            stems.push(stem.clone());
            let mut fwd = open(format!("{stem}{FWD_SUFFIX}"))?;
            let what = format!(
                "{}: bond side, sending (server to clients): each frame as the link finished sending it; \
                 frames dropped at its full queue are not here, frames later lost on the wire are",
                link.name
            );
            add_interface(&mut fwd, snaplen, link.name, &what, Some(link.speed_bps))?;
            forward.push(fwd);
            if link.reverse {
                let mut rev = open(format!("{stem}{REV_SUFFIX}"))?;
                let what = format!(
                    "{}: switch side, sending (clients to server): each frame as the link finished sending it",
                    link.name
                );
                add_interface(&mut rev, snaplen, link.name, &what, Some(link.speed_bps))?;
                reverse_sinks.push((id, rev));
            }
        }
        let mut reverse = vec![None; links.len()];
        for (k, (id, _)) in reverse_sinks.iter().enumerate() {
            reverse[*id] = Some((links.len() + k) as u32);
        }
        let mut sinks = forward;
        sinks.extend(reverse_sinks.into_iter().map(|(_, sink)| sink));
        sinks.push(open(RECEIVERS_FILE.to_string())?);
        let receivers = (sinks.len() - 1) as u32;
        let (to_writer, batches) = std::sync::mpsc::sync_channel(BATCHES);
        let (give_back, emptied) = std::sync::mpsc::sync_channel(BATCHES);
        let writer = std::thread::Builder::new()
            .name("bondsim-pcap".into())
            .spawn(move || write_batches(sinks, snaplen, batches, give_back))
            .map_err(|e| io_error(&options.dir, e))?;
        Ok(Capture {
            flows,
            cutter: Cutter::for_scenario(scenario),
            tcp,
            ts,
            mss: u64::from(chunk),
            wscale,
            upload: scenario.upload(),
            payload: options.payload,
            start: SimTime::from_secs_f64(options.start_s),
            stop: options.stop_s.map_or(SimTime(u64::MAX), SimTime::from_secs_f64),
            max_packets: options.max_packets.unwrap_or(u64::MAX),
            written: vec![0; receivers as usize + 1],
            reverse,
            receivers,
            client_ifaces: vec![u32::MAX; requests.iter().map(|r| r.client as usize + 1).max().unwrap_or(0)],
            client_count: 0,
            templates: vec![Template::empty(); TEMPLATES],
            batch: Batch::new(),
            batches: 1,
            to_writer: Some(to_writer),
            emptied,
            writer: Some(writer),
            dir: options.dir.clone(),
            parts,
        })
    }

    // Each frame carries on the bond's side the address of the slave it left or is sent to
    // (`bond_mac`): the bond's own, but for balance-tlb's and -alb's slaves' own addresses
    // (`network::SlaveMacs`).

    /// Link `link` sent `packet` towards the clients, from `bond_mac`.
    pub fn link_sent(&mut self, now: SimTime, link: usize, packet: &Packet, bond_mac: Mac) {
        if self.wanted(now) {
            self.write(now, link as u32, 0, packet, 0, bond_mac);
        }
    }

    /// Link `link`'s reverse direction sent `packet` towards the server, to `bond_mac`.
    pub fn reverse_sent(&mut self, now: SimTime, link: usize, packet: &Packet, bond_mac: Mac) {
        if self.wanted(now) {
            let file = self.reverse[link].expect("a reverse direction sends only where it exists");
            self.write(now, file, 0, packet, 0, bond_mac);
        }
    }

    /// A copy of `packet` reached its client's NIC, from `bond_mac`.
    pub fn client_received(&mut self, now: SimTime, packet: &Packet, bond_mac: Mac) {
        if self.wanted(now) {
            let iface = self.client_interface(packet.flow);
            self.write(now, self.receivers, iface, packet, INBOUND, bond_mac);
        }
    }

    /// A client's stack sent `packet` (an acknowledgement) to `bond_mac`.
    pub fn client_sent(&mut self, now: SimTime, packet: &Packet, bond_mac: Mac) {
        if self.wanted(now) {
            let iface = self.client_interface(packet.flow);
            self.write(now, self.receivers, iface, packet, OUTBOUND, bond_mac);
        }
    }

    /// Flushes every file and puts it in place; the first write error of the run, if any (the
    /// files are then removed).
    pub fn finish(mut self) -> Result<()> {
        self.hand_over();
        self.stop_writer()?;
        self.parts.commit(&self.dir)
    }

    /// Lets the writer thread write what it was handed and end; its outcome.
    fn stop_writer(&mut self) -> Result<()> {
        drop(self.to_writer.take());
        match self.writer.take() {
            Some(writer) => writer.join().unwrap_or_else(|_| Err(Error::Io("pcap: the writer thread failed".into()))),
            None => Ok(()),
        }
    }

    fn wanted(&self, now: SimTime) -> bool {
        self.to_writer.is_some() && now >= self.start && now < self.stop
    }

    /// Hands the frames built so far to the writer thread and takes an empty batch: one the
    /// writer thread gave back, a new one while there are fewer than [`BATCHES`], else the
    /// next one it empties (waiting for it). If the writer thread stopped, captures stop.
    fn hand_over(&mut self) {
        let batch = std::mem::replace(&mut self.batch, Batch { items: Vec::new(), bytes: Vec::new() });
        if let Some(to) = &self.to_writer {
            if to.send(batch).is_err() {
                self.to_writer = None; // its error is told at `finish`
            }
        }
        self.batch = match self.emptied.try_recv() {
            Ok(batch) => batch,
            Err(_) if self.batches < BATCHES => {
                self.batches += 1;
                Batch::new()
            }
            Err(_) => self.emptied.recv().unwrap_or_else(|_| Batch::new()), // stopped: nothing more is built
        };
    }

    /// The interface of the client of `flow` in `receivers.pcapng` (described when first used).
    fn client_interface(&mut self, flow: u32) -> u32 {
        let f = &self.flows[flow as usize];
        let iface = self.client_ifaces[f.client as usize];
        if iface != u32::MAX {
            return iface;
        }
        let iface = self.client_count;
        self.client_count += 1;
        self.client_ifaces[f.client as usize] = iface;
        let ip = std::net::Ipv4Addr::from(f.headers.dst_ip);
        let what = format!(
            "client {} ({ip}, MAC {}): its NIC, both directions: every frame that reached it (inbound, every copy, \
             before any resequencing) and every frame its stack sent (outbound: acknowledgements, or an upload's data)",
            f.client,
            format_mac(&f.headers.dst_mac),
        );
        let name = format!("client{}", f.client);
        self.batch.items.push(Item::Interface { file: self.receivers, name, what });
        iface
    }

    /// Builds `packet`'s frame into the batch for file `file`, interface `iface`.
    fn write(&mut self, now: SimTime, file: u32, iface: u32, packet: &Packet, flags: u32, bond_mac: Mac) {
        let written = &mut self.written[file as usize];
        if *written >= self.max_packets {
            return;
        }
        *written += 1;
        let start = self.batch.bytes.len() as u32;
        let original = self.build(packet);
        let end = self.batch.bytes.len() as u32;
        // The bond's side of the frame: the destination of an ACK, the source of the rest.
        let at = start as usize + if packet.kind == Kind::Ack { 0 } else { 6 };
        self.batch.bytes[at..at + 6].copy_from_slice(&bond_mac);
        let retransmit = packet.retransmit();
        self.batch.items.push(Item::Frame { file, iface, ns: now.0, original, flags, retransmit, start, end });
        if self.batch.bytes.len() >= BATCH_BYTES {
            self.hand_over();
        }
    }

    /// Appends `packet`'s frame to the batch (headers, then with `payload` the payload's zero
    /// bytes); returns the frame's length. The headers are the flow's [`Template`] for the
    /// packet's direction with the fields that differ from frame to frame written in.
    fn build(&mut self, packet: &Packet) -> u32 {
        let flow = &self.flows[packet.flow as usize];
        let ack = packet.kind == Kind::Ack;
        let syn = packet.kind == Kind::Handshake;
        let payload = if ack || syn { 0 } else { packet.bytes as usize };
        let cutter = self.cutter;
        // The server's sequence number, in bytes, of the model's sequence number `k`.
        let byte_seq =
            |k: u32| flow.isn[0].wrapping_add(1).wrapping_add(cutter.offset(flow.file_bytes, u64::from(k)) as u32);
        let key = (u64::from(packet.flow) << 1) | u64::from(ack);
        let slot = (key % TEMPLATES as u64) as usize;
        if self.templates[slot].key != key {
            let h = if ack { flow.data_headers.reversed() } else { flow.data_headers };
            self.templates[slot] = Template::new(key, h);
        }
        let t = &self.templates[slot];
        // What follows the template: TCP's options, laid out as `tcp_options_write`: NOP, NOP,
        // timestamp (kind 8, length 10, RFC 7323 §3), then NOP, NOP, SACK (kind 5, length 2 + 8
        // per block, RFC 2018 §3).
        let mut opts = [0u8; 40];
        let mut n = 0;
        if t.tcp && self.tcp && syn {
            // A handshake segment's (`tcp_options_write` after `tcp_synack_options`): MSS (kind 2),
            // SACK-permitted (kind 4) beside the timestamp, NOP and window scale (kind 3).
            opts[..2].copy_from_slice(&[2, 4]);
            opts[2..4].copy_from_slice(&(self.mss.min(65_535) as u16).to_be_bytes());
            opts[4..8].copy_from_slice(&[4, 2, 8, 10]);
            opts[8..12].copy_from_slice(&self.ts.ts_of(packet.born).to_be_bytes());
            opts[12..16].copy_from_slice(&packet.ts_ecr.to_be_bytes());
            opts[16..20].copy_from_slice(&[1, 3, 3, self.wscale]);
            n = 20;
        } else if t.tcp && self.tcp {
            opts[..4].copy_from_slice(&[1, 1, 8, 10]);
            opts[4..8].copy_from_slice(&self.ts.ts_of(packet.born).to_be_bytes());
            opts[8..12].copy_from_slice(&packet.ts_ecr.to_be_bytes());
            n = 12;
            let blocks = packet.sack_blocks();
            if !blocks.is_empty() {
                opts[12..16].copy_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
                n = 16;
                for b in blocks {
                    opts[n..n + 4].copy_from_slice(&byte_seq(b.start).to_be_bytes());
                    opts[n + 4..n + 8].copy_from_slice(&byte_seq(b.end).to_be_bytes());
                    n += 8;
                }
            }
        }
        if let Some(sub) = flow.mptcp {
            // The subflow sequence number, relative (RFC 8684 §3.3.1: its first data byte is 1).
            let ssn = byte_seq(packet.seq).wrapping_sub(flow.isn[0]);
            n = mptcp_options(&mut opts, n, &sub, packet, cutter, syn, ssn);
        }
        let ip_at = usize::from(t.ip_at);
        let l4_header = usize::from(t.len) - ip_at - Ipv4Header::MIN_LEN + n;
        let l4_len = (l4_header + payload) as u16;
        let total_len = (Ipv4Header::MIN_LEN as u16 + l4_len).to_be_bytes();
        // The checksums from the template's sums (its fields that change from frame to frame at
        // zero) and this frame's values of those fields: the ones' complement sum is the same in
        // any order and grouping of the 16-bit words (RFC 1071 §2), which is how RFC 1624
        // updates a checksum for the fields that changed.
        let ip_sum = t.ip_sum.clone().add_2bytes(total_len).ones_complement().to_be();
        // The pseudo-header's length (RFC 9293 §3.1, RFC 768), then the header's own fields.
        let mut l4_sum = t.l4_sum.clone().add_2bytes(l4_len.to_be_bytes());
        let buf = &mut self.batch.bytes;
        let frame = buf.len();
        let ip = frame + ip_at;
        let l4 = ip + Ipv4Header::MIN_LEN;
        buf.extend_from_slice(&t.bytes[..usize::from(t.len)]);
        buf.extend_from_slice(&opts[..n]);
        // IPv4 total length (bytes 2-3, RFC 791 §3.1) and header checksum (bytes 10-11).
        buf[ip + 2..ip + 4].copy_from_slice(&total_len);
        buf[ip + 10..ip + 12].copy_from_slice(&ip_sum.to_be_bytes());
        let at = if t.tcp {
            let (seq, ack_no, window) = if ack {
                let win = (u64::from(packet.seq) * self.mss) >> self.wscale;
                (flow.isn[1].wrapping_add(1), byte_seq(packet.ack), win.min(65_535) as u16)
            } else if syn {
                // The ISN itself (the SYN takes one sequence number); an upload's SYN acknowledges
                // nothing. The window of a handshake segment is never scaled (RFC 7323 §2.2).
                let ack_no = if self.upload { 0 } else { flow.isn[1].wrapping_add(1) };
                (flow.isn[0], ack_no, 65_535)
            } else {
                (byte_seq(packet.seq), flow.isn[1].wrapping_add(1), 65_535)
            };
            // The header (RFC 9293 §3.1): sequence number at byte 4, acknowledgment number at
            // 8, data offset (32-bit words) in the high nibble of 12, window at 14.
            let offset = [((l4_header / 4) as u8) << 4, 0];
            buf[l4 + 4..l4 + 8].copy_from_slice(&seq.to_be_bytes());
            buf[l4 + 8..l4 + 12].copy_from_slice(&ack_no.to_be_bytes());
            buf[l4 + 12] = offset[0];
            buf[l4 + 14..l4 + 16].copy_from_slice(&window.to_be_bytes());
            if syn {
                // The template's flags are ACK's (0x10); SYN adds 0x02, and an upload's SYN has
                // no ACK (adding the ones' complement of 0x0e takes it out of the sum).
                let (flags, delta) = if self.upload { (0x02, [0xff, 0xf1]) } else { (0x12, [0x00, 0x02]) };
                buf[l4 + 13] = flags;
                l4_sum = l4_sum.add_2bytes(delta);
            }
            l4_sum = l4_sum
                .add_4bytes(seq.to_be_bytes())
                .add_4bytes(ack_no.to_be_bytes())
                .add_2bytes(offset)
                .add_2bytes(window.to_be_bytes())
                .add_slice(&opts[..n]);
            l4 + 16
        } else {
            buf[l4 + 4..l4 + 6].copy_from_slice(&l4_len.to_be_bytes()); // UDP length (RFC 768)
            l4_sum = l4_sum.add_2bytes(l4_len.to_be_bytes());
            l4 + 6
        };
        // Zero payload bytes add nothing to the sum. UDP sends a sum of zero as all ones
        // (RFC 768: zero means "no checksum").
        let sum = if t.tcp { l4_sum.ones_complement() } else { l4_sum.to_ones_complement_with_no_zero() };
        buf[at..at + 2].copy_from_slice(&sum.to_be().to_be_bytes());
        let headers_len = buf.len() - frame;
        if self.payload {
            buf.extend_from_slice(&ZEROS[..payload]);
        }
        (headers_len + payload) as u32
    }
}

/// Writes an MPTCP subflow's option after TCP's (Linux's `mptcp_write_options`, net/mptcp/options.c,
/// 6.18, last in `tcp_options_write`) into `opts` from byte `n`; returns the bytes used. The server's
/// SYN-ACK: MP_CAPABLE v1 with its key (RFC 8684 §3.1, 12 bytes, HMAC-SHA256) on the initial
/// subflow, MP_JOIN (§3.2, 16 bytes: address ID 0, not a backup) on a join. A data segment: DSS (§3.3)
/// with a 32-bit data ACK (the client sends no data, so the server's `use_64bit_ack` stays off) and a
/// 64-bit mapping of this segment alone (DSN, relative subflow sequence number, length), then two
/// NOPs (Linux writes them in the length's word when checksums are off): 24 bytes. An ACK: DSS with a
/// 64-bit data ACK (the server's mappings were 64-bit, `use_64bit_ack`): 12 bytes.
fn mptcp_options(
    opts: &mut [u8; 40],
    n: usize,
    sub: &Subflow,
    packet: &Packet,
    cutter: Cutter,
    syn: bool,
    ssn: u32,
) -> usize {
    const MPTCP: u8 = 30;
    let dsn = |k: u32| sub.idsn[0].wrapping_add(1).wrapping_add(cutter.offset(sub.conn_bytes, u64::from(k)));
    let o = &mut opts[n..];
    // Kind, length, subtype (high nibble) and its low nibble, then flags (`mptcp_option`).
    let mut head =
        |len: u8, subtype_nibble: u8, flags: u8| o[..4].copy_from_slice(&[MPTCP, len, subtype_nibble, flags]);
    if syn && sub.index == 0 {
        head(12, 0x01, 0x01); // MP_CAPABLE, version 1; HMAC-SHA256
        o[4..12].copy_from_slice(&sub.key.to_be_bytes());
        n + 12
    } else if syn {
        head(16, 0x10, 0); // MP_JOIN, not a backup; address ID 0
        o[4..16].copy_from_slice(&sub.join);
        n + 16
    } else if packet.kind == Kind::Ack {
        head(12, 0x20, 0x03); // DSS: data ACK, 64-bit
        o[4..12].copy_from_slice(&dsn(packet.dss()).to_be_bytes());
        n + 12
    } else {
        head(22, 0x20, 0x0d); // DSS: data ACK (32-bit), mapping, 64-bit DSN
        o[4..8].copy_from_slice(&(sub.idsn[1].wrapping_add(1) as u32).to_be_bytes());
        o[8..16].copy_from_slice(&dsn(packet.dss()).to_be_bytes());
        o[16..20].copy_from_slice(&ssn.to_be_bytes());
        o[20..22].copy_from_slice(&(packet.bytes as u16).to_be_bytes());
        o[22..24].copy_from_slice(&[1, 1]); // NOP, NOP
        n + 24
    }
}

/// Cached [`Template`]s (direct-mapped by flow and direction: the flows a run has in flight at
/// once have neighbouring numbers, so they rarely share a slot).
const TEMPLATES: usize = 4096;

/// The headers of one flow's frames in one direction as etherparse writes them: Ethernet II
/// (and the 802.1Q tag), IPv4 (TTL 64, Linux's `net.ipv4.ip_default_ttl`; DF set, as Linux's
/// path MTU discovery does; identification 0), and TCP's fixed 20 bytes (ports, ACK flag) or
/// UDP's 8 (ports). Built once per flow and direction; [`Capture::build`] copies it and writes
/// the fields that change from frame to frame (lengths, checksums, TCP's numbers, window and
/// options), so that etherparse's header types are not built for every frame.
#[derive(Clone)]
struct Template {
    /// Flow number times 2, plus 1 for its ACKs (`u64::MAX`: an empty slot).
    key: u64,
    /// Bytes used; where the IPv4 header starts; whether the transport header is TCP's.
    len: u8,
    ip_at: u8,
    tcp: bool,
    bytes: [u8; MAX_TEMPLATE],
    /// The sum of the IPv4 header's 16-bit words, its total length and checksum zero.
    ip_sum: Sum16BitWords,
    /// The sum of the pseudo-header's addresses and protocol and of the transport header's
    /// fixed words (ports, TCP's flags).
    l4_sum: Sum16BitWords,
}

/// Ethernet 14, 802.1Q 4, IPv4 20, TCP 20 (without options).
const MAX_TEMPLATE: usize = 58;

impl Template {
    fn empty() -> Template {
        Template {
            key: u64::MAX,
            len: 0,
            ip_at: 0,
            tcp: false,
            bytes: [0; MAX_TEMPLATE],
            ip_sum: Sum16BitWords::new(),
            l4_sum: Sum16BitWords::new(),
        }
    }

    fn new(key: u64, h: FlowHeaders) -> Template {
        let mut buf = Vec::with_capacity(MAX_TEMPLATE);
        let ipv4 = EtherType(h.ethertype);
        let eth_type = if h.vlan.is_some() { EtherType::VLAN_TAGGED_FRAME } else { ipv4 };
        let eth = Ethernet2Header { source: h.src_mac, destination: h.dst_mac, ether_type: eth_type };
        buf.extend_from_slice(&eth.to_bytes());
        if let Some(vlan) = h.vlan {
            let tag = SingleVlanHeader {
                pcp: Default::default(),
                drop_eligible_indicator: false,
                vlan_id: VlanId::try_new(vlan).expect("validated VLAN id"),
                ether_type: ipv4,
            };
            buf.extend_from_slice(&tag.to_bytes());
        }
        let ip_at = buf.len() as u8;
        let tcp = h.ip_proto == 6;
        let proto = if tcp { IpNumber::TCP } else { IpNumber::UDP };
        // Lengths and checksums are written per frame.
        let header = Ipv4Header::new(0, TTL, proto, h.src_ip, h.dst_ip).expect("0 fits");
        header.write(&mut buf).expect("writing to a Vec");
        if tcp {
            let mut tcp_h = TcpHeader::new(h.src_port, h.dst_port, 0, 0);
            tcp_h.ack = true;
            buf.extend_from_slice(&tcp_h.to_bytes());
        } else {
            let udp = UdpHeader { source_port: h.src_port, destination_port: h.dst_port, length: 0, checksum: 0 };
            buf.extend_from_slice(&udp.to_bytes());
        }
        let mut bytes = [0; MAX_TEMPLATE];
        bytes[..buf.len()].copy_from_slice(&buf);
        // The fields written per frame are zero here: IPv4's total length and checksum, TCP's
        // data offset (its sequence and acknowledgment numbers, window and checksum are already
        // zero; UDP's length and checksum too).
        let ip = usize::from(ip_at);
        let l4 = ip + Ipv4Header::MIN_LEN;
        bytes[ip + 2..ip + 4].fill(0);
        bytes[ip + 10..ip + 12].fill(0);
        if tcp {
            bytes[l4 + 12] = 0;
        }
        let ip_sum = Sum16BitWords::new().add_slice(&bytes[ip..l4]);
        let l4_sum = Sum16BitWords::new()
            .add_4bytes(h.src_ip)
            .add_4bytes(h.dst_ip)
            .add_2bytes([0, proto.0])
            .add_slice(&bytes[l4..buf.len()]);
        Template { key, len: buf.len() as u8, ip_at, tcp, bytes, ip_sum, l4_sum }
    }
}

impl Drop for Capture {
    /// A capture that did not finish (its run failed or was stopped): the writer thread ends
    /// before the part files are removed (`parts`, dropped after this).
    fn drop(&mut self) {
        let _ = self.stop_writer();
    }
}

/// The writer thread: writes what the batches hold, in order, then flushes every file.
fn write_batches(
    mut sinks: Vec<Sink>,
    snaplen: u32,
    batches: std::sync::mpsc::Receiver<Batch>,
    give_back: std::sync::mpsc::SyncSender<Batch>,
) -> Result<()> {
    // Each frame's block is pcap-file's: its body as `EnhancedPacketBlock` writes it (in the
    // byte order of the section, big-endian: `SectionHeaderBlock`'s default), framed as a
    // `RawBlock`. What `write_pcapng_block` writes, without measuring each block by writing
    // it once more to nowhere first (`Block::write_to`), and without an allocation per frame.
    let mut body = Vec::with_capacity(1 << 16);
    for mut batch in batches {
        let Batch { items, bytes } = &mut batch;
        let mut epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::ZERO,
            original_len: 0,
            data: Cow::Borrowed(&[]),
            options: Vec::with_capacity(2),
        };
        for item in items.drain(..) {
            match item {
                Item::Frame { file, iface, ns, original, flags, retransmit, start, end } => {
                    epb.interface_id = iface;
                    epb.timestamp = Duration::from_nanos(ns);
                    epb.original_len = original;
                    epb.data = Cow::Borrowed(&bytes[start as usize..end as usize]);
                    epb.options.clear();
                    if flags != 0 {
                        epb.options.push(EnhancedPacketOption::Flags(flags));
                    }
                    if retransmit {
                        epb.options.push(EnhancedPacketOption::Comment(Cow::Borrowed("retransmission")));
                    }
                    body.clear();
                    epb.write_to::<BigEndian, _>(&mut body).expect("writing to a Vec");
                    // The body is padded to 32 bits; type, length and length again add 12 bytes.
                    let len = body.len() as u32 + 12;
                    let block = RawBlock {
                        type_: ENHANCED_PACKET_BLOCK,
                        initial_len: len,
                        body: Cow::Borrowed(&body),
                        trailer_len: len,
                    };
                    let sink = &mut sinks[file as usize];
                    sink.writer.write_raw_block(&block).map_err(|e| write_error(&sink.path, e))?;
                }
                Item::Interface { file, name, what } => {
                    add_interface(&mut sinks[file as usize], snaplen, &name, &what, None)?
                }
            }
        }
        drop(epb);
        batch.bytes.clear();
        let _ = give_back.try_send(batch); // never full: it holds at most every batch there is
    }
    for sink in sinks {
        let path = sink.path;
        sink.writer.into_inner().flush().map_err(|e| write_error(&path, PcapError::IoError(e)))?;
    }
    Ok(())
}

/// Describes an interface (pcapng §4.2): Ethernet, its name, the capture point, its speed,
/// nanosecond timestamps.
fn add_interface(sink: &mut Sink, snaplen: u32, name: &str, what: &str, speed_bps: Option<f64>) -> Result<()> {
    let mut options = vec![
        InterfaceDescriptionOption::IfName(Cow::Owned(name.to_string())),
        InterfaceDescriptionOption::IfDescription(Cow::Owned(what.to_string())),
        InterfaceDescriptionOption::IfTsResol(9),
    ];
    if let Some(bps) = speed_bps {
        options.push(InterfaceDescriptionOption::IfSpeed(bps.round() as u64));
    }
    let idb = InterfaceDescriptionBlock { linktype: DataLink::ETHERNET, snaplen, options };
    sink.writer.write_pcapng_block(idb).map(drop).map_err(|e| write_error(&sink.path, e))
}

#[cfg(test)]
mod tests {
    use etherparse::TcpOptionElement;
    use etherparse::{NetHeaders, PacketHeaders, TransportHeader};
    use pcap_file::pcapng::{Block, PcapNgReader};
    use rustc_hash::FxHashMap;

    use super::*;
    use crate::RunResult;

    /// Two rate links striped round-robin, one with a longer wire, both losing frames:
    /// TCP flows that see reordering, losses and retransmissions.
    fn scenario() -> Scenario {
        Scenario::from_json(
            &serde_json::json!({
                "seed": 3,
                "workload": {"requests": 3, "clients": 2, "file_size": {"kind": "fixed", "bytes": 300_000}},
                "sender": {"kind": "tcp"},
                "bond": {"mode": "balance-rr"},
                "links": [{"rate_mbps": 1000.0, "delay_us": 20.0, "loss": 0.01},
                          {"rate_mbps": 1000.0, "delay_us": 90.0, "loss": 0.01}],
            })
            .to_string(),
        )
        .unwrap()
    }

    fn capture(scenario: &Scenario, dir: &std::path::Path, payload: bool) -> RunResult {
        let _ = std::fs::remove_dir_all(dir);
        let options = CaptureOptions { dir: dir.into(), payload, max_packets: None, start_s: 0.0, stop_s: None };
        crate::run_with_capture(scenario, Some(&options), &mut |_| true).unwrap()
    }

    /// Every frame of a file: (interface, flags, timestamp ns, original length, data).
    fn frames(path: &std::path::Path) -> Vec<(u32, u32, u64, u32, Vec<u8>)> {
        let mut reader = PcapNgReader::new(File::open(path).unwrap()).unwrap();
        let mut out = Vec::new();
        while let Some(block) = reader.next_block() {
            if let Block::EnhancedPacket(b) = block.unwrap() {
                let flags = b.options.iter().find_map(|o| match o {
                    EnhancedPacketOption::Flags(f) => Some(*f),
                    _ => None,
                });
                out.push((
                    b.interface_id,
                    flags.unwrap_or(0),
                    b.timestamp.as_nanos() as u64,
                    b.original_len,
                    b.data.to_vec(),
                ));
            }
        }
        out
    }

    fn dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("bondsim-capture-{}-{name}", std::process::id()))
    }

    #[test]
    fn each_file_holds_what_its_capture_point_saw_and_the_run_is_unchanged() {
        let s = scenario();
        let d = dir("counts");
        let r = capture(&s, &d, false);
        let links = &r.links;
        for (l, name) in links.name.iter().enumerate() {
            assert_eq!(frames(&d.join(format!("{name}.fwd.pcapng"))).len() as u64, links.packets_sent[l], "{name}");
            assert_eq!(
                frames(&d.join(format!("{name}.rev.pcapng"))).len() as u64,
                links.reverse_packets_sent[l],
                "{name} reverse"
            );
        }
        let rx = frames(&d.join("receivers.pcapng"));
        let inbound = rx.iter().filter(|f| f.1 == INBOUND).count() as u64;
        let sent: u64 = links.packets_sent.iter().sum();
        let lost: u64 = links.drops_random.iter().sum();
        assert!(lost > 0, "the scenario loses frames, so arrivals differ from what was sent");
        assert_eq!(inbound, sent - lost, "every frame sent and not lost on the wire reaches its client");
        assert_eq!(rx.len() as u64 - inbound, r.summary.reverse_packets, "and every ACK a client sent");
        // Headers only: at most MAX_HEADERS captured, the original length recorded.
        assert!(rx.iter().all(|f| f.4.len() as u32 <= MAX_HEADERS && f.3 >= f.4.len() as u32));
        assert!(rx.iter().any(|f| f.3 > f.4.len() as u32));
        // Timestamps never go back within a file.
        assert!(rx.windows(2).all(|w| w[0].2 <= w[1].2));
        // The figures do not move with captures on.
        let figures = |r: &RunResult| {
            let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
            v["summary"].as_object_mut().unwrap().remove("wall_s");
            v
        };
        assert_eq!(figures(&crate::run(&s).unwrap()), figures(&r));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn frames_carry_valid_checksums_and_byte_sequence_numbers() {
        let s = scenario();
        let d = dir("frames");
        capture(&s, &d, true);
        let mss = s.chunk_bytes();
        let rx = frames(&d.join("receivers.pcapng"));
        let mut first_seq = FxHashMap::default();
        let (mut data, mut sacks, mut syn_acks) = (0, 0, 0);
        for (_, flags, _, original, bytes) in &rx {
            assert_eq!(*original as usize, bytes.len(), "whole frames with `payload`");
            let h = PacketHeaders::from_ethernet_slice(bytes).unwrap();
            let Some(NetHeaders::Ipv4(ip, _)) = &h.net else { panic!("IPv4") };
            assert_eq!(ip.header_checksum, ip.calc_header_checksum());
            let Some(TransportHeader::Tcp(tcp)) = &h.transport else { panic!("TCP") };
            let payload = h.payload.slice();
            assert_eq!(tcp.checksum, tcp.calc_checksum_ipv4(ip, payload).unwrap());
            let ts = tcp.options_iterator().any(|o| matches!(o, Ok(TcpOptionElement::Timestamp(..))));
            assert!(ts, "every segment carries the timestamp option");
            if *flags == INBOUND && tcp.syn {
                // The server's SYN-ACK, before the flow's data: its ISN, the handshake's options.
                assert!(tcp.ack && payload.is_empty());
                let opts: Vec<_> = tcp.options_iterator().map(|o| o.unwrap()).collect();
                assert!(opts.contains(&TcpOptionElement::MaximumSegmentSize(mss as u16)), "{opts:?}");
                assert!(opts.contains(&TcpOptionElement::SelectiveAcknowledgementPermitted));
                assert!(opts.iter().any(|o| matches!(o, TcpOptionElement::WindowScale(_))));
                assert!(first_seq.insert(tcp.destination_port, tcp.sequence_number.wrapping_add(1)).is_none());
                syn_acks += 1;
            } else if *flags == INBOUND {
                // Data: byte sequence numbers, one MSS apart from the SYN-ACK's ISN + 1.
                data += 1;
                let first = first_seq[&tcp.destination_port];
                let at = tcp.sequence_number.wrapping_sub(first);
                assert_eq!(at % mss, 0);
                assert_eq!(payload.len() as u32, mss.min(300_000 - at));
            } else {
                assert!(payload.is_empty() && tcp.ack);
                let sack =
                    tcp.options_iterator().any(|o| matches!(o, Ok(TcpOptionElement::SelectiveAcknowledgement(..))));
                sacks += u32::from(sack);
            }
        }
        assert!(data > 0 && sacks > 0, "data segments and SACKs are there: {data} {sacks}");
        assert_eq!(syn_acks, first_seq.len(), "a SYN-ACK opens each flow's frames");
        // Deterministic: the same scenario writes the same bytes.
        let again = dir("frames-again");
        capture(&s, &again, true);
        assert_eq!(
            std::fs::read(d.join("receivers.pcapng")).unwrap(),
            std::fs::read(again.join("receivers.pcapng")).unwrap()
        );
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&again).unwrap();
    }

    #[test]
    fn balance_tlb_and_alb_frames_carry_their_slaves_own_addresses() {
        // (balance-xor's ACKs take the switch's hash: any number of slaves.)
        for (mode, rx_slaves) in [("balance-tlb", Some(1)), ("balance-alb", Some(3)), ("balance-xor", None)] {
            let s = Scenario::from_json(
                &serde_json::json!({
                    "workload": {"requests": 6, "clients": 6, "file_size": {"kind": "fixed", "bytes": 6_000_000}},
                    "sender": {"kind": "tcp"},
                    "bond": {"mode": mode, "rebalance_interval_s": 0.1, "xmit_hash_policy": "layer3+4"},
                    "links": [{"count": 3, "rate_mbps": 1000.0, "delay_us": 10.0}],
                })
                .to_string(),
            )
            .unwrap();
            let d = dir(mode);
            capture(&s, &d, false);
            let bond = crate::network::parse_mac("m", &s.network.server_mac).unwrap();
            let own = mode != "balance-xor";
            let macs = crate::network::SlaveMacs::new(bond, 3, own);
            let mut seen_rx = Vec::new();
            for link in 0..3 {
                let fwd = frames(&d.join(format!("link{link}.fwd.pcapng")));
                assert!(!fwd.is_empty(), "{mode}: link{link} sent frames");
                // Data leaves from the slave's address (the active slave, link0, holds the bond's).
                assert!(fwd.iter().all(|f| f.4[6..12] == macs.of(link)), "{mode} link{link}");
                let rev = frames(&d.join(format!("link{link}.rev.pcapng")));
                if !rev.is_empty() {
                    seen_rx.push(link);
                    // ACKs go to the bond's address, or in balance-alb to the receiving slave's.
                    let dst = if mode == "balance-alb" { macs.of(link) } else { bond };
                    assert!(rev.iter().all(|f| f.4[0..6] == dst), "{mode} link{link} reverse");
                }
            }
            assert!(rx_slaves.is_none_or(|n| n == seen_rx.len()), "{mode}: receives on {seen_rx:?}");
            assert_eq!(macs.of(1) != bond, own);
            std::fs::remove_dir_all(&d).unwrap();
        }
    }

    /// UDP in 802.1Q-tagged frames, from more flows than the header cache has slots (each
    /// flow's headers are built again when another flow took its slot): every frame's IPv4
    /// and UDP checksums and lengths hold, and each frame carries its own flow's ports.
    #[test]
    fn udp_frames_in_a_vlan_from_more_flows_than_cached_headers_are_valid() {
        let flows = TEMPLATES + 200; // flow numbers beyond TEMPLATES share slots with the first ones
        let s = Scenario::from_json(
            &serde_json::json!({
                "seed": 5,
                "workload": {"requests": flows, "clients": 3, "file_size": {"kind": "fixed", "bytes": 3000},
                             "arrivals": {"kind": "poisson", "rate_per_s": 50_000.0}},
                "sender": {"kind": "cbr", "rate_mbps": 1000.0, "chunk_bytes": 1448},
                "network": {"protocol": "udp", "vlan": 42},
                "bond": {"mode": "balance-rr"},
                "links": [{"rate_mbps": 10000.0}, {"rate_mbps": 10000.0}],
            })
            .to_string(),
        )
        .unwrap();
        let d = dir("udp");
        let r = capture(&s, &d, true);
        let rx = frames(&d.join("receivers.pcapng"));
        let mut seen = Vec::new();
        for (_, _, _, original, bytes) in &rx {
            let h = PacketHeaders::from_ethernet_slice(bytes).unwrap();
            assert_eq!(h.link_exts.len(), 1, "one 802.1Q tag");
            let Some(NetHeaders::Ipv4(ip, _)) = &h.net else { panic!("IPv4") };
            assert_eq!(ip.header_checksum, ip.calc_header_checksum());
            assert_eq!(usize::from(ip.total_len) + 18, *original as usize, "Ethernet 14 + tag 4 + the datagram");
            let Some(TransportHeader::Udp(udp)) = &h.transport else { panic!("UDP") };
            let payload = h.payload.slice();
            assert_eq!(usize::from(udp.length), 8 + payload.len());
            assert_eq!(udp.checksum, udp.calc_checksum_ipv4(ip, payload).unwrap());
            seen.push((ip.destination, udp.source_port, udp.destination_port));
        }
        // Each request of 3000 bytes is 3 datagrams of at most 1448 bytes, none lost: each
        // flow's headers (as the run made them) are on exactly 3 frames.
        assert_eq!(r.summary.delivered, 3 * flows as u64);
        let crate::scenario::Workload::Requests(w) = &s.workload else { unreachable!("a requests workload") };
        let requests = crate::workload::generate(w, s.seed);
        let clients = crate::network::Clients::new(&s.network, w.clients, s.seed);
        let headers = crate::network::flow_headers(&s.network, &clients, &requests, s.seed);
        assert_eq!(headers.len(), flows);
        let mut expected: Vec<_> = headers.iter().flat_map(|h| [(h.dst_ip, h.src_port, h.dst_port); 3]).collect();
        expected.sort_unstable();
        seen.sort_unstable();
        assert_eq!(seen, expected);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_packet_count_and_a_time_window_keep_files_small() {
        let s = scenario();
        let (all_dir, cut_dir) = (dir("all"), dir("cut"));
        capture(&s, &all_dir, false);
        let all = frames(&all_dir.join("link0.fwd.pcapng"));
        let (start, stop) = (all[all.len() / 4].2, all[all.len() / 2].2);
        let options = CaptureOptions {
            dir: cut_dir.clone(),
            payload: false,
            max_packets: Some(50),
            start_s: start as f64 / 1e9,
            stop_s: Some(stop as f64 / 1e9),
        };
        crate::run_with_capture(&s, Some(&options), &mut |_| true).unwrap();
        let cut = frames(&cut_dir.join("link0.fwd.pcapng"));
        let expected: Vec<_> = all.iter().filter(|f| f.2 >= start && f.2 < stop).take(50).cloned().collect();
        assert!(all.len() / 4 > 50, "the window holds more than 50 frames, so both limits act");
        assert_eq!(cut, expected);
        std::fs::remove_dir_all(&all_dir).unwrap();
        std::fs::remove_dir_all(&cut_dir).unwrap();
    }

    #[test]
    fn a_stream_of_messages_is_refused_naming_the_option() {
        let mut s = scenario();
        s.stop_s = Some(0.1);
        s.sender.tcp_mut().expect("tcp").message_bytes = Some(8);
        let options =
            CaptureOptions { dir: dir("stream"), payload: false, max_packets: None, start_s: 0.0, stop_s: None };
        let refused = crate::run_with_capture(&s, Some(&options), &mut |_| true);
        assert!(matches!(refused, Err(Error::Scenario { ref path, .. }) if path == "pcap"), "{refused:?}");
    }

    #[test]
    fn files_go_into_place_when_the_run_ends_and_a_failed_run_leaves_none() {
        let d = dir("parts");
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("gone.fwd.pcapng"), "an earlier run's capture of a link this run has not").unwrap();
        std::fs::write(d.join("link0.fwd.pcapng.part"), "what a killed run left").unwrap();
        let names = || {
            let mut names: Vec<String> =
                std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
            names.sort_unstable();
            names
        };
        let options = CaptureOptions { dir: d.clone(), payload: false, max_packets: None, start_s: 0.0, stop_s: None };
        // A run that fails once it has ended (past its guard, `max_events`): nothing of its captures.
        let mut failing = scenario();
        failing.max_events = 10;
        let failed = crate::run_with_capture(&failing, Some(&options), &mut |_| true);
        assert!(matches!(failed, Err(Error::Scenario { ref path, .. }) if path == "max_events"), "{failed:?}");
        assert_eq!(names(), ["gone.fwd.pcapng"]);
        crate::run_with_capture(&scenario(), Some(&options), &mut |_| true).unwrap();
        let ours = ["link0.fwd.pcapng", "link0.rev.pcapng", "link1.fwd.pcapng", "link1.rev.pcapng", "receivers.pcapng"];
        assert_eq!(names(), ours, "this run's, whole; the earlier run's of another link gone");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_says_so_in_the_operating_systems_words() {
        let os = std::io::Error::from_raw_os_error(28); // ENOSPC
        let message = write_error(Path::new("d/receivers.pcapng"), PcapError::IoError(os)).to_string();
        assert!(message.starts_with("pcap: d/receivers.pcapng: cannot write it: No space left on device"), "{message}");
    }

    #[test]
    fn bad_options_name_their_field() {
        for (json, path) in [
            (r#"{"dir": "x", "max_packets": 0}"#, "pcap.max_packets"),
            (r#"{"dir": "x", "start_s": 2, "stop_s": 1}"#, "pcap.stop_s"),
            (r#"{"dir": "x", "snap": 1}"#, "pcap.snap"),
            (r#"{"dir": ""}"#, "pcap.dir"),
        ] {
            match CaptureOptions::from_json(json) {
                Err(Error::Scenario { path: p, .. }) => assert_eq!(p, path, "{json}"),
                other => panic!("{json}: {other:?}"),
            }
        }
    }
}
