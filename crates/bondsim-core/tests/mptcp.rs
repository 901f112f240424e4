//! MPTCP end to end: the connection level over a TCP subflow per link (`sender.kind = "mptcp"`).

use bondsim_core::result::RunResult;
use bondsim_core::{run, Error, Scenario};
use serde_json::{json, Value};

/// One 6.5 MB transfer over `links` (the trial's, benchmarks/results/mptcp-trial.md), with `extra`
/// merged into the scenario.
fn scenario(links: Vec<Value>, extra: Value) -> Result<Scenario, Error> {
    let mut s = json!({
        "seed": 1,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 6_500_000}},
        "sender": {"kind": "mptcp"},
        "bond": {"mode": "balance-rr"},
        "links": links,
    });
    merge(&mut s, extra);
    Scenario::from_json(&s.to_string())
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

/// A link as the trial's router shapes it: a fast NIC, then a line of `rate` Mbit/s with a
/// 100-packet queue (`placement` "nic": the host does not count the line's queue).
fn line(rate: f64) -> Value {
    json!({"rate_mbps": 1000, "delay_us": 15, "downstream": {"rate_mbps": rate, "queue_packets": 100}})
}

fn figure(r: &RunResult, name: &str) -> f64 {
    match r.summary.figures.get(name) {
        Some(bondsim_core::report::Figure::Count(n)) => *n as f64,
        Some(bondsim_core::report::Figure::Real(x)) => *x,
        other => panic!("{name}: {other:?}"),
    }
}

fn sent(r: &RunResult) -> Vec<u64> {
    r.summary.links.iter().map(|l| l.packets_sent).collect()
}

#[test]
fn the_subflows_share_the_data_by_their_links_rates_and_the_application_gets_it_in_order() {
    let r = run(&scenario(vec![line(10.0), line(5.0)], json!({})).unwrap()).unwrap();
    assert_eq!(r.summary.flows_complete, 1);
    let s = sent(&r);
    let share = s[0] as f64 / (s[0] + s[1]) as f64;
    assert!((0.6..0.72).contains(&share), "the 10 Mbit/s link carries about two thirds: {s:?}");
    // The slower subflow's segments arrive late: the connection level holds what overtook them.
    assert!(figure(&r, "mptcp_ofo_max") > 10.0);
    assert!(figure(&r, "mptcp_ofo_delay_mean_ms") > 0.0);
    assert_eq!(figure(&r, "mptcp_reinjected"), 0.0, "nothing fails, nothing is sent twice");
    let goodput = r.summary.goodput_bps / 1e6;
    assert!(goodput > 10.0 && goodput < 15.0, "more than the fast link, less than both: {goodput}");
}

#[test]
fn equal_links_carry_equal_shares() {
    let r = run(&scenario(vec![line(10.0), line(10.0)], json!({})).unwrap()).unwrap();
    let s = sent(&r);
    assert!((s[0] as f64 / s[1] as f64 - 1.0).abs() < 0.1, "{s:?}");
}

#[test]
fn a_backup_subflow_carries_nothing_while_the_other_is_active() {
    let backup = json!({"sender": {"mptcp_backup": ["link1"]}});
    let r = run(&scenario(vec![line(10.0), line(5.0)], backup.clone()).unwrap()).unwrap();
    // Its handshake (the SYN-ACK) only.
    assert_eq!(sent(&r)[1], 1, "{:?}", sent(&r));
    assert_eq!(r.summary.flows_complete, 1);
    // The primary fails at 1 s: once it is stale, the backup takes the data.
    let mut primary = line(10.0);
    primary["failures"] = json!([{"down_s": 1.0}]);
    let r = run(&scenario(vec![primary, line(10.0)], backup).unwrap()).unwrap();
    assert_eq!(r.summary.flows_complete, 1);
    assert_eq!(figure(&r, "mptcp_stale"), 1.0);
    assert!(sent(&r)[1] > 2000, "{:?}", sent(&r));
}

