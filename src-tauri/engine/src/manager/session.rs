//! One connection's whole life: prepare, open, list the tools, serve the
//! server's notifications, health checks and re-lists, tear down. It never
//! restarts by itself (the supervisor does) and changes the server's phase
//! only through `advance`, so once a later operation took over it changes
//! nothing and just ends its connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::FusedFuture;
use rmcp::model::{ClientRequest, Tool};
use rmcp::service::Peer;
use rmcp::RoleClient;
use tokio_util::sync::CancellationToken;

use crate::config::Transport;
use crate::doctor::Failure;
use crate::events::EngineEvent;

use super::connection::{
    self, group_alive, kill_group, subscribe_request, terminate_group, ConnectError, Signals,
    SwitchboardClient,
};
use super::pages;
use super::state::{Live, Phase};
use super::supervisor::Outcome;
use super::{Manager, Slot, RELIST_INTERVAL};

impl Manager {
    /// One connection of run `run`: connect, list, serve signals and health
    /// checks, tear down.
    pub(super) async fn connect_once(
        &self,
        slot: &Arc<Slot>,
        run: u64,
        stop: &CancellationToken,
    ) -> Outcome {
        let failed = |failure: Failure| Outcome::Failed {
            failure,
            healthy_for: Duration::ZERO,
        };
        let launch = match self.prepare(slot).await {
            Ok(l) => l,
            Err(o) => return o,
        };
        if launch.def.transport == Transport::Stdio {
            slot.log.now(
                "lifecycle",
                &format!("starting {}", launch.program.display()),
            );
            slot.rt.lock().unwrap().binary = Some(launch.program.clone());
        }
        // The server's own timeout, else the default as it is now.
        let timeout = self.timeout_of(&launch.def);
        let started = tokio::time::Instant::now();
        let signals = Arc::new(Signals::default());
        let handler = SwitchboardClient::new(
            &slot.name,
            signals.clone(),
            slot.log.clone(),
            self.shared.client_hooks.clone(),
        );
        let mut noise = crate::doctor::stdout_watch::Noise::default();
        let opened = tokio::select! {
            r = connection::open(launch, handler, slot.log.clone(), timeout, &mut noise) => r,
            _ = stop.cancelled() => return Outcome::Stopped,
        };
        slot.rt.lock().unwrap().stdout_noise = noise.lines();
        let opened = match opened {
            Ok(o) => o,
            Err(ConnectError::Auth { message, challenge }) => {
                return Outcome::NeedsAuth { message, challenge }
            }
            Err(ConnectError::Start {
                message,
                kind,
                raw_os,
            }) => {
                return failed(Failure::Spawn {
                    kind,
                    raw_os,
                    message,
                })
            }
            Err(ConnectError::Spawn(message)) => return failed(Failure::Invalid { message }),
            Err(ConnectError::Timeout(_)) => return failed(Failure::Timeout),
            Err(e) => {
                return failed(Failure::Handshake {
                    message: e.to_string(),
                })
            }
        };
        let session = opened.session;
        let peer = session.peer().clone();
        // Switchboard keeps each server's list itself: a server's `ttlMs`
        // must not make rmcp hold another copy of every page.
        peer.set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
            .await;
        let pgid = opened.pgid;
        let remaining = timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(100));
        let tools = tokio::select! {
            r = tokio::time::timeout(remaining, pages::tools(&peer)) => r,
            _ = stop.cancelled() => Ok(Err(rmcp::ServiceError::Cancelled { reason: None })),
        };
        let tools = match tools {
            Ok(Ok(t)) => t,
            other => {
                session.cancellation_token().cancel();
                kill_group(pgid);
                if stop.is_cancelled() {
                    // Down before the operation that stopped it returns.
                    if let Some(p) = pgid.filter(|p| group_alive(*p)) {
                        terminate_group(p, Duration::ZERO).await;
                    }
                    return Outcome::Stopped;
                }
                return failed(Failure::Later {
                    message: match other {
                        Err(_) => format!("timed out after {timeout:?} listing tools"),
                        Ok(Err(e)) => format!("tools/list failed: {e}"),
                        Ok(Ok(_)) => unreachable!(),
                    },
                });
            }
        };
        if let Some(w) = &tools.warning {
            self.warn(slot, w);
        }
        let tools = Arc::new(tools.items);
        if tools.len() >= 1000 {
            crate::memory::release_freed();
        }
        let live = Live {
            peer: peer.clone(),
            tools: tools.clone(),
            pgid,
            transport_used: opened.transport_used,
            protocol: peer.peer_info().map(|i| i.protocol_version.to_string()),
            timeout,
            closing: false,
        };
        let ct = session.cancellation_token();
        let waiting = session.waiting();
        tokio::pin!(waiting);
        let connected = self.advance(slot, run, |_| Some(Phase::Connected(Box::new(live))));
        if connected {
            self.restore_subscriptions(slot, &peer, timeout).await;
            self.shared.cache.put(&slot.name, &slot.hash, &tools).await;
        }
        let connected_at = Instant::now();
        // Health checks: the next one is due one interval (as it is now)
        // after the last; a new default interval moves the next one.
        let mut defaults = self.shared.defaults.subscribe();
        let mut last_ping = tokio::time::Instant::now();
        let every = defaults.borrow_and_update().health_interval;
        let mut next_ping = ping_slot(last_ping + every, every);
        let mut missed_pings = 0u32;
        let mut ping_supported = true;
        // `tools/list_changed`, however often it comes: one re-list
        // in flight and at most one more after it. The re-list runs beside
        // the loop, so a server that hangs it never delays a stop or a ping.
        type Relist = futures::future::Fuse<
            futures::future::BoxFuture<
                'static,
                Result<
                    Result<pages::Listed<Tool>, rmcp::ServiceError>,
                    tokio::time::error::Elapsed,
                >,
            >,
        >;
        let mut relist = std::pin::pin!(Relist::terminated());
        let mut relist_again = false;
        let mut last_relist: Option<tokio::time::Instant> = None;
        // At most one re-list per RELIST_INTERVAL: the first change is
        // re-listed at once, a storm of them every half second.
        let start_relist = |peer: Peer<RoleClient>, last: &mut Option<tokio::time::Instant>| {
            use futures::FutureExt;
            let now = tokio::time::Instant::now();
            let at = last.map(|l| (l + RELIST_INTERVAL).max(now)).unwrap_or(now);
            *last = Some(at);
            async move {
                tokio::time::sleep_until(at).await;
                tokio::time::timeout(timeout, pages::tools(&peer)).await
            }
            .boxed()
            .fuse()
        };
        let end: Option<String> = loop {
            if !connected {
                // A later operation took over while it connected.
                break None;
            }
            tokio::select! {
                _ = &mut waiting => {
                    let why = opened.close_reason.as_ref().and_then(|r| r.lock().unwrap_or_else(|p| p.into_inner()).clone());
                    break Some(why.unwrap_or_else(|| "the server closed the connection".to_string()));
                }
                _ = stop.cancelled() => break None,
                Ok(()) = defaults.changed() => {
                    let every = defaults.borrow_and_update().health_interval;
                    next_ping = ping_slot((last_ping + every).max(tokio::time::Instant::now()), every);
                }
                _ = tokio::time::sleep_until(next_ping), if ping_supported => {
                    last_ping = next_ping;
                    let every = defaults.borrow().health_interval;
                    next_ping = ping_slot((last_ping + every).max(tokio::time::Instant::now()), every);
                    let ping = peer.send_request(ClientRequest::PingRequest(Default::default()));
                    match tokio::time::timeout(self.shared.opts.ping_timeout, ping).await {
                        Ok(Ok(_)) => missed_pings = 0,
                        Ok(Err(rmcp::ServiceError::McpError(e))) if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => ping_supported = false,
                        Ok(Err(e)) => break Some(format!("ping failed: {e}")),
                        Err(_) => {
                            missed_pings += 1;
                            slot.log.now("lifecycle", &format!("ping timed out ({missed_pings} in a row)"));
                            if missed_pings >= 2 {
                                break Some("the server stopped answering pings".to_string());
                            }
                        }
                    }
                }
                listed = &mut relist => {
                    match listed {
                        Ok(Ok(l)) => {
                            if let Some(w) = &l.warning {
                                self.warn(slot, w);
                            }
                            let tools = Arc::new(l.items);
                            let shared = tools.clone();
                            self.advance(slot, run, |rt| {
                                let live = rt.phase.live()?;
                                Some(Phase::Connected(Box::new(Live { tools: shared, ..live.clone() })))
                            });
                            self.shared.cache.put(&slot.name, &slot.hash, &tools).await;
                        }
                        Ok(Err(e)) => { slot.log.now("warning", &format!("re-listing tools after tools/list_changed failed: {e}")); }
                        Err(_) => { slot.log.now("warning", &format!("re-listing tools after tools/list_changed timed out after {timeout:?}; keeping the previous list")); }
                    }
                    if std::mem::take(&mut relist_again) {
                        relist.set(start_relist(peer.clone(), &mut last_relist));
                    }
                }
                _ = signals.wait() => {
                    let taken = signals.take();
                    if taken.tools_changed {
                        if relist.is_terminated() {
                            relist.set(start_relist(peer.clone(), &mut last_relist));
                        } else {
                            relist_again = true;
                        }
                    }
                    if taken.resources_changed {
                        let _ = self.shared.events.send(EngineEvent::ResourcesChanged { server: slot.name.clone() });
                    }
                    if taken.prompts_changed {
                        let _ = self.shared.events.send(EngineEvent::PromptsChanged { server: slot.name.clone() });
                    }
                    for uri in taken.updated {
                        let _ = self.shared.events.send(EngineEvent::ResourceUpdated { server: slot.name.clone(), uri });
                    }
                    if taken.dropped_updates > 0 {
                        slot.log.line("warning", &format!("{} resource updates dropped: the server sent more than {} at once", taken.dropped_updates, connection::MAX_PENDING_UPDATES));
                    }
                }
            }
        };
        let healthy_for = connected_at.elapsed();
        match end {
            None => {
                // A deliberate stop: close the session (which closes the
                // server's stdin), wait the grace period, then SIGTERM and
                // SIGKILL the process group.
                ct.cancel();
                let _ = tokio::time::timeout(self.shared.opts.grace, &mut waiting).await;
                if let Some(p) = pgid {
                    terminate_group(p, self.shared.opts.grace).await;
                }
                Outcome::Stopped
            }
            Some(error) => {
                // Its tools and session go at once; the supervisor decides
                // what comes next once the process is gone.
                self.advance(slot, run, |rt| {
                    let live = rt.phase.live()?;
                    Some(Phase::Connected(Box::new(Live {
                        closing: true,
                        ..live.clone()
                    })))
                });
                ct.cancel();
                if let Some(p) = pgid {
                    terminate_group(p, Duration::from_millis(200)).await;
                }
                Outcome::Failed {
                    failure: Failure::Ended { message: error },
                    healthy_for,
                }
            }
        }
    }

    pub(super) async fn restore_subscriptions(
        &self,
        slot: &Slot,
        peer: &Peer<RoleClient>,
        timeout: Duration,
    ) {
        let uris: Vec<String> = slot
            .rt
            .lock()
            .unwrap()
            .subscriptions
            .iter()
            .cloned()
            .collect();
        for uri in uris {
            match tokio::time::timeout(timeout, subscribe_request(peer, &uri, true)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    slot.log.now(
                        "warning",
                        &format!("could not restore the subscription to {uri}: {e}"),
                    );
                }
                Err(_) => {
                    slot.log.now("warning", &format!("could not restore the subscription to {uri}: no answer within {timeout:?}"));
                }
            }
        }
    }
}

