//! The ELF files a program loads when it starts: the executable, found on
//! the `PATH` as the system finds it, and the shared libraries it needs
//! (`DT_NEEDED`, transitively), found in the directories the dynamic loader
//! searches: the needing file's `DT_RPATH` / `DT_RUNPATH` (with `$ORIGIN`),
//! `LD_LIBRARY_PATH`, the directories of `/etc/ld.so.conf` and the standard
//! library directories. Libraries opened later with `dlopen` are not among
//! them.
//!
//! ```no_run
//! let files = loaded::program_and_libraries(std::path::Path::new("/bin/ls"));
//! assert!(files.iter().any(|f| f.path.ends_with("libc.so.6")));
//! ```

use object::elf;
use object::read::elf::ElfFile64;
use object::Endianness;
use std::collections::{HashSet, VecDeque};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Directories the dynamic loader of an x86-64 Linux system always searches.
const STANDARD_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
];

/// `e_machine` of x86-64.
const EM_X86_64: u16 = 62;

/// At most this many libraries are read (a guard against odd dependency graphs).
const MAX_FILES: usize = 512;

/// One ELF file of the program: where it is and its bytes.
pub struct LoadedFile {
    /// The file.
    pub path: PathBuf,
    /// Its contents.
    pub data: Vec<u8>,
}

/// The file the system runs for `program` (a path when it holds a `/`,
/// else the first match on the `PATH`), if there is one.
pub fn locate(program: &OsStr) -> Option<PathBuf> {
    let path = Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        return Some(path.to_path_buf());
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(path))
        .find(|c| c.is_file())
}

/// Whether `data` is an x86-64 ELF file.
pub fn is_x86_64_elf(data: &[u8]) -> bool {
    data.len() >= 20
        && data[..4] == *b"\x7fELF"
        && data[4] == 2
        && u16::from_le_bytes([data[18], data[19]]) == EM_X86_64
}

/// The executable `program` (an x86-64 ELF file) followed by the shared
/// libraries it needs, breadth first, each once. Empty when `program`
/// cannot be read or is not an x86-64 ELF file; a library that cannot be
/// found is left out (the loader will refuse to start the program anyway).
pub fn program_and_libraries(program: &Path) -> Vec<LoadedFile> {
    let Some(first) = read_elf(program) else {
        return Vec::new();
    };
    let global = global_dirs();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    seen.insert(canonical(program));
    let mut files = Vec::new();
    let mut queue = VecDeque::from([first]);
    while let Some(file) = queue.pop_front() {
        for name in needed(&file) {
            if files.len() + queue.len() >= MAX_FILES {
                break;
            }
            let Some(lib) = find_library(&name, &file, &global) else {
                continue;
            };
            if seen.insert(canonical(&lib.path)) {
                queue.push_back(lib);
            }
        }
        files.push(file);
    }
    files
}

/// The file at `path` if it is an x86-64 ELF file.
fn read_elf(path: &Path) -> Option<LoadedFile> {
    let data = std::fs::read(path).ok()?;
    is_x86_64_elf(&data).then(|| LoadedFile {
        path: path.to_path_buf(),
        data,
    })
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What the dynamic section of `file` says: its needed libraries.
fn needed(file: &LoadedFile) -> Vec<String> {
    dynamic_strings(file, elf::DT_NEEDED)
}

/// The string values of the dynamic entries of `file` tagged `tag`.
fn dynamic_strings(file: &LoadedFile, tag: elf::DynamicTag) -> Vec<String> {
    let Ok(parsed) = ElfFile64::<Endianness>::parse(&*file.data) else {
        return Vec::new();
    };
    let endian = parsed.endian();
    let Ok(table) = parsed
        .elf_section_table()
        .dynamic_table(endian, parsed.data())
    else {
        return Vec::new();
    };
    table
        .iter()
        .filter(|d| d.tag == tag)
        .filter_map(|d| table.string(d).ok())
        .map(|text| String::from_utf8_lossy(text).into_owned())
        .collect()
}

/// The library the loader would load for `name`, needed by `by`.
fn find_library(name: &str, by: &LoadedFile, global: &[PathBuf]) -> Option<LoadedFile> {
    if name.contains('/') {
        return read_elf(Path::new(name));
    }
    let origin = by.path.parent().unwrap_or(Path::new("."));
    let runpath = search_path(&dynamic_strings(by, elf::DT_RUNPATH), origin);
    // DT_RPATH counts only where there is no DT_RUNPATH.
    let rpath = if runpath.is_empty() {
        search_path(&dynamic_strings(by, elf::DT_RPATH), origin)
    } else {
        Vec::new()
    };
    let env: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    rpath
        .iter()
        .chain(&env)
        .chain(&runpath)
        .chain(global)
        .find_map(|dir| read_elf(&dir.join(name)))
}

/// The directories of `DT_RPATH` / `DT_RUNPATH` values, with `$ORIGIN`
/// replaced by `origin`; directories with other `$` tokens are left out.
fn search_path(values: &[String], origin: &Path) -> Vec<PathBuf> {
    let origin = origin.to_string_lossy();
    values
        .iter()
        .flat_map(|v| v.split(':'))
        .filter(|d| !d.is_empty())
        .map(|d| d.replace("${ORIGIN}", &origin).replace("$ORIGIN", &origin))
        .filter(|d| !d.contains('$'))
        .map(PathBuf::from)
        .collect()
}

/// The directories of `/etc/ld.so.conf` (and the files it includes from
/// `/etc/ld.so.conf.d`), then the standard ones.
fn global_dirs() -> Vec<PathBuf> {
    let mut texts = vec![std::fs::read_to_string("/etc/ld.so.conf").unwrap_or_default()];
    if let Ok(entries) = std::fs::read_dir("/etc/ld.so.conf.d") {
        let mut confs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "conf"))
            .collect();
        confs.sort();
        texts.extend(confs.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
    }
    texts
        .iter()
        .flat_map(|t| t.lines())
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| l.starts_with('/'))
        .map(PathBuf::from)
        .chain(STANDARD_DIRS.iter().map(PathBuf::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_is_replaced_and_other_tokens_dropped() {
        let dirs = search_path(
            &["$ORIGIN/../lib:/opt/x".into(), "${ORIGIN}:$LIB/y".into()],
            Path::new("/app/bin"),
        );
        assert_eq!(
            dirs,
            [
                PathBuf::from("/app/bin/../lib"),
                PathBuf::from("/opt/x"),
                PathBuf::from("/app/bin")
            ]
        );
    }

    #[test]
    fn a_dynamic_program_brings_its_c_library() {
        let Some(sh) = locate(OsStr::new("sh")) else {
            return;
        };
        let files = program_and_libraries(&sh);
        assert_eq!(files[0].path, sh);
        assert!(
            files
                .iter()
                .any(|f| f.path.file_name().is_some_and(|n| n == "libc.so.6")),
            "{:?}",
            files.iter().map(|f| &f.path).collect::<Vec<_>>()
        );
    }

    #[test]
    fn files_that_are_not_x86_64_elf_give_nothing() {
        assert!(program_and_libraries(Path::new("/nonexistent")).is_empty());
        assert!(!is_x86_64_elf(b"#!/bin/sh\n"));
    }
}
