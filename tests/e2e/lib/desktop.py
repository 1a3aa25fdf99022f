#!/usr/bin/env python3
"""A stand-in desktop for the tray E2E test (tests/e2e/tray.test.mjs).

Xvfb has no panel and no window manager, so two things a user's desktop does
are done here, the way a desktop does them:

- the tray: a StatusNotifierWatcher and host on the session bus (the
  protocol of KDE's tray, GNOME's AppIndicator extension and waybar), which
  the app's tray icon registers with. The item's properties and its menu are
  read over D-Bus (com.canonical.dbusmenu), and a menu entry is clicked by
  sending it the "clicked" event, as a panel does;
- the close button of a window manager: a WM_DELETE_WINDOW client message to
  the app's window.

Driven over stdin/stdout, one JSON object per line. It prints
{"event": "ready"} once it owns the watcher's name, {"event": "registered",
...} when an item registers, and answers each command {"id": N, "cmd": ...}
with {"id": N, ...} (or {"id": N, "error": "..."}). Commands:
  items                       the registered items, their properties and menus
  click   {label}             click the menu entry with that label (first item)
  close   {pid, title}        the window manager's close button on that window
  mapped  {pid, title}        whether that window is shown
"""

import asyncio
import json
import os
import sys

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from Xlib import X, display, protocol

WATCHER = "org.kde.StatusNotifierWatcher"
ITEM = "org.kde.StatusNotifierItem"
PROPS = "org.freedesktop.DBus.Properties"
INTROSPECTION = """<node>
 <interface name="org.kde.StatusNotifierWatcher">
  <method name="RegisterStatusNotifierItem"><arg type="s" direction="in"/></method>
  <method name="RegisterStatusNotifierHost"><arg type="s" direction="in"/></method>
  <property name="RegisteredStatusNotifierItems" type="as" access="read"/>
  <property name="IsStatusNotifierHostRegistered" type="b" access="read"/>
  <property name="ProtocolVersion" type="i" access="read"/>
  <signal name="StatusNotifierItemRegistered"><arg type="s"/></signal>
  <signal name="StatusNotifierItemUnregistered"><arg type="s"/></signal>
  <signal name="StatusNotifierHostRegistered"/>
 </interface>
</node>"""


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def plain(v):
    """D-Bus values as JSON: variants unwrapped, bytes left out."""
    if isinstance(v, Variant):
        return plain(v.value)
    if isinstance(v, (bytes, bytearray)):
        return f"<{len(v)} bytes>"
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


class Desktop:
    def __init__(self, bus):
        self.bus = bus
        self.items = []  # (bus name, object path, the string it registered)

    # ---- the watcher, answered by hand: a registration must be tied to its sender
    def on_message(self, msg):
        if msg.message_type != MessageType.METHOD_CALL or msg.path != "/StatusNotifierWatcher":
            return None
        if msg.interface == WATCHER and msg.member == "RegisterStatusNotifierItem":
            service = msg.body[0]
            # libappindicator registers its object path; others their bus name.
            item = (msg.sender, service, service) if service.startswith("/") else (service, "/StatusNotifierItem", service)
            self.items = [i for i in self.items if i[:2] != item[:2]] + [item]
            asyncio.get_running_loop().create_task(self.announce(item))
            return Message.new_method_return(msg)
        if msg.interface == WATCHER and msg.member == "RegisterStatusNotifierHost":
            return Message.new_method_return(msg)
        if msg.interface == PROPS and msg.member in ("Get", "GetAll"):
            props = {
                "RegisteredStatusNotifierItems": Variant("as", [f"{b}{p}" for b, p, _ in self.items]),
                "IsStatusNotifierHostRegistered": Variant("b", True),
                "ProtocolVersion": Variant("i", 0),
            }
            if msg.member == "GetAll":
                return Message.new_method_return(msg, "a{sv}", [props])
            if msg.body[1] in props:
                return Message.new_method_return(msg, "v", [props[msg.body[1]]])
            return Message.new_error(msg, "org.freedesktop.DBus.Error.UnknownProperty", msg.body[1])
        if msg.interface == "org.freedesktop.DBus.Introspectable":
            return Message.new_method_return(msg, "s", [INTROSPECTION])
        return None

    async def call(self, dest, path, iface, member, signature="", body=()):
        reply = await self.bus.call(Message(destination=dest, path=path, interface=iface, member=member, signature=signature, body=list(body)))
        if reply.message_type == MessageType.ERROR:
            raise RuntimeError(f"{iface}.{member} on {dest}{path}: {reply.error_name} {reply.body}")
        return reply.body

    async def describe(self, item):
        name, path, registered = item
        (props,) = await self.call(name, path, PROPS, "GetAll", "s", [ITEM])
        props = {k: v.value for k, v in props.items()}
        menu = []
        if props.get("Menu"):
            _, layout = await self.call(name, props["Menu"], "com.canonical.dbusmenu", "GetLayout", "iias", [0, -1, []])
            menu = [self.entry(child.value) for child in layout[2]]
        icon = None
        if props.get("IconName"):
            theme = props.get("IconThemePath") or ""
            guess = props["IconName"] if os.path.isabs(props["IconName"]) else os.path.join(theme, props["IconName"] + ".png")
            icon = guess if os.path.exists(guess) else None
        return {
            "registered": registered,
            "id": plain(props.get("Id")),
            "title": plain(props.get("Title")),
            "status": plain(props.get("Status")),
            "iconName": plain(props.get("IconName")),
            "iconFile": icon,
            "pixmaps": len(props.get("IconPixmap") or []),
            "menu": menu,
        }

    def entry(self, node):
        eid, props, children = node
        label = props["label"].value if "label" in props else ""
        return {
            "id": eid,
            "label": label.replace("_", ""),
            "type": props["type"].value if "type" in props else "standard",
            "enabled": props["enabled"].value if "enabled" in props else True,
            "visible": props["visible"].value if "visible" in props else True,
            # A check item: "toggle-type" is "checkmark", "toggle-state" 1 when checked.
            "checked": props["toggle-state"].value == 1 if "toggle-state" in props else None,
            "children": [self.entry(c.value) for c in children],
        }

    async def announce(self, item):
        try:
            say({"event": "registered", **await self.describe(item)})
        except Exception as e:  # the item may not be exported yet; `items` asks again
            say({"event": "registered", "registered": item[2], "error": str(e)})

    async def click(self, label):
        if not self.items:
            raise RuntimeError("no tray item is registered")
        name, path, _ = self.items[-1]
        (props,) = await self.call(name, path, PROPS, "GetAll", "s", [ITEM])
        menu_path = props["Menu"].value
        _, layout = await self.call(name, menu_path, "com.canonical.dbusmenu", "GetLayout", "iias", [0, -1, []])
        entries = [self.entry(c.value) for c in layout[2]]
        found = next((e for e in entries if e["label"] == label), None)
        if not found:
            raise RuntimeError(f"no menu entry {label!r} in {[e['label'] for e in entries]}")
        await self.call(name, menu_path, "com.canonical.dbusmenu", "Event", "isvu", [found["id"], "clicked", Variant("i", 0), 0])
        return {"clicked": found["id"]}


