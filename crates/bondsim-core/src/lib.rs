//! bondsim-core: a deterministic discrete-event simulator of NIC bonding.
//!
//! A run is a pure function of its [`Scenario`]: the same scenario and seed
//! give bit-identical results on any machine. Time is integer nanoseconds
//! ([`SimTime`]); events at equal times run in the order they were scheduled
//! ([`engine::EventQueue`]); every random stream is derived from the seed and
//! a stream name ([`rng::stream`]).
//!
//! ```text
//!  requests ──▶ sender ──▶ scheduler ──▶ links ──▶ receiver
//!  workload/    transport/ bondsim-bond  link/     receiver.rs, transport/
//! ```
//!
//! The thesis's controlled experiment in a few lines:
//!
//! ```
//! use bondsim_core::Scenario;
//!
//! let scenario = Scenario::from_json(r#"{
//!     "workload": {"requests": 10, "file_size": {"kind": "fixed", "bytes": 102400}},
//!     "bond": {"mode": "rr"},
//!     "links": [{"period_ms": 20}, {"period_ms": 82}, {"period_ms": 20}, {"period_ms": 20}]
//! }"#).unwrap();
//! let result = bondsim_core::run(&scenario).unwrap();
//! assert_eq!(result.summary.packets, 10 * 101);
//! assert_eq!(result.summary.delivered, 10 * 101);
//! // Round-robin puts a quarter of the packets on the slow link; they arrive late.
//! assert!(result.summary.ooo_fraction.unwrap() > 0.2);
//! ```

pub mod addr;
pub mod capture;
pub mod columnar;
pub mod cost;
pub mod engine;
pub mod error;
pub mod failover;
pub mod fault;
pub mod host;
pub mod link;
pub mod network;
pub mod packet;
pub mod receiver;
pub mod reorder_density;
pub mod report;
pub mod result;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod trace;
pub mod transport;
pub mod workload;

pub use bondsim_bond as bond;
pub use bondsim_bond::rng;
pub use bondsim_time as time;
pub use error::{Error, Result};
pub use result::RunResult;
pub use scenario::Scenario;
pub use sim::{check, run, run_with_capture, run_with_progress, Progress};
pub use time::SimTime;

/// Parses a JSON scenario, runs it, and returns the result as JSON.
pub fn run_json(scenario_json: &str) -> Result<String> {
    Ok(run(&Scenario::from_json(scenario_json)?)?.to_json())
}
