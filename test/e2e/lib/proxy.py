#!/usr/bin/env python3
"""test/e2e/lib/proxy.py: a TCP proxy that can hold bytes in flight (fault F2).

    proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT CONTROL_PORT [LOGDIR]

Forwards every connection made to 127.0.0.1:LISTEN_PORT to the target.
A port given as 0 is picked by the system; the proxy then prints
"ports LISTEN_PORT CONTROL_PORT" as its first line of output.
A line protocol on 127.0.0.1:CONTROL_PORT steers it (one command a line,
one reply line each):

  hold      from now on keep client-to-server bytes instead of sending them
  silence   keep the bytes of both directions: a network that went silent
  delay MS  send server-to-client bytes MS milliseconds late (0: on time)
  hold-new N  let N more connections through, then keep the client-to-
            server bytes of every connection made after them (a server
            that accepts and then stalls, for new sessions only)
  release   send what was kept, in order, and forward normally again
  status    "held=BYTES held_replies=BYTES open=CONNS closed=CONNS
            last_up_ms=T last_down_ms=T": the wall-clock times (ms since
            the epoch) at which bytes were last passed on to the server,
            and to a client
  quit      stop

This is what a slow or partitioned network does to a write: the client has
sent it, the server has not seen it yet.  When the client goes away while
its bytes are held, the server side stays open: on release the bytes are
delivered and only then is the server told that the client is gone, as a
delayed TCP segment would be.  What the server answers on such a
connection is appended to LOGDIR/orphan-N.bin, so that a test can see the
server's reply (an ErrorResponse with SQLSTATE LF001, say) that nobody
read.  Standard library only; loopback only.
"""
import asyncio
import os
import sys
import time


class Proxy:
    def __init__(self, target_host, target_port, logdir):
        self.target = (target_host, target_port)
        self.logdir = logdir
        self.holding = False
        self.hold_from = None
        self.silent = False
        self.delay = 0.0
        self.conns = set()
        self.closed = 0
        self.nextid = 0
        self.last_up_ms = 0
        self.last_down_ms = 0

    def held(self):
        return sum(sum(len(b) for b in c.queue) for c in self.conns)

    def held_replies(self):
        return sum(sum(len(b) for b in c.down_queue) for c in self.conns)

    async def client(self, creader, cwriter):
        conn = Conn(self, creader, cwriter)
        self.conns.add(conn)
        try:
            await conn.run()
        finally:
            self.conns.discard(conn)
            self.closed += 1

    def release(self):
        self.holding = False
        self.hold_from = None
        self.silent = False
        self.delay = 0.0
        for c in list(self.conns):
            c.flush()

    async def control(self, reader, writer):
        while True:
            line = await reader.readline()
            if not line:
                break
            cmd = line.decode().split()
            reply = "ok"
            if cmd == ["hold"]:
                self.holding = True
            elif len(cmd) == 2 and cmd[0] == "hold-new" and cmd[1].isdigit():
                self.hold_from = self.nextid + int(cmd[1])
            elif cmd == ["silence"]:
                self.holding = True
                self.silent = True
            elif len(cmd) == 2 and cmd[0] == "delay" and cmd[1].isdigit():
                self.delay = int(cmd[1]) / 1000.0
            elif cmd == ["release"]:
                self.release()
            elif cmd == ["status"]:
                reply = "held=%d held_replies=%d open=%d closed=%d last_up_ms=%d last_down_ms=%d" % (
                    self.held(), self.held_replies(), len(self.conns), self.closed,
                    self.last_up_ms, self.last_down_ms)
            elif cmd == ["quit"]:
                writer.write(b"ok\n")
                await writer.drain()
                os._exit(0)
            else:
                reply = "error unknown command"
            writer.write((reply + "\n").encode())
            await writer.drain()
        writer.close()


class Conn:
    def __init__(self, proxy, creader, cwriter):
        self.p = proxy
        self.creader, self.cwriter = creader, cwriter
        self.swriter = None
        self.queue = []
        self.down_queue = []
        self.client_gone = False
        self.flushed = asyncio.Event()
        self.id = proxy.nextid
        proxy.nextid += 1

    def flush(self):
        for b in self.queue:
            self.swriter.write(b)
        if self.queue:
            self.p.last_up_ms = int(time.time() * 1000)
        self.queue = []
        if self.client_gone:
            self.flushed.set()
        for b in self.down_queue:
            self.to_client(b)
        self.down_queue = []

    def to_client(self, data):
        if self.client_gone:
            return
        try:
            self.cwriter.write(data)
            self.p.last_down_ms = int(time.time() * 1000)
        except (OSError, RuntimeError):
            self.client_gone = True

    async def up(self):
        """client -> server, subject to holding"""
        while True:
            data = await self.creader.read(65536)
            if not data:
                break
            if self.p.holding or self.queue or (
                    self.p.hold_from is not None and self.id >= self.p.hold_from):
                self.queue.append(data)
            else:
                self.swriter.write(data)
                self.p.last_up_ms = int(time.time() * 1000)
                await self.swriter.drain()
        self.client_gone = True
        if self.queue:
            await self.flushed.wait()
        # the client's FIN, delivered after its last bytes
        try:
            await self.swriter.drain()
            self.swriter.write_eof()
        except (OSError, RuntimeError):
            pass

    async def down(self, sreader):
        """server -> client, subject to silence and delay; kept in a file
        once the client is gone"""
        log = None
        while True:
            data = await sreader.read(65536)
            if not data:
                break
            if self.client_gone:
                if log is None and self.p.logdir:
                    log = open(os.path.join(self.p.logdir, "orphan-%d.bin" % self.id), "ab")
                if log:
                    log.write(data)
                    log.flush()
                continue
            if self.p.silent or self.down_queue:
                self.down_queue.append(data)
                continue
            if self.p.delay > 0:
                # later chunks wait behind this one: the order is kept
                await asyncio.sleep(self.p.delay)
            self.to_client(data)
            try:
                await self.cwriter.drain()
            except (OSError, RuntimeError):
                self.client_gone = True
        if log:
            log.close()
        try:
            self.cwriter.close()
        except (OSError, RuntimeError):
            pass

    async def run(self):
        try:
            sreader, self.swriter = await asyncio.open_connection(*self.p.target)
        except OSError:
            self.cwriter.close()
            return
        for r in await asyncio.gather(self.up(), self.down(sreader), return_exceptions=True):
            if isinstance(r, Exception):
                print("proxy: connection %d: %r" % (self.id, r), file=sys.stderr)
        self.swriter.close()


async def main(listen_port, host, port, control_port, logdir):
    p = Proxy(host, port, logdir)
    srv = await asyncio.start_server(p.client, "127.0.0.1", listen_port)
    ctl = await asyncio.start_server(p.control, "127.0.0.1", control_port)
    if listen_port == 0 or control_port == 0:
        print("ports %d %d" % (srv.sockets[0].getsockname()[1], ctl.sockets[0].getsockname()[1]),
              flush=True)
    async with srv, ctl:
        await asyncio.gather(srv.serve_forever(), ctl.serve_forever())


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(64)
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                     sys.argv[5] if len(sys.argv) == 6 else None))
