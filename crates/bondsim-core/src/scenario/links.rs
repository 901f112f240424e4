//! `[[links]]`: the bonded links, their kinds (paced, rate) and what every link has.

use super::*;
use bondsim_time::SimTime;

/// One bonded link (or `count` identical ones): what every link has, and its
/// model chosen by `kind` — `paced` (the thesis's interface, one send per
/// `period_ms`) or `rate` (bit rate, transmit queue, wire). `kind` may be left
/// out: a link with `rate_mbps` is then a rate link, any other a paced one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub struct LinkSpec {
    /// What every kind of link has.
    #[serde(flatten)]
    pub base: LinkBase,
    /// The link's model and its own fields.
    #[serde(flatten)]
    pub model: LinkModel,
}

/// The fields every link has, whatever its kind.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LinkBase {
    /// Number of identical links this entry stands for.
    pub count: u32,
    /// Label used in outputs (default `linkN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Uniform slowdown: send times are multiplied by this (2 = half speed).
    pub slowdown: f64,
    /// Extra slowdowns over time windows.
    pub slow_windows: Vec<SlowWindow>,
    /// Intermittent on/off slowdowns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intermittent: Option<Intermittent>,
    /// Carrier lost at `down_s`, back at `up_s` (never, if absent).
    pub failures: Vec<Failure>,
    /// Carrier lost and restored at random: exponential up and down times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_failures: Option<RandomFailures>,
    /// How much later than the physical change the NIC reports a carrier change, ms (0 =
    /// at once). The bond's miimon reads `netif_carrier_ok` (`use_carrier = 1`), which the
    /// driver sets from its link-status-change interrupt or watchdog: e1000e, igb and igc
    /// run their watchdog one jiffy after the LSC interrupt (`mod_timer(&adapter->watchdog_timer,
    /// jiffies + 1)` in `e1000_intr`/`igb_msix_other`) and it calls `netif_carrier_off`; the PHY
    /// may take longer still to declare the link down (IEEE 802.3 §40.4.2.5 leaves it to the
    /// implementer; Jay Vosburgh on the e1000 list, 2012-12-21: "the link down detection using
    /// netif_carrier_ok() is always about 350 msec" with an e1000e). Packets in flight are
    /// lost at the physical instant all the same.
    pub carrier_latency_ms: f64,
    /// Repeated short losses of carrier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flapping: Option<Flapping>,
}

impl Default for LinkBase {
    fn default() -> Self {
        LinkBase {
            count: 1,
            name: None,
            slowdown: 1.0,
            slow_windows: Vec::new(),
            intermittent: None,
            failures: Vec::new(),
            random_failures: None,
            carrier_latency_ms: 0.0,
            flapping: None,
        }
    }
}

/// A link's model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinkModel {
    /// The thesis's interface: one send opportunity per period.
    Paced(PacedModel),
    /// A real link: bit rate, queue, wire.
    Rate(RateModel),
}

impl LinkModel {
    /// The link's MTU (`None`: the paced interface has none; the bond then counts Ethernet's).
    pub fn mtu(&self) -> Option<u32> {
        match self {
            LinkModel::Rate(m) => Some(m.mtu),
            LinkModel::Paced(_) => None,
        }
    }

    /// The speed the bond's scheduler is told, bits per second: the rate, or for the paced
    /// interface a chunk of `chunk_bits` per period.
    pub fn rate_bps(&self, chunk_bits: f64) -> f64 {
        match self {
            LinkModel::Rate(m) => m.rate_mbps * 1e6,
            LinkModel::Paced(m) => chunk_bits / (m.period_ms / 1e3),
        }
    }

    /// The receiving NICs' interrupt throttling, µs (0: none; the paced interface has none).
    pub fn rx_coalesce_us(&self) -> f64 {
        match self {
            LinkModel::Rate(m) => m.rx_coalesce_us,
            LinkModel::Paced(_) => 0.0,
        }
    }
}

/// `kind = "paced"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PacedModel {
    /// Time between sends, ms (the thesis's slow interface: 82).
    #[serde(default = "default_period_ms")]
    pub period_ms: f64,
    /// Replayed send timing, seconds between successive sends (one per send,
    /// cycling). The front fills it from `trace_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_intervals_s: Option<Vec<f64>>,
    /// Timer noise: each wake-up comes late by a random delay (drawn from the stream
    /// `links.N.jitter`), idle ones too, and the next period counts from the late wake-up. The
    /// thesis's interface re-arms itself from inside its call (`reactor.callLater(nextCall,
    /// self.process_pending)`, `interface.py`; Twisted's `callLater` counts from the time of the
    /// call), so one late wake-up delays every later one. §5.3.4's randomised `nextCall` (p. 37)
    /// is the same mechanism: the appendix's commented `randint(200, 201)/10000.0` is
    /// `{kind = "choice", values_us = [0, 100]}` on a 20 ms period, `randint(20, 22)/1000.0`
    /// `values_us = [0, 1000, 2000]`. Linux wakes a `select()` sleeper no earlier than its
    /// timeout and at best effort by the timeout plus a slack (`schedule_hrtimeout_range`,
    /// `kernel/time/sleep_timeout.c`) of max(timeout / 1000, `timer_slack_ns`)
    /// (`select_estimate_accuracy`, `fs/select.c`), 50 µs by default (`init/init_task.c`):
    /// `{kind = "uniform", max_us = 50}` is that kernel's share alone, drawn for each link
    /// alone (as independent timers; one Twisted loop runs the calls due at a wake-up in
    /// deadline order, so its callbacks of one period keep their order). Absent: every wake-up
    /// exactly a period after the one before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Jitter>,
}

