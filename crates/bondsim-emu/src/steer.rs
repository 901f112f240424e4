//! Kernel queues per link on the server's TUN device ([`crate::placement::HostQueues::Kernel`]):
//! the steering program that runs the mode in the kernel, and the qdiscs.
//!
//! * The TUN device has a queue per link and one more (`IFF_MULTI_QUEUE`,
//!   Documentation/networking/tuntap.rst, "Multiqueue tuntap interface"): a packet sent on
//!   queue `i` is read from the `i`-th descriptor attached to the device.
//! * `tun_select_queue` (`drivers/net/tun.c`, 6.x) asks the device's steering program for
//!   each packet (`tun_ebpf_select_queue`: the program's return value modulo the queues) before
//!   the qdisc: the mode runs there. The programs are eBPF socket filters, loaded with the
//!   `bpf(2)` syscall and attached with `TUNSETSTEERINGEBPF`; they are a dozen instructions
//!   each, written out below (a BPF compiler toolchain for twenty instructions would be the
//!   larger dependency).
//! * Each link's queue is `mq`'s child for it: an HTB class at the link's rate, whose rate
//!   tables carry the link's frame overhead and minimum frame (`overhead`, `mpu`: wire bytes
//!   as the model counts them), over a `pfifo` of the link's `txqueuelen` (its drops are the
//!   link's queue drops).

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use bondsim_core::scenario::{LinkModel, Scenario};

use crate::ns::{host_error, iproute2, TUN_NAME};
use crate::placement::Steering;

/// HTB's burst, in time at the link's rate: how early (at most) HTB may hand a backlogged frame
/// over before its start, so that a late qdisc watchdog (`qdisc_watchdog`, an hrtimer) does not
/// lose the link's time. Measured here: a one-frame TBF bucket at 10 Mbit/s, whose bucket
/// cannot keep what a late wake-up misses, gave frames every 1.23-1.24 ms instead of 1.20 ms
/// (30-40 µs late each); HTB with 100 bytes (80 µs) gave 1.200 ms (kernel-true.md, the trial).
pub const HTB_BURST_US: f64 = 100.0;

/// One eBPF instruction (`struct bpf_insn`, include/uapi/linux/bpf.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

// Opcode parts (include/uapi/linux/bpf_common.h, bpf.h).
const ALU64: u8 = 0x07;
const JMP: u8 = 0x05;
const MOV: u8 = 0xb0;
const ADD: u8 = 0x00;
const DIV: u8 = 0x30;
const MOD: u8 = 0x90;
const X: u8 = 0x08;
const JEQ: u8 = 0x10;
const JNE: u8 = 0x50;
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;
const W: u8 = 0x00;
const DW: u8 = 0x18;
const MEM: u8 = 0x60;
const ATOMIC: u8 = 0xc0;
const FETCH: i32 = 0x01;
const PSEUDO_MAP_FD: u8 = 1;
const FUNC_MAP_LOOKUP_ELEM: i32 = 1;
const FUNC_SKB_LOAD_BYTES: i32 = 26;
const R10: u8 = 10;

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: dst | (src << 4), off, imm }
}
fn mov_imm(dst: u8, imm: i32) -> Insn {
    insn(ALU64 | MOV, dst, 0, 0, imm)
}
fn mov_reg(dst: u8, src: u8) -> Insn {
    insn(ALU64 | MOV | X, dst, src, 0, 0)
}
fn alu_imm(op: u8, dst: u8, imm: i32) -> Insn {
    insn(ALU64 | op, dst, 0, 0, imm)
}
fn call(func: i32) -> Insn {
    insn(JMP | CALL, 0, 0, 0, func)
}
fn exit() -> Insn {
    insn(JMP | EXIT, 0, 0, 0, 0)
}
/// `if dst OP imm goto +off`.
fn jump(op: u8, dst: u8, imm: i32, off: i16) -> Insn {
    insn(JMP | op, dst, 0, off, imm)
}
/// `r{dst} = imm`, for the tests.
#[cfg(test)]
pub(crate) fn mov_imm_for_test(dst: u8, imm: i32) -> Insn {
    mov_imm(dst, imm)
}

