//! Gives `libmyriexpress.so` its soname and writes `target/<profile>/pkgconfig/myriexpress.pc`
//! (through `myrix-capi-build`), so a C program builds with
//! `pkg-config --cflags --libs myriexpress` and runs without `LD_LIBRARY_PATH`; and
//! gives its symbols MX's versions (`myriexpress.map`: `mx_open_endpoint@@MX_0.9` …).
//!
//! Symbol versions need a version script, and rustc already passes the linker one of
//! its own (an anonymous node listing the exported symbols), which a linker refuses to
//! combine with named versions. So the link goes through a small wrapper, written to
//! `OUT_DIR` and found by the C compiler driver as `ld.bfd` (`-B`, `-fuse-ld=bfd`): it
//! replaces rustc's script by one with MX's versions, rustc's other exported symbols
//! under `MX_0.0`, everything else local, then runs the system's `ld.bfd`. Without
//! `ld.bfd` (GNU binutils) the library is linked as usual, unversioned, with a warning.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=myriexpress.map");
    myrix_capi_build::CLibrary::new("myriexpress")
        .description("MX (Myrinet Express) interface of myrix")
        .emit()
        .expect("writing myriexpress.pc");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        versions();
    }
}

/// The system's GNU linker, if any.
fn ld_bfd() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("ld.bfd"))
        .find(|p| p.is_file())
}

fn versions() {
    let Some(ld) = ld_bfd() else {
        println!(
            "cargo:warning=no ld.bfd: libmyriexpress.so is built without MX's symbol versions"
        );
        return;
    };
    let map = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("myriexpress.map");
    let dir = Path::new(&std::env::var("OUT_DIR").expect("cargo sets it")).join("ld");
    std::fs::create_dir_all(&dir).expect("OUT_DIR/ld");
    // The names the map versions: left out of MX_0.0.
    let text = std::fs::read_to_string(&map).expect("myriexpress.map");
    let versioned: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.trim().strip_prefix("global:"))
        .flat_map(|l| l.split(';'))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let wrapper = format!(
        r#"#!/bin/sh
# Written by crates/mxapi/build.rs: links libmyriexpress.so with MX's symbol versions.
# rustc's version script (its exported symbols) is replaced by one naming MX_0.0 for
# them, then the versions of {map}.
for a do
  shift
  case "$a" in
    --version-script=*)
      list=${{a#--version-script=}}
      out="$list.mx"
      {{
        printf 'MX_0.0 {{\n  global:\n'
        sed -n '/global:/,/local:/p' "$list" | sed -e '/global:/d' -e '/local:/d' -e 's/[ ;]//g' |
          grep -v -x -e '' {skip} | sed 's/.*/    &;/'
        printf '  local:\n    *;\n}};\n'
        grep -v '^#' '{map}'
      }} > "$out" || exit 1
      set -- "$@" "--version-script=$out" ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec '{ld}' "$@"
"#,
        map = map.display(),
        ld = ld.display(),
        skip = versioned
            .iter()
            .map(|s| format!("-e '{s}'"))
            .collect::<Vec<_>>()
            .join(" "),
    );
    let exe = dir.join("ld.bfd");
    std::fs::write(&exe, wrapper).expect("writing the link wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755))
        .expect("making the link wrapper executable");
    println!("cargo:rustc-cdylib-link-arg=-B{}", dir.display());
    println!("cargo:rustc-cdylib-link-arg=-fuse-ld=bfd");
}
