//! Senders: how the server turns queued requests into packets for the bond.

pub mod paced;

pub use paced::PacedSender;