/// `kind = "rate"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateModel {
    /// Bit rate, Mbit/s (required).
    pub rate_mbps: f64,
    /// Bytes added to each frame on the wire: preamble 8 + Ethernet header 14 + FCS 4 + gap 12 = 38.
    #[serde(default = "default_overhead_bytes")]
    pub overhead_bytes: u32,
    /// Largest IP packet, bytes; packets never exceed it.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Propagation delay, microseconds.
    #[serde(default)]
    pub delay_us: f64,
    /// Fixed cost per frame (NIC/driver), microseconds.
    #[serde(default)]
    pub per_packet_us: f64,
    /// Random extra delay per packet; a link never reorders its own packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Jitter>,
    /// Transmit queue length, packets (drop-tail; Linux default 1000).
    #[serde(default = "default_txqueuelen")]
    pub txqueuelen: u32,
    /// Probability in [0, 1) that a frame is lost on the wire, each frame
    /// independently (Bernoulli; ns-3's `RateErrorModel` with `ErrorUnit =
    /// packet`, netem's `loss random PERCENT` without correlation). A lost frame
    /// takes its transmit time on the link, as a corrupted one does, and never
    /// arrives. 0 (the default) draws no random number at all.
    #[serde(default)]
    pub loss: f64,
    /// Bursty loss instead of `loss` (giving both is an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_model: Option<LossModel>,
    /// What the link's rate is, and so where the sending host stops counting a frame against its
    /// socket (TCP small queues, `sk_wmem_alloc`): `nic` or `shaper` (docs/placement.md).
    #[serde(default)]
    pub placement: Placement,
    /// A `nic` link's TX-completion interrupt coalescing, microseconds (ethtool's `tx-usecs`:
    /// "how many usecs to delay a TX interrupt after a packet is sent",
    /// `include/uapi/linux/ethtool.h`, `struct ethtool_coalesce`): the host frees a sent frame
    /// at the interrupt, this long after the first completion since the last one. 0 (the
    /// default): at the frame's last bit.
    #[serde(default)]
    pub tx_coalesce_us: f64,
    /// The receive interrupt throttling of the NICs at both ends of the link, microseconds: each
    /// raises at most one receive interrupt per interval, so a frame that arrives sooner after the
    /// last waits for the next, with those that come meanwhile (the e1000's `ITR`, its
    /// `InterruptThrottleRate` of N interrupts a second being 1e6 / N µs; `ethtool -C rx-usecs` of
    /// drivers that map it there). For a machine of one NIC, `[host]`'s `rx_coalesce_us` says the
    /// same of its polls; set one or the other. 0 (the default): an interrupt per frame.
    #[serde(default)]
    pub rx_coalesce_us: f64,
    /// A line beyond the NIC, outside the host (a DSL or LTE line behind a router, a slower
    /// switch port): the link's own rate, delay and queue are then the NIC's (or, with
    /// `placement = "shaper"`, a host shaper's in front of it), and a frame crosses this line
    /// after the NIC's wire, before the switch. `placement` still says where the host stops
    /// counting the frame of the stage before the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downstream: Option<Downstream>,
}

named_enum! {
    /// What a rate link's `rate_mbps` is, and so when the host stops counting a frame against
    /// its socket (`links.N.placement`; docs/placement.md).
    pub enum Placement {
        /// The NIC's own speed: the driver frees the frame at its TX completion, after its last
        /// bit (plus `tx_coalesce_us`).
        Nic = "nic",
        /// A host shaper's (tc HTB) on a faster NIC: the frame leaves the shaper, and the host's
        /// count, as the shaper starts it (`htb_dequeue_tree` hands a class's frame over while its
        /// tokens are not negative and charges them after, `htb_charge_class`,
        /// `net/sched/sch_htb.c`, 6.x); the NIC's own time is taken as nil.
        Shaper = "shaper",
        /// Beyond a TUN (or veth) device that orphans each frame as the bond hands it over
        /// (`tun_net_xmit` → `skb_orphan`, `drivers/net/tun.c`): the host never counts it, and the
        /// bond, beyond the device, sees the link's queue. The emulator's own host (`bondsim
        /// validate` runs the model so).
        Tun = "tun",
    }
}

