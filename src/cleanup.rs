//! What to remove if the build is interrupted by SIGINT, SIGTERM or SIGHUP:
//! a staging folder being written, a previous site being deleted, a cache
//! file being saved, the lock file; for `perfdash record`, the scratch
//! folder of its rounds and the run folder it is assembling, after the
//! load test it started has been ended.
//!
//! The writer registers each such path while it exists, holds
//! [`writing`] while it creates one file, and the registry while it swaps
//! folders. The signal thread
//! ([`install_signal_handlers`]) takes the registry, removes every path in
//! it and ends the process as the signal would have, *without releasing
//! the registry*: the writer, waiting for it, can neither write another
//! file into a folder being removed nor swap a half-removed folder in.
//! (`kill -9` cannot be caught; what it leaves behind carries the
//! `.perfdash-site` marker and is removed by the next build.)

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

static REGISTRY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Processes started on the user's behalf (`perfdash record --rounds`
/// runs the load test) that a signal must end too, before their scratch
/// folder is removed: a load test left running would keep loading the
/// service and write into a folder that is gone.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Starts `command` (which should make the child the leader of its own
/// process group) and registers it: the child and its group are sent
/// SIGTERM on an interrupting signal until the guard is dropped (after the
/// child has been waited for). Started and registered under one lock,
/// which the signal thread takes and never gives back: no child starts
/// after a signal, and none starts unseen.
pub fn spawn_registered(
    command: &mut std::process::Command,
) -> std::io::Result<(std::process::Child, RegisteredChild)> {
    let mut children = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    let child = command.spawn()?;
    let pid = child.id();
    children.push(pid);
    Ok((child, RegisteredChild(pid)))
}

/// Unregisters its process when dropped.
#[must_use]
#[derive(Debug)]
pub struct RegisteredChild(u32);

impl Drop for RegisteredChild {
    fn drop(&mut self) {
        let mut children = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = children.iter().rposition(|p| *p == self.0) {
            children.remove(i);
        }
    }
}

/// Ends the registered processes and their process groups (SIGTERM: a
/// load test started through `sh -c` has children of its own) and waits a
/// little for them to go, so that they stop writing before their folder
/// is removed.
fn end_children() {
    // Never released: no child starts after this (`spawn_registered`).
    let children = std::mem::ManuallyDrop::new(CHILDREN.lock().unwrap_or_else(|p| p.into_inner()));
    for pid in children.iter() {
        if let Some(pid) = i32::try_from(*pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
    }
    if !children.is_empty() {
        // The child is ours and not yet reaped, so its pid stays valid;
        // give it up to two seconds to write its last bytes and exit.
        for _ in 0..40 {
            let alive = children.iter().any(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| !stat.contains(") Z "))
            });
            if !alive {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Taken shared by every thread creating a file or folder of the site
/// ([`writing`]), exclusively by the signal thread before it removes
/// anything: writers run side by side (issue 18), and none can create a
/// file in a folder being removed.
static WRITING: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held while creating one file or folder of a registered folder; any
/// number of threads may hold it at once.
pub fn writing() -> std::sync::RwLockReadGuard<'static, ()> {
    WRITING.read().unwrap_or_else(|p| p.into_inner())
}

/// The registry, held: while a caller holds it, no signal can remove
/// anything.
pub struct Held(MutexGuard<'static, Vec<PathBuf>>);

impl Held {
    pub fn add(&mut self, path: &Path) {
        self.0.push(path.to_path_buf());
    }

    /// [`register`] for a caller already holding the registry: `path` is
    /// removed on an interrupting signal until the guard is dropped (after
    /// the registry is released).
    pub fn register(&mut self, path: &Path) -> Registered {
        self.add(path);
        Registered(path.to_path_buf())
    }

    pub fn remove(&mut self, path: &Path) {
        if let Some(i) = self.0.iter().rposition(|p| p == path) {
            self.0.remove(i);
        }
    }
}

/// Holds the registry (see the module comment). Never call [`register`]
/// while holding it.
pub fn hold() -> Held {
    Held(REGISTRY.lock().unwrap_or_else(|p| p.into_inner()))
}

/// `path` is removed on an interrupting signal until the guard is dropped.
pub fn register(path: &Path) -> Registered {
    hold().register(path)
}

/// Unregisters its path when dropped.
#[must_use]
#[derive(Debug)]
pub struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        hold().remove(&self.0);
    }
}

/// Removes a registered path: a folder with everything in it, or a file.
fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, removes what is
/// registered and then ends the process the way the signal would have
/// (so a shell sees "killed by SIGINT", exit status 130).
pub fn install_signal_handlers() -> std::io::Result<()> {
    use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("perfdash-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                end_children();
                // Never released: no writer creates anything after this.
                let _writing = WRITING.write().unwrap_or_else(|p| p.into_inner());
                let held = hold();
                for path in held.0.iter().rev() {
                    remove(path);
                }
                let _ = writeln!(
                    std::io::stderr(),
                    "interrupted: removed the unfinished files"
                );
                // Still holding the registry: nothing else is written.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}
