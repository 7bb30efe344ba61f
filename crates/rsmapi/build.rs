//! Gives librsmapi.so its soname and writes target/<profile>/pkgconfig/rsmapi.pc
//! (the rule for the profile directory is in myrix-capi-build's documentation).

fn main() {
    let out = myrix_capi_build::CLibrary::new("rsmapi")
        .description("Sun RSMAPI (remote shared memory) over myrix")
        .emit()
        .expect("myrix-rsmapi: writing rsmapi.pc");
    println!("cargo:rerun-if-changed=include/rsmapi.h");
    // Tests find the library and the .pc file here.
    println!("cargo:rustc-env=RSMAPI_LIB_DIR={}", out.lib_dir.display());
}