/// `links.N.downstream`: a line beyond the NIC with its own rate, delay and drop-tail FIFO.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Downstream {
    /// The line's bit rate, Mbit/s (required); its frames carry the link's `overhead_bytes`.
    pub rate_mbps: f64,
    /// The line's one-way delay, microseconds.
    #[serde(default)]
    pub delay_us: f64,
    /// The line's queue, packets (drop-tail; the frame being sent counts in it).
    #[serde(default = "default_txqueuelen")]
    pub queue_packets: u32,
}

/// A frame-loss process with memory: losses that come in bursts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LossModel {
    /// The Gilbert–Elliott two-state Markov chain.
    GilbertElliott(GilbertElliott),
}

/// `kind = "gilbert_elliott"`: a two-state (good / bad) Markov chain stepped
/// once per frame, losing each frame with the probability of the state it is
/// sent in (E. N. Gilbert, "Capacity of a burst-noise channel", Bell Syst.
/// Tech. J. 39, 1960; E. O. Elliott, "Estimates of error rates for codes on
/// burst-noise channels", Bell Syst. Tech. J. 42, 1963). With the defaults
/// `loss_good = 0`, `loss_bad = 1` it is Gilbert's model (every frame sent in
/// the bad state is lost), the parameterisation of G. Hasslinger and
/// O. Hohlfeld, "The Gilbert-Elliott model for packet loss in real time
/// services on the Internet", MMB 2008. RFC 3611 §4.7.2 (RTCP XR burst
/// metrics: burst and gap density and duration) describes measured loss in
/// the same burst / gap terms.
///
/// Long-run loss rate: `π_bad·loss_bad + π_good·loss_good`, with `π_bad = p / (p + r)`,
/// `π_good = r / (p + r)`; the bad state lasts `1/r` frames on average (the mean
/// burst length when `loss_bad = 1`, `loss_good = 0`), the good state `1/p`.
///
/// Linux netem's `loss gemodel P R 1-H 1-K` (percentages) is the same chain:
/// `p = P/100`, `r = R/100`, `loss_bad = (1-H)/100`, `loss_good = (1-K)/100`
/// (netem's `h` and `k` are the probabilities of *delivering* a frame in the
/// bad and good state; iproute2 passes `1-h` and `1-k`, the loss probabilities,
/// and `sch_netem.c`'s `loss_gilb_ell` draws the transition, then the loss with
/// the probability of the state the frame was sent in, starting in the good
/// state, as here). netem's defaults differ: `R` defaults to `1 - P` there, and
/// is required here. ns-3's `BurstErrorModel` is not this chain: it starts a
/// burst with probability `BurstRate` and draws its length from `BurstSize`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliott {
    /// P(good → bad) per frame, in [0, 1].
    pub p: f64,
    /// P(bad → good) per frame, in (0, 1] (the bad state lasts 1/r frames on average).
    pub r: f64,
    /// Loss probability of a frame sent in the good state, in [0, 1).
    #[serde(default)]
    pub loss_good: f64,
    /// Loss probability of a frame sent in the bad state, in [0, 1].
    #[serde(default = "default_loss_bad")]
    pub loss_bad: f64,
}

fn default_loss_bad() -> f64 {
    1.0
}

fn default_period_ms() -> f64 {
    20.0
}
fn default_overhead_bytes() -> u32 {
    38
}
pub(super) fn default_mtu() -> u32 {
    1500
}
fn default_txqueuelen() -> u32 {
    1000
}

impl LinkSpec {
    /// The name of link `id` (its place after `count` expansion), as the outputs, the captures and
    /// `bond.primary` know it: `name`, or `name` and the id when the spec makes several links, else
    /// `link` and the id.
    pub fn link_name(&self, id: usize) -> String {
        match (&self.base.name, self.base.count) {
            (Some(name), 1) => name.clone(),
            (Some(name), _) => format!("{name}{id}"),
            (None, _) => format!("link{id}"),
        }
    }

