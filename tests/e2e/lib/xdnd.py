#!/usr/bin/env python3
"""Drops files onto a window the way a file manager does (or dragged text the
way an editor does): an XDND drag source.

Used by tests/e2e/drop.test.mjs. Under Xvfb nobody drags anything, so this
plays the file manager's part of the XDND protocol (version 5,
https://www.freedesktop.org/wiki/Specifications/XDND/) against the app's
real window; the app's side (GTK's drag destination, WebKitGTK, wry, Tauri's
`DragDropEvent::Drop`) is untouched.

    xdnd.py --pid PID [--title Switchboard] [--at X,Y] [--timeout 10] PATH...
    xdnd.py --pid PID ... --text TEXT     (text dragged from an editor or a browser)

Finds the mapped top-level window of PID with that title (no window manager
runs under Xvfb, so the GTK toplevel is a child of the root window), moves
the pointer to X,Y inside it (its middle by default), then:

  1. owns the XdndSelection with a server timestamp;
  2. sends XdndEnter (version 5, types text/uri-list and text/plain; for
     --text, text/plain;charset=utf-8, UTF8_STRING and text/plain) and
     XdndPosition (root coordinates, XdndActionCopy) as ClientMessages to
     the window's XdndAware toplevel (or to its XdndProxy);
  3. answers the target's SelectionRequests for the whole drag (GTK asks for
     the data while the pointer moves, before the drop) with
     `file:///percent-encoded/path\r\n` lines (or the text), and refuses
     other types;
  4. repeats XdndPosition until an XdndStatus accepts the drop, then sends
     XdndDrop with the timestamp;
  5. waits for XdndFinished.

Every wait is time-boxed. On success it prints one JSON line (what the
target asked for and answered) and exits 0; otherwise it sends XdndLeave if
the drag had begun, prints the reason on stderr and exits 1.
"""

import argparse
import json
import select
import sys
import time
import urllib.parse

from Xlib import X, Xatom, display, protocol

VERSION = 5


class Failed(Exception):
    pass


def uri(path):
    # RFC 8089 file URIs: every byte outside the unreserved set and "/" is %XX.
    return "file://" + urllib.parse.quote(path, safe="/-._~")


