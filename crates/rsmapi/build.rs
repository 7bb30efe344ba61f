//! Gives librsmapi.so its soname and writes target/<profile>/pkgconfig/rsmapi.pc
//! (the rule for the profile directory is in myrix-capi-build's documentation).

fn main() {
    myrix_capi_build::CLibrary::new("rsmapi")
        .description("Sun RSMAPI (remote shared memory) over myrix")
        .emit()
        .expect("myrix-rsmapi: writing rsmapi.pc");
    println!("cargo:rerun-if-changed=include/rsmapi.h");
}