    /// Every kind with its own fields (its model's struct's).
    fn kinds() -> [(&'static str, &'static [&'static str]); 2] {
        [("paced", fields_of::<PacedModel>()), ("rate", fields_of::<RateModel>())]
    }

    /// A paced link of `period_ms` (the thesis's interface).
    pub fn paced(period_ms: f64) -> LinkSpec {
        LinkSpec {
            base: LinkBase::default(),
            model: LinkModel::Paced(PacedModel { period_ms, trace_intervals_s: None, jitter: None }),
        }
    }

    /// A rate link of `rate_mbps` with every other field at its default.
    pub fn rate(rate_mbps: f64) -> LinkSpec {
        let mut model: RateModel = from_defaults_with("rate_mbps", rate_mbps.into());
        model.rate_mbps = rate_mbps;
        LinkSpec { base: LinkBase::default(), model: LinkModel::Rate(model) }
    }

    /// The kind's name.
    pub fn kind(&self) -> &'static str {
        match self.model {
            LinkModel::Paced(_) => "paced",
            LinkModel::Rate(_) => "rate",
        }
    }
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for LinkSpec {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        let inferred = if map.contains_key("rate_mbps") { "rate" } else { "paced" };
        let kinds = LinkSpec::kinds();
        // The fields of [`LinkBase`].
        let base_fields = fields_of::<LinkBase>();
        let kind = take_kind(&mut map, inferred, &kinds)?;
        let own = kinds.iter().find(|(k, _)| *k == kind).expect("checked").1;
        let mut base = serde_json::Map::new();
        for key in base_fields {
            if let Some(value) = map.remove(*key) {
                base.insert((*key).to_string(), value);
            }
        }
        for key in map.keys() {
            if !own.contains(&key.as_str()) {
                let other = kinds.iter().find(|(_, f)| f.contains(&key.as_str()));
                let message = match other {
                    Some((other, _)) => {
                        format!("is a {other}-link field (kind = \"{other}\"), and this link is kind = \"{kind}\"")
                    }
                    None => format!(
                        "unknown field `{key}`, expected one of `kind`, {}, {}",
                        quoted(own),
                        quoted(base_fields)
                    ),
                };
                return Err(nested(key, message));
            }
        }
        let body = serde_json::Value::Object(map);
        let model = match kind.as_str() {
            "paced" => LinkModel::Paced(part(body)?),
            _ => LinkModel::Rate(part(body)?),
        };
        Ok(LinkSpec { base: part(serde_json::Value::Object(base))?, model })
    }
}

/// A slowdown factor applied from `start_s` (inclusive) to `end_s` (exclusive).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlowWindow {
    /// Window start, seconds.
    pub start_s: f64,
    /// Window end, seconds.
    pub end_s: f64,
    /// Factor on send times during the window.
    pub slowdown: f64,
}

/// Alternating slow and normal phases, starting with a normal phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Intermittent {
    /// Length of each slow phase (mean length if `random`), seconds.
    pub slow_s: f64,
    /// Length of each normal phase (mean length if `random`), seconds.
    pub normal_s: f64,
    /// Factor on send times during slow phases.
    pub slowdown: f64,
    /// Draw phase lengths from exponential distributions with these means.
    #[serde(default)]
    pub random: bool,
}

/// Random extra delay: per packet on a rate link, per wake-up on a paced link.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Jitter {
    /// Uniform in `[0, max_us]`.
    Uniform { max_us: f64 },
    /// Exponential with mean `mean_us`.
    Exponential { mean_us: f64 },
    /// Normal with standard deviation `sd_us`, folded at zero (|N(0, sd)|).
    Normal { sd_us: f64 },
    /// One of `values_us`, each equally likely (0 allowed): Python's `randint(a, b)` over whole
    /// steps, as the thesis's commented `nextCall = randint(200, 201)/10000.0` (20 ms plus 0 or
    /// 100 µs, `interface.py`).
    Choice { values_us: Vec<f64> },
}

impl Jitter {
    /// Checks link `i`'s jitter: its one parameter a positive delay within [`DELAY_US`].
    fn validate(&self, i: usize) -> Result<()> {
        let (field, value) = match self {
            Jitter::Uniform { max_us } => ("max_us", *max_us),
            Jitter::Exponential { mean_us } => ("mean_us", *mean_us),
            Jitter::Normal { sd_us } => ("sd_us", *sd_us),
            Jitter::Choice { values_us } => {
                if values_us.is_empty() {
                    return Err(Error::scenario(
                        format!("links.{i}.jitter.values_us"),
                        "must list at least one delay (µs)",
                    ));
                }
                for (k, &value) in values_us.iter().enumerate() {
                    let path = format!("links.{i}.jitter.values_us.{k}");
                    duration(&path, value, 1e-6, true)?;
                    plausible(&path, value, &DELAY_US)?;
                }
                return Ok(());
            }
        };
        let path = format!("links.{i}.jitter.{field}");
        duration(&path, value, 1e-6, false)?;
        plausible(&path, value, &DELAY_US)
    }
}

