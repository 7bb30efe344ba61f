//! Build-script support for myrix's C libraries (`librsmapi`, later `libmyriexpress`
//! and the MPI library).
//!
//! A C library of myrix is a `cdylib` crate whose `build.rs` calls [`CLibrary::emit`]:
//!
//! ```no_run
//! // build.rs of a crate with `[lib] name = "rsmapi"`, `crate-type = ["cdylib", "rlib"]`
//! myrix_capi_build::CLibrary::new("rsmapi")
//!     .description("Sun RSMAPI over myrix")
//!     .emit()
//!     .expect("writing rsmapi.pc");
//! ```
//!
//! That does two things:
//!
//! * gives the shared library the soname `lib<name>.so` (unversioned: the file cargo
//!   writes has exactly that name, so nothing else has to be installed next to it), or
//!   the soname an ABI prescribes ([`CLibrary::soname_as`], e.g. `libmpi_abi.so.1`),
//!   made a symbolic link to `lib<name>.so` beside it, plus any other link names
//!   ([`CLibrary::link_name`], e.g. `librsm.so` so `-lrsm` links);
//! * writes `<profile dir>/pkgconfig/<name>.pc` with
//!   `Cflags: -I<crate>/include` and
//!   `Libs: -L<profile dir> -Wl,-rpath,<profile dir> -l<name>`,
//!   so `PKG_CONFIG_PATH=target/release/pkgconfig pkg-config --cflags --libs <name>`
//!   builds a program that finds the library at run time without `LD_LIBRARY_PATH`.
//!
//! # Which directory is the profile directory
//!
//! It is the directory cargo puts the final `lib<name>.so` in: `target/debug`,
//! `target/release`, or `target/<triple>/<profile>` when cross-compiling, wherever the
//! target directory is (`CARGO_TARGET_DIR`, `--target-dir`, `build.target-dir`).
//! The rule, in order:
//!
//! 1. `OUT_DIR` is always `<profile dir>/build/<package>-<hash>/out`: its third ancestor,
//!    checked to be the parent of a `build` directory, is the profile directory. This is
//!    right for every way of choosing the target directory and for custom profiles.
//! 2. Otherwise (an `OUT_DIR` of another shape): `CARGO_TARGET_DIR` (default: `target`
//!    under the workspace root, found as the nearest ancestor of the crate holding a
//!    `Cargo.lock`), then `TARGET` if it differs from `HOST`, then `PROFILE`.
//!
//! The `.pc` file is written whenever the build script runs, i.e. on a fresh build or
//! when `build.rs` changes; `cargo clean` brings a deleted one back.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// A C library built by the current crate.
#[derive(Debug, Clone)]
pub struct CLibrary {
    name: String,
    description: String,
    include_dir: Option<PathBuf>,
    version: Option<String>,
    set_soname: bool,
    soname: Option<String>,
    links: Vec<String>,
}

/// What [`CLibrary::emit`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// The directory the shared library is in (`target/<profile>`).
    pub lib_dir: PathBuf,
    /// The `.pc` file.
    pub pc_file: PathBuf,
}

impl CLibrary {
    /// The library `lib<name>.so`; `name` is the crate's `[lib] name`.
    pub fn new(name: &str) -> CLibrary {
        CLibrary {
            name: name.to_string(),
            description: format!("myrix C library {name}"),
            include_dir: None,
            version: None,
            set_soname: true,
            soname: None,
            links: Vec::new(),
        }
    }

    /// The `.pc` file's `Description:`.
    pub fn description(mut self, text: &str) -> CLibrary {
        self.description = text.to_string();
        self
    }

    /// Where the headers are (default: `include` in the crate's directory).
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> CLibrary {
        self.include_dir = Some(dir.into());
        self
    }

    /// The `.pc` file's `Version:` (default: the crate's version).
    pub fn version(mut self, version: &str) -> CLibrary {
        self.version = Some(version.to_string());
        self
    }

    /// Whether to pass `-Wl,-soname,lib<name>.so` to the linker (default: yes).
    pub fn soname(mut self, on: bool) -> CLibrary {
        self.set_soname = on;
        self
    }

