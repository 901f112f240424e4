//! The machines (`[host]`, `[server_host]`): a CPU that handles every frame at a cost, a receive
//! queue that drops when full. Every expectation is derived from the scenario (a CPU's rate in frames per
//! second is 1 / its cost per frame), never a copied figure.

use bondsim_core::report::Figure;
use bondsim_core::{run, RunResult, Scenario};
use serde_json::{json, Value};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).unwrap_or_else(|e| panic!("{e}: {value}"))
}

/// One CUBIC download of `bytes` over one 100 Mbit/s link, the client's host as `host` says.
fn bulk(bytes: u64, host: Value) -> Value {
    json!({
        "seed": 1,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": bytes}},
        "sender": {"kind": "tcp", "tcp_congestion_control": "cubic"},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 100.0, "delay_us": 50.0}],
        "host": host,
    })
}

/// A UDP stream at 100 Mbit/s of 1448-byte datagrams for `stop_s`, into the host `host`.
fn udp(host: Value) -> Value {
    json!({
        "seed": 1,
        "stop_s": 0.5,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 1_000_000_000u64}},
        "sender": {"kind": "cbr", "rate_mbps": 100.0, "chunk_bytes": 1448},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 1000.0}],
        "host": host,
    })
}

fn goodput_bps(r: &RunResult) -> f64 {
    r.requests.file_bytes[0] as f64 * 8.0 / r.summary.fct_mean_s.expect("the flow completed")
}

fn count(r: &RunResult, name: &str) -> u64 {
    match r.summary.figures.get(name) {
        Some(Figure::Count(n)) => *n,
        other => panic!("{name}: {other:?}"),
    }
}