impl Scenario {
    pub(super) fn validate_links(&self) -> Result<()> {
        if self.links.is_empty() {
            return Err(Error::scenario("links", "a bond needs at least one link"));
        }
        let packet = u64::from(self.chunk_bytes()) + u64::from(self.l3_header_bytes());
        for (i, link) in self.links.iter().enumerate() {
            let p = |field: &str| format!("links.{i}.{field}");
            let base = &link.base;
            if let Some(name) = &base.name {
                link_name(&p("name"), name)?;
            }
            at_least(&p("count"), u64::from(base.count), 1)?;
            factor(&p("slowdown"), base.slowdown)?;
            for (k, win) in base.slow_windows.iter().enumerate() {
                let q = |field: &str| format!("links.{i}.slow_windows.{k}.{field}");
                duration(&q("start_s"), win.start_s, 1.0, true)?;
                factor(&q("slowdown"), win.slowdown)?;
                duration(&q("end_s"), win.end_s, 1.0, false)?;
                if win.end_s <= win.start_s {
                    return Err(Error::scenario(
                        q("end_s"),
                        format!("must be > start_s ({}), got {}", win.start_s, win.end_s),
                    ));
                }
            }
            if let Some(im) = &base.intermittent {
                duration(&p("intermittent.slow_s"), im.slow_s, 1.0, false)?;
                duration(&p("intermittent.normal_s"), im.normal_s, 1.0, false)?;
                factor(&p("intermittent.slowdown"), im.slowdown)?;
            }
            duration(&p("carrier_latency_ms"), base.carrier_latency_ms, 1e-3, true)?;
            plausible(&p("carrier_latency_ms"), base.carrier_latency_ms, &CARRIER_LATENCY_MS)?;
            validate_failures(base, i)?;
            match &link.model {
                LinkModel::Paced(m) => {
                    duration(&p("period_ms"), m.period_ms, 1e-3, false)?;
                    self.paced_rate_plausible(&p("period_ms"), m.period_ms)?;
                    let (shrink, stretch) = (factor_extremes(base, i, true), factor_extremes(base, i, false));
                    stays_positive(&p("period_ms"), "the period", nanos(m.period_ms, 1e-3), &shrink)?;
                    stays_within_a_year(&p("period_ms"), "the period", nanos(m.period_ms, 1e-3), &stretch)?;
                    if let Some(jitter) = &m.jitter {
                        jitter.validate(i)?;
                    }
                    if let Some(trace) = &m.trace_intervals_s {
                        if trace.is_empty() {
                            return Err(Error::scenario(p("trace_intervals_s"), "a trace needs at least one interval"));
                        }
                        for (k, &v) in trace.iter().enumerate() {
                            let q = format!("links.{i}.trace_intervals_s.{k}");
                            duration(&q, v, 1.0, false)?;
                            stays_positive(&q, "the interval", nanos(v, 1.0), &shrink)?;
                            stays_within_a_year(&q, "the interval", nanos(v, 1.0), &stretch)?;
                        }
                    }
                }
                LinkModel::Rate(m) => {
                    rate_mbps(&p("rate_mbps"), m.rate_mbps)?;
                    plausible(&p("overhead_bytes"), f64::from(m.overhead_bytes), &OVERHEAD_BYTES)?;
                    plausible(&p("mtu"), f64::from(m.mtu), &MTU_BYTES)?;
                    if packet > u64::from(m.mtu) && !self.fragments() {
                        return Err(Error::scenario(
                            self.sender.chunk_field(),
                            format!(
                                "{} payload + {} header bytes exceed links.{i}.mtu ({}); only UDP datagrams of a \
                                 cbr sender (network.protocol = \"udp\") are fragmented",
                                self.chunk_bytes(),
                                self.l3_header_bytes(),
                                m.mtu
                            ),
                        ));
                    }
                    duration(&p("delay_us"), m.delay_us, 1e-6, true)?;
                    plausible(&p("delay_us"), m.delay_us, &DELAY_US)?;
                    duration(&p("per_packet_us"), m.per_packet_us, 1e-6, true)?;
                    plausible(&p("per_packet_us"), m.per_packet_us, &HOST_FRAME_US)?;
                    if let Some(jitter) = &m.jitter {
                        jitter.validate(i)?;
                    }
                    let per_packet = nanos(m.per_packet_us, 1e-6);
                    let tx = self.smallest_frame_ns(
                        &p("rate_mbps"),
                        m.rate_mbps,
                        m.overhead_bytes,
                        per_packet,
                        ", or set per_packet_us",
                    )?;
                    stays_positive(&p("rate_mbps"), "the smallest frame", tx, &factor_extremes(base, i, true))?;
                    // ... and the largest (a full packet) at most a year, or the clock would overflow.
                    let largest = (packet.max(u64::from(bondsim_bond::MIN_ETHERNET_PAYLOAD))
                        + u64::from(m.overhead_bytes)) as f64
                        * 8.0;
                    // (Within the plausible rates, packet sizes and per-frame costs, a frame takes
                    // at most half an hour; a slowdown may still stretch it past a year.)
                    let secs = m.per_packet_us * 1e-6 + largest / (m.rate_mbps * 1e6);
                    let stretch = factor_extremes(base, i, false);
                    stays_within_a_year(&p("rate_mbps"), "a full frame", SimTime::from_secs_f64(secs).0, &stretch)?;
                    at_least(&p("txqueuelen"), u64::from(m.txqueuelen), 1)?;
                    plausible(&p("txqueuelen"), f64::from(m.txqueuelen), &QUEUE_PACKETS)?;
                    self.validate_placement(m, i)?;
                    probability(&p("loss"), m.loss, false)?;
                    if let Some(model) = &m.loss_model {
                        if m.loss != 0.0 {
                            return Err(Error::scenario(p("loss_model"), "give loss or loss_model, not both"));
                        }
                        match model {
                            LossModel::GilbertElliott(ge) => {
                                probability(&p("loss_model.p"), ge.p, true)?;
                                probability(&p("loss_model.r"), ge.r, true)?;
                                if ge.r == 0.0 {
                                    return Err(Error::scenario(
                                        p("loss_model.r"),
                                        "must be > 0: with r = 0 the bad state never ends",
                                    ));
                                }
                                probability(&p("loss_model.loss_good"), ge.loss_good, false)?;
                                probability(&p("loss_model.loss_bad"), ge.loss_bad, true)?;
                            }
                        }
                    }
                }
            }
        }
        let links: u64 = self.links.iter().map(|l| u64::from(l.base.count)).sum();
        if links > 4096 {
            return Err(Error::scenario("links", format!("at most 4096 links in a bond, got {links}")));
        }
        // A name is a link's identity in every output (rows, capture files, failovers) and in
        // `bond.primary`: two links of one name could not be told apart. (Checked once the number
        // of links is known to be bounded.)
        let mut named = rustc_hash::FxHashMap::default();
        let mut id = 0;
        for (i, spec) in self.links.iter().enumerate() {
            for _ in 0..spec.base.count {
                let name = spec.link_name(id);
                if let Some(other) = named.insert(name.clone(), id) {
                    return Err(Error::scenario(
                        format!("links.{i}.name"),
                        format!("gives link {id} the name `{name}`, which link {other} has; link names must differ"),
                    ));
                }
                id += 1;
            }
        }
        Ok(())
    }
}

