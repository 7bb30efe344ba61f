//! What connecting to a `shm` segment costs: `import_connect` + `disconnect` of a
//! segment this process published, timed N times in rounds; prints the median of
//! each round in microseconds. Run the same source on two trees to compare them:
//! `cargo run --release -p myrix-rsm --example connect_cost [-- N ROUNDS]`.

use std::time::Instant;

use myrix_rsm::{Controller, ExportFlags, Perm};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let c = Controller::get("shm").expect("shm controller");
    let e = c
        .export_create(1 << 16, ExportFlags::default())
        .expect("export");
    let id = e.publish(None, &[]).expect("publish");
    for r in 0..rounds {
        let mut t: Vec<f64> = (0..n)
            .map(|_| {
                let s = Instant::now();
                let i = c
                    .import_connect(c.local_node(), id, Perm::RDWR)
                    .expect("connect");
                i.disconnect().expect("disconnect");
                s.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        t.sort_by(f64::total_cmp);
        println!("round {r}: connect+disconnect median {:.1} us", t[n / 2]);
    }
}
