//! Any bytes as the header of a one-sided request record from a peer (windows spanning
//! nodes): decoding never panics, and what decodes re-encodes to the same header.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_mpi::rma::net::wire::{decode, encode, HDR, SLOT};

fuzz_target!(|data: &[u8]| {
    let mut hdr = [0u8; HDR];
    let n = data.len().min(HDR);
    hdr[..n].copy_from_slice(&data[..n]);
    if let Ok(h) = decode(&hdr) {
        let mut slot = vec![0u8; SLOT];
        let len = encode(&mut slot, h.tag.wrapping_sub(1), h.kind, h.op, h.basic, h.off, &vec![0; h.len]);
        assert!(len <= SLOT);
        let again = decode(slot[..HDR].try_into().expect("HDR bytes")).expect("re-encoded header decodes");
        assert_eq!(again, h);
    }
});
