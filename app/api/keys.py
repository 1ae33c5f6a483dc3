"""API keys, their roles, who sends a request, and the deployment's write policy (issue 17).

A key is configured by its SHA-256 (``Settings.api_keys``: ``{"sha256", "role", "name"}``;
``absrank key new`` makes one) and never stored in clear. A presented ``X-API-Key`` is hashed
once and compared with :func:`hmac.compare_digest` against every configured digest, without
stopping at a match, so the time of a lookup does not depend on which key (if any) matched.

Who sends a request (:class:`Identity`) is a valid key's name and role, or, for anonymous
requests (and wrong keys), the client address: the peer of the connection, or the
``X-Forwarded-For`` hop a trusted proxy appended when the peer is one of
``Settings.trusted_proxies`` (the header of any other peer is the client's own text and is
ignored). Quotas (:mod:`app.api.quotas`) are counted per identity.

Writes follow ``Settings.write_policy`` once keys are configured: a write needs ``anyone`` or a
key of at least a role (``read`` < ``submit`` < ``operator``). Missing key: 401; a valid key of
a lower role: 403; a wrong key: 401 wherever a key is used. Anonymous reads are always allowed.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from app.config import ApiKey, Need, Role, Settings, WriteKind, key_sha256
from app.errors import Forbidden, Unauthorized

ROLE_LEVELS: dict[str, int] = {"anyone": 0, "read": 1, "submit": 2, "operator": 3}
"""The order of roles: a key of a role may do what every lower need allows."""

#: The scope key under which :class:`app.api.quotas.QuotaMiddleware` leaves the identity.
IDENTITY_SCOPE_KEY = "absrank.identity"
#: Longest client address kept (an X-Forwarded-For hop is text).
MAX_ADDRESS_CHARS = 64
WRONG_KEY_DETAIL = "the X-API-Key header holds no valid key"


@dataclass(frozen=True)
class Identity:
    """Who sends a request.

    Attributes
    ----------
    address : str
        The client address (the peer, or a trusted proxy's X-Forwarded-For hop).
    key_name, role : str or None
        The valid key's name and role; None for an anonymous request.
    wrong_key : bool
        A key was sent that matches none of the deployment's (the request is anonymous for
        its quotas and refused with 401 where a key matters).
    """

    address: str
    key_name: str | None = None
    role: Role | None = None
    wrong_key: bool = False

    @property
    def bucket(self) -> str:
        """What quotas are counted under: ``key:<name>`` or ``address:<address>``."""
        return f"key:{self.key_name}" if self.key_name is not None else f"address:{self.address}"

    @property
    def who(self) -> str:
        """For a person: ``key 'lab-a'`` or ``client address 10.0.0.7``."""
        return f"key {self.key_name!r}" if self.key_name is not None else "this client address"


@dataclass(frozen=True)
class _Key:
    digest: bytes
    role: Role
    name: str


def _keys(configured: Iterable[ApiKey | str]) -> tuple[_Key, ...]:
    out = []
    for key in configured:
        if isinstance(key, str):  # a key in clear (dev and test only; Settings refuses it else)
            sha = key_sha256(key)
            out.append(_Key(bytes.fromhex(sha), "operator", f"plain-{sha[:8]}"))
        else:
            out.append(_Key(bytes.fromhex(key.sha256), key.role, key.name))
    return tuple(out)


class Access:
    """The keys (as digests), trusted proxies and write policy of one :class:`Settings`."""

    def __init__(self, settings: Settings) -> None:
        self.sources = (settings.api_keys, settings.trusted_proxies, settings.write_policy)
        self.keys = _keys(settings.api_keys)
        self.proxies = tuple(
            ipaddress.ip_network(p, strict=False) for p in settings.trusted_proxies
        )
        self.policy = settings.write_policy

    @property
    def keys_configured(self) -> bool:
        """Whether the deployment has keys (without, every write is open)."""
        return bool(self.keys)

    def lookup(self, presented: str) -> _Key | None:
        """The configured key ``presented`` is, or None: every digest is compared."""
        digest = hashlib.sha256(presented.encode("utf-8")).digest()
        found = None
        for key in self.keys:  # no early exit: the same work whichever key matches
            if hmac.compare_digest(digest, key.digest):
                found = key
        return found

    def _trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.proxies)

    def client_address(self, peer: str, forwarded_for: str | None) -> str:
        """The client's address: ``peer``, or the last X-Forwarded-For hop that is not a
        trusted proxy when ``peer`` is one (each proxy appends the peer it saw)."""
        if forwarded_for is None or not self.proxies or not self._trusted(peer):
            return peer
        hops = [hop.strip() for hop in forwarded_for.split(",")]
        for hop in reversed(hops):
            if hop and not self._trusted(hop):
                return hop[:MAX_ADDRESS_CHARS]
        return peer

    def identify(self, presented: str | None, peer: str, forwarded_for: str | None) -> Identity:
        """The :class:`Identity` of a request (a key is ignored while none is configured)."""
        address = self.client_address(peer, forwarded_for)
        if presented is None or not self.keys:
            return Identity(address)
        key = self.lookup(presented)
        if key is None:
            return Identity(address, wrong_key=True)
        return Identity(address, key.name, key.role)

    def may(self, identity: Identity, need: Need) -> bool:
        """Whether ``identity`` may do what needs ``need`` (401 for a wrong key)."""
        if identity.wrong_key:
            raise Unauthorized(WRONG_KEY_DETAIL, field="X-API-Key")
        if not self.keys or need == "anyone":
            return True
        return identity.role is not None and ROLE_LEVELS[identity.role] >= ROLE_LEVELS[need]

    def authorize(self, identity: Identity, write: WriteKind) -> None:
        """Refuse ``write`` unless the policy allows it to ``identity`` (401 or 403)."""
        need: Need = getattr(self.policy, write)
        if self.may(identity, need):
            return
        if identity.role is None:
            raise Unauthorized(field="X-API-Key")
        raise Forbidden(
            f"key {identity.key_name!r} has role {identity.role}; this write needs "
            f"{need} or above (write_policy.{write})",
            field="X-API-Key",
        )

    def may_queue_builds(self, identity: Identity) -> bool:
        """Whether this request may queue table builds (``write_policy.tables``); a wrong key
        is a 401, a missing or lesser key only means no."""
        return self.may(identity, self.policy.tables)


_ACCESS: dict[int, Access] = {}


def access_of(settings: Settings) -> Access:
    """The :class:`Access` of ``settings``, made once (digests, networks) and kept while
    ``settings`` lives (made again if its keys, proxies or policy were replaced)."""
    access = _ACCESS.get(id(settings))
    if access is not None and all(
        a is b
        for a, b in zip(
            access.sources,
            (settings.api_keys, settings.trusted_proxies, settings.write_policy),
            strict=True,
        )
    ):
        return access
    access = Access(settings)
    if id(settings) not in _ACCESS:
        weakref.finalize(settings, _ACCESS.pop, id(settings), None)
    _ACCESS[id(settings)] = access
    return access
