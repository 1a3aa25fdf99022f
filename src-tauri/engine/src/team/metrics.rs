//! The team gateway's Prometheus metrics (`GET /metrics`, text format).
//!
//! Labels are servers, tools, outcomes, endpoints, status codes and refusal
//! reasons: names from the team's own configuration and fixed words. No
//! label ever holds a person's subject, a group, a token or an argument
//! (who did what is in the call journal, not here).

use std::sync::Arc;
use std::time::Duration;

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

use crate::events::ServerStatus;
use crate::gateway::activity::CallObserver;
use crate::gateway::Gateway;

/// Latency buckets in seconds: from the gateway's own sub-millisecond
/// overhead to the long tool calls the default call timeout allows.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 120.0,
];

pub struct Metrics {
    registry: Registry,
    calls: IntCounterVec,
    call_seconds: HistogramVec,
    http_requests: IntCounterVec,
    http_seconds: HistogramVec,
    refusals: IntCounterVec,
    in_flight: IntGauge,
    sessions: IntGauge,
    upstream_up: IntGaugeVec,
    ready: IntGauge,
    config_reloads: IntCounterVec,
    token_seconds: Histogram,
}

impl Metrics {
    pub fn new() -> Arc<Metrics> {
        let registry = Registry::new_custom(Some("switchboard".into()), None).expect("registry");
        let calls = IntCounterVec::new(
            Opts::new(
                "tool_calls_total",
                "Tool calls forwarded to upstream servers, by server, tool and outcome (ok or error)",
            ),
            &["server", "tool", "outcome"],
        )
        .expect("metric");
        let call_seconds = HistogramVec::new(
            HistogramOpts::new(
                "tool_call_duration_seconds",
                "How long tool calls took, from forwarding to the upstream server's answer",
            )
            .buckets(BUCKETS.to_vec()),
            &["server", "tool"],
        )
        .expect("metric");
        let http_requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests answered, by endpoint and status code",
            ),
            &["endpoint", "code"],
        )
        .expect("metric");
        let http_seconds = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time to the response's head, by endpoint",
            )
            .buckets(BUCKETS.to_vec()),
            &["endpoint"],
        )
        .expect("metric");
        let refusals = IntCounterVec::new(
            Opts::new(
                "refusals_total",
                "Requests refused, by reason (no_token, expired, wrong_audience, no_access, body_too_large, slow_request, draining, …)",
            ),
            &["reason"],
        )
        .expect("metric");
        let in_flight = IntGauge::new("mcp_requests_in_flight", "MCP requests being answered now")
            .expect("metric");
        let sessions = IntGauge::new(
            "gateway_sessions",
            "Gateway sessions open now (the team gateway answers statelessly: one per request being answered)",
        )
        .expect("metric");
        let upstream_up = IntGaugeVec::new(
            Opts::new(
                "upstream_up",
                "1 when the upstream server is connected, 0 otherwise (status label: its state)",
            ),
            &["server", "status"],
        )
        .expect("metric");
        let ready = IntGauge::new("ready", "1 when /readyz answers 200").expect("metric");
        let config_reloads = IntCounterVec::new(
            Opts::new(
                "config_reloads_total",
                "Changes of the --config folder read, by result (applied or refused)",
            ),
            &["result"],
        )
        .expect("metric");
        let token_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "token_validation_seconds",
                "Time to validate one access token",
            )
            .buckets(vec![
                0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.01, 0.1, 1.0,
            ]),
        )
        .expect("metric");
        for c in [
            Box::new(calls.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(call_seconds.clone()),
            Box::new(http_requests.clone()),
            Box::new(http_seconds.clone()),
            Box::new(refusals.clone()),
            Box::new(in_flight.clone()),
            Box::new(sessions.clone()),
            Box::new(upstream_up.clone()),
            Box::new(ready.clone()),
            Box::new(config_reloads.clone()),
            Box::new(token_seconds.clone()),
        ] {
            registry.register(c).expect("register");
        }
        Arc::new(Metrics {
            registry,
            calls,
            call_seconds,
            http_requests,
            http_seconds,
            refusals,
            in_flight,
            sessions,
            upstream_up,
            ready,
            config_reloads,
            token_seconds,
        })
    }

    pub fn refused(&self, reason: &str) {
        self.refusals.with_label_values(&[reason]).inc();
    }

    pub fn answered(&self, endpoint: &str, code: u16, took: Duration) {
        self.http_requests
            .with_label_values(&[endpoint, &code.to_string()])
            .inc();
        self.http_seconds
            .with_label_values(&[endpoint])
            .observe(took.as_secs_f64());
    }

    pub fn token_checked(&self, took: Duration) {
        self.token_seconds.observe(took.as_secs_f64());
    }

    pub fn config_reloaded(&self, applied: bool) {
        self.config_reloads
            .with_label_values(&[if applied { "applied" } else { "refused" }])
            .inc();
    }

    /// One more MCP request being answered until the guard is dropped.
    pub fn in_flight(self: &Arc<Self>) -> InFlight {
        self.in_flight.inc();
        InFlight(self.clone())
    }

    pub fn requests_in_flight(&self) -> i64 {
        self.in_flight.get()
    }

    /// The text exposition, with the gauges read from `gateway` now.
    pub fn render(&self, gateway: &Gateway, ready: bool) -> String {
        self.ready.set(i64::from(ready));
        self.sessions.set(gateway.sessions().len() as i64);
        self.upstream_up.reset();
        for st in gateway.manager().states() {
            let up = matches!(st.status, ServerStatus::Connected);
            self.upstream_up
                .with_label_values(&[st.name.as_str(), st.status.label()])
                .set(i64::from(up));
        }
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Counts one MCP request as in flight while it lives.
pub struct InFlight(Arc<Metrics>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

impl CallObserver for Metrics {
    fn called(&self, server: &str, tool: &str, failed: bool, took: Duration) {
        self.calls
            .with_label_values(&[server, tool, if failed { "error" } else { "ok" }])
            .inc();
        self.call_seconds
            .with_label_values(&[server, tool])
            .observe(took.as_secs_f64());
    }
}