/// Where the conditional jump `insn` at `at` goes, if it is one (JEQ / JNE).
#[cfg(test)]
pub(crate) fn jump_target(insn: &Insn, at: usize) -> Option<usize> {
    let op = insn.code & 0xf0;
    (insn.code & 0x07 == JMP && (op == JEQ || op == JNE)).then(|| (at as i64 + 1 + i64::from(insn.off)) as usize)
}

/// `dst = map` (a 64-bit immediate: two instructions).
fn load_map(dst: u8, map_fd: i32) -> [Insn; 2] {
    [insn(0x18, dst, PSEUDO_MAP_FD, 0, map_fd), insn(0, 0, 0, 0, 0)]
}

/// `balance-rr` (`RoundRobin`'s pick, `bond_xmit_roundrobin_slave_get`): the counter in slot 0
/// of `map` (an array of one u64), fetched and incremented at once, divided by `per_slave`,
/// modulo `links`.
pub fn round_robin_program(map_fd: i32, per_slave: u32, links: u32) -> Vec<Insn> {
    let mut p = vec![
        insn(0x62, R10, 0, -4, 0), // *(u32 *)(r10 - 4) = 0: the key
        mov_reg(2, R10),
        alu_imm(ADD, 2, -4),
    ];
    p.extend(load_map(1, map_fd));
    p.push(call(FUNC_MAP_LOOKUP_ELEM));
    let tail: Vec<Insn> = [
        Some(mov_imm(1, 1)),
        Some(insn(0x03 | ATOMIC | DW, 0, 1, 0, ADD as i32 | FETCH)), // r1 = fetch_add(*(u64 *)r0, r1)
        (per_slave > 1).then(|| alu_imm(DIV, 1, per_slave as i32)),
        Some(alu_imm(MOD, 1, links as i32)),
        Some(mov_reg(0, 1)),
        Some(exit()),
    ]
    .into_iter()
    .flatten()
    .collect();
    p.push(jump(JEQ, 0, 0, tail.len() as i16)); // no slot (never): queue 0
    p.extend(tail);
    p.extend([mov_imm(0, 0), exit()]);
    p
}

/// A mode that places flows (`Steering::Flows`): the packet's destination address and ports
/// (IPv4 bytes 16..24 with a 20-byte header: the server's TCP sets no IP options) looked up in
/// `map`, whose value is the queue; a flow not in it goes to queue `unplaced`.
pub fn flows_program(map_fd: i32, unplaced: u32) -> Vec<Insn> {
    let mut p = vec![
        mov_reg(6, 1),
        mov_reg(1, 6),
        mov_imm(2, 16),
        mov_reg(3, R10),
        alu_imm(ADD, 3, -8),
        mov_imm(4, 8),
        call(FUNC_SKB_LOAD_BYTES), // bpf_skb_load_bytes(skb, 16, r10 - 8, 8)
        jump(JNE, 0, 0, 8),        // not read: unplaced
        mov_reg(2, R10),
        alu_imm(ADD, 2, -8),
    ];
    p.extend(load_map(1, map_fd));
    p.push(call(FUNC_MAP_LOOKUP_ELEM));
    p.push(jump(JEQ, 0, 0, 2));
    p.push(insn(0x01 | MEM | W, 0, 0, 0, 0)); // r0 = *(u32 *)r0
    p.push(exit());
    p.extend([mov_imm(0, unplaced as i32), exit()]);
    p
}

/// A flow's key in the flows map: destination address and the two ports, as on the wire.
pub fn flow_key(dst_ip: [u8; 4], src_port: u16, dst_port: u16) -> [u8; 8] {
    let (s, d) = (src_port.to_be_bytes(), dst_port.to_be_bytes());
    [dst_ip[0], dst_ip[1], dst_ip[2], dst_ip[3], s[0], s[1], d[0], d[1]]
}

