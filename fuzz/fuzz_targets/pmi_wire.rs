//! Any bytes as a PMI stream, in both framings, split at every position the input
//! chooses: the decoder, the job-layout parsers and the launcher's PMI-1 server never
//! panic, and what parses re-encodes to a message that parses the same.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_mpi::job::{parse_process_mapping, parse_slurm_tasks_per_node};
use myrix_mpi::pmi::server::Server;
use myrix_mpi::pmi::wire::{parse_pmi2_body, Decoder, Framing};

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(0, |&b| b as usize) % (data.len() + 1);
    let mut server = Server::new(3, "kvs");
    for framing in [Framing::Lines, Framing::Length6] {
        let mut d = Decoder::new(framing);
        d.feed(&data[..split]);
        d.feed(&data[split..]);
        while let Some(m) = d.next_message() {
            if let Ok(m) = m {
                // PMI-2 escaping is unambiguous when names hold no `;` or `=`.
                let plain = |s: &str| !s.contains(';') && !s.contains('=');
                if plain(&m.cmd) && m.args.iter().all(|(k, _)| plain(k) && !k.is_empty()) {
                    let again = m.to_pmi2();
                    assert_eq!(parse_pmi2_body(&again[6..]).as_ref(), Ok(&m));
                }
                let _ = server.handle(split as u32 % 4, &m);
            }
        }
    }
    let text = String::from_utf8_lossy(data);
    let _ = parse_process_mapping(&text, split as u32);
    let _ = parse_slurm_tasks_per_node(&text);
});
