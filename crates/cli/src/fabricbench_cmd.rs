//! `myrix bench fabric`: an MX ping-pong between two hosts of a simulated Myrinet, the
//! MX engines driven by the flit-level model (`sim::mxnet`). Times are simulated.

use clap::Args;
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_mx::engine::{Code, Config as MxConfig, RecvBuf};
use myrix_sim::mxnet::MxNet;
use myrix_sim::{Config, Sim};

use crate::CliError;

#[derive(Args)]
pub struct FabricBenchArgs {
    #[command(flatten)]
    net: crate::topo_cmd::NetworkArgs,
    /// The two hosts (default: the first and the last).
    #[arg(long, default_value_t = 0)]
    from: u32,
    #[arg(long)]
    to: Option<u32>,
    /// Message sizes, bytes, comma-separated.
    #[arg(long, default_value = "0,8,128,4096,32768,1048576")]
    sizes: String,
    /// Round trips per size.
    #[arg(long, default_value_t = 10)]
    iters: u32,
    /// Background traffic from every host, flits/ns/switch (uniform, 32-byte messages).
    #[arg(long)]
    load: Option<f64>,
    /// Switch model, as `myrix sim --switch-model`.
    #[arg(long, default_value = "shared-unit")]
    switch_model: String,
    /// Channel release, as `myrix sim --channel-release`.
    #[arg(long, default_value = "drain")]
    channel_release: String,
}

const KEY: u32 = 0x6d78;
/// Simulated time allowed per round trip before the run is declared stuck.
const LIMIT_NS: u64 = 1_000_000_000;

pub fn run(a: FabricBenchArgs) -> Result<(), CliError> {
    let sizes: Vec<usize> = a
        .sizes
        .split(',')
        .map(|x| x.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| CliError::Input(format!("--sizes '{}': expected byte counts", a.sizes)))?;
    if a.iters == 0 {
        return Err(CliError::Input("--iters must be at least 1".into()));
    }
    let (switch_model, channel_release) =
        crate::sim_cmd::parse_models(&a.switch_model, &a.channel_release)?;
    let (t, ud) = a.net.build()?;
    let hosts = t.num_hosts() as u32;
    let to = a.to.unwrap_or(hosts - 1);
    if a.from >= hosts || to >= hosts || a.from == to {
        return Err(CliError::Input(format!(
            "--from and --to: two different hosts below {hosts}"
        )));
    }
    let mx = MxConfig::default();
    if let Some(&n) = sizes.iter().find(|&&n| n > mx.max_message) {
        return Err(CliError::Input(format!(
            "--sizes: {n} B is over MX's {} B limit",
            mx.max_message
        )));
    }
    let routes = RouteTable::new(&t, &ud, Policy::Osud);
    let cfg = Config {
        load: a.load.unwrap_or(0.01),
        seed: a.net.seed,
        warmup: 0,
        measure: u64::MAX / 4,
        switch_model,
        channel_release,
        ..Config::default()
    };
    let mut sim = Sim::new(cfg, &t, &routes).map_err(|e| CliError::Input(e.to_string()))?;
    if a.load.is_none() {
        sim.quiet();
    }
    let addrs: Vec<u64> = t.hosts().iter().map(|h| h.address).collect();
    let mut n = MxNet::new(sim, &addrs, &mx, KEY);
    let (x, y) = (a.from as usize, to as usize);
    let stuck = |what: &str| CliError::Input(format!("{what}: no answer within 1 s simulated"));

    let peer_y = n
        .connect(x, y, addrs[y], KEY, LIMIT_NS)
        .map_err(CliError::Input)?;
    let peer_x = n
        .connect(y, x, addrs[x], KEY, LIMIT_NS)
        .map_err(CliError::Input)?;

    let load = a
        .load
        .map_or("none".to_string(), |l| format!("{l} flits/ns/switch"));
    outln!(
        "# myrix bench fabric: MX ping-pong between hosts {x} and {y} of {} (simulated), up*/down* OSUD, background traffic {load}, switch model {}, channel release {}, {} round trips per size",
        t.name(),
        switch_model.name(),
        channel_release.name(),
        a.iters
    );
    outln!(
        "{:>9} {:>14} {:>12} {:>16}",
        "bytes",
        "one-way us",
        "MB/s",
        "frames per msg"
    );
    for &len in &sizes {
        let data = vec![0xa5u8; len];
        let sent0 = n.frames_sent;
        let t0 = n.now_ns();
        for _ in 0..a.iters {
            for (src, dst, peer) in [(x, y, peer_y), (y, x, peer_x)] {
                let now = n.now_ns();
                let r = n.engines[dst]
                    .irecv(now, RecvBuf::One(vec![0; len]), 1, u64::MAX, 0)
                    .map_err(|e| CliError::Input(e.to_string()))?;
                let s = n.engines[src]
                    .isend(now, peer, &[&data], 1, 0, false)
                    .map_err(|e| CliError::Input(e.to_string()))?;
                if !n.run_until(LIMIT_NS, |n| n.engines[dst].ready(r)) {
                    return Err(stuck("a message"));
                }
                let (st, _) = n.engines[dst].test(r).ok().flatten().expect("ready");
                if st.code != Code::Success || st.xfer_len != len {
                    return Err(CliError::Input(format!("a {len} B message ended {st:?}")));
                }
                // The send completes once acknowledged; it is not waited for, as in a
                // ping-pong the answer is what matters.
                let _ = n.engines[src].forget(s);
            }
        }
        let one_way = (n.now_ns() - t0) as f64 / (2 * a.iters) as f64;
        let frames = (n.frames_sent - sent0) as f64 / (2 * a.iters) as f64;
        outln!(
            "{:>9} {:>14.3} {:>12.1} {:>16.1}",
            len,
            one_way / 1000.0,
            len as f64 / one_way * 1000.0,
            frames
        );
    }
    Ok(())
}