/// A link's name is its file name in captures (`NAME.pcapng`) and its part of a dotted path
/// (`--set links.NAME.rate_mbps=...`, where digits alone are an index): 1 to 64 letters, digits,
/// `-` and `_`, not digits alone.
fn link_name(path: &str, name: &str) -> Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if name.is_empty() || name.len() > 64 || !name.chars().all(allowed) || name.chars().all(|c| c.is_ascii_digit()) {
        return Err(Error::scenario(
            path,
            format!(
                "a link's name is 1 to 64 letters, digits, - and _, not digits alone (it names the link's \
                 capture file and its part of a dotted path such as links.NAME.rate_mbps), got {name:?}"
            ),
        ));
    }
    Ok(())
}

/// The factors a link's send times can be stretched by at the extremes (uniform × windows ×
/// the intermittent phase), each with the field that brings it: below 1 (`shrink`, the smallest
/// factors reachable) or above 1 (`stretch`, the largest). A period or frame time that rounds to
/// 0 ns, or grows past a year, under one of them names that field.
impl Scenario {
    /// The time the smallest frame (an empty packet, padded to Ethernet's minimum, with
    /// `overhead` bytes) takes at `rate_mbps` plus `per_packet_ns`; an error at `path` when it is
    /// 0 ns, for frames would then leave in no time at all (`hint`: what else may help).
    fn smallest_frame_ns(
        &self,
        path: &str,
        rate_mbps: f64,
        overhead: u32,
        per_packet_ns: u64,
        hint: &str,
    ) -> Result<u64> {
        let frame = u64::from(self.l3_header_bytes().max(bondsim_bond::MIN_ETHERNET_PAYLOAD)) + u64::from(overhead);
        let bits = frame as f64 * 8.0;
        let tx = per_packet_ns + SimTime::from_secs_f64(bits / (rate_mbps * 1e6)).0;
        if tx > 0 {
            return Ok(tx);
        }
        Err(Error::scenario(
            path,
            format!(
                "at {} Mbit/s the smallest frame ({frame} bytes on the wire) takes 0 ns (simulated time counts \
                 whole nanoseconds): at most {} Mbit/s{hint}",
                num(rate_mbps),
                num((bits * 2e3).floor()),
            ),
        ))
    }

    /// `placement`, `tx_coalesce_us` and `downstream` of rate link `i`.
    fn validate_placement(&self, m: &RateModel, i: usize) -> Result<()> {
        let p = |field: &str| format!("links.{i}.{field}");
        duration(&p("tx_coalesce_us"), m.tx_coalesce_us, 1e-6, true)?;
        plausible(&p("tx_coalesce_us"), m.tx_coalesce_us, &HOST_FRAME_US)?;
        duration(&p("rx_coalesce_us"), m.rx_coalesce_us, 1e-6, true)?;
        plausible(&p("rx_coalesce_us"), m.rx_coalesce_us, &HOST_FRAME_US)?;
        if m.rx_coalesce_us > 0.0 && self.host.rx_coalesce_us + self.server_host.rx_coalesce_us > 0.0 {
            return Err(Error::scenario(
                p("rx_coalesce_us"),
                "throttles this link's NICs, and [host] or [server_host] rx_coalesce_us a machine's polls: \
                 set one or the other",
            ));
        }
        if m.tx_coalesce_us > 0.0 && m.placement != Placement::Nic {
            return Err(Error::scenario(
                p("tx_coalesce_us"),
                format!(
                    "is a NIC's TX-completion coalescing: it needs placement = \"nic\", and this link is \
                     placement = \"{}\"",
                    m.placement.name()
                ),
            ));
        }
        // Any placement: it says where the host stops counting the frame of the stage before the
        // line (the NIC, a shaper in front of it, or a TUN device before the bond).
        let Some(line) = &m.downstream else { return Ok(()) };
        rate_mbps(&p("downstream.rate_mbps"), line.rate_mbps)?;
        self.smallest_frame_ns(&p("downstream.rate_mbps"), line.rate_mbps, m.overhead_bytes, 0, "")?;
        duration(&p("downstream.delay_us"), line.delay_us, 1e-6, true)?;
        plausible(&p("downstream.delay_us"), line.delay_us, &DELAY_US)?;
        at_least(&p("downstream.queue_packets"), u64::from(line.queue_packets), 1)?;
        plausible(&p("downstream.queue_packets"), f64::from(line.queue_packets), &QUEUE_PACKETS)
    }

