//! An MX ping-pong between two hosts of a simulated Myrinet: the hosts' MX engines
//! driven by the flit-level model (`sim::mxnet`), optionally under background traffic.
//! Times are simulated, so the figures are exact and repeatable.
//!
//! It owns the ping-pong protocol over the simulated fabric; it never prints. The
//! receive buffers are reused from one message to the next: nothing is allocated per
//! message by this loop.

use crate::LabError;
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::updown::UpDown;
use myrix_fabric::Topology;
use myrix_link::Nanos;
use myrix_mx::engine::{Code, Config as MxConfig, PeerId, RecvBuf};
use myrix_sim::hostnet::carrier;
use myrix_sim::mxnet::MxNet;
use myrix_sim::{ChannelRelease, Config, Sim, SwitchModel};

const KEY: u32 = 0x6d78;
/// Simulated time allowed per round trip before the run is declared stuck.
const LIMIT: Nanos = Nanos(1_000_000_000);

/// The routes of the benchmark: up*/down*, one shortest route per pair (OSUD).
pub fn routes(t: &Topology, ud: &UpDown) -> RouteTable {
    RouteTable::new(t, ud, Policy::Osud)
}

/// The largest message MX carries, bytes.
pub fn max_message() -> usize {
    MxConfig::default().max_message
}

/// What a benchmark runs.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// The two hosts (distinct, below the topology's host count).
    pub from: usize,
    pub to: usize,
    /// Round trips per size.
    pub iters: u32,
    /// Background traffic from every host, flits/ns/switch; `None`: a quiet network.
    pub load: Option<f64>,
    /// The traffic's seed.
    pub seed: u64,
    pub switch_model: SwitchModel,
    pub channel_release: ChannelRelease,
}

impl Setup {
    /// The simulator of the run: the study's model with this setup's switch readings,
    /// seed and background traffic.
    pub fn carrier<'a>(
        &self,
        t: &'a Topology,
        routes: &'a RouteTable,
    ) -> Result<Sim<'a>, LabError> {
        let cfg = Config {
            seed: self.seed,
            switch_model: self.switch_model,
            channel_release: self.channel_release,
            ..Config::default()
        };
        carrier(cfg, t, routes, self.load).map_err(|e| LabError::Invalid(e.to_string()))
    }
}

/// One message size's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FabricRow {
    pub bytes: usize,
    /// Simulated one-way time, ns: half a round trip, averaged.
    pub one_way_ns: f64,
    /// Frames sent per one-way message (acks included).
    pub frames_per_message: f64,
}

/// Two connected hosts on a running simulated network.
pub struct FabricBench<'a> {
    net: MxNet<'a>,
    x: usize,
    y: usize,
    peer_y: PeerId,
    peer_x: PeerId,
    iters: u32,
    /// The receive buffer, handed back by each completed receive.
    spare: Option<RecvBuf>,
    data: Vec<u8>,
    load: Option<f64>,
}

/// Whether the background traffic is past what the network carries: a host's queue of
/// generated messages filled. From then on the engines' frames wait behind a full
/// queue (or are refused), so waiting out the limit would only take minutes to say so.
fn saturated(n: &MxNet<'_>) -> bool {
    n.sim.source_full() > 0
}

/// The error of a run that stopped: saturation named as the cause when it is, else `e`.
fn failed(n: &MxNet<'_>, load: Option<f64>, e: String) -> LabError {
    match load {
        Some(l) if saturated(n) => LabError::Failed(format!(
            "the background traffic (--load {l}) saturates the network: a host's queue of generated messages filled after {:.1} ms simulated, so the ping-pong cannot be measured; use a lower load (`myrix sim --load {l}` reports the network's saturation)",
            n.clock().0 as f64 / 1e6
        )),
        _ => LabError::Failed(e),
    }
}

impl<'a> FabricBench<'a> {
    /// Starts the network and connects the two hosts both ways.
    pub fn new(t: &'a Topology, routes: &'a RouteTable, s: &Setup) -> Result<Self, LabError> {
        Self::new_watched(t, routes, s, Box::new(|_| {}))
    }

