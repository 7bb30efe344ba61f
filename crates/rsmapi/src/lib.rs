//! `librsmapi`: Sun's RSMAPI (`rsmapi.h`, man section 3RSM) as a C shared library over
//! [`myrix_rsm`].
//!
//! `cargo build` produces `target/<profile>/librsmapi.so` and writes
//! `target/<profile>/pkgconfig/rsmapi.pc` (see `myrix-capi-build`), so
//!
//! ```text
//! cc prog.c $(PKG_CONFIG_PATH=target/release/pkgconfig pkg-config --cflags --libs rsmapi)
//! ```
//!
//! builds an RSMAPI program that runs without `LD_LIBRARY_PATH`. The header is
//! `include/rsmapi.h`; `docs/rsmapi.md` says what is supported.
//!
//! Every function checks what C gives it: handles are numbers looked up in tables
//! ([`handles`]), never pointers the library follows, so a NULL, freed or forged
//! handle gets RSMERR_BAD_*_HNDL; NULL pointers, negative offsets and impossible
//! lengths get their RSMERR numbers; no panic crosses into C ([`ffi::guard`]).
//! `unsafe` is confined to the functions C calls and the helpers in [`ffi`], each
//! block with the reason it is sound.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod barrier;
pub mod controller;
pub mod exit;
pub mod export;
pub mod ffi;
pub mod handles;
pub mod import;
pub mod objects;
pub mod segid;
pub mod sgio;
pub mod signal;
