"""AWS Signature Version 4, checked the way AWS checks it, for the fake Bedrock server.

The `anthropic` Bedrock client signs each request with botocore over the exact body bytes
it sends. A fake that only looked for an `Authorization` header would accept a request
signed over other bytes (a body re-encoded after signing) or not signed at all, which
Bedrock refuses; so the fake recomputes the signature here with the standard library
(canonical request, string to sign, HMAC-SHA256 key chain) and answers as AWS does.
`sign_headers` is the same computation from the client's side, for tests that build
requests by hand.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import quote, urlsplit

__all__ = [
    "AwsCredentials",
    "SigV4Problem",
    "sign_headers",
    "verify_sigv4",
]

ALGORITHM = "AWS4-HMAC-SHA256"
_AMZ_DATE = "%Y%m%dT%H%M%SZ"
#: how far a request's date may be from the server's clock (AWS allows 15 minutes)
MAX_SKEW = dt.timedelta(minutes=15)
_FIELD = re.compile(r"\s*(Credential|SignedHeaders|Signature)=([^,\s]*)\s*,?")

MISMATCH = ("The request signature we calculated does not match the signature you "
            "provided. Check your AWS Secret Access Key and signing method. Consult the "
            "service documentation for details.")
INVALID_TOKEN = "The security token included in the request is invalid."


@dataclass(frozen=True)
class AwsCredentials:
    """An access key pair (and STS session token) the fake knows."""

    access_key: str
    secret_key: str
    session_token: str | None = None


@dataclass(frozen=True)
class SigV4Problem:
    """Why AWS refuses a request: the `x-amzn-ErrorType` and the message it sends."""

    error_type: str
    message: str


def verify_sigv4(
    method: str, path: str, headers: Mapping[str, str], body: bytes, *,
    credentials: Mapping[str, AwsCredentials], region: str, service: str,
    now: dt.datetime | None = None, expired: bool = False,
) -> SigV4Problem | None:
    """None when `Authorization` is a valid SigV4 signature over this exact request.

    `path` is the request target as sent (with its query); `headers` have lower-case
    names; `credentials` maps access key ids to the keys the server knows. `expired`
    answers a known key as AWS answers an expired session token.
    """
    authorization = headers.get("authorization", "")
    if not authorization:
        return SigV4Problem("MissingAuthenticationTokenException", "Missing Authentication Token")
    algorithm, _, rest = authorization.partition(" ")
    fields = dict(_FIELD.findall(rest))
    if algorithm != ALGORITHM or set(fields) != {"Credential", "SignedHeaders", "Signature"}:
        return SigV4Problem("IncompleteSignatureException",
                            f"Authorization header requires 'Credential', 'SignedHeaders' and "
                            f"'Signature' parameters with algorithm {ALGORITHM}. "
                            f"Authorization={authorization[:40]}")
    scope = fields["Credential"].split("/")
    if len(scope) != 5 or scope[4] != "aws4_request":
        return SigV4Problem("IncompleteSignatureException",
                            f"Credential should be of the form <key>/<date>/<region>/<service>/"
                            f"aws4_request, not {fields['Credential']!r}")
    access_key, day, scope_region, scope_service, _ = scope
    known = credentials.get(access_key)
    if known is None:
        return SigV4Problem("UnrecognizedClientException", INVALID_TOKEN)
    if expired:
        return SigV4Problem("ExpiredTokenException",
                            "The security token included in the request is expired")
    if known.session_token is not None and headers.get(
            "x-amz-security-token") != known.session_token:
        return SigV4Problem("UnrecognizedClientException", INVALID_TOKEN)
    return _check_signature(method, path, headers, body, fields, known, day=day,
                            region=(region, scope_region), service=(service, scope_service),
                            now=now or dt.datetime.now(dt.UTC))


def _check_signature(
    method: str, path: str, headers: Mapping[str, str], body: bytes,
    fields: Mapping[str, str], known: AwsCredentials, *, day: str, region: tuple[str, str],
    service: tuple[str, str], now: dt.datetime,
) -> SigV4Problem | None:
    """The scope, the date and the signature itself."""
    if region[1] != region[0]:
        return SigV4Problem("InvalidSignatureException",
                            f"Credential should be scoped to a valid region, not "
                            f"'{region[1]}'. ")
    if service[1] != service[0]:
        return SigV4Problem("InvalidSignatureException",
                            f"Credential should be scoped to correct service: '{service[0]}'. ")
    signed = fields["SignedHeaders"].split(";")
    if "host" not in signed:
        return SigV4Problem("InvalidSignatureException",
                            "'Host' or ':authority' must be a 'SignedHeader' in the AWS "
                            "Authorization.")
    if any(name not in headers for name in signed):
        return SigV4Problem("InvalidSignatureException", MISMATCH)
    stamp = _request_time(headers)
    if stamp is None:
        return SigV4Problem("IncompleteSignatureException",
                            "Authorization header requires existence of either a 'X-Amz-Date' "
                            "or a 'Date' header.")
    if abs(now - stamp) > MAX_SKEW:
        return SigV4Problem("InvalidSignatureException",
                            f"Signature expired: {stamp.strftime(_AMZ_DATE)} is now earlier "
                            f"than {(now - MAX_SKEW).strftime(_AMZ_DATE)} "
                            f"({now.strftime(_AMZ_DATE)} - 15 min.)")
    amz_date = stamp.strftime(_AMZ_DATE)
    if day != amz_date[:8]:
        return SigV4Problem("InvalidSignatureException",
                            f"Date in Credential scope does not match YYYYMMDD from ISO-8601 "
                            f"version of date from HTTP: '{day}' != '{amz_date[:8]}', from "
                            f"'{amz_date}'.")
    expected = _signature(method, path, {n: headers[n] for n in signed}, body, known.secret_key,
                          amz_date=amz_date, region=region[0], service=service[0])
    if not hmac.compare_digest(expected, fields["Signature"]):
        return SigV4Problem("InvalidSignatureException", MISMATCH)
    return None


def _request_time(headers: Mapping[str, str]) -> dt.datetime | None:
    """`X-Amz-Date` (basic ISO 8601), or else the HTTP `Date` header."""
    try:
        if "x-amz-date" in headers:
            return dt.datetime.strptime(headers["x-amz-date"], _AMZ_DATE).replace(tzinfo=dt.UTC)
        if "date" in headers:
            return parsedate_to_datetime(headers["date"]).astimezone(dt.UTC)
    except (TypeError, ValueError):
        return None
    return None


def _signature(
    method: str, path: str, signed: Mapping[str, str], body: bytes, secret_key: str, *,
    amz_date: str, region: str, service: str,
) -> str:
    """The hex signature of a request whose signed headers (lower-case) are `signed`."""
    target = urlsplit(path)
    names = sorted(signed)
    canonical = "\n".join([
        method.upper(),
        quote(_remove_dot_segments(target.path or "/"), safe="/~"),
        _canonical_query(target.query),
        "".join(f"{name}:{' '.join(signed[name].split())}\n" for name in names),
        ";".join(names),
        hashlib.sha256(body).hexdigest(),
    ])
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join([ALGORITHM, amz_date, scope,
                         hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
    key = f"AWS4{secret_key}".encode()
    for part in (amz_date[:8], region, service, "aws4_request"):
        key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 dot-segment removal, consecutive slashes collapsed, as AWS requires."""
    kept: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if kept:
                kept.pop()
        elif segment and segment != ".":
            kept.append(segment)
    first = "/" if path.startswith("/") else ""
    last = "/" if path.endswith("/") and kept else ""
    return first + "/".join(kept) + last


