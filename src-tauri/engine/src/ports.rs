//! Who holds a TCP port: for errors that say which program to close when
//! the gateway's port (or a sign-in's callback port) is taken.

/// "name (pid N)" of the process listening on TCP `port` on this machine,
/// when the OS tells (a process of another user may stay unnamed).
pub fn holder(port: u16) -> Option<String> {
    let p = listeners::get_process_by_port(port, listeners::Protocol::TCP).ok()?;
    Some(format!("{} (pid {})", p.name, p.pid))
}

/// The message for a port that could not be bound.
pub fn taken_message(what: &str, port: u16, error: &std::io::Error) -> String {
    match (error.kind(), holder(port)) {
        (std::io::ErrorKind::AddrInUse, Some(h)) => format!("{what} cannot listen on port {port}: {h} is using it. Close that program or choose another port."),
        (std::io::ErrorKind::AddrInUse, None) => format!("{what} cannot listen on port {port}: another program is using it. Close that program or choose another port."),
        _ => format!("{what} cannot listen on port {port}: {error}"),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn names_this_process_as_the_holder() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = holder(port).expect("the OS names the listener");
        assert!(h.contains(&format!("pid {}", std::process::id())), "{h}");
        let err = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap_err();
        let m = taken_message("The gateway", port, &err);
        assert!(
            m.contains(&format!("port {port}"))
                && m.contains(&h)
                && m.contains("choose another port"),
            "{m}"
        );
    }
}
