//! TCP: a packet-level model of Linux's TCP (sender and receiver per flow).

pub mod cc;
