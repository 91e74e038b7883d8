"""Signed packs from the studio (docs/pack-format.md, Signed packs): every pull carries the
signature of the bytes it serves, and a real `routing-core serve` that verifies refuses a
tampered pack on its way and keeps serving the last good one."""

from __future__ import annotations

import gzip
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import zstandard
from django.core.exceptions import ImproperlyConfigured

from routing_core.signing import (
    SIGNATURE_HEADER,
    PublicKeys,
    SignatureError,
    generate_private_key,
    key_id,
    private_key_pem,
    public_key_pem,
)
from studio.models import Agent
from studio.publishing.versions import promote, publish
from studio.shared.signing import signing_key
from studio.shared.tokens import create_read_token
from tests.server.serving import serve, wait_until

OLD, NEW = generate_private_key(), generate_private_key()
URL = "/api/profiles/shop/packs/production"


def use_key(settings: Any, key: Any) -> None:
    settings.STUDIO_SIGNING_KEY_FILE = ""
    settings.STUDIO_SIGNING_KEY = private_key_pem(key).decode() if key is not None else ""


@pytest.fixture
def pull(production_pull: Any) -> Any:
    return production_pull


DECODE = {"": lambda b: b, "gzip": gzip.decompress, "zstd": zstandard.decompress}


@pytest.mark.parametrize("coding", ["", "gzip", "zstd"])
def test_every_pull_is_signed_over_the_bytes_before_their_encoding(pull, settings, coding):
    use_key(settings, OLD)
    answer = pull(accept_encoding=coding) if coding else pull()
    assert answer.get("Content-Encoding", "") == coding
    body = DECODE[coding](answer.content)
    verified = PublicKeys([OLD.public_key()]).verify(body, answer[SIGNATURE_HEADER])
    assert verified == key_id(OLD.public_key())


def test_without_a_key_packs_are_served_unsigned_and_a_304_carries_no_signature(pull, settings):
    use_key(settings, None)
    first = pull()
    assert first.status_code == 200 and SIGNATURE_HEADER not in first
    use_key(settings, OLD)
    assert pull(if_none_match=first["ETag"]).status_code == 304
    assert SIGNATURE_HEADER not in pull(if_none_match=first["ETag"])


def test_after_a_rotation_the_same_version_is_signed_by_the_new_key(pull, settings):
    use_key(settings, OLD)
    before = pull()[SIGNATURE_HEADER]
    use_key(settings, NEW)
    answer = pull()
    keys = PublicKeys([NEW.public_key()])
    assert keys.verify(answer.content, answer[SIGNATURE_HEADER]) == key_id(NEW.public_key())
    with pytest.raises(SignatureError, match="not a configured key"):
        keys.verify(answer.content, before)


def test_a_version_downloads_with_its_signature_file(pull, settings, client, owner):
    use_key(settings, OLD)
    client.force_login(owner)
    pack = client.get("/api/profiles/shop/versions/1/pack")
    sig = client.get("/api/profiles/shop/versions/1/signature")
    assert sig.status_code == 200 and "shop-v1.json.sig" in sig["Content-Disposition"]
    assert PublicKeys([OLD.public_key()]).verify(pack.content, sig.content)
    assert pack[SIGNATURE_HEADER] == sig.content.decode().strip()
    use_key(settings, None)
    assert client.get("/api/profiles/shop/versions/1/signature").status_code == 404


def test_a_key_that_cannot_be_read_is_a_configuration_error(settings, tmp_path):
    settings.STUDIO_SIGNING_KEY_FILE = str(tmp_path / "missing.pem")
    with pytest.raises(ImproperlyConfigured, match="STUDIO_SIGNING_KEY_FILE"):
        signing_key()
    settings.STUDIO_SIGNING_KEY_FILE = ""
    settings.STUDIO_SIGNING_KEY = public_key_pem(OLD).decode()  # a public key is no signing key
    with pytest.raises(ImproperlyConfigured, match="STUDIO_SIGNING_KEY"):
        signing_key()


