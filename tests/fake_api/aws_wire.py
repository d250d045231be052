"""AWS's wire formats, written out for the Bedrock fake: the SigV4 check and event streams.

Both are written here from AWS's specifications, not with botocore, so the fake checks
what the SDK (which signs and decodes with botocore) really sends and reads.

* :func:`sigv4_problem`: recompute a request's Signature Version 4 with the secret of
  its access key and say what is wrong (None: nothing). The canonical request is the
  method, the path with each byte URI-encoded once more (the rule of every service but
  S3), the sorted query, the signed headers (lower-case names, values with runs of
  spaces squeezed), their names, and the SHA-256 of the body; the string to sign is the
  algorithm, ``X-Amz-Date``, the scope ``DATE/REGION/SERVICE/aws4_request`` and the hash
  of that request; the key is HMAC-SHA256 chained from ``"AWS4" + secret`` through the
  date, the region, the service and ``aws4_request``.
* :func:`event_frame`: one message of ``application/vnd.amazon.eventstream``: a prelude
  (total length, headers length: big-endian u32), the prelude's CRC32, the headers
  (name length u8, name, type 7 = string, value length u16, value), the payload, the
  message's CRC32.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import struct
import time
import zlib
from calendar import timegm
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote

ALGORITHM = "AWS4-HMAC-SHA256"
MAX_SKEW_S = 300  # AWS refuses a signature more than 5 minutes off
_AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*"
                   r"Signature=([0-9a-f]{64})")


@dataclass(frozen=True)
class SigV4Refusal:
    """Why AWS would refuse the request: its error type and message (403)."""

    error_type: str
    message: str


SIGNATURE_MISMATCH = ("The request signature we calculated does not match the signature you "
                      "provided. Check your AWS Secret Access Key and signing method. Consult "
                      "the service documentation for details.")


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = _hmac(("AWS4" + secret).encode(), date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return key


def canonical_request(method: str, path: str, query: str, headers: dict[str, str],
                      signed: list[str], body: bytes) -> str:
    canonical_query = "&".join(
        f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
        for k, v in sorted(parse_qsl(query, keep_blank_values=True)))
    canonical_headers = "".join(f"{name}:{' '.join(headers.get(name, '').split())}\n"
                                for name in signed)
    return "\n".join([method, quote(path or "/", safe="/~"), canonical_query, canonical_headers,
                      ";".join(signed), hashlib.sha256(body).hexdigest()])


def sigv4_problem(*, method: str, path: str, query: str, headers: dict[str, str], body: bytes,
                  secrets: dict[str, str], session_tokens: dict[str, str], region: str,
                  service: str, now: float | None = None) -> SigV4Refusal | None:
    """``headers``: lower-case names. ``secrets``: access key -> secret key;
    ``session_tokens``: access key -> the session token it goes with (temporary keys)."""
    auth = headers.get("authorization", "")
    if not auth:
        return SigV4Refusal("MissingAuthenticationTokenException", "Missing Authentication Token")
    found = _AUTH.fullmatch(auth.strip())
    if found is None:
        return SigV4Refusal("IncompleteSignatureException",
                            f"Authorization header requires 'Credential', 'Signature' and "
                            f"'SignedHeaders' parameters. Authorization={auth[:40]}")
    credential, signed_names, signature = found.groups()
    try:
        access_key, date, scope_region, scope_service, terminal = credential.split("/")
    except ValueError:
        return SigV4Refusal("IncompleteSignatureException", f"Credential is malformed: {credential}")
    if access_key not in secrets:
        return SigV4Refusal("UnrecognizedClientException",
                            "The security token included in the request is invalid.")
    expected_token = session_tokens.get(access_key)
    if expected_token is not None and headers.get("x-amz-security-token") != expected_token:
        return SigV4Refusal("UnrecognizedClientException",
                            "The security token included in the request is invalid.")
    if terminal != "aws4_request" or scope_service != service:
        return SigV4Refusal("InvalidSignatureException",
                            f"Credential should be scoped to correct service: '{service}'.")
    if scope_region != region:
        return SigV4Refusal("InvalidSignatureException",
                            f"Credential should be scoped to a valid region. ")
    signed = signed_names.split(";")
    if "host" not in signed or "x-amz-date" not in signed or signed != sorted(signed):
        return SigV4Refusal("InvalidSignatureException",
                            "'Host' and 'X-Amz-Date' must be signed, names in order.")
    if expected_token is not None and "x-amz-security-token" not in signed:
        return SigV4Refusal("InvalidSignatureException", SIGNATURE_MISMATCH)
    amz_date = headers.get("x-amz-date", "")
    try:
        when = timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
    except ValueError:
        return SigV4Refusal("IncompleteSignatureException", f"Date must be in ISO-8601 "
                            f"'basic format'. Got '{amz_date}'.")
    if amz_date[:8] != date:
        return SigV4Refusal("InvalidSignatureException", "Date in Credential scope does not "
                            "match YYYYMMDD from ISO-8601 version of date from HTTP.")
    if abs((time.time() if now is None else now) - when) > MAX_SKEW_S:
        return SigV4Refusal("InvalidSignatureException", f"Signature expired: {amz_date} is "
                            "now earlier than the allowed window.")
    request = canonical_request(method, path, query, headers, signed, body)
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(request.encode()).hexdigest()])
    expected = hmac.new(signing_key(secrets[access_key], date, region, service),
                        to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        return SigV4Refusal("InvalidSignatureException", SIGNATURE_MISMATCH)
    return None


def event_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message (string headers only, as Bedrock sends)."""
    encoded = b"".join(
        struct.pack(">B", len(name)) + name.encode() + b"\x07"
        + struct.pack(">H", len(value.encode())) + value.encode()
        for name, value in headers.items())
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))