/// `union bpf_attr`, as bytes (the fields a command reads; the rest zero, as the kernel wants).
struct Attr([u64; 16]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 16])
    }
    fn u32(mut self, offset: usize, value: u32) -> Attr {
        let word = &mut self.0[offset / 8];
        let shift = (offset % 8) * 8;
        *word = (*word & !(0xffff_ffff << shift)) | (u64::from(value) << shift);
        self
    }
    fn u64(mut self, offset: usize, value: u64) -> Attr {
        self.0[offset / 8] = value;
        self
    }
    /// `bpf(cmd, &attr, sizeof attr)`.
    fn call(&mut self, cmd: i64, what: &str) -> bondsim_core::Result<i64> {
        // SAFETY: the attribute is ours, 128 bytes, and every pointer in it points at memory
        // that outlives the call.
        let ret = unsafe { libc::syscall(libc::SYS_bpf, cmd, self.0.as_mut_ptr(), std::mem::size_of_val(&self.0)) };
        if ret < 0 {
            return Err(host_error(what, std::io::Error::last_os_error()));
        }
        Ok(ret)
    }
}

const MAP_CREATE: i64 = 0;
const MAP_UPDATE_ELEM: i64 = 2;
const PROG_LOAD: i64 = 5;
const MAP_TYPE_HASH: u32 = 1;
const MAP_TYPE_ARRAY: u32 = 2;
const PROG_TYPE_SOCKET_FILTER: u32 = 1;
/// `TUNSETSTEERINGEBPF`: `_IOR('T', 224, int)` (include/uapi/linux/if_tun.h).
const TUNSETSTEERINGEBPF: libc::c_ulong = 0x8004_54e0;

