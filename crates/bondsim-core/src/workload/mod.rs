//! The workload: every request of a run, drawn up front from the seed.
//!
//! Requests are generated before the run starts (arrival time, client, file
//! size), so the total number of packets is known and progress can be shown.
//! Each property has its own random stream: changing the file-size
//! distribution does not change which client asks.

pub mod specweb;

use rand::RngExt;
use rand_distr::{Distribution, Exp};

use crate::rng;
use crate::scenario::{Arrivals, FileSize, PingPong, Requests};
use crate::time::SimTime;

/// One client request for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Request number, from 0 in arrival order (also its flow id).
    pub id: u32,
    /// The client asking.
    pub client: u32,
    /// Size of the requested file.
    pub file_bytes: u64,
    /// When it reaches the server's request queue ([`PENDING`] until a closed
    /// loop's client asks for it).
    pub arrival: SimTime,
}

/// The arrival of a closed loop's request that waits for one of its client's
/// earlier requests to end (the world sets the time when it does).
pub const PENDING: SimTime = SimTime(u64::MAX);

/// Draws every request of `workload` for the run seeded with `seed`.
pub fn generate(workload: &Requests, seed: u64) -> Vec<Request> {
    let mut clients = rng::stream(seed, "workload.clients");
    let mut sizes = rng::stream(seed, "workload.file_size");
    let mut arrivals = rng::stream(seed, "workload.arrivals");
    let sampler = specweb::SizeSampler::for_spec(&workload.file_size);
    let mut clock = 0.0_f64;
    (0..workload.requests)
        .map(|id| {
            let arrival = match &workload.arrivals {
                Arrivals::AtStart {} => SimTime::ZERO,
                Arrivals::Batches { size, every_s } => SimTime::from_secs_f64(f64::from(id / size) * every_s),
                Arrivals::Poisson { rate_per_s } => {
                    clock += Exp::new(*rate_per_s).expect("validated rate > 0").sample(&mut arrivals);
                    SimTime::from_secs_f64(clock)
                }
                Arrivals::Closed { active } if u64::from(id) < u64::from(*active) * u64::from(workload.clients) => {
                    SimTime::ZERO
                }
                Arrivals::Closed { .. } => PENDING,
            };
            let in_turn = workload.clients_in_turn || matches!(workload.arrivals, Arrivals::Closed { .. });
            let client = if in_turn { id % workload.clients } else { clients.random_range(0..workload.clients) };
            let file_bytes = match &workload.file_size {
                FileSize::Fixed { bytes } => *bytes,
                FileSize::Uniform { min_bytes, max_bytes } => sizes.random_range(*min_bytes..=*max_bytes),
                FileSize::List { bytes } => bytes[sizes.random_range(0..bytes.len())],
                FileSize::Zipfset { .. } => sampler.as_ref().expect("zipfset sampler").sample(&mut sizes),
            };
            Request { id, client, file_bytes, arrival }
        })
        .collect()
}

/// A ping-pong workload as requests: one per pair, from its own client, at time
/// zero, for the bytes each direction of the pair carries (its flow).
pub fn pingpong(p: &PingPong) -> Vec<Request> {
    let bytes = p.token_bytes * u64::from(p.rounds);
    (0..p.pairs).map(|id| Request { id, client: id, file_bytes: bytes, arrival: SimTime::ZERO }).collect()
}

/// The mean file size `spec` asks for, bytes (its size distribution's mean).
pub fn mean_file_bytes(spec: &FileSize) -> f64 {
    match spec {
        FileSize::Fixed { bytes } => *bytes as f64,
        FileSize::Uniform { min_bytes, max_bytes } => (*min_bytes as f64 + *max_bytes as f64) / 2.0,
        FileSize::List { bytes } => bytes.iter().map(|&b| b as f64).sum::<f64>() / bytes.len().max(1) as f64,
        FileSize::Zipfset { .. } => specweb::SizeSampler::for_spec(spec).map_or(0.0, |s| s.mean()),
    }
}

/// The largest file `spec` can ask for.
pub fn max_file_bytes(spec: &FileSize) -> u64 {
    match spec {
        FileSize::Fixed { bytes } => *bytes,
        FileSize::Uniform { max_bytes, .. } => *max_bytes,
        FileSize::List { bytes } => bytes.iter().copied().max().unwrap_or(0),
        FileSize::Zipfset { classes, .. } => classes.iter().map(|&c| specweb::file_bytes(c, 8)).max().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(json: serde_json::Value) -> Requests {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn same_seed_same_requests_other_seed_other_requests() {
        let w = workload(serde_json::json!({"requests": 50, "clients": 7,
            "file_size": {"kind": "uniform", "min_bytes": 1, "max_bytes": 1000000}}));
        assert_eq!(generate(&w, 3), generate(&w, 3));
        assert_ne!(generate(&w, 3), generate(&w, 4));
        assert!(generate(&w, 3).iter().all(|r| r.client < 7 && (1..=1_000_000).contains(&r.file_bytes)));
    }

    #[test]
    fn batches_arrive_every_period() {
        let w = workload(serde_json::json!({"requests": 5,
            "arrivals": {"kind": "batches", "size": 2, "every_s": 5.0},
            "file_size": {"kind": "fixed", "bytes": 10}}));
        let times: Vec<f64> = generate(&w, 1).iter().map(|r| r.arrival.as_secs_f64()).collect();
        assert_eq!(times, [0.0, 0.0, 5.0, 5.0, 10.0]);
    }

    #[test]
    fn poisson_arrivals_have_the_requested_rate() {
        let w = workload(serde_json::json!({"requests": 20000,
            "arrivals": {"kind": "poisson", "rate_per_s": 50.0},
            "file_size": {"kind": "fixed", "bytes": 10}}));
        let reqs = generate(&w, 1);
        let span = reqs.last().unwrap().arrival.as_secs_f64();
        let rate = 20000.0 / span;
        assert!((rate - 50.0).abs() < 2.0, "rate {rate}");
        assert!(reqs.windows(2).all(|p| p[0].arrival <= p[1].arrival));
    }

    #[test]
    fn clients_in_turn_ask_in_turn() {
        let w = workload(serde_json::json!({"requests": 7, "clients": 3, "clients_in_turn": true,
            "file_size": {"kind": "fixed", "bytes": 10}}));
        assert_eq!(generate(&w, 1).iter().map(|r| r.client).collect::<Vec<_>>(), [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn a_closed_loop_starts_active_per_client_and_holds_the_rest() {
        let w = workload(serde_json::json!({"requests": 10, "clients": 3,
            "arrivals": {"kind": "closed", "active": 2}, "file_size": {"kind": "fixed", "bytes": 10}}));
        let reqs = generate(&w, 1);
        assert_eq!(reqs.iter().map(|r| r.client).collect::<Vec<_>>(), [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        assert!(reqs[..6].iter().all(|r| r.arrival == SimTime::ZERO));
        assert!(reqs[6..].iter().all(|r| r.arrival == PENDING));
    }

    #[test]
    fn changing_sizes_keeps_clients() {
        let a =
            workload(serde_json::json!({"requests": 30, "clients": 9, "file_size": {"kind": "fixed", "bytes": 10}}));
        let b =
            workload(serde_json::json!({"requests": 30, "clients": 9, "file_size": {"kind": "list", "bytes": [1, 2]}}));
        let clients = |w| generate(w, 2).iter().map(|r| r.client).collect::<Vec<_>>();
        assert_eq!(clients(&a), clients(&b));
    }
}