    /// A paced link's rate (a packet of `chunk_bytes` and its headers per `period_ms`) must be
    /// one a real link has ([`RATE_MBPS`]): a period of a nanosecond would carry Tbit/s.
    fn paced_rate_plausible(&self, path: &str, period_ms: f64) -> Result<()> {
        let packet = u64::from(self.chunk_bytes()) + u64::from(self.l3_header_bytes());
        let mbps = packet as f64 * 8.0 / (period_ms * 1e3);
        if (RATE_MBPS.low..=RATE_MBPS.high).contains(&mbps) {
            return Ok(());
        }
        Err(Error::scenario(
            path,
            format!(
                "a packet of {packet} bytes ({} and its headers) every {} ms is {} Mbit/s: a paced link's rate \
                 must be {}",
                self.sender.chunk_field(),
                num(period_ms),
                num(mbps),
                range_of(&RATE_MBPS)
            ),
        ))
    }
}

fn factor_extremes(base: &LinkBase, i: usize, shrink: bool) -> Vec<(String, f64)> {
    let mut out = vec![(String::new(), 1.0)];
    let mut f = 1.0;
    let mut push = |path: String, factor: f64| {
        if (shrink && factor < 1.0) || (!shrink && factor > 1.0) {
            f *= factor;
            out.push((path, f));
        }
    };
    push(format!("links.{i}.slowdown"), base.slowdown);
    for (k, win) in base.slow_windows.iter().enumerate() {
        push(format!("links.{i}.slow_windows.{k}.slowdown"), win.slowdown);
    }
    if let Some(im) = &base.intermittent {
        push(format!("links.{i}.intermittent.slowdown"), im.slowdown);
    }
    out
}

/// Whether a span of `ns` nanoseconds stays within a year under every factor of `factors`
/// (the clock would overflow soon after); the error names the span's field or the factor.
fn stays_within_a_year(path: &str, what: &str, ns: u64, factors: &[(String, f64)]) -> Result<()> {
    for (field, factor) in factors {
        let secs = ns as f64 * factor / 1e9;
        if secs <= MAX_SECONDS {
            continue;
        }
        return Err(if field.is_empty() {
            Error::scenario(path, format!("{what} would take {} s, more than a year", num(secs)))
        } else {
            Error::scenario(
                field.as_str(),
                format!(
                    "with send times scaled by {} here, {what} ({path}) would take {} s, more than a year",
                    num(*factor),
                    num(secs)
                ),
            )
        });
    }
    Ok(())
}

