//! Prints what one rank learns from its launcher, one line:
//! `rank R size S local L/LS node N/NN mode M cards OK`, after exchanging a
//! business card with every rank and passing a fence. With argument `abort`, rank 1
//! (0 when alone) asks the launcher to end the job with code 7.
//!
//! `myrix mpiexec -n 4 target/debug/examples/job_info`, `mpiexec.hydra -n 2 …`,
//! `srun --mpi=pmi2 -n 2 …`, or alone.

fn main() {
    let mut job = match myrix_mpi::Job::init() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("job_info: {e}");
            std::process::exit(3);
        }
    };
    let mode = job.pmi().mode();
    let cards = match job.exchange(
        "card",
        &format!("host-{}-pid-{}", job.rank, std::process::id()),
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("job_info: exchange: {e}");
            std::process::exit(4);
        }
    };
    let ok = cards.len() == job.size as usize
        && cards
            .iter()
            .enumerate()
            .all(|(r, c)| c.starts_with(&format!("host-{r}-pid-")));
    println!(
        "rank {} size {} local {}/{} node {}/{} mode {:?} cards {}",
        job.rank,
        job.size,
        job.local_rank,
        job.local_size,
        job.node_id,
        job.nnodes,
        mode,
        if ok { "OK" } else { "BAD" }
    );
    if std::env::args().nth(1).as_deref() == Some("abort") {
        if job.rank == if job.size > 1 { 1 } else { 0 } {
            job.abort(7, "job_info abort");
        }
        // The others wait for a fence the aborting rank never enters.
        let _ = job.barrier();
        std::process::exit(9);
    }
    if let Err(e) = job.barrier().and_then(|()| job.finalize()) {
        eprintln!("job_info: {e}");
        std::process::exit(5);
    }
}
