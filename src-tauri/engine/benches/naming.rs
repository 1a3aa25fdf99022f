//! Naming 10,000 tools from 20 servers, 50 times: `cargo bench --bench naming`.
//! SPEC M4 names every tool list the manager builds, so this has to stay far
//! below a frame (the target is well under 10 ms in release).

use std::time::{Duration, Instant};

use switchboard_engine::naming::{assign_names, ToolRef};

const SERVERS: usize = 20;
const TOOLS: usize = 10_000;
const RUNS: usize = 50;

fn main() {
    let servers: Vec<String> = (0..SERVERS)
        .map(|i| match i % 4 {
            0 => format!("server-{i}"),
            1 => format!("server.{i}"), // collides with `server-<i-1>`'s sanitized name
            2 => format!("Srv_{i}"),
            _ => format!("github-{i}"),
        })
        .collect();
    let tools: Vec<ToolRef> = (0..TOOLS)
        .map(|i| {
            let server = &servers[i % SERVERS];
            let tool = match i % 3 {
                0 => format!("tool_{i}"), // digits sanitize away: many collisions
                1 => format!("{server}_create_issue_{i}"),
                _ => format!("read-file-with-a-very-long-descriptive-name-number-{i}"),
            };
            ToolRef::new(server.clone(), tool)
        })
        .collect();

    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut checksum = 0usize;
    for _ in 0..RUNS {
        let start = Instant::now();
        let naming = assign_names(&tools);
        times.push(start.elapsed());
        checksum += naming.names.len() + naming.collisions.len();
    }
    times.sort();

    let naming = assign_names(&tools);
    let unique: std::collections::HashSet<&String> = naming.names.iter().collect();
    assert_eq!(unique.len(), TOOLS, "every tool must get its own name");

    println!("assign_names: {TOOLS} tools, {SERVERS} servers, {RUNS} runs");
    println!("{:<10} {:>12}", "stat", "time");
    println!("{:<10} {:>12.3?}", "min", times[0]);
    println!("{:<10} {:>12.3?}", "median", times[RUNS / 2]);
    println!("{:<10} {:>12.3?}", "p90", times[RUNS * 9 / 10]);
    println!("{:<10} {:>12.3?}", "max", times[RUNS - 1]);
    println!("collision groups: {}, checksum {checksum}", naming.collisions.len());
}
