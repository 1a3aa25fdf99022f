//! Naming 10,000 tools from 20 servers, 50 times: `cargo bench --bench naming`.
//! The manager names every tool list it builds this way, so this has to stay far
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

    let mut wall: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut cpu: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut checksum = 0usize;
    for _ in 0..RUNS {
        let (start, start_cpu) = (Instant::now(), thread_cpu_time());
        let naming = assign_names(&tools);
        wall.push(start.elapsed());
        cpu.push(thread_cpu_time().saturating_sub(start_cpu));
        checksum += naming.names.len() + naming.collisions.len();
    }
    wall.sort();
    cpu.sort();

    let naming = assign_names(&tools);
    let unique: std::collections::HashSet<&String> = naming.names.iter().collect();
    assert_eq!(unique.len(), TOOLS, "every tool must get its own name");

    println!("assign_names: {TOOLS} tools, {SERVERS} servers, {RUNS} runs");
    // CPU time too: on a busy CI machine wall time mostly measures the neighbours.
    println!("{:<8} {:>12} {:>12}", "stat", "wall", "thread cpu");
    for (stat, i) in [
        ("min", 0),
        ("median", RUNS / 2),
        ("p90", RUNS * 9 / 10),
        ("max", RUNS - 1),
    ] {
        println!("{stat:<8} {:>12.3?} {:>12.3?}", wall[i], cpu[i]);
    }
    println!(
        "collision groups: {}, checksum {checksum}",
        naming.collisions.len()
    );
}

#[cfg(unix)]
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(not(unix))]
fn thread_cpu_time() -> Duration {
    Duration::ZERO
}