fn real(r: &RunResult, name: &str) -> f64 {
    match r.summary.figures.get(name) {
        Some(Figure::Real(x)) => *x,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn without_costs_there_is_no_host_and_nothing_moves() {
    let plain = run(&scenario(json!({"seed": 1, "workload": {"requests": 1, "clients": 1,
        "file_size": {"kind": "fixed", "bytes": 2_000_000}}, "sender": {"kind": "tcp"},
        "bond": {"mode": "balance-rr"}, "links": [{"rate_mbps": 100.0, "delay_us": 50.0}]})))
    .unwrap();
    let zero = run(&scenario(bulk(2_000_000, json!({"netdev_max_backlog": 10})))).unwrap();
    assert_eq!(plain.summary.fct_mean_s, zero.summary.fct_mean_s);
    assert_eq!(plain.summary.events, zero.summary.events);
    for name in ["host_rx_frames", "host_drops", "host_queue_max", "host_cpu_busy_max"] {
        assert_eq!(zero.summary.figures.get(name), Some(&Figure::None), "{name}");
    }
    // Written back without the part it left at its defaults.
    assert!(!scenario(bulk(1, json!({}))).to_json().contains("\"host\""));
}

#[test]
fn a_host_of_no_cost_with_a_moderated_nic_is_on_and_gro_merges_each_polls_frames() {
    // A fast machine (the emulator's clients: the kernel's own CPU) whose NIC raises an interrupt at most
    // every 500 µs: 100 Mbit/s brings at most 4.06 frames of 1538 wire bytes a poll, which GRO makes one
    // skb; without GRO every frame is its own, and a CPU of no cost slows nothing down.
    let nic = |gro: bool| json!({"rx_coalesce_us": 500.0, "rx_ring": 1024, "gro": gro});
    let plain = run(&scenario(bulk(4_000_000, nic(false)))).unwrap();
    let gro = run(&scenario(bulk(4_000_000, nic(true)))).unwrap();
    assert_eq!(count(&plain, "host_rx_frames"), count(&plain, "host_rx_skbs"));
    let per_skb = count(&gro, "host_rx_frames") as f64 / count(&gro, "host_rx_skbs") as f64;
    let most = 100e6 * 500e-6 / (1538.0 * 8.0) + 1.0;
    assert!(per_skb > 1.5 && per_skb <= most, "{per_skb} frames an skb");
    assert_eq!(real(&gro, "host_cpu_busy_max"), 0.0);
    assert!(goodput_bps(&gro) > 0.9 * goodput_bps(&plain), "{} against {}", goodput_bps(&gro), goodput_bps(&plain));
    // Moderation alone is a host too (its frames wait for the interrupt); GRO without a ring is refused.
    assert!(count(&run(&scenario(bulk(100_000, json!({"rx_coalesce_us": 500.0})))).unwrap(), "host_rx_frames") > 0);
}

#[test]
fn a_cpu_slower_than_the_link_caps_tcp_at_its_own_rate() {
    // 200 µs a frame: 5,000 frames a second, 57.9 Mbit/s of 1448-byte segments, below the link's
    // 100 Mbit/s. The CPU is the bottleneck: busy nearly all the time, TCP at most its rate.
    let r = run(&scenario(bulk(10_000_000, json!({"rx_packet_us": 200.0})))).unwrap();
    let cpu_bps = 1448.0 * 8.0 / 200e-6;
    let g = goodput_bps(&r);
    assert!(g <= cpu_bps && g > 0.8 * cpu_bps, "goodput {g} against the CPU's {cpu_bps}");
    assert!(real(&r, "host_cpu_busy_max") > 0.85, "{}", real(&r, "host_cpu_busy_max"));
    // Every segment that reached the stack went through the CPU: the data and the handshake's.
    assert!(count(&r, "host_rx_frames") >= 10_000_000 / 1448);
}

#[test]
fn a_fast_cpu_costs_little_and_its_busy_share_is_frames_times_cost() {
    let plain = run(&scenario(bulk(5_000_000, json!({})))).unwrap();
    let r = run(&scenario(bulk(5_000_000, json!({"rx_packet_us": 5.0, "rx_byte_ns": 0.5})))).unwrap();
    let (g0, g) = (goodput_bps(&plain), goodput_bps(&r));
    assert!(g <= g0 && g > 0.97 * g0, "{g} against {g0} without a host");
    // Busy time: 5 µs a frame, and half a nanosecond per payload byte.
    let frames = count(&r, "host_rx_frames") as f64;
    let busy_s = frames * 5e-6 + r.requests.file_bytes[0] as f64 * 0.5e-9;
    let duration = r.summary.duration_s;
    let share = real(&r, "host_cpu_busy_max");
    assert!((share - busy_s / duration).abs() < 0.01 * share + 1e-4, "{share} against {}", busy_s / duration);
    assert_eq!(count(&r, "host_drops"), 0);
}

#[test]
fn acks_cost_the_cpu_so_a_busy_receiver_slows_down_further() {
    let rx_only = goodput_bps(&run(&scenario(bulk(5_000_000, json!({"rx_packet_us": 200.0})))).unwrap());
    let with_acks =
        goodput_bps(&run(&scenario(bulk(5_000_000, json!({"rx_packet_us": 200.0, "tx_packet_us": 100.0})))).unwrap());
    // Linux ACKs every second full segment: about 50 µs more a segment, 250 against 200.
    assert!(with_acks < 0.9 * rx_only, "{with_acks} against {rx_only}");
    assert!(with_acks > 0.6 * rx_only, "{with_acks} against {rx_only}");
}

#[test]
fn a_stream_faster_than_the_cpu_is_dropped_at_the_backlog() {
    // 100 Mbit/s of 1448 + 28 header bytes: 8,469 datagrams a second into a CPU of 5,000.
    let (cost_s, backlog): (f64, u64) = (200e-6, 300);
    let r = run(&scenario(udp(json!({"rx_packet_us": cost_s * 1e6, "netdev_max_backlog": backlog})))).unwrap();
    let handled = count(&r, "host_rx_frames");
    let dropped = count(&r, "host_drops");
    // In 0.5 s the CPU handles 0.5 / 200 µs = 2,500, and the queue holds up to twice the backlog
    // and one (the input queue takes a frame while it holds the backlog or fewer, and refills while
    // the process queue drains).
    let cpu_frames = (0.5 / cost_s).round() as u64;
    assert!((cpu_frames - 1..=cpu_frames + 1).contains(&handled), "{handled}");
    let waiting = count(&r, "host_queue_max");
    assert!(waiting <= 2 * (backlog + 1) && waiting > backlog + 1, "{waiting}");
    assert_eq!(r.summary.delivered, handled);
    assert!(dropped > 1_000 && dropped < 2_000, "{dropped}");
    // The ring of a NAPI NIC holds its descriptors only: fewer wait, more are dropped.
    let descriptors = 256;
    let ring = run(&scenario(udp(json!({"rx_packet_us": cost_s * 1e6, "rx_ring": descriptors})))).unwrap();
    // The frame being handled holds one descriptor: the others wait.
    assert_eq!(count(&ring, "host_queue_max"), descriptors - 1);
    assert!(count(&ring, "host_drops") > dropped);
}

#[test]
fn an_uploads_data_is_handled_by_the_servers_machine() {
    // The same CPU as the download's client above, now the server's: an upload is capped the same.
    let mut doc = bulk(10_000_000, json!({}));
    doc["workload"]["direction"] = json!("upload");
    doc["server_host"] = json!({"rx_packet_us": 200.0});
    let r = run(&scenario(doc)).unwrap();
    let cpu_bps = 1448.0 * 8.0 / 200e-6;
    let g = goodput_bps(&r);
    assert!(g <= cpu_bps && g > 0.8 * cpu_bps, "goodput {g} against the CPU's {cpu_bps}");
    assert!(count(&r, "server_host_rx_frames") >= 10_000_000 / 1448);
    assert!(real(&r, "server_host_cpu_busy_max") > 0.85);
    // The clients have no machine: their figures stay null.
    assert_eq!(r.summary.figures.get("host_rx_frames"), Some(&Figure::None));
}

#[test]
fn what_the_server_sends_costs_its_cpu_so_a_busy_sender_slows_down() {
    // 200 µs a frame sent, nothing a frame received: the ACKs that open the window wait for the CPU
    // to have paid for the frames sent before, so the sender keeps to 5,000 frames a second.
    let mut doc = bulk(10_000_000, json!({}));
    doc["server_host"] = json!({"tx_packet_us": 200.0});
    let r = run(&scenario(doc)).unwrap();
    let cpu_bps = 1448.0 * 8.0 / 200e-6;
    let g = goodput_bps(&r);
    assert!(g <= 1.02 * cpu_bps && g > 0.8 * cpu_bps, "goodput {g} against the CPU's {cpu_bps}");
    // The ACKs it received went through its queue.
    assert_eq!(count(&r, "server_host_rx_frames"), r.summary.reverse_packets);
}

/// Two clients each downloading 5 MB at once over a 1 Gbit/s link, their machines as `host` says.
fn two_clients(host: Value) -> RunResult {
    let mut doc = bulk(5_000_000, host);
    doc["workload"] = json!({"requests": 2, "clients": 2, "clients_in_turn": true,
        "file_size": {"kind": "fixed", "bytes": 5_000_000}});
    doc["links"] = json!([{"rate_mbps": 1000.0, "delay_us": 50.0}]);
    run(&scenario(doc)).unwrap()
}

#[test]
fn clients_on_one_shared_machine_share_its_cpu() {
    // A CPU of 57.9 Mbit/s each, or one for both: the link (1 Gbit/s) is never the bottleneck.
    let cpu_bps = 1448.0 * 8.0 / 200e-6;
    let total = |r: &RunResult| 2.0 * 5_000_000.0 * 8.0 / r.summary.duration_s;
    let each = two_clients(json!({"rx_packet_us": 200.0}));
    let shared = two_clients(json!({"rx_packet_us": 200.0, "shared": true}));
    assert!(total(&each) > 1.6 * cpu_bps && total(&each) <= 2.0 * cpu_bps, "{}", total(&each));
    assert!(total(&shared) > 0.8 * cpu_bps && total(&shared) <= cpu_bps, "{}", total(&shared));
    assert_eq!(count(&each, "host_rx_frames"), count(&shared, "host_rx_frames"));
}

#[test]
fn a_machines_fields_are_checked_naming_the_section() {
    let refused = |doc: Value| Scenario::from_json(&doc.to_string()).map(|_| ()).expect_err("refused").to_string();
    let err = refused(bulk(1, json!({"rx_packet_us": -1.0})));
    assert!(err.starts_with("host.rx_packet_us: must be from 0 to"), "{err}");
    let mut doc = bulk(1, json!({}));
    doc["server_host"] = json!({"tx_packet_us": 1e9});
    assert!(refused(doc).starts_with("server_host.tx_packet_us: must be from 0 to"));
    let mut doc = bulk(1, json!({}));
    doc["server_host"] = json!({"rx_packet_us": 1.0, "gro": true});
    let err = refused(doc);
    assert!(err.starts_with("server_host.gro:") && err.contains("server_host.rx_ring"), "{err}");
    let mut doc = bulk(1, json!({}));
    doc["server_host"] = json!({"rx_packet_us": 1.0, "shared": true});
    assert!(refused(doc).starts_with("server_host.shared:"));
}

/// One CUBIC download of 20 MB over `links`, balance-rr, into a NAPI host with or without GRO (the
/// NIC's interrupts at least 50 µs apart).
fn napi(links: Value, gro: bool) -> RunResult {
    let doc = json!({
        "seed": 1,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 20_000_000}},
        "sender": {"kind": "tcp", "tcp_congestion_control": "cubic"},
        "bond": {"mode": "balance-rr"},
        "links": links,
        "host": {"rx_packet_us": 1.0, "rx_skb_us": 20.0, "rx_ring": 1024, "rx_coalesce_us": 50.0, "gro": gro},
    });
    run(&scenario(doc)).unwrap()
}