    /// [`FabricBench::new`], with `watch` told the simulated clock every fraction of a
    /// millisecond while connecting and measuring ([`MxNet::set_watch`]): progress for
    /// long runs (a loaded network can take minutes).
    pub fn new_watched(
        t: &'a Topology,
        routes: &'a RouteTable,
        s: &Setup,
        watch: Box<dyn FnMut(Nanos) + 'a>,
    ) -> Result<Self, LabError> {
        let sim = s.carrier(t, routes)?;
        let addrs: Vec<u64> = t.hosts().iter().map(|h| h.address).collect();
        let mut net = MxNet::new(sim, &addrs, &MxConfig::default(), KEY);
        net.set_watch(watch);
        let (x, y) = (s.from, s.to);
        let peer_y = net.connect_unless(x, y, addrs[y], KEY, LIMIT, saturated);
        let peer_y = peer_y.map_err(|e| failed(&net, s.load, e))?;
        let peer_x = net.connect_unless(y, x, addrs[x], KEY, LIMIT, saturated);
        let peer_x = peer_x.map_err(|e| failed(&net, s.load, e))?;
        Ok(FabricBench {
            net,
            x,
            y,
            peer_y,
            peer_x,
            iters: s.iters.max(1),
            spare: None,
            data: Vec::new(),
            load: s.load,
        })
    }

    /// `iters` round trips of `len` bytes; the receive completes the message (its send
    /// completes once acknowledged, and is not waited for: in a ping-pong the answer
    /// is what matters).
    pub fn measure(&mut self, len: usize) -> Result<FabricRow, LabError> {
        let (x, y) = (self.x, self.y);
        self.data.clear();
        self.data.resize(len, 0xa5);
        let n = &mut self.net;
        let sent0 = n.frames_sent;
        let t0 = n.now_ns();
        for _ in 0..self.iters {
            for (src, dst, peer) in [(x, y, self.peer_y), (y, x, self.peer_x)] {
                let now = n.now_ns();
                let buf = match self.spare.take() {
                    Some(RecvBuf::One(mut v)) => {
                        v.clear();
                        v.resize(len, 0);
                        RecvBuf::One(v)
                    }
                    _ => RecvBuf::One(vec![0; len]),
                };
                let r = n.engines[dst]
                    .irecv(now, buf, 1, u64::MAX, 0)
                    .map_err(|e| LabError::Failed(e.to_string()))?;
                let s = n.engines[src]
                    .isend(now, peer, &[&self.data], 1, 0, false)
                    .map_err(|e| LabError::Failed(e.to_string()))?;
                if !n.run_until(LIMIT, |n| n.engines[dst].ready(r) || saturated(n)) {
                    let e = "a message: no answer within 1 s simulated".to_string();
                    return Err(failed(n, self.load, e));
                }
                if !n.engines[dst].ready(r) {
                    return Err(failed(n, self.load, String::new()));
                }
                let (st, back) = n.engines[dst].test(r).ok().flatten().expect("ready");
                if st.code != Code::Success || st.xfer_len != len {
                    return Err(LabError::Failed(format!("a {len} B message ended {st:?}")));
                }
                self.spare = back;
                let _ = n.engines[src].forget(s);
            }
        }
        let one_way = (n.now_ns() - t0) as f64 / (2 * self.iters) as f64;
        let frames = (n.frames_sent - sent0) as f64 / (2 * self.iters) as f64;
        Ok(FabricRow {
            bytes: len,
            one_way_ns: one_way,
            frames_per_message: frames,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use myrix_fabric::testing::irregular;
    use myrix_fabric::updown::Root;

    #[test]
    fn a_tiny_message_is_one_frame_and_the_figures_repeat() {
        let t = irregular(4, 1);
        let routes = routes(&t, &UpDown::new(&t, Root::LowestId));
        let s = Setup {
            from: 0,
            to: t.num_hosts() - 1,
            iters: 2,
            load: None,
            seed: 1,
            switch_model: Config::default().switch_model,
            channel_release: Config::default().channel_release,
        };
        let run = || {
            let mut b = FabricBench::new(&t, &routes, &s).unwrap();
            (b.measure(8).unwrap(), b.measure(5000).unwrap())
        };
        let (tiny, medium) = run();
        assert_eq!(tiny.frames_per_message, 1.0);
        assert!(
            tiny.one_way_ns > 100.0 && tiny.one_way_ns < 1500.0,
            "{tiny:?}"
        );
        assert!(medium.frames_per_message >= 2.0, "{medium:?}");
        assert_eq!(run(), (tiny, medium), "simulated time is exact");
    }
}
