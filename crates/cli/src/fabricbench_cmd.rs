//! `myrix bench fabric`: an MX ping-pong between two hosts of a simulated Myrinet, the
//! MX engines driven by the flit-level model (`sim::mxnet`). Times are simulated. The
//! protocol is `myrix_lab::fabricbench`; this file parses and prints.

use clap::Args;
use myrix_lab::fabricbench::{self, FabricBench, Setup};
use myrix_lab::report;

use crate::mxbench_cmd::Format;
use crate::CliError;

#[derive(Args)]
pub struct FabricBenchArgs {
    #[command(flatten)]
    net: crate::topo_cmd::NetworkArgs,
    /// The host that starts each round trip (default: the first).
    #[arg(long, default_value_t = 0)]
    from: u32,
    /// The host that answers (default: the last).
    #[arg(long)]
    to: Option<u32>,
    /// Message sizes, bytes, comma-separated, each at most 16 MiB.
    #[arg(long, default_value = "0,8,128,4096,32768,1048576")]
    sizes: String,
    /// Round trips per size.
    #[arg(long, default_value_t = 10)]
    iters: u32,
    /// Background traffic from every host, flits/ns/switch (uniform, 32-byte messages).
    #[arg(long)]
    load: Option<f64>,
    #[command(flatten)]
    models: crate::parse::ModelArgs,
    /// table: a heading, then a row as each size completes; json: one array at the end,
    /// with the names of `bench pingpong --format json`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

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
    let crate::parse::ModelArgs {
        switch_model,
        channel_release,
    } = a.models;
    let (t, ud) = a.net.build()?;
    let hosts = t.num_hosts() as u32;
    let to = a.to.unwrap_or(hosts - 1);
    if a.from >= hosts || to >= hosts || a.from == to {
        return Err(CliError::Input(format!(
            "--from and --to: two different hosts below {hosts}"
        )));
    }
    if let Some(l) = a.load {
        crate::parse::check_load(l, "--load")?;
    }
    // A simulated transfer is flit by flit: 16 MiB already takes minutes.
    let max = fabricbench::max_message().min(16 << 20);
    if let Some(&n) = sizes.iter().find(|&&n| n > max) {
        return Err(CliError::Input(format!(
            "--sizes: {n} B is over the {max} B limit"
        )));
    }
    let routes = fabricbench::routes(&t, &ud);
    let setup = Setup {
        from: a.from as usize,
        to: to as usize,
        iters: a.iters,
        load: a.load,
        seed: a.net.seed,
        switch_model,
        channel_release,
    };
    // Every failure here is reported as bad input (exit 2), as it always was; a load
    // past saturation is named as such by the bench.
    let input = |e: myrix_lab::LabError| CliError::Input(e.to_string());
    // A spinner on standard error (if a terminal) with the simulated clock: under
    // heavy background traffic a size, or even connecting, can take minutes.
    let progress = crate::progress::bar(
        None,
        "{spinner} {msg}: {prefix} simulated, {elapsed} so far",
    );
    progress.set_prefix(crate::progress::simulated(myrix_link::Picos(0)));
    progress.set_message(format!("connecting hosts {} and {to}", a.from));
    let watched = progress.clone();
    let watch = Box::new(move |now: myrix_link::Nanos| {
        watched.set_prefix(crate::progress::simulated(now.into()))
    });
    let bench = FabricBench::new_watched(&t, &routes, &setup, watch).map_err(input);
    let mut bench = bench.inspect_err(|_| progress.finish_and_clear())?;
    let load = a
        .load
        .map_or("none".to_string(), |l| format!("{l} flits/ns/switch"));
    let json = a.format == Format::Json;
    // Lines go out with the spinner taken off the terminal, and it ends before we do.
    let result = (|| -> Result<Vec<_>, CliError> {
        if !json {
            progress.suspend(|| -> Result<(), CliError> {
                outln!(
                    "# myrix bench fabric: MX ping-pong between hosts {} and {to} of {} (simulated), up*/down* OSUD, background traffic {load}, switch model {}, channel release {}, {} round trips per size",
                    a.from,
                    t.name(),
                    switch_model.name(),
                    channel_release.name(),
                    a.iters
                );
                crate::out(&report::fabric_head())
            })?;
        }
        let mut rows = Vec::with_capacity(sizes.len());
        for (i, &len) in sizes.iter().enumerate() {
            progress.set_message(format!("{len} B, size {} of {}", i + 1, sizes.len()));
            let row = bench.measure(len).map_err(input)?;
            if !json {
                progress.suspend(|| crate::out(&report::fabric_row(&row)))?;
            }
            rows.push(row);
        }
        Ok(rows)
    })();
    progress.finish_and_clear();
    let rows = result?;
    if json {
        crate::out(&report::fabric_json(&rows))?;
    }
    Ok(())
}
