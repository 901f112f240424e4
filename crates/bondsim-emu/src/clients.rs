//! The clients' receiving hosts (`[host]`, `bondsim_core::scenario::Host`) on the emulator, no I/O.
//!
//! A client is a namespace whose CPU and stack are the kernel's own, so none of the model's CPU
//! costs can be set; what the emulator can make is the rest of the model's receiving host:
//!
//! * **The NIC**, in the fabric: each client's frames reach a `bondsim_core::host::RxHost` of no
//!   cost (the model's own rules: the ring or backlog and its drops, interrupt moderation's
//!   `rx_coalesce_us`), which lets them go to the client's TUN device at its polls
//!   (`crate::fabric`): a poll's frames are written back to back.
//! * **GRO**, the kernel's: the client's TUN device receives through NAPI (`IFF_NAPI`) with a
//!   `gro_flush_timeout` of half the moderation interval ([`gro_flush_timeout_ns`],
//!   `crate::ns::open_tun`), so the frames of one poll, written microseconds apart, merge, and
//!   what GRO holds is flushed before the next poll's frames come. The kernel flushes a poll's skbs
//!   that much later than the model's poll does (its timer), and early when a jiffy passes within a
//!   poll (`__gro_flush_chain`'s `flush_old`); the figures say how it merged: `host_rx_skbs` is
//!   the clients' `Ip.InReceives` (`ip_rcv_core` counts an skb once, merged or not).

use bondsim_core::scenario::{Host, Scenario};
use bondsim_core::{Error, Result};

/// Says which part of the scenario's `[host]` (and `[server_host]`) the emulator cannot make.
pub fn check(scenario: &Scenario) -> Result<()> {
    if !scenario.server_host.is_off() {
        return Err(Error::scenario(
            "server_host",
            "models the server's CPU in the simulator; the emulator's server is the kernel's own: leave [server_host] out",
        ));
    }
    let host = &scenario.host;
    if host.is_off() {
        return Ok(());
    }
    if let Some((name, _)) = host.costs().iter().find(|(_, v)| *v != 0.0) {
        return Err(Error::scenario(
            format!("host.{name}"),
            "a CPU cost of the model's; the emulator's clients run on the kernel's own CPU, which costs what it \
             costs: set it 0 (the ring, interrupt moderation and GRO are emulated)",
        ));
    }
    if host.shared {
        return Err(Error::scenario(
            "host.shared",
            "the emulator's clients are a namespace each, with a TUN device each: leave it false",
        ));
    }
    if host.napi_weight != Host::default().napi_weight {
        return Err(Error::scenario(
            "host.napi_weight",
            "the TUN device's NAPI weight is NAPI_POLL_WEIGHT (64, netif_napi_add_tx): leave it out",
        ));
    }
    if host.gro && host.rx_coalesce_us == 0.0 {
        return Err(Error::scenario(
            "host.gro",
            "the emulator writes each frame to the TUN device on its own; only interrupt moderation \
             (host.rx_coalesce_us > 0) gathers frames into polls whose frames GRO may merge: set it too",
        ));
    }
    Ok(())
}

/// The `gro_flush_timeout` of a client's TUN device, ns: half the moderation interval with GRO (the
/// frames of a poll are written far closer together, two polls' never), none without.
pub fn gro_flush_timeout_ns(host: &Host) -> Option<u64> {
    host.gro.then(|| (host.rx_coalesce_us * 1e3 / 2.0).round() as u64)
}
