#!/usr/bin/env python3
"""client/test/sni_proxy.py: a TLS endpoint that notes the server name
(SNI) each client sends, then passes the plain bytes on to a Redis server.

    sni_proxy.py CERT KEY UPSTREAM_PORT LOG

Prints the port it listens on (127.0.0.1), then serves until killed.  Each
TLS handshake appends one line to LOG: the name the client sent, or "-"
when it sent none.
"""
import socket
import ssl
import sys
import threading

cert, key, upstream, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def note(sslobj, name, context):
    with open(log, "a") as f:
        f.write((name or "-") + "\n")


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ctx.sni_callback = note


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(conn):
    try:
        tls = ctx.wrap_socket(conn, server_side=True)
    except (ssl.SSLError, OSError):
        conn.close()
        return
    up = socket.create_connection(("127.0.0.1", upstream))
    threading.Thread(target=pump, args=(up, tls), daemon=True).start()
    pump(tls, up)


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)
while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