/// Whether a span of `ns` nanoseconds keeps at least 1 ns under every factor of `factors`;
/// the error names the span's own field (`path`) or the factor that shrinks it to nothing.
fn stays_positive(path: &str, what: &str, ns: u64, factors: &[(String, f64)]) -> Result<()> {
    for (field, factor) in factors {
        if SimTime(ns).scaled(*factor).as_nanos() > 0 {
            continue;
        }
        return Err(if field.is_empty() {
            Error::scenario(path, format!("{what} would take 0 ns (simulated time counts whole nanoseconds)"))
        } else {
            Error::scenario(
                field.as_str(),
                format!(
                    "with send times scaled by {} here, {what} ({path}, {ns} ns) would take 0 ns; \
                     simulated time counts whole nanoseconds",
                    num(*factor)
                ),
            )
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{base, error_of};
    use super::*;

    #[test]
    fn a_link_name_is_a_file_name_and_a_path_segment() {
        let named = |name: &str| {
            let mut v = base();
            v["links"][0]["name"] = name.into();
            v
        };
        for good in ["eth0", "wan-1", "line_10", "10g"] {
            Scenario::from_json(&named(good).to_string()).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in ["", "3", "a.b", "a/b", "eth 0", &"x".repeat(65)] {
            let (path, msg) = error_of(named(bad));
            assert_eq!(path, "links.0.name", "{bad:?}");
            assert!(msg.contains("not digits alone") && msg.ends_with(&format!("got {bad:?}")), "{msg}");
        }
    }

    #[test]
    fn loss_is_a_probability_and_the_loss_model_a_table() {
        let with = |link: serde_json::Value| {
            let mut v = base();
            v["links"][0] = link;
            v
        };
        let s = Scenario::from_json(&with(serde_json::json!({"rate_mbps": 100})).to_string()).unwrap();
        let LinkModel::Rate(m) = &s.links[0].model else { panic!() };
        assert_eq!((m.loss, &m.loss_model), (0.0, &None));
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["links"][0]["loss"], 0.0);
        for bad in [1.5, 1.0, -0.1] {
            let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss": bad})));
            assert_eq!((path.as_str(), msg), ("links.0.loss", format!("must be in [0, 1), got {bad}")));
        }
        // NaN and infinity are not JSON: the front turns them into strings, or they come as numbers that overflow.
        let (_, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss": "nan"})));
        assert_eq!(msg, "must be a number, got \"nan\"");
        assert!(probability("x", f64::NAN, true).is_err() && probability("x", f64::INFINITY, true).is_err());
        let ge = serde_json::json!({"kind": "gilbert_elliott", "p": 0.01, "r": 0.3});
        let s =
            Scenario::from_json(&with(serde_json::json!({"rate_mbps": 100, "loss_model": ge})).to_string()).unwrap();
        let LinkModel::Rate(m) = &s.links[0].model else { panic!() };
        assert_eq!(
            m.loss_model,
            Some(LossModel::GilbertElliott(GilbertElliott { p: 0.01, r: 0.3, loss_good: 0.0, loss_bad: 1.0 }))
        );
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap().to_json(), s.to_json());
        let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss": 0.1, "loss_model": ge})));
        assert_eq!(path, "links.0.loss_model");
        assert!(msg.contains("loss") && msg.contains("loss_model") && msg.contains("not both"), "{msg}");
        for (field, value, says) in [
            ("p", 1.5, "must be in [0, 1], got 1.5"),
            ("r", 0.0, "must be > 0"),
            ("r", -1.0, "must be in [0, 1], got -1"),
            ("loss_good", 1.0, "must be in [0, 1), got 1"),
            ("loss_bad", 2.0, "must be in [0, 1], got 2"),
        ] {
            let mut model = ge.clone();
            model[field] = value.into();
            let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss_model": model})));
            assert_eq!(path, format!("links.0.loss_model.{field}"));
            assert!(msg.starts_with(says), "{field}: {msg}");
        }
        let (path, msg) =
            error_of(with(serde_json::json!({"rate_mbps": 100, "loss_model": {"kind": "gilbert_elliott", "p": 0.1}})));
        assert_eq!(path, "links.0.loss_model");
        assert!(msg.contains("missing field `r`"), "{msg}");
        let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss_model": {"kind": "bursty"}})));
        assert!(path.starts_with("links.0.loss_model") && msg.contains("gilbert_elliott"), "{path}: {msg}");
        let (path, msg) = error_of(with(serde_json::json!({"period_ms": 5, "loss": 0.1})));
        assert_eq!(path, "links.0.loss");
        assert!(msg.contains("kind = \"rate\""), "{msg}");
    }

    #[test]
    fn spans_stretched_past_a_year_are_errors() {
        // (A rate below the plausible floor is refused before: see
        // `every_physical_field_is_refused_just_outside_its_bound_and_taken_just_inside`.)
        let mut v = base();
        v["sender"] = serde_json::json!({"chunk_bytes": 60000});
        v["links"][0] = serde_json::json!({"period_ms": 1.5e6, "slowdown": 1e6});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.slowdown");
        assert!(msg.contains("links.0.period_ms") && msg.contains("more than a year"), "{msg}");
        let mut v = base();
        v["sender"] = serde_json::json!({"chunk_bytes": 1400});
        v["links"][0] = serde_json::json!({"rate_mbps": 3e-4, "slowdown": 1e6});
        assert_eq!(error_of(v).0, "links.0.slowdown");
        let mut v = base();
        v["links"][0] = serde_json::json!({"period_ms": 20, "slowdown": 1e6});
        Scenario::from_json(&v.to_string()).unwrap(); // 20000 s a packet: slow, but within a year
    }

    #[test]
    fn rates_so_high_that_a_frame_takes_no_time_are_errors() {
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 1.6e6, "overhead_bytes": 0});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.rate_mbps");
        assert!(msg.contains("takes 0 ns") && msg.contains("at most"), "{msg}");
        // 100 Gbit/s is fine, and so is a very fast link with a per-frame cost.
        for link in
            [serde_json::json!({"rate_mbps": 1e5}), serde_json::json!({"rate_mbps": 1.6e6, "per_packet_us": 0.01})]
        {
            let mut v = base();
            v["links"][0] = link;
            Scenario::from_json(&v.to_string()).unwrap();
        }
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 1e5, "slowdown": 1e-3});
        assert_eq!(error_of(v).0, "links.0.slowdown");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "cbr", "rate_mbps": 1.6e6, "chunk_bytes": 1});
        let (path, msg) = error_of(v);
        assert_eq!(path, "sender.rate_mbps");
        assert!(msg.contains("every 0 ns"), "{msg}");
    }
}
