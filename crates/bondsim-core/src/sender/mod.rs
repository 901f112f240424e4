//! Senders: how the server turns requests into packets for the bond.
//!
//! * [`PacedSender`]: the thesis's scheduler loop (packets per tick).
//! * [`WindowSender`]: bulk transfers; each flow keeps a window of packets in
//!   flight and sends the next one when one is delivered (or lost).
//! * [`CbrSender`]: each flow sends at a constant bit rate, whatever happens to
//!   its packets (an iperf UDP stream).
//!
//! [`Cutter`] says how a file becomes packets.

mod cbr;
mod paced;
mod window;

pub use cbr::CbrSender;
pub use paced::PacedSender;
pub use window::WindowSender;

use crate::scenario::{Scenario, SenderKind};

/// How a file is cut into packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cutter {
    chunk: u64,
    message: Option<u64>,
    thesis: bool,
}

impl Cutter {
    /// The cutting rule of `scenario`'s sender.
    pub fn for_scenario(scenario: &Scenario) -> Cutter {
        Cutter {
            chunk: u64::from(scenario.chunk_bytes()),
            message: scenario.sender.message_bytes.map(u64::from),
            thesis: scenario.sender.kind == SenderKind::Paced,
        }
    }

    /// Packets in one message of `m` bytes (an empty message is one empty packet).
    fn per_message(&self, m: u64) -> u64 {
        m.div_ceil(self.chunk).max(1)
    }

    /// Packets a file of `file` bytes becomes.
    ///
    /// The thesis's rule is `file / chunk + 1` (its last read is short, possibly
    /// empty); otherwise every message of `message_bytes` (default: the whole
    /// file) is cut into packets of at most `chunk` bytes.
    pub fn packets(&self, file: u64) -> u64 {
        if self.thesis {
            return file / self.chunk + 1;
        }
        let m = self.message.unwrap_or(file).max(1);
        if file == 0 {
            return 1;
        }
        let (full, rest) = (file / m, file % m);
        full * self.per_message(m) + if rest > 0 { self.per_message(rest) } else { 0 }
    }

    /// Payload bytes of packet `k` of a file of `file` bytes.
    #[inline]
    pub fn packet_bytes(&self, file: u64, k: u64) -> u32 {
        if self.thesis {
            // Full chunks while they fit: no division on this path.
            return if (k + 1) * self.chunk <= file { self.chunk as u32 } else { (file - k * self.chunk) as u32 };
        }
        let m = self.message.unwrap_or(file).max(1);
        let per = self.per_message(m);
        let (message, pos) = (k / per, k % per);
        let size = if message < file / m { m } else { file % m };
        let per_this = self.per_message(size);
        if pos + 1 < per_this {
            self.chunk as u32
        } else {
            (size - (per_this - 1) * self.chunk) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cutter(chunk: u64, message: Option<u64>, thesis: bool) -> Cutter {
        Cutter { chunk, message, thesis }
    }

    fn sizes(c: Cutter, file: u64) -> Vec<u32> {
        (0..c.packets(file)).map(|k| c.packet_bytes(file, k)).collect()
    }

    #[test]
    fn thesis_rule_has_a_short_possibly_empty_last_packet() {
        let c = cutter(1024, None, true);
        assert_eq!(c.packets(102_400), 101);
        assert_eq!(c.packets(716_800), 701); // the thesis's class3_6 log line
        assert_eq!(sizes(cutter(1000, None, true), 2500), [1000, 1000, 500]);
        assert_eq!(sizes(cutter(1000, None, true), 2000), [1000, 1000, 0]);
    }

    #[test]
    fn stream_rule_cuts_each_message_separately() {
        assert_eq!(sizes(cutter(1000, None, false), 2500), [1000, 1000, 500]);
        assert_eq!(sizes(cutter(1000, None, false), 2000), [1000, 1000]);
        assert_eq!(sizes(cutter(1000, Some(1500), false), 4000), [1000, 500, 1000, 500, 1000]);
        assert_eq!(sizes(cutter(1460, Some(64), false), 200), [64, 64, 64, 8]);
        assert_eq!(sizes(cutter(1460, None, false), 0), [0]);
        let c = cutter(1448, Some(65536), false);
        let total: u64 = sizes(c, 10 * 65536).iter().map(|&b| u64::from(b)).sum();
        assert_eq!(total, 10 * 65536);
    }
}