    /// A soname other than `lib<name>.so`: the versioned name an ABI fixes (the MPI-5.0
    /// ABI's `libmpi_abi.so.1`), so a program linked against another implementation
    /// of the ABI loads this library unchanged. A program linked with `-l<name>`
    /// records this name as NEEDED, so [`CLibrary::emit`] makes it a symbolic link to
    /// `lib<name>.so` in the profile directory and in its `deps/` (the two places a
    /// program's rpath can name, see `myrix-ctest`).
    pub fn soname_as(mut self, soname: &str) -> CLibrary {
        self.soname = Some(soname.to_string());
        self
    }

    /// Another file name for the library (a symbolic link to `lib<name>.so` beside it,
    /// made like [`CLibrary::soname_as`]'s): `librsm.so`, so the `-lrsm` of a program
    /// written for illumos links.
    pub fn link_name(mut self, file: &str) -> CLibrary {
        self.links.push(file.to_string());
        self
    }

    /// From a build script: set the soname, make its links and write the `.pc` file.
    pub fn emit(&self) -> io::Result<Emitted> {
        let env = |k: &str| std::env::var_os(k).map(PathBuf::from);
        let manifest = env("CARGO_MANIFEST_DIR").ok_or_else(|| {
            io::Error::other("CARGO_MANIFEST_DIR is not set: not a build script?")
        })?;
        let lib_dir = profile_dir(&BuildEnv::from_process(), &manifest)?;
        let include = match &self.include_dir {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => manifest.join(d),
            None => manifest.join("include"),
        };
        let version = self
            .version
            .clone()
            .or_else(|| std::env::var("CARGO_PKG_VERSION").ok())
            .unwrap_or_else(|| "0".to_string());
        let pc_dir = lib_dir.join("pkgconfig");
        std::fs::create_dir_all(&pc_dir)?;
        let pc_file = pc_dir.join(format!("{}.pc", self.name));
        let text = pc_text(&self.name, &self.description, &version, &include, &lib_dir);
        // Write only on change, so a rerun leaves the file's time alone.
        if std::fs::read_to_string(&pc_file).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&pc_file, text)?;
        }
        if self.set_soname && std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("macos") {
            let file = format!("lib{}.so", self.name);
            let soname = self.soname.clone().unwrap_or_else(|| file.clone());
            println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
            let names = self.links.iter().chain(self.soname.iter());
            for dir in [lib_dir.clone(), lib_dir.join("deps")] {
                for link in names.clone().filter(|n| **n != file) {
                    symlink(&file, &dir.join(link))?;
                }
            }
        }
        println!("cargo:rerun-if-changed=build.rs");
        Ok(Emitted { lib_dir, pc_file })
    }
}

/// Makes `link` a symbolic link to `target` (a name in the same directory), replacing
/// whatever is there unless it already is that link. The link dangles until cargo
/// writes the library, which it does after the build script.
pub fn symlink(target: &str, link: &Path) -> io::Result<()> {
    if std::fs::read_link(link).is_ok_and(|t| t == Path::new(target)) {
        return Ok(());
    }
    if let Some(dir) = link.parent() {
        std::fs::create_dir_all(dir)?;
    }
    match std::fs::remove_file(link) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::os::unix::fs::symlink(target, link)
}

/// The environment variables the rule reads.
#[derive(Debug, Clone, Default)]
pub struct BuildEnv {
    pub out_dir: Option<PathBuf>,
    pub target_dir: Option<PathBuf>,
    pub profile: Option<String>,
    pub target: Option<String>,
    pub host: Option<String>,
}

impl BuildEnv {
    /// The variables of the running build script.
    pub fn from_process() -> BuildEnv {
        let var = |k: &str| std::env::var(k).ok();
        BuildEnv {
            out_dir: var("OUT_DIR").map(PathBuf::from),
            target_dir: var("CARGO_TARGET_DIR").map(PathBuf::from),
            profile: var("PROFILE"),
            target: var("TARGET"),
            host: var("HOST"),
        }
    }
}

/// The profile directory (see the crate documentation for the rule).
pub fn profile_dir(env: &BuildEnv, manifest_dir: &Path) -> io::Result<PathBuf> {
    if let Some(out) = &env.out_dir {
        // <profile dir>/build/<package>-<hash>/out
        let build = out.parent().and_then(Path::parent);
        if let Some(build) = build {
            if build.file_name().is_some_and(|n| n == "build") {
                if let Some(dir) = build.parent() {
                    return Ok(dir.to_path_buf());
                }
            }
        }
    }
    let target_dir = match &env.target_dir {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => workspace_root(manifest_dir).join(d),
        None => workspace_root(manifest_dir).join("target"),
    };
    let profile = env.profile.clone().ok_or_else(|| {
        io::Error::other("neither OUT_DIR nor PROFILE says where the library goes")
    })?;
    let mut dir = target_dir;
    if let (Some(t), Some(h)) = (&env.target, &env.host) {
        if t != h {
            dir.push(t);
        }
    }
    dir.push(profile);
    Ok(dir)
}