/// Health pings of all servers are sent together: `due` is moved to the next
/// multiple of the health interval, counted from one process-wide start, so
/// an idle Switchboard with twenty servers wakes once per interval, not
/// twenty times. (The first ping after a connect thus comes after one to two
/// intervals.) Never earlier than `due`.
fn ping_slot(due: tokio::time::Instant, every: Duration) -> tokio::time::Instant {
    static EPOCH: std::sync::OnceLock<tokio::time::Instant> = std::sync::OnceLock::new();
    let epoch = *EPOCH.get_or_init(tokio::time::Instant::now);
    let every_ms = every.as_millis().max(1);
    let since_ms = due.saturating_duration_since(epoch).as_millis();
    let slots = since_ms.div_ceil(every_ms);
    let slot =
        epoch + Duration::from_millis(u64::try_from(slots * every_ms).unwrap_or(u64::MAX / 2));
    slot.max(due)
}

#[cfg(test)]
mod tests {
    use super::ping_slot;
    use std::time::Duration;
    use tokio::time::Instant;

    #[test]
    fn pings_due_within_one_interval_share_a_slot_never_early() {
        let every = Duration::from_secs(15);
        let now = Instant::now();
        // Servers that connected at different moments.
        let slots: Vec<Instant> = [0, 700, 4_000, 9_999]
            .iter()
            .map(|ms| ping_slot(now + every + Duration::from_millis(*ms), every))
            .collect();
        for (due_ms, slot) in [0, 700, 4_000, 9_999].iter().zip(&slots) {
            assert!(
                *slot >= now + every + Duration::from_millis(*due_ms),
                "a ping came early"
            );
            assert!(*slot <= now + every * 2 + Duration::from_millis(*due_ms));
        }
        // At most two distinct slots for dues 10 s apart with a 15 s interval,
        // one interval apart; a slot's own next is exactly one interval on.
        let mut distinct = slots.clone();
        distinct.dedup();
        assert!(distinct.len() <= 2, "{distinct:?}");
        assert_eq!(ping_slot(slots[0] + every, every), slots[0] + every);
    }
}
