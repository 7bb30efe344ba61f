//! Writes `target/<profile>/pkgconfig/myriexpress.pc`, so a C program builds with
//! `pkg-config --cflags --libs myriexpress` and runs without `LD_LIBRARY_PATH` (the
//! library's directory goes in as an rpath).

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    // OUT_DIR is target/<profile>/build/<pkg>-<hash>/out: the library lands in
    // target/<profile>.
    let Some(libdir) = out.ancestors().nth(3) else {
        return;
    };
    write_pc(
        libdir,
        "myriexpress",
        "MX (Myrinet Express) interface of myrix",
        &manifest.join("include"),
    );
}

/// One `.pc` file for a cdylib in `libdir`, headers in `includedir`.
fn write_pc(libdir: &Path, name: &str, description: &str, includedir: &Path) {
    let dir = libdir.join("pkgconfig");
    if std::fs::create_dir_all(&dir).is_err() {
        println!("cargo:warning=cannot create {}", dir.display());
        return;
    }
    let text = format!(
        "libdir={lib}\nincludedir={inc}\n\nName: {name}\nDescription: {description}\n\
         Version: {ver}\nCflags: -I${{includedir}}\n\
         Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -l{name}\n",
        lib = libdir.display(),
        inc = includedir.display(),
        ver = std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
    );
    let path = dir.join(format!("{name}.pc"));
    // Rewritten only when different, so builds that run in parallel do not race on
    // an unchanged file.
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        let tmp = dir.join(format!(".{name}.pc.{}", std::process::id()));
        if std::fs::write(&tmp, &text).is_err() || std::fs::rename(&tmp, &path).is_err() {
            println!("cargo:warning=cannot write {}", path.display());
        }
    }
}