#[test]
fn gro_merges_an_in_order_flow_so_the_stack_and_the_acks_run_once_per_skb() {
    let link = json!([{"rate_mbps": 1000.0, "delay_us": 20.0}]);
    let (plain, gro) = (napi(link.clone(), false), napi(link, true));
    // Without GRO each frame costs 21 µs: 551 Mbit/s of 1448-byte segments, below the link's rate.
    let cpu_bps = 1448.0 * 8.0 / 21e-6;
    assert!(goodput_bps(&plain) <= cpu_bps && goodput_bps(&plain) > 0.9 * cpu_bps, "{}", goodput_bps(&plain));
    assert_eq!(count(&plain, "host_rx_skbs"), count(&plain, "host_rx_frames"));
    // With it a poll's run of segments is one skb (a poll takes what 50 µs brought, four frames at
    // the link's rate, or more when the CPU falls behind): the stack's 20 µs is spent far less often,
    // and TCP, deciding one ACK per skb, sends fewer than one per two segments.
    let per_skb = count(&gro, "host_rx_frames") as f64 / count(&gro, "host_rx_skbs") as f64;
    assert!(per_skb > 3.0, "{per_skb} frames per skb");
    assert!(goodput_bps(&gro) > 1.5 * goodput_bps(&plain), "{} against {}", goodput_bps(&gro), goodput_bps(&plain));
    assert!(gro.summary.reverse_packets * 2 < plain.summary.reverse_packets);
}

