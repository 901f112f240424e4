//! The connection level's unit tests (the world's runs are in tests/mptcp.rs).

use super::*;
use crate::packet::{Kind, Packet};
use crate::time::SimTime;
use crate::transport::tcp::receiver::TcpReceiver;
use crate::transport::tcp::TcpConfig;
use crate::transport::{Cutter, Endpoint, Output};

fn receiver(subflows: u32) -> MptcpReceiver {
    let spec = serde_json::from_str("{}").unwrap();
    let mut config = TcpConfig::new(&spec, 1000, 250);
    config.sack_blocks = 1;
    config.pushed_acks = false;
    let tcp = TcpReceiver::new(config, Cutter::whole_files(1000), subflows as usize);
    MptcpReceiver::new(tcp, subflows, 1)
}

/// Subflow `sub`'s segment `seq` carrying the connection's packet `dsn`.
fn segment(sub: u32, seq: u32, dsn: u32, at: u64) -> Packet {
    let mut p = Packet::data(wire_flow(0, sub, 2), seq, 1000, SimTime(at));
    p.set_dss(dsn);
    p
}

fn delivered(out: &[Output]) -> Vec<u32> {
    out.iter()
        .filter_map(|o| match o {
            Output::Deliver(p) => {
                assert_eq!(p.flow, 0, "the application sees the connection, not the subflow");
                Some(p.seq)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn the_connection_level_hands_on_data_in_order_across_subflows() {
    let mut r = receiver(2);
    let mut out = Vec::new();
    r.open(SimTime::ZERO, 0, 4000, &mut out);
    out.clear();
    // Subflow 1 carries packets 1 and 2, ahead of subflow 0's packet 0.
    r.on_packet(SimTime(10), segment(1, 0, 1, 5), &mut out);
    r.on_packet(SimTime(11), segment(1, 1, 2, 6), &mut out);
    assert!(delivered(&out).is_empty(), "both wait for packet 0");
    // Each subflow's ACK carries the DATA_ACK: still 0.
    let ack = r.poll_transmit(SimTime(11)).expect("an ACK");
    assert_eq!((ack.kind, ack.dss()), (Kind::Ack, 0));
    // The window is the connection's free space: its 65 segments (65,535 bytes) less the two held.
    assert_eq!(ack.seq, 63);
    r.on_packet(SimTime(20), segment(0, 0, 0, 1), &mut out);
    assert_eq!(delivered(&out), [0, 1, 2]);
    while let Some(a) = r.poll_transmit(SimTime(20)) {
        assert!(a.sack_len <= 1, "one SACK block beside the DSS option");
        assert!(a.ack + a.seq >= 63, "the right edge never moves back");
        if a.flow == wire_flow(0, 0, 2) {
            assert_eq!(a.dss(), 3, "the DATA_ACK covers what the segment uncovered");
        }
    }
    // A copy of packet 1 sent again on subflow 0 is a duplicate at the connection level.
    out.clear();
    r.on_packet(SimTime(30), segment(0, 1, 1, 25), &mut out);
    assert!(delivered(&out).is_empty());
    let mut report = crate::report::Report::new(&[crate::transport::tcp::FIGURES, FIGURES], 1.0, [0; 4]);
    r.report(&mut report);
    let figures = report.finish().figures;
    assert_eq!(figures.get("mptcp_duplicates"), Some(&crate::report::Figure::Count(1)));
    assert_eq!(figures.get("mptcp_ofo_max"), Some(&crate::report::Figure::Count(2)));
}

#[test]
fn wire_flows_number_subflows_within_their_connection() {
    assert_eq!(wire_flow(3, 1, 2), 7);
    assert_eq!(split_flow(7, 2), (3, 1));
    assert_eq!(split_flow(wire_flow(5, 2, 3), 3), (5, 2));
}