class Source:
    def __init__(self, paths, text, timeout):
        self.d = display.Display()
        self.root = self.d.screen().root
        self.timeout = timeout
        self.atom = lambda name: self.d.intern_atom(name)
        if text is None:
            # Files, as a file manager offers them.
            uri_list = "".join(uri(p) + "\r\n" for p in paths).encode()
            self.offers = {self.atom("text/uri-list"): uri_list, self.atom("text/plain"): uri_list}
        else:
            # Text selected in an editor or a browser and dragged: no files.
            data = text.encode()
            self.offers = {self.atom(t): data for t in ("text/plain;charset=utf-8", "UTF8_STRING", "text/plain")}
        self.asked = []  # (target name, answered?) per SelectionRequest
        self.statuses = []  # XdndStatus as received
        self.finished = None
        # The source's own window: owns the selection, receives the target's
        # XdndStatus and XdndFinished. Never mapped.
        self.win = self.root.create_window(0, 0, 1, 1, 0, X.CopyFromParent, X.InputOnly, X.CopyFromParent,
                                           event_mask=X.PropertyChangeMask)
        self.d.flush()

    # ---- events ---------------------------------------------------------------------

    def pump(self, until, what, seconds=None):
        """Handles events until `until()` holds; Failed naming `what` after the time box."""
        limit = seconds if seconds is not None else self.timeout
        deadline = time.monotonic() + limit
        while not until():
            if self.d.pending_events():  # reads what arrived, without blocking
                self.handle(self.d.next_event())
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failed(f"timed out after {limit} s waiting for {what}")
            select.select([self.d], [], [], min(left, 0.1))

    def handle(self, ev):
        if ev.type == X.SelectionRequest:
            self.answer(ev)
        elif ev.type == X.ClientMessage:
            name = self.d.get_atom_name(ev.client_type)
            fmt, data = ev.data
            if name == "XdndStatus":
                self.statuses.append({
                    "accept": bool(data[1] & 1),
                    "action": self.d.get_atom_name(data[4]) if data[4] else None,
                })
            elif name == "XdndFinished":
                self.finished = {
                    "accepted": bool(data[1] & 1),
                    "action": self.d.get_atom_name(data[2]) if data[2] else None,
                }
        elif ev.type == X.PropertyNotify and ev.window == self.win and ev.atom == self.atom("_XDND_TIMESTAMP"):
            self.stamp = ev.time

    def answer(self, ev):
        """A SelectionRequest: the data as asked, or a refusal (property None)."""
        target = ev.target
        prop = ev.property or target  # obsolete requestors leave it None
        name = self.d.get_atom_name(target)
        ok = True
        if ev.selection != self.atom("XdndSelection"):
            ok = False
        elif target == self.atom("TARGETS"):
            ev.requestor.change_property(prop, Xatom.ATOM, 32, [self.atom("TARGETS"), *self.offers])
        elif target in self.offers:
            ev.requestor.change_property(prop, target, 8, self.offers[target])
        else:
            ok = False
        self.asked.append({"target": name, "answered": ok})
        notify = protocol.event.SelectionNotify(time=ev.time, requestor=ev.requestor, selection=ev.selection,
                                                target=target, property=prop if ok else X.NONE)
        ev.requestor.send_event(notify, event_mask=X.NoEventMask)
        self.d.flush()

    # ---- the target -----------------------------------------------------------------

    def find_window(self, pid, title):
        pid_atom, name_atom, utf8 = self.atom("_NET_WM_PID"), self.atom("_NET_WM_NAME"), self.atom("UTF8_STRING")
        seen, found = [], []
        for w in self.root.query_tree().children:
            p = w.get_full_property(pid_atom, X.AnyPropertyType)
            n = w.get_full_property(name_atom, utf8)
            name = n.value.decode() if n else (w.get_wm_name() or "")
            shown = w.get_attributes().map_state == X.IsViewable
            seen.append(f"{hex(w.id)} pid={int(p.value[0]) if p else None} name={name!r} mapped={shown}")
            if p and int(p.value[0]) == pid and name == title and shown:
                found.append(w)
        if not found:
            raise Failed(f"no mapped window titled {title!r} of pid {pid}; top-level windows:\n" + "\n".join(seen))
        return found[0]

    def aware(self, win):
        """(the window to send to, the XDND version the target speaks); Failed if not XdndAware."""
        aware = win.get_full_property(self.atom("XdndAware"), Xatom.ATOM)
        if not aware or not len(aware.value):
            raise Failed(f"window {hex(win.id)} has no XdndAware property: it takes no drops")
        version = int(aware.value[0])
        dest = win
        proxy = win.get_full_property(self.atom("XdndProxy"), Xatom.WINDOW)
        if proxy and len(proxy.value):
            # The spec: a proxy names itself in its own XdndProxy, else it is stale.
            p = self.d.create_resource_object("window", int(proxy.value[0]))
            own = p.get_full_property(self.atom("XdndProxy"), Xatom.WINDOW)
            if own and len(own.value) and int(own.value[0]) == p.id:
                dest = p
        return dest, version

    def send(self, dest, target, name, data):
        ev = protocol.event.ClientMessage(window=target, client_type=self.atom(name), data=(32, data))
        dest.send_event(ev, event_mask=X.NoEventMask)
        self.d.flush()

    def server_time(self):
        """A timestamp from the X server (selection ownership must not use CurrentTime)."""
        self.stamp = None
        self.win.change_property(self.atom("_XDND_TIMESTAMP"), Xatom.STRING, 8, b"", mode=X.PropModeAppend)
        self.d.flush()
        self.pump(lambda: self.stamp is not None, "a PropertyNotify for a timestamp", 5)
        return self.stamp

    # ---- the drag -------------------------------------------------------------------

    def drop(self, target, at):
        dest, version = self.aware(target)
        if version < 5:
            raise Failed(f"the target speaks XDND version {version}; this source speaks 5")
        geo = target.get_geometry()
        x, y = at if at else (geo.width // 2, geo.height // 2)
        pos = target.translate_coords(self.root, x, y)
        rx, ry = pos.x, pos.y
        # As a person's pointer would be: over the spot the file is dropped on
        # (put back afterwards, so no tooltip of the spot covers later screenshots).
        was = self.root.query_pointer()
        self.root.warp_pointer(rx, ry)
        try:
            return self.drag(target, dest, rx, ry)
        finally:
            self.root.warp_pointer(was.root_x, was.root_y)
            self.d.flush()

    def drag(self, target, dest, rx, ry):
        stamp = self.server_time()
        self.win.set_selection_owner(self.atom("XdndSelection"), stamp)
        self.d.flush()
        if self.d.get_selection_owner(self.atom("XdndSelection")) != self.win:
            raise Failed("could not own the XdndSelection")
        src = self.win.id
        types = (list(self.offers) + [X.NONE] * 3)[:3]  # at most three: no XdndTypeList needed
        self.send(dest, target, "XdndEnter", [src, VERSION << 24, *types])
        try:
            # A target may answer "not yet" while it fetches the data and asks
            # the page; a moving pointer sends positions again, and so does this.
            deadline = time.monotonic() + self.timeout
            while True:
                n = len(self.statuses)
                self.send(dest, target, "XdndPosition", [src, 0, (rx << 16) | ry, stamp, self.atom("XdndActionCopy")])
                self.pump(lambda: len(self.statuses) > n, "an XdndStatus after XdndPosition")
                if self.statuses[-1]["accept"]:
                    break
                if time.monotonic() > deadline:
                    raise Failed(f"the target did not accept the drop within {self.timeout} s: {self.statuses}")
                # The next position after a short while, answering requests meanwhile.
                again = time.monotonic() + 0.2
                self.pump(lambda: time.monotonic() >= again, "a pause", 1)
        except Failed:
            self.send(dest, target, "XdndLeave", [src, 0, 0, 0, 0])
            raise
        self.send(dest, target, "XdndDrop", [src, 0, stamp, 0, 0])
        self.pump(lambda: self.finished is not None, "XdndFinished after XdndDrop")
        if not self.finished["accepted"]:
            raise Failed(f"the target finished the drop but did not accept it: {self.finished}")
        return {"window": hex(target.id), "to": hex(dest.id), "root": [rx, ry], "statuses": self.statuses,
                "finished": self.finished, "asked": self.asked}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--title", default="Switchboard")
    ap.add_argument("--at", help="X,Y inside the window (default: its middle)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds for each wait")
    ap.add_argument("--text", help="drag this text instead of files")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()
    if (a.text is None) == (not a.paths):
        ap.error("give files to drop or --text, not both")
    at = tuple(int(v) for v in a.at.split(",")) if a.at else None
    source = Source(a.paths, a.text, a.timeout)
    try:
        result = source.drop(source.find_window(a.pid, a.title), at)
    except Failed as e:
        print(f"xdnd: {e}\nstatuses: {source.statuses}\nselection requests: {source.asked}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