# -- a real route server, pulling from the live studio through a man in the middle ------------


class Tamperer:
    """A proxy on loopback between the route server and the studio that changes what passes."""

    def __init__(self, upstream: str) -> None:
        self.mode = "pass"  # pass | flip | strip
        tamperer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                # The mode as the request began: the test sets the studio's key before the mode,
                # so a pull whose upstream answer was signed by the old key is never passed on
                # by a mode changed while it was in flight.
                mode = tamperer.mode
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                headers["Accept-Encoding"] = "identity"  # to change the pack's bytes in flight
                request = urllib.request.Request(upstream + self.path, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=10) as answer:
                        status, body, sent = answer.status, answer.read(), answer.headers
                except urllib.error.HTTPError as exc:
                    status, body, sent = exc.code, exc.read(), exc.headers
                signature = sent.get(SIGNATURE_HEADER)
                if status == 200 and mode == "flip":
                    at = body.index(b'"description":"') + len(b'"description":"')
                    body = body[:at] + bytes([body[at] ^ 0x20]) + body[at + 1 :]
                self.send_response(status)
                for name in ("ETag", "Content-Type"):
                    if sent.get(name):
                        self.send_header(name, sent[name])
                if signature and mode != "strip":
                    self.send_header(SIGNATURE_HEADER, signature)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def tamperer(live_server: Any) -> Iterator[Tamperer]:
    proxy = Tamperer(live_server.url)
    thread = threading.Thread(target=proxy.httpd.serve_forever, daemon=True)
    thread.start()
    yield proxy
    proxy.httpd.shutdown()
    proxy.httpd.server_close()


@pytest.mark.slow
def test_a_real_route_server_refuses_tampered_packs_and_keeps_the_last_good(
    tamperer, transactional_db, profile, owner, settings, tmp_path: Path
):
    use_key(settings, OLD)
    promote(publish(profile, user=owner), "production", user=owner)
    _, secret = create_read_token(profile, "agent", user=owner)
    key_file = tmp_path / "studio.pub"
    key_file.write_bytes(public_key_pem(OLD))
    args = ("--studio", tamperer.url + URL, "--verify-key", str(key_file), "--pull-interval", "0.2")

    def reported() -> Agent:
        return Agent.objects.get(environment="production")

    with serve(tmp_path, *args, env={"ROUTING_CORE_STUDIO_TOKEN": secret}) as server:
        assert server.call("/v1/pack")[1]["verified_by"] == key_id(OLD.public_key())
        promote(publish(profile, user=owner, note="v2"), "production", user=owner)
        for mode, key, reason in [
            ("flip", OLD, "does not match the pack's bytes"),
            ("strip", OLD, "without a signature"),
            ("pass", NEW, "not a configured key"),  # the studio signs with a key not trusted
        ]:
            use_key(settings, key)  # the key first: "pass" with the old key would let v2 in
            tamperer.mode = mode
            wait_until(
                lambda r=reason: r in (server.call("/v1/pack")[1]["last_error"] or ""), reason
            )
            assert server.call("/v1/pack")[1]["version"] == 1
            assert server.route("where is my parcel")["pack"]["version"] == 1
            # The server says so on its next pull: the studio's fleet lists it as failing to verify.
            wait_until(lambda r=reason: r in reported().last_error, "the refusal reported")
            assert reported().running_version == 1
        tamperer.mode = "pass"
        use_key(settings, OLD)
        wait_until(lambda: server.call("/v1/pack")[1]["version"] == 2, "the signed v2")
        assert server.metric("routing_core_pack_failures_total", kind="pull") >= 3
        wait_until(lambda: reported().running_version == 2, "v2 reported")
        assert (reported().verified_by, reported().last_error) == (key_id(OLD.public_key()), "")
