"""Helpers for the DNS-rebinding tests: recording HTTP(S) servers on chosen loopback
addresses, a resolver that changes its answer, and a throw-away CA for TLS."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HOST = "hooks.partner.test"


@dataclass
class Recorder:
    """A server that answers 200 to everything and writes down what reached it."""

    requests: list = field(default_factory=list)  # (method, path, Host header)
    server_names: list = field(default_factory=list)  # TLS SNI seen
    server: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_recorder(address: str, port: int = 0, tls: ssl.SSLContext | None = None) -> Recorder:
    found = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            found.requests.append((self.command, self.path, self.headers.get("Host")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET = do_CONNECT = _answer

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((address, port), Handler)
    if tls is not None:
        tls.sni_callback = lambda sock, name, ctx: found.server_names.append(name)
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    found.server = server
    return found


def rebinding_resolver(monkeypatch, *answers: str) -> list[str]:
    """socket.getaddrinfo answers `HOST` with answers[0], then answers[1], ... (the last one
    repeats); any other name resolves normally.  Returns the log of answers given."""
    real = socket.getaddrinfo
    given: list[str] = []

    def resolve(host, port, *args, **kwargs):
        if host != HOST:
            return real(host, port, *args, **kwargs)
        address = answers[min(len(given), len(answers) - 1)]
        given.append(address)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sockaddr = (
            (address, int(port or 0), 0, 0)
            if family == socket.AF_INET6
            else (
                address,
                int(port or 0),
            )
        )
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return given


def treat_as_public(monkeypatch, address: str) -> None:
    """Relax the public-address check for one loopback address, standing for a partner's
    public server (the test cannot reach the Internet)."""
    pinned = ipaddress.IPv4Address(address)
    original = ipaddress.IPv4Address.is_global

    def is_global(self):
        return self == pinned or original.fget(self)

    monkeypatch.setattr(ipaddress.IPv4Address, "is_global", property(is_global))


def tls_files(tmp_path: Path, host: str = HOST) -> tuple[ssl.SSLContext, Path]:
    """A CA and a certificate for `host` signed by it: (server context, CA bundle path)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test partner CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    cert_path, key_path, ca_path = tmp_path / "leaf.pem", tmp_path / "leaf.key", tmp_path / "ca.pem"
    cert_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context, ca_path