#[test]
fn a_failed_subflow_goes_stale_and_its_data_is_sent_again_on_the_other() {
    let mut failing = line(10.0);
    failing["failures"] = json!([{"down_s": 1.0}]);
    let r = run(&scenario(vec![failing, line(10.0)], json!({})).unwrap()).unwrap();
    assert_eq!(r.summary.flows_complete, 1);
    assert_eq!(figure(&r, "mptcp_stale"), 1.0);
    assert!(figure(&r, "mptcp_rtx_timeouts") >= 5.0, "stale on the 5th period (stale_loss_cnt 4)");
    assert!(figure(&r, "mptcp_reinjected") > 0.0);
    // Re-injection sends the whole unacked queue: what the survivor had delivered comes twice.
    assert!(figure(&r, "mptcp_duplicates") > 0.0);
    // No bond watches the links: the failure is never detected as such, only stalled through.
    assert_eq!(r.summary.figures.get("detection_ms_max"), Some(&bondsim_core::report::Figure::None));
    assert!(figure(&r, "tcp_stall_ms_max") > 200.0, "the application waits at least the timer's first shot");
    // With stale_loss_cnt 0 no subflow ever goes stale: only the timer's one fragment a shot.
    let never = json!({"sender": {"mptcp_stale_loss_cnt": 0}, "stop_s": 4.0});
    let mut failing = line(10.0);
    failing["failures"] = json!([{"down_s": 1.0}]);
    let r = run(&scenario(vec![failing, line(10.0)], never).unwrap()).unwrap();
    assert_eq!(figure(&r, "mptcp_stale"), 0.0);
}

#[test]
fn one_subflow_is_tcp_with_a_smaller_mss_and_the_same_run_twice_is_the_same() {
    let one = scenario(vec![line(10.0), line(5.0)], json!({"sender": {"mptcp_subflows": 1}})).unwrap();
    assert_eq!(one.chunk_bytes(), 1424, "the DSS option's 24 bytes come off the MSS");
    assert_eq!(one.network.header_bytes, Some(76));
    let r = run(&one).unwrap();
    assert_eq!(sent(&r)[1], 0, "one subflow, on the first link");
    assert_eq!(figure(&r, "mptcp_ofo_max"), 0.0);
    let again = run(&one).unwrap();
    assert_eq!(r.summary.figures, again.summary.figures);
}

#[test]
fn bad_mptcp_fields_are_named_with_what_is_allowed() {
    let links = || vec![line(10.0), line(5.0)];
    let err = |extra: Value| match scenario(links(), extra) {
        Err(Error::Scenario { path, message }) => (path, message),
        other => panic!("{other:?}"),
    };
    let (path, message) = err(json!({"sender": {"mptcp_scheduler": "bliss"}}));
    assert_eq!(path, "sender.mptcp_scheduler");
    assert!(message.contains("default"), "{message}");
    let (path, message) = err(json!({"sender": {"mptcp_subflows": 3}}));
    assert_eq!(path, "sender.mptcp_subflows");
    assert!(message.contains("1 to 2"), "{message}");
    let (path, message) = err(json!({"sender": {"mptcp_backup": ["link7"]}}));
    assert_eq!(path, "sender.mptcp_backup.0");
    assert!(message.contains("link0"), "{message}");
    let (path, _) = err(json!({"sender": {"mptcp_backup": ["link0", "link1"]}}));
    assert_eq!(path, "sender.mptcp_backup");
    let (path, message) = err(json!({"sender": {"kind": "tcp", "mptcp_subflows": 2}}));
    assert_eq!(path, "sender.mptcp_subflows");
    assert!(message.contains("mptcp"), "{message}");
    let (path, _) = err(json!({"workload": {"direction": "upload"}}));
    assert_eq!(path, "workload.direction");
    let twelve: Vec<Value> = (0..12).map(|_| line(10.0)).collect();
    let Err(Error::Scenario { path, message }) = scenario(twelve, json!({"sender": {"mptcp_subflows": 10}})) else {
        panic!()
    };
    assert_eq!(path, "sender.mptcp_subflows");
    assert!(message.contains("Linux's limit is 9"), "{message}");
}

/// A path as the scheduler papers' heterogeneous pairs: `rate` Mbit/s with `delay_ms` one way.
fn path(rate: f64, delay_ms: f64) -> Value {
    json!({"rate_mbps": rate, "delay_us": delay_ms * 1000.0})
}

fn with_scheduler(links: Vec<Value>, name: &str, bytes: u64) -> RunResult {
    let extra = json!({"sender": {"mptcp_scheduler": name}, "workload": {"file_size": {"bytes": bytes}}});
    run(&scenario(links, extra).unwrap()).unwrap()
}

#[test]
fn blest_and_ecf_keep_the_slow_path_from_blocking_the_fast_one_where_minrtt_does_not() {
    // A 10 Mbit/s, 5 ms path beside a 1 Mbit/s, 40 ms one (the papers' WiFi-and-3G pairs).
    let hetero = || vec![path(10.0, 5.0), path(1.0, 40.0)];
    let all: Vec<(&str, f64)> = bondsim_core::scenario::MPTCP_SCHEDULERS
        .iter()
        .map(|&n| {
            let r = with_scheduler(hetero(), n, 6_500_000);
            assert_eq!(r.summary.flows_complete, 1, "{n}");
            (n, figure(&r, "mptcp_ofo_max"))
        })
        .collect();
    let of = |name| all.iter().find(|(n, _)| *n == name).unwrap().1;
    // BLEST (Ferlin et al. 2016, §V) and ECF (Lim et al. 2017, §5) hold data back from the
    // slow path when the fast one would deliver it sooner: far less waits at the receiver.
    assert!(of("blest") < of("minrtt") / 4.0 && of("ecf") < of("minrtt") / 4.0, "{all:?}");
}