#[test]
fn reordering_breaks_gros_runs_so_striped_data_costs_the_receiver_more() {
    // The same 1 Gbit/s as one link, or as four of 250 Mbit/s with jitter that balance-rr reorders.
    let one = napi(json!([{"rate_mbps": 1000.0, "delay_us": 20.0}]), true);
    let four = napi(
        json!([{"count": 4, "rate_mbps": 250.0, "delay_us": 20.0,
                "jitter": {"kind": "exponential", "mean_us": 20.0}}]),
        true,
    );
    assert!(four.summary.wire_ooo_fraction > 0.1);
    let per_skb = |r: &RunResult| count(r, "host_rx_frames") as f64 / count(r, "host_rx_skbs") as f64;
    assert!(per_skb(&four) < 0.5 * per_skb(&one), "{} against {}", per_skb(&four), per_skb(&one));
}

#[test]
fn gro_needs_a_napi_ring() {
    let err = Scenario::from_json(&bulk(1, json!({"rx_packet_us": 1.0, "gro": true})).to_string())
        .map(|_| ())
        .expect_err("refused")
        .to_string();
    assert!(err.starts_with("host.gro:") && err.contains("rx_ring"), "{err}");
}

/// netperf's TCP_STREAM for `stop_s` 0.5: one TCP stream written `message` bytes at a time over one
/// 1 Gbit/s link, the server's application paying `write_us` a write (none: 0).
fn messages(message: u64, write_us: f64) -> Value {
    let mut doc = json!({
        "seed": 1,
        "stop_s": 0.5,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 1_000_000}},
        "sender": {"kind": "tcp", "message_bytes": message, "gso": false},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 1000.0, "delay_us": 20.0}],
    });
    if write_us > 0.0 {
        doc["server_host"] = json!({"write_us": write_us});
    }
    doc
}

#[test]
fn a_stream_of_small_writes_is_bound_by_the_writers_cpu_and_coalesces_behind_nagle() {
    // Free writes: a bulk transfer (the file size unused: the stream runs until stop_s).
    let free = run(&scenario(messages(8, 0.0))).unwrap();
    assert!(free.summary.goodput_bps > 900e6, "{}", free.summary.goodput_bps);
    // 2 µs a write of 8 bytes: at most 8 · 8 / 2 µs = 32 Mbit/s, and the CPU does nothing else.
    let bound = 8.0 * 8.0 / 2e-6;
    let cpu = run(&scenario(messages(8, 2.0))).unwrap();
    let goodput = cpu.summary.goodput_bps;
    assert!(goodput <= bound && goodput > 0.95 * bound, "{goodput} against {bound}");
    assert!(real(&cpu, "server_host_cpu_busy_max") > 0.99);
    // Nagle: far fewer segments than writes (a segment leaves when the last small one is ACKed).
    let writes = goodput * 0.5 / 64.0;
    let segments = count(&cpu, "tcp_segments_sent") as f64;
    assert!(segments < writes / 4.0, "{segments} segments for {writes} writes");
    // TCP_NODELAY: a segment a write (less the few the host's queue coalesced while the CPU wrote).
    let mut doc = messages(8, 2.0);
    doc["sender"]["nodelay"] = json!(true);
    let nodelay = run(&scenario(doc)).unwrap();
    let segments = count(&nodelay, "tcp_segments_sent") as f64;
    assert!(segments > 0.9 * nodelay.summary.goodput_bps * 0.5 / 64.0, "{segments}");
}

