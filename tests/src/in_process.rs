//! An engine and a gateway in the test's own process, as engine tests and
//! benchmarks set them up: the engine on a host's configs without a tool
//! cache or process records, and an rmcp client talking to a gateway
//! session over an in-memory pipe (no child process, no port).

use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use switchboard_engine::engine::Engine;
use switchboard_engine::gateway::{switches, Gateway, GatewayOptions, GatewaySession};
use switchboard_engine::host::Host;
use switchboard_engine::manager::ManagerOptions;

/// A client of an in-process gateway.
pub type Client = RunningService<RoleClient, ()>;

/// The engine on `host`'s config files, nothing kept between runs (no
/// tool cache, no process records); not started.
pub fn engine(host: &Host) -> Engine {
    Engine::new(
        host.clone(),
        ManagerOptions {
            cache_path: None,
            process_records: None,
            ..ManagerOptions::default()
        },
        vec![],
    )
}

/// A gateway over `engine`'s servers that follows `host`'s settings file
/// (tool switches, result-check modes), ready at once.
pub fn gateway(engine: &Engine, host: &Host) -> Gateway {
    let gateway = Gateway::new(
        engine.manager().clone(),
        switches::follow(host),
        GatewayOptions::default(),
    );
    gateway.set_ready();
    gateway
}

/// `session` served over an in-memory pipe, and an rmcp client on the
/// other end (initialized).
pub async fn client(session: GatewaySession) -> Client {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = session.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_end)
        .await
        .expect("the gateway session answers initialize")
}