/// The nearest ancestor of `dir` (itself included) holding a `Cargo.lock`, else `dir`.
fn workspace_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(dir)
        .to_path_buf()
}

/// The text of a `.pc` file. Paths with spaces are quoted as pkg-config expects.
pub fn pc_text(
    name: &str,
    description: &str,
    version: &str,
    include: &Path,
    lib_dir: &Path,
) -> String {
    let q = |p: &Path| {
        let s = p.display().to_string();
        if s.contains(' ') {
            format!("\"{s}\"")
        } else {
            s
        }
    };
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Written by myrix-capi-build; paths point into this build tree."
    );
    let _ = writeln!(t, "libdir={}", q(lib_dir));
    let _ = writeln!(t, "includedir={}", q(include));
    let _ = writeln!(t);
    let _ = writeln!(t, "Name: {name}");
    let _ = writeln!(t, "Description: {description}");
    let _ = writeln!(t, "Version: {version}");
    let _ = writeln!(t, "Cflags: -I${{includedir}}");
    let _ = writeln!(t, "Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -l{name}");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_dir_comes_from_out_dir() {
        let env = BuildEnv {
            out_dir: Some("/w/target/release/build/myrix-rsmapi-0123abcd/out".into()),
            profile: Some("debug".into()),
            ..BuildEnv::default()
        };
        assert_eq!(
            profile_dir(&env, Path::new("/w/crates/rsmapi")).unwrap(),
            PathBuf::from("/w/target/release")
        );
        let cross = BuildEnv {
            out_dir: Some("/t/x86_64-unknown-linux-musl/debug/build/p-1/out".into()),
            ..BuildEnv::default()
        };
        assert_eq!(
            profile_dir(&cross, Path::new("/w")).unwrap(),
            PathBuf::from("/t/x86_64-unknown-linux-musl/debug")
        );
    }

    #[test]
    fn without_a_usual_out_dir_target_dir_and_profile_decide() {
        let env = BuildEnv {
            out_dir: Some("/somewhere/else".into()),
            target_dir: Some("/tgt".into()),
            profile: Some("release".into()),
            target: Some("aarch64-unknown-linux-gnu".into()),
            host: Some("x86_64-unknown-linux-gnu".into()),
        };
        assert_eq!(
            profile_dir(&env, Path::new("/w")).unwrap(),
            PathBuf::from("/tgt/aarch64-unknown-linux-gnu/release")
        );
        let native = BuildEnv {
            profile: Some("debug".into()),
            ..BuildEnv::default()
        };
        // This crate's own workspace root holds the Cargo.lock.
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = profile_dir(&native, here).unwrap();
        assert!(dir.ends_with("target/debug"), "{}", dir.display());
        assert!(dir
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("Cargo.lock")
            .is_file());
        assert!(profile_dir(&BuildEnv::default(), here).is_err());
    }

    #[test]
    fn the_pc_file_has_include_rpath_and_lib() {
        let t = pc_text(
            "rsmapi",
            "RSMAPI",
            "0.1.0",
            Path::new("/w/crates/rsmapi/include"),
            Path::new("/w/target/release"),
        );
        assert!(t.contains("libdir=/w/target/release\n"));
        assert!(t.contains("Cflags: -I${includedir}\n"));
        assert!(t.contains("Libs: -L${libdir} -Wl,-rpath,${libdir} -lrsmapi\n"));
        assert!(t.contains("Version: 0.1.0\n"));
        let spaced = pc_text("x", "x", "1", Path::new("/a b/inc"), Path::new("/a b/lib"));
        assert!(spaced.contains("libdir=\"/a b/lib\""));
    }

    #[test]
    fn a_link_is_made_once_and_replaces_a_file() {
        let dir = std::env::temp_dir().join(format!("capi-build-link-{}", std::process::id()));
        let link = dir.join("libx.so.1");
        symlink("libx.so", &link).unwrap();
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("libx.so"));
        symlink("libx.so", &link).unwrap();
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&link, "old copy").unwrap();
        symlink("libx.so", &link).unwrap();
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("libx.so"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