#[test]
fn a_stream_of_messages_is_refused_where_it_is_not_modelled_naming_the_field() {
    let refused = |doc: Value| Scenario::from_json(&doc.to_string()).map(|_| ()).expect_err("refused").to_string();
    let mut doc = messages(8, 1.0);
    doc.as_object_mut().unwrap().remove("stop_s");
    let err = refused(doc);
    assert!(err.starts_with("sender.message_bytes:") && err.contains("stop_s"), "{err}");
    let mut doc = messages(8, 1.0);
    doc["workload"]["direction"] = json!("upload");
    assert!(refused(doc).starts_with("sender.message_bytes:"));
    let mut doc = messages(8, 1.0);
    doc["host"] = json!({"write_us": 1.0});
    assert!(refused(doc).starts_with("host.write_us:"));
    let mut doc = messages(8, 1.0);
    doc["sender"].as_object_mut().unwrap().remove("message_bytes");
    let err = refused(doc);
    assert!(err.starts_with("server_host.write_us:") && err.contains("sender.message_bytes"), "{err}");
    let doc = messages(0, 0.0);
    assert!(refused(doc).starts_with("sender.message_bytes:"));
}

/// One ping-pong pair bouncing a 1-byte token 400 times over one 100 Mbit/s link of 20 µs whose NICs
/// raise a receive interrupt at most every `irq_us` µs.
fn throttled_pingpong(irq_us: f64) -> RunResult {
    run(&scenario(json!({
        "seed": 1,
        "workload": {"kind": "pingpong", "pairs": 1, "token_bytes": 1, "rounds": 400},
        "sender": {"kind": "tcp"},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 100.0, "delay_us": 20.0, "rx_coalesce_us": irq_us}],
    })))
    .unwrap()
}

#[test]
fn a_nic_that_throttles_its_interrupts_holds_each_token_until_its_next_interrupt() {
    let free = real(&throttled_pingpong(0.0), "exchange_rtt_mean_ms");
    // Each exchange needs the client's NIC to interrupt once, at most every 500 µs: at least 0.5 ms
    // an exchange (the e1000's dynamic throttling for symmetric traffic: 2000 interrupts a second).
    let throttled = throttled_pingpong(500.0);
    let rtt = real(&throttled, "exchange_rtt_mean_ms");
    assert!(free < 0.5 && rtt >= 0.5 && rtt < 0.5 + 2.0 * free, "{free} ms free, {rtt} ms throttled");
    assert_eq!(count(&throttled, "exchanges"), count(&throttled_pingpong(0.0), "exchanges"));
    // Checked with the scenario, naming the field: one machine's polls or the link's NICs, not both.
    let mut doc = bulk(1, json!({"rx_packet_us": 1.0, "rx_coalesce_us": 50.0}));
    doc["links"][0]["rx_coalesce_us"] = json!(100.0);
    let err = Scenario::from_json(&doc.to_string()).map(|_| ()).expect_err("refused").to_string();
    assert!(err.starts_with("links.0.rx_coalesce_us:"), "{err}");
}

#[test]
fn a_writer_on_a_cpu_of_its_own_neither_waits_for_the_frames_nor_delays_them() {
    // 2 µs a write of 8 bytes, 10 µs a frame: on one CPU the frames' time is taken from the writes.
    let with = |own: bool| {
        let mut doc = messages(8, 2.0);
        doc["server_host"] = json!({"write_us": 2.0, "rx_packet_us": 10.0, "tx_packet_us": 10.0, "app_own_cpu": own});
        run(&scenario(doc)).unwrap()
    };
    let (shared, own) = (with(false), with(true));
    let bound = 8.0 * 8.0 / 2e-6; // the writer's CPU alone: 32 Mbit/s
    let (a, b) = (shared.summary.goodput_bps, own.summary.goodput_bps);
    assert!(a < 0.9 * bound && b > 0.95 * bound && b <= bound, "{a} shared, {b} own, bound {bound}");
    // Checked with the scenario: only the server's application writes.
    let mut doc = messages(8, 2.0);
    doc["host"] = json!({"app_own_cpu": true});
    let err = Scenario::from_json(&doc.to_string()).map(|_| ()).expect_err("refused").to_string();
    assert!(err.starts_with("host.app_own_cpu:"), "{err}");
}
