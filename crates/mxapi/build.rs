//! Gives `libmyriexpress.so` its soname and writes `target/<profile>/pkgconfig/myriexpress.pc`
//! (through `myrix-capi-build`), so a C program builds with
//! `pkg-config --cflags --libs myriexpress` and runs without `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");
    myrix_capi_build::CLibrary::new("myriexpress")
        .description("MX (Myrinet Express) interface of myrix")
        .emit()
        .expect("writing myriexpress.pc");
}
