//! Gives librsmapi.so illumos's soname `librsm.so.2` and the link name `librsm.so` (both
//! links to it), so a program written for illumos links with its `-lrsm` and records
//! the NEEDED name it has there; and writes target/<profile>/pkgconfig/rsmapi.pc (the
//! rule for the profile directory is in myrix-capi-build's documentation).

fn main() {
    myrix_capi_build::CLibrary::new("rsmapi")
        .soname_as("librsm.so.2")
        .link_name("librsm.so")
        .description("Sun RSMAPI (remote shared memory) over myrix")
        .emit()
        .expect("myrix-rsmapi: writing rsmapi.pc");
    println!("cargo:rerun-if-changed=include/rsmapi.h");
}