def _canonical_query(query: str) -> str:
    """The query's pairs sorted (already URI-encoded on the wire)."""
    if not query:
        return ""
    pairs = sorted(pair.partition("=")[::2] for pair in query.split("&"))
    return "&".join(f"{key}={value}" for key, value in pairs)


def sign_headers(
    method: str, url: str, headers: Mapping[str, str], body: bytes,
    credentials: AwsCredentials, *, region: str, service: str,
    now: dt.datetime | None = None,
) -> dict[str, str]:
    """The headers to add so that `url` is SigV4-signed as botocore signs it (every given
    header plus `host` and `x-amz-date` signed)."""
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    amz_date = moment.strftime(_AMZ_DATE)
    parts = urlsplit(url)
    added = {"x-amz-date": amz_date}
    if credentials.session_token is not None:
        added["x-amz-security-token"] = credentials.session_token
    signed = {name.lower(): value for name, value in headers.items()}
    signed.update(added)
    signed.setdefault("host", parts.netloc)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    signature = _signature(method, target, signed, body, credentials.secret_key,
                           amz_date=amz_date, region=region, service=service)
    scope = f"{credentials.access_key}/{amz_date[:8]}/{region}/{service}/aws4_request"
    added["authorization"] = (f"{ALGORITHM} Credential={scope}, "
                              f"SignedHeaders={';'.join(sorted(signed))}, Signature={signature}")
    return added