fn owned(fd: i64) -> OwnedFd {
    // SAFETY: `fd` was just returned by bpf(2) and nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// A BPF map (`BPF_MAP_CREATE`) of `entries` keys of `key` bytes and values of `value` bytes.
fn map_create(kind: u32, key: u32, value: u32, entries: u32) -> bondsim_core::Result<OwnedFd> {
    let mut attr = Attr::new().u32(0, kind).u32(4, key).u32(8, value).u32(12, entries);
    attr.call(MAP_CREATE, "creating a BPF map (bpf(2), as root)").map(owned)
}

/// Sets `key` to `value` in `map` (`BPF_MAP_UPDATE_ELEM`, `BPF_ANY`).
fn map_update(map: &OwnedFd, key: &[u8], value: &[u8]) -> bondsim_core::Result<()> {
    let mut attr =
        Attr::new().u32(0, map.as_raw_fd() as u32).u64(8, key.as_ptr() as u64).u64(16, value.as_ptr() as u64);
    attr.call(MAP_UPDATE_ELEM, "updating the steering map").map(drop)
}

/// Loads `program` as a socket filter (`BPF_PROG_LOAD`); the verifier's log is the error.
fn prog_load(program: &[Insn]) -> bondsim_core::Result<OwnedFd> {
    let raw: Vec<u64> = program
        .iter()
        .map(|i| {
            u64::from(i.code)
                | (u64::from(i.regs) << 8)
                | (u64::from(i.off as u16) << 16)
                | (u64::from(i.imm as u32) << 32)
        })
        .collect();
    let license = c"GPL";
    let mut log = vec![0u8; 16 * 1024];
    let mut attr = Attr::new()
        .u32(0, PROG_TYPE_SOCKET_FILTER)
        .u32(4, raw.len() as u32)
        .u64(8, raw.as_ptr() as u64)
        .u64(16, license.as_ptr() as u64)
        .u32(24, 1)
        .u32(28, log.len() as u32)
        .u64(32, log.as_mut_ptr() as u64);
    attr.call(PROG_LOAD, "loading the TUN steering program").map(owned).map_err(|e| {
        let text = String::from_utf8_lossy(&log[..log.iter().position(|&b| b == 0).unwrap_or(0)]).into_owned();
        bondsim_core::Error::Io(format!("{e}; the verifier said: {}", text.trim()))
    })
}

/// The mode in the kernel: a steering program attached to the server's TUN device, and the
/// map the flows mode is told each flow's link in.
pub struct Steerer {
    map: OwnedFd,
    _program: OwnedFd,
    steering: Steering,
}

impl Steerer {
    /// Loads the program for `steering` over `links` links (queue `links` takes unplaced flows)
    /// and attaches it to the TUN device `queue` is a queue of.
    pub fn attach(steering: Steering, links: u32, queue: &File) -> bondsim_core::Result<Steerer> {
        let (map, program) = match steering {
            Steering::RoundRobin { per_slave } => {
                let map = map_create(MAP_TYPE_ARRAY, 4, 8, 1)?;
                let program = prog_load(&round_robin_program(map.as_raw_fd(), per_slave, links))?;
                (map, program)
            }
            Steering::Flows => {
                let map = map_create(MAP_TYPE_HASH, 8, 4, 65_536)?;
                let program = prog_load(&flows_program(map.as_raw_fd(), links))?;
                (map, program)
            }
        };
        let fd: libc::c_int = program.as_raw_fd();
        // SAFETY: TUNSETSTEERINGEBPF reads one int (the program's descriptor) from memory we own.
        if unsafe { libc::ioctl(queue.as_raw_fd(), TUNSETSTEERINGEBPF, &fd) } < 0 {
            return Err(host_error("TUNSETSTEERINGEBPF", std::io::Error::last_os_error()));
        }
        Ok(Steerer { map, _program: program, steering })
    }

    /// Tells the program that the flow to `dst_ip` from `src_port` to `dst_port` takes `link`
    /// (the flows mode; nothing to do for round robin).
    pub fn place(&self, dst_ip: [u8; 4], src_port: u16, dst_port: u16, link: usize) -> bondsim_core::Result<()> {
        if self.steering != Steering::Flows {
            return Ok(());
        }
        map_update(&self.map, &flow_key(dst_ip, src_port, dst_port), &(link as u32).to_ne_bytes())
    }
}

/// The tc words of each link's HTB class and queue: its rate (bit/s), burst (bytes), frame
/// overhead, minimum frame, `txqueuelen`.
pub fn link_qdiscs(scenario: &Scenario) -> Vec<[String; 5]> {
    scenario
        .each_link()
        .filter_map(|(_, spec)| match &spec.model {
            LinkModel::Rate(m) => Some(m),
            _ => None,
        })
        .map(|m| {
            let bps = m.rate_mbps * 1e6;
            let burst = (bps / 8.0 * HTB_BURST_US * 1e-6).ceil().max(1.0);
            let mpu = bondsim_core::bond::MIN_ETHERNET_PAYLOAD + m.overhead_bytes;
            [
                format!("{}bit", bps.round()),
                format!("{burst}b"),
                m.overhead_bytes.to_string(),
                mpu.to_string(),
                m.txqueuelen.to_string(),
            ]
        })
        .collect()
}

/// Puts each link's queue on the TUN device (in the calling thread's namespace): `mq` at the
/// root, under its `i+1`-th class an HTB (handle `i+10:`, every packet to class 1) at link
/// `i`'s rate over a `pfifo` of its `txqueuelen`.
pub fn set_qdiscs(scenario: &Scenario) -> bondsim_core::Result<()> {
    let tc = |words: &[&str]| iproute2("tc", words);
    tc(&["qdisc", "replace", "dev", TUN_NAME, "root", "handle", "1:", "mq"])?;
    for (i, [rate, burst, overhead, mpu, limit]) in link_qdiscs(scenario).iter().enumerate() {
        let (parent, handle) = (format!("1:{:x}", i + 1), format!("{:x}:", i + 10));
        tc(&["qdisc", "replace", "dev", TUN_NAME, "parent", &parent, "handle", &handle, "htb", "default", "1"])?;
        let class = format!("{:x}:1", i + 10);
        tc(&[
            "class", "add", "dev", TUN_NAME, "parent", &handle, "classid", &class, "htb", "rate", rate, "burst", burst,
            "cburst", burst, "overhead", overhead, "mpu", mpu,
        ])?;
        tc(&["qdisc", "add", "dev", TUN_NAME, "parent", &class, "pfifo", "limit", limit])?;
    }
    Ok(())
}

/// Each link's queue drops so far (the HTB's own count, which includes its `pfifo`'s), from
/// `tc -s -j qdisc show` in the calling thread's namespace.
pub fn queue_drops(links: usize) -> bondsim_core::Result<Vec<u64>> {
    let text = iproute2("tc", &["-s", "-j", "qdisc", "show", "dev", TUN_NAME])?;
    let list: Vec<serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| host_error("reading `tc -s -j qdisc show`", e))?;
    Ok((0..links)
        .map(|i| {
            let handle = format!("{:x}:", i + 10);
            list.iter()
                .find(|q| q["kind"] == "htb" && q["handle"] == handle.as_str())
                .and_then(|q| q["drops"].as_u64())
                .unwrap_or(0)
        })
        .collect())
}