#[test]
fn redundant_sends_data_twice_while_the_windows_have_room_and_roundrobin_alternates() {
    let fast = || vec![path(100.0, 10.0), path(100.0, 10.0)];
    let twice = |name| figure(&with_scheduler(fast(), name, 1_000_000), "mptcp_duplicates");
    let packets = 1_000_000.0 / 1424.0;
    assert!(twice("redundant") > 0.3 * packets, "{}", twice("redundant"));
    assert_eq!((twice("minrtt"), twice("default")), (0.0, 0.0));
    let r = with_scheduler(vec![path(10.0, 2.0), path(10.0, 2.0)], "roundrobin", 6_500_000);
    let s = sent(&r);
    let share = s[0] as f64 / (s[0] + s[1]) as f64;
    assert!((0.45..0.55).contains(&share), "{s:?}");
}

#[test]
fn the_same_seed_gives_the_same_run_under_every_scheduler() {
    for &name in bondsim_core::scenario::MPTCP_SCHEDULERS {
        let json = || {
            let mut r = with_scheduler(vec![path(10.0, 5.0), path(4.0, 20.0)], name, 2_000_000);
            r.summary.wall_s = 0.0;
            r.to_json()
        };
        assert_eq!(json(), json(), "{name}");
    }
    for cc in ["lia", "olia"] {
        let json = || {
            let lossy = json!({"rate_mbps": 10, "delay_us": 5_000, "loss": 0.01});
            let mut r =
                run(&scenario(vec![lossy.clone(), lossy], json!({"sender": {"tcp_congestion_control": cc}})).unwrap())
                    .unwrap();
            r.summary.wall_s = 0.0;
            r.to_json()
        };
        assert_eq!(json(), json(), "{cc}");
    }
}

/// One 6.5 MB transfer over `links` with the subflows' congestion control `cc`: its goodput
/// (Mbit/s) and the second link's share of the packets sent.
fn coupled_run(links: Vec<Value>, cc: &str) -> (f64, f64) {
    let r = run(&scenario(links, json!({"sender": {"tcp_congestion_control": cc}})).unwrap()).unwrap();
    assert_eq!(r.summary.flows_complete, 1, "{cc}");
    let s = sent(&r);
    (r.summary.goodput_bps / 1e6, s[1] as f64 / (s[0] + s[1]) as f64)
}

#[test]
fn coupled_controls_take_one_paths_share_and_shift_it_off_a_lossy_path() {
    let lossy = |loss: f64| json!({"rate_mbps": 10, "delay_us": 10_000, "loss": loss});
    // Two equal paths losing 1%: uncoupled Reno subflows are two TCP flows; LIA and OLIA
    // together take about one (RFC 6356 §2, goal 2: do no harm).
    let (reno, _) = coupled_run(vec![lossy(0.01), lossy(0.01)], "reno");
    for cc in ["lia", "olia"] {
        let (coupled, _) = coupled_run(vec![lossy(0.01), lossy(0.01)], cc);
        assert!(coupled < 0.6 * reno, "{cc}: {coupled} against uncoupled {reno}");
    }
    // A clean path beside one losing 2%: the coupled controls move traffic to the clean one
    // (RFC 6356 §2, goal 3; Khalili et al. 2013, §V), uncoupled Reno much less.
    let (_, reno) = coupled_run(vec![lossy(0.0), lossy(0.02)], "reno");
    for cc in ["lia", "olia"] {
        let (_, share) = coupled_run(vec![lossy(0.0), lossy(0.02)], cc);
        assert!(share < 0.7 * reno, "{cc}: the lossy path's share {share} against uncoupled {reno}");
    }
}

#[test]
fn coupled_controls_are_for_mptcp_subflows_only() {
    match scenario(vec![line(10.0)], json!({"sender": {"kind": "tcp", "tcp_congestion_control": "lia"}})) {
        Err(Error::Scenario { path, message }) => {
            assert_eq!(path, "sender.tcp_congestion_control");
            assert!(message.contains("mptcp") && message.contains("cubic"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let (path, message) = match scenario(vec![line(10.0)], json!({"sender": {"tcp_congestion_control": "lia2"}})) {
        Err(Error::Scenario { path, message }) => (path, message),
        other => panic!("{other:?}"),
    };
    assert_eq!(path, "sender.tcp_congestion_control");
    assert!(message.contains("olia") && message.contains("did you mean"), "{message}");
}
