//! A stdio server's process and its process group: the rmcp transport over
//! its pipes, and ending the group.

use std::time::Duration;

#[cfg(unix)]
use nix::sys::signal::{killpg, Signal};
#[cfg(unix)]
use nix::unistd::Pid;
use process_wrap::tokio::CommandWrap;
use rmcp::RoleClient;

use crate::doctor::stdout_watch::{Noise, Watch};

/// A stdio server as an rmcp transport: its stdin and stdout (watched for
/// text that is not JSON-RPC, see [`Watch`]), and the process, ended with
/// the MCP stdio shutdown sequence when the session closes (end of input,
/// then SIGTERM, then kill) and killed when dropped.
pub struct StdioChild {
    child: Option<Box<dyn process_wrap::tokio::ChildWrapper>>,
    transport: rmcp::transport::async_rw::AsyncRwTransport<
        RoleClient,
        Watch<tokio::process::ChildStdout>,
        tokio::process::ChildStdin,
    >,
    pub noise: Noise,
}

/// How long a failed start's stderr gets to reach the log (the group is killed, so it closes).
pub(super) const STDERR_SETTLE: Duration = Duration::from_millis(500);

/// How long a closed server gets to exit by itself, then after SIGTERM.
const STDIO_EXIT_WAIT: Duration = Duration::from_secs(3);

impl StdioChild {
    /// Spawn `cmd` (stdin, stdout and stderr piped); stderr is handed back to be drained.
    pub fn spawn(
        mut cmd: CommandWrap,
    ) -> std::io::Result<(StdioChild, Option<tokio::process::ChildStderr>)> {
        let mut child = cmd.spawn()?;
        let stdin = child
            .inner_mut()
            .stdin()
            .take()
            .ok_or_else(|| std::io::Error::other("the server's stdin was not piped"))?;
        let stdout = child
            .inner_mut()
            .stdout()
            .take()
            .ok_or_else(|| std::io::Error::other("the server's stdout was not piped"))?;
        let stderr = child.inner_mut().stderr().take();
        let (watched, noise) = Watch::new(stdout);
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(watched, stdin);
        Ok((
            StdioChild {
                child: Some(child),
                transport,
                noise,
            },
            stderr,
        ))
    }

    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        rmcp::transport::Transport::<RoleClient>::close(&mut self.transport).await?;
        if matches!(
            tokio::time::timeout(STDIO_EXIT_WAIT, child.wait()).await,
            Ok(Ok(_))
        ) {
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        if child.signal(Signal::SIGTERM as i32).is_ok()
            && matches!(
                tokio::time::timeout(STDIO_EXIT_WAIT, child.wait()).await,
                Ok(Ok(_))
            )
        {
            self.child = None;
            return Ok(());
        }
        let r = Box::into_pin(child.kill()).await;
        self.child = None;
        r
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(async move {
                        let _ = Box::into_pin(child.kill()).await;
                    });
                }
                Err(_) => {
                    let _ = child.start_kill();
                }
            }
        }
    }
}

impl rmcp::transport::Transport<RoleClient> for StdioChild {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send
    {
        self.transport.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}

/// A process (or process group) id as `nix` takes it; `None` for ids that
/// are not one (0 or a negative `pid_t` would name this process's own
/// group, or every process).
#[cfg(unix)]
pub(super) fn nix_pid(id: u32) -> Option<Pid> {
    i32::try_from(id).ok().filter(|p| *p > 0).map(Pid::from_raw)
}

/// SIGKILL a process group; no-op elsewhere.
pub fn kill_group(pgid: Option<u32>) {
    #[cfg(unix)]
    if let Some(g) = pgid.and_then(nix_pid) {
        let _ = killpg(g, Signal::SIGKILL);
        super::orphans::poke_keeper();
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Make this process the reaper of orphaned descendants (Linux), so a
/// server's grandchildren that outlive it are re-parented to us rather than
/// to an init that may never reap them, and `reap_adopted` can collect them.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// Reap zombies we adopted as subreaper: our children that are not
/// process-group leaders. Leaders are the servers themselves, whose exit
/// status belongs to their `TokioChildProcess` handle.
///
/// One pass over `/proc` reaps for every caller: a pass that started less
/// than [`REAP_EVERY`] ago, or one running now, stands for this call. (A
/// hundred servers stopping together each poll every 20 ms for their group
/// to end; with a pass per poll, a shutdown read every process's `stat`
/// once per server and poll.)
pub fn reap_adopted() {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::wait::{waitpid, WaitPidFlag};
        static LAST: std::sync::Mutex<Option<std::time::Instant>> = std::sync::Mutex::new(None);
        let mut last = match LAST.try_lock() {
            Ok(last) => last,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if last.is_some_and(|t| t.elapsed() < REAP_EVERY) {
            return;
        }
        *last = Some(std::time::Instant::now());
        let me = std::process::id();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // Fields after the command: state ppid pgrp ...
            let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() < 3
                || f[0] != "Z"
                || f[1].parse::<u32>().ok() != Some(me)
                || f[2].parse::<u32>().ok() == Some(pid)
            {
                continue;
            }
            if let Some(p) = nix_pid(pid) {
                let _ = waitpid(p, Some(WaitPidFlag::WNOHANG));
            }
        }
    }
}

/// How long one pass of [`reap_adopted`] stands for every caller.
#[cfg(target_os = "linux")]
const REAP_EVERY: Duration = Duration::from_millis(10);

/// Whether any process of the group is still alive.
pub fn group_alive(pgid: u32) -> bool {
    #[cfg(unix)]
    {
        nix_pid(pgid).is_some_and(|g| killpg(g, None).is_ok())
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// The shutdown ladder for a stdio server's group: after the session closed
/// the server's stdin, wait up to `grace` for the group to exit, then
/// SIGTERM, a short wait, then SIGKILL.
pub async fn terminate_group(pgid: u32, grace: Duration) {
    #[cfg(unix)]
    {
        // However it ends, the ledger should let go of the group soon.
        super::orphans::poke_keeper();
        let wait = |d: Duration| async move {
            let until = tokio::time::Instant::now() + d;
            while tokio::time::Instant::now() < until {
                reap_adopted();
                if !group_alive(pgid) {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            reap_adopted();
            !group_alive(pgid)
        };
        if wait(grace).await {
            return;
        }
        let Some(g) = nix_pid(pgid) else { return };
        let _ = killpg(g, Signal::SIGTERM);
        if wait(Duration::from_millis(500)).await {
            return;
        }
        let _ = killpg(g, Signal::SIGKILL);
        wait(Duration::from_millis(500)).await;
    }
    #[cfg(not(unix))]
    let _ = (pgid, grace);
}
