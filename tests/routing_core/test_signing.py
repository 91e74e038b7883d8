"""Signed packs (docs/pack-format.md, Signed packs): every tampering is refused, the last good
pack keeps serving, and only configured keys turn verification on."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from routing_core import dump_pack, load_pack
from routing_core.cli import main
from routing_core.remote import PackFetcher, RemoteRouter
from routing_core.server.packs import FileWatcher, PackHolder
from routing_core.signing import (
    SIGNATURE_HEADER,
    PackSignature,
    PublicKeys,
    SignatureError,
    generate_private_key,
    key_id,
    load_verified_pack,
    parse_signature,
    private_key_pem,
    public_key_pem,
    sign_pack,
    signature_path,
)
from tests.routing_core.conftest import minimal_doc

OLD, NEW, STRANGER = generate_private_key(), generate_private_key(), generate_private_key()


def pack_bytes(**changes: object) -> bytes:
    return dump_pack(load_pack(minimal_doc(**changes))).encode()


PACK = pack_bytes()
OTHER = pack_bytes(version=7)


def keys(*private: object) -> PublicKeys:
    return PublicKeys(k.public_key() for k in private)  # type: ignore[attr-defined]


def one_byte_changed(body: bytes) -> bytes:
    at = body.index(b'"version":') + len(b'"version":')
    return body[:at] + bytes([body[at] ^ 1]) + body[at + 1 :]


def test_a_signed_pack_verifies_and_names_its_key():
    text = sign_pack(PACK, OLD).to_text()
    assert keys(OLD).verify(PACK, text) == key_id(OLD.public_key())
    assert parse_signature(text) == sign_pack(PACK, OLD)  # Ed25519 is deterministic


@pytest.mark.parametrize(
    ("body", "signature", "trusted", "reason"),
    [
        (one_byte_changed(PACK), sign_pack(PACK, OLD).to_text(), (OLD,), "does not match"),
        (PACK, None, (OLD,), "without a signature"),
        (PACK, "", (OLD,), "without a signature"),
        (PACK, sign_pack(OTHER, OLD).to_text(), (OLD,), "does not match"),
        (PACK, sign_pack(PACK, STRANGER).to_text(), (OLD,), "not a configured key"),
        (PACK, sign_pack(PACK, OLD).to_text(), (NEW,), "not a configured key"),
        (PACK, '{"format":"route-pack-signature"}', (OLD,), "exactly"),
        (PACK, "not json", (OLD,), "not JSON"),
    ],
    ids=[
        "one-byte-changed",
        "stripped",
        "empty",
        "another-packs-signature",
        "unknown-key",
        "old-key-after-it-was-removed",
        "malformed",
        "garbage",
    ],
)
def test_every_tampering_is_refused(body, signature, trusted, reason):
    with pytest.raises(SignatureError, match=reason):
        keys(*trusted).verify(body, signature)


def test_a_tampered_pack_that_would_load_is_refused():
    # An attacker who can change bytes can also drop the checksum (hand-written packs have none).
    document = json.loads(PACK)
    del document["checksum"]
    unsummed = json.dumps(document).encode()
    tampered = unsummed.replace(b"invoices", b"invoicez")
    assert load_pack(tampered).routes[0].description == "invoicez and charges"
    with pytest.raises(SignatureError, match="does not match"):
        keys(OLD).verify(tampered, sign_pack(unsummed, OLD).to_text())


def test_an_old_key_is_accepted_while_it_is_still_configured():
    signed_by_old = sign_pack(PACK, OLD).to_text()
    assert keys(NEW, OLD).verify(PACK, signed_by_old) == key_id(OLD.public_key())
    with pytest.raises(SignatureError, match="not a configured key"):
        keys(NEW).verify(PACK, signed_by_old)


def test_a_key_id_is_the_keys_own_digest_so_a_document_cannot_point_elsewhere():
    forged = PackSignature(key_id(OLD.public_key()), STRANGER.sign(PACK)).to_text()
    with pytest.raises(SignatureError, match="does not match"):
        keys(OLD).verify(PACK, forged)


def test_keys_round_trip_through_pem():
    again = PublicKeys.from_pem([public_key_pem(OLD)])
    assert again.ids == (key_id(OLD.public_key()),)
    with pytest.raises(ValueError):
        PublicKeys([])


# -- pulls ------------------------------------------------------------------------------------


class SignedServer:
    """Serves a pack with a signature header that a test can tamper with."""

    def __init__(self) -> None:
        self.body = PACK
        self.signature: str | None = sign_pack(PACK, OLD).to_text()
        self.seen_status: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                server.seen_status.append(self.headers.get("Route-Agent-Status"))
                etag = '"' + json.loads(server.body)["checksum"] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("ETag", etag)
                if server.signature is not None:
                    self.send_header(SIGNATURE_HEADER, server.signature)
                self.send_header("Content-Length", str(len(server.body)))
                self.end_headers()
                self.wfile.write(server.body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pack"


@pytest.fixture
def signed_server() -> Iterator[SignedServer]:
    server = SignedServer()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_a_fetcher_with_keys_refuses_a_tampered_pack_and_the_router_keeps_the_last_good(
    signed_server,
):
    router = RemoteRouter(PackFetcher(signed_server.url, keys=keys(OLD)))
    assert router.current.pack.version == 0
    tampered = one_byte_changed(OTHER)
    for body, signature in [
        (tampered, sign_pack(OTHER, OLD).to_text()),  # one byte changed
        (OTHER, None),  # stripped
        (OTHER, sign_pack(PACK, OLD).to_text()),  # another pack's signature
        (OTHER, sign_pack(OTHER, STRANGER).to_text()),  # unknown key
    ]:
        signed_server.body, signed_server.signature = body, signature
        result = router.refresh()
        assert result.status == "failed" and result.error.startswith("signature refused")
        assert router.current.pack.version == 0
    signed_server.body, signed_server.signature = OTHER, sign_pack(OTHER, OLD).to_text()
    result = router.refresh()
    assert (result.status, result.key_id) == ("updated", key_id(OLD.public_key()))
    assert router.current.pack.version == 7


def test_without_keys_a_fetcher_ignores_signatures(signed_server):
    signed_server.signature = None
    result = PackFetcher(signed_server.url).fetch()
    assert (result.status, result.key_id) == ("updated", None)


# -- files and the command line ----------------------------------------------------------------


@pytest.fixture
def signed_file(tmp_path: Path) -> Path:
    path = tmp_path / "pack.json"
    path.write_bytes(PACK)
    signature_path(path).write_text(sign_pack(PACK, OLD).to_text())
    return path


def write_key(tmp_path: Path, name: str, private: object, *, public: bool = True) -> str:
    path = tmp_path / name
    pem = public_key_pem(private) if public else private_key_pem(private)  # type: ignore[arg-type]
    path.write_bytes(pem)
    return str(path)


def test_a_file_watcher_with_keys_keeps_the_last_good_pack(signed_file: Path):
    holder = PackHolder("file")
    watcher = FileWatcher(signed_file, holder, keys=keys(OLD))
    watcher.tick()
    assert holder.state is not None and holder.state.key_id == key_id(OLD.public_key())
    signed_file.write_bytes(one_byte_changed(PACK))
    watcher.tick()
    assert "does not match" in (holder.last_error or "")
    signature_path(signed_file).unlink()
    signed_file.write_bytes(OTHER)
    watcher.tick()
    assert "no signature file" in (holder.last_error or "")
    assert holder.state.revision == 1 and holder.state.router.pack.version == 0
    signature_path(signed_file).write_text(sign_pack(OTHER, OLD).to_text())
    watcher.tick()  # the signature's arrival is a change too
    assert holder.state.revision == 2 and holder.state.router.pack.version == 7


def test_load_verified_pack_refuses_before_parsing(signed_file: Path):
    assert load_verified_pack(signed_file, keys(OLD)).version == 0
    with pytest.raises(SignatureError, match="not a configured key"):
        load_verified_pack(signed_file, keys(NEW))


def test_cli_sign_then_verify(tmp_path: Path, signed_file: Path, capsys):
    signature_path(signed_file).unlink()
    private = write_key(tmp_path, "new.pem", NEW, public=False)
    assert main(["sign", str(signed_file), "--key", private]) == 0
    old, new = write_key(tmp_path, "old.pub", OLD), write_key(tmp_path, "new.pub", NEW)
    assert main(["verify", str(signed_file), "--key", old, "--key", new]) == 0
    assert f"signed by key {key_id(NEW.public_key())}" in capsys.readouterr().out
    assert main(["verify", str(signed_file), "--key", old]) == 1
    assert "not a configured key" in capsys.readouterr().err
    signed_file.write_bytes(one_byte_changed(signed_file.read_bytes()))
    assert main(["verify", str(signed_file), "--key", new]) == 1
    assert "does not match" in capsys.readouterr().err


def test_serve_refuses_to_start_with_a_key_file_it_cannot_read(tmp_path: Path, signed_file, capsys):
    missing = str(tmp_path / "missing.pub")
    assert main(["serve", "--pack", str(signed_file), "--verify-key", missing]) == 2
    assert "missing.pub" in capsys.readouterr().err
    not_a_key = tmp_path / "not-a-key.pub"
    not_a_key.write_text("hello")
    assert main(["serve", "--pack", str(signed_file), "--verify-key", str(not_a_key)]) == 2