# ---- the window manager's part -------------------------------------------------------

def windows_of(pid, title):
    d = display.Display()
    pid_atom = d.intern_atom("_NET_WM_PID")
    name_atom = d.intern_atom("_NET_WM_NAME")
    utf8 = d.intern_atom("UTF8_STRING")
    found = []
    for w in d.screen().root.query_tree().children:
        p = w.get_full_property(pid_atom, X.AnyPropertyType)
        if not p or int(p.value[0]) != pid:
            continue
        n = w.get_full_property(name_atom, utf8)
        name = n.value.decode() if n else (w.get_wm_name() or "")
        if name == title:
            found.append(w)
    return d, found


def all_windows():
    """Every top-level window with what identifies it (for failure messages)."""
    d = display.Display()
    pid_atom = d.intern_atom("_NET_WM_PID")
    name_atom = d.intern_atom("_NET_WM_NAME")
    utf8 = d.intern_atom("UTF8_STRING")
    out = []
    for w in d.screen().root.query_tree().children:
        a = w.get_attributes()
        p = w.get_full_property(pid_atom, X.AnyPropertyType)
        n = w.get_full_property(name_atom, utf8)
        protocols = [d.get_atom_name(x) for x in (w.get_wm_protocols() or [])]
        out.append({"id": hex(w.id), "pid": int(p.value[0]) if p else None, "name": n.value.decode() if n else w.get_wm_name(),
                    "mapped": a.map_state == X.IsViewable, "override": bool(a.override_redirect), "protocols": protocols})
    d.close()
    return {"windows": out}


def close(pid, title):
    d, wins = windows_of(pid, title)
    protocols = d.intern_atom("WM_PROTOCOLS")
    delete = d.intern_atom("WM_DELETE_WINDOW")
    for w in wins:
        ev = protocol.event.ClientMessage(window=w, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0]))
        w.send_event(ev, event_mask=X.NoEventMask)
    d.flush()
    d.close()
    if not wins:
        raise RuntimeError(f"no window titled {title!r} of pid {pid}")
    return {"windows": [hex(w.id) for w in wins]}


def mapped(pid, title):
    d, wins = windows_of(pid, title)
    shown = any(w.get_attributes().map_state == X.IsViewable for w in wins)
    d.close()
    return {"mapped": shown, "windows": len(wins)}


async def main():
    bus = await MessageBus(bus_type=BusType.SESSION).connect()
    desk = Desktop(bus)
    bus.add_message_handler(desk.on_message)
    await bus.request_name(WATCHER)
    await bus.request_name(f"org.kde.StatusNotifierHost-{os.getpid()}")
    await bus.send(Message.new_signal("/StatusNotifierWatcher", WATCHER, "StatusNotifierHostRegistered"))
    say({"event": "ready"})

    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        req = json.loads(line)
        try:
            cmd = req["cmd"]
            if cmd == "items":
                out = {"items": [await desk.describe(i) for i in desk.items]}
            elif cmd == "click":
                out = await desk.click(req["label"])
            elif cmd == "close":
                out = close(req["pid"], req["title"])
            elif cmd == "windows":
                out = all_windows()
            elif cmd == "mapped":
                out = mapped(req["pid"], req["title"])
            else:
                raise RuntimeError(f"unknown command {cmd}")
            say({"id": req["id"], **out})
        except Exception as e:
            say({"id": req.get("id"), "error": f"{type(e).__name__}: {e}"})


if __name__ == "__main__":
    asyncio.run(main())
