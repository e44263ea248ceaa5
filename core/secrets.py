"""API keys in the OS keychain, and nowhere else.

    keys = KeyStore()                       # the platform's keychain through `keyring`
    keys.set("openai", "sk-...")            # raises KeychainUnavailable, never writes plain text
    keys.resolve("openai")                  # ("sk-...", "keychain") or (key, "env:OPENAI_API_KEY")
    keys.key_for_model("openai/gpt-4o", settings)   # core/routing.py decides which key a URL gets

One keychain entry per provider under the service "io.github.rlm-studio-desktop"
(core/identity.py: until issue 27 it was "rlm-studio", which another app uses too;
core/identity_migration.py moves the old entries once); the entry `__providers__` lists
the names stored so far (keyring cannot enumerate).
Keys are read at call time and handed to litellm as `api_key=`: they are never
put into os.environ, argv, SQLite, logs or the REPL worker. This module logs
provider names and backend names only, never a key.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from core import providers
from core.identity import APP_ID, OLD_APP_NAME
from core.key_env import env_key

if TYPE_CHECKING:
    import keyring.backend

log = logging.getLogger(__name__)

SERVICE = APP_ID
OLD_SERVICE = OLD_APP_NAME       # read only by core/identity_migration.py
INDEX_ENTRY = "__providers__"


# Called once per process, with the KeyStore, before the first keychain access of any KeyStore
# (the CLI moves the keys of the old service name there: core/identity_migration.py).
_first_use: list[Callable[["KeyStore"], None]] = []
_first_use_lock = threading.RLock()


def before_first_use(hook: Callable[["KeyStore"], None]) -> None:
    """Run `hook(store)` before this process first reads or writes the keychain."""
    _first_use.append(hook)


def _keyring() -> Any:
    """keyring and the backends we tell apart, imported when a KeyStore first touches the
    keychain, not with this module: 150-220 ms at load 4 (its backends' discovery 40 ms
    more), which a run whose calls carry no key (the user's own server) never needs."""
    import keyring
    import keyring.backend
    import keyring.errors
    from keyring.backends import chainer, fail, null  # noqa: F401  (attributes of keyring.backends)
    return keyring


class KeychainUnavailable(Exception):
    """No keychain can store the key; the message says what failed and what to do."""


@dataclass(frozen=True)
class KeyInfo:
    provider: str
    source: str          # "keychain" or "env:OPENAI_API_KEY"
    masked: str          # "…abcd": the last four characters at most


def mask(key: str) -> str:
    """Show at most the last four characters, and none of a short key."""
    return "…" + key[-4:] if len(key) >= 12 else "…"


def _is_plaintext(backend: "keyring.backend.KeyringBackend") -> bool:
    """keyrings.alt's file backends (plain text, or encrypted behind a prompt)."""
    return type(backend).__module__.startswith("keyrings.alt")


def _chosen_explicitly() -> bool:
    """The user picked a backend (PYTHON_KEYRING_BACKEND or keyringrc.cfg)."""
    if os.environ.get("PYTHON_KEYRING_BACKEND"):
        return True
    try:
        from keyring.core import _config_path
        return _config_path().exists()
    except (ImportError, OSError) as exc:
        log.debug("cannot check keyring's config file: %s", exc)
        return False


def _assess(backend: "keyring.backend.KeyringBackend", explicit: bool) -> str:
    """Why `backend` cannot hold keys, or "" when it can."""
    from keyring.backends import chainer, fail, null
    if isinstance(backend, fail.Keyring):
        return "no keychain backend was found"
    if isinstance(backend, null.Keyring):
        return "the null keyring backend stores nothing"
    if isinstance(backend, chainer.ChainerBackend):
        members = [b for b in backend.backends if not _assess(b, explicit)]
        return "" if members else "the keyring chain has no usable backend"
    if _is_plaintext(backend) and not explicit:
        return ("the only keychain found would keep keys in an unencrypted file on disk, "
                "which RLM Studio does not use")
    return ""


def _backend_label(backend: "keyring.backend.KeyringBackend") -> str:
    from keyring.backends import chainer
    kind = type(backend)
    if isinstance(backend, chainer.ChainerBackend):
        inner = ", ".join(_backend_label(b) for b in backend.backends)
        return f"chainer({inner})"
    return f"{kind.__module__}.{kind.__name__}"


def _backend_errors() -> tuple[type[BaseException], ...]:
    """What a keychain read or write may raise besides keyring's own errors
    (Secret Service over D-Bus lets some through; file backends raise OSError)."""
    errors: list[type[BaseException]] = [_keyring().errors.KeyringError, OSError]
    try:
        from secretstorage.exceptions import SecretStorageException
        errors.append(SecretStorageException)
    except ImportError:
        pass
    try:
        from jeepney.wrappers import DBusErrorResponse
        errors.append(DBusErrorResponse)
    except ImportError:
        pass
    return tuple(errors)


class KeyStore:
    """Keys are looked up at call time; a read is remembered for `cache_s`
    seconds (a run makes hundreds of calls, and each keychain read is a D-Bus
    round trip or, on macOS, possibly a permission prompt)."""

    def __init__(self, backend: "keyring.backend.KeyringBackend | None" = None, *,
                 cache_s: float = 60.0) -> None:
        """The backend is found (keyring imported) at the first keychain access, not here."""
        self.cache_s = cache_s
        self._cache: dict[str, tuple[float, str | None]] = {}
        self._session: dict[str, str] = {}     # keys for this session only (set_for_session)
        self._given = backend
        self._state: tuple[Any, str, str, tuple[type[BaseException], ...]] | None = None
        self._loading = threading.Lock()

    def _load(self) -> tuple[Any, str, str, tuple[type[BaseException], ...]]:
        """(backend, backend_name, problem, errors), found once. Before any access goes on,
        the first-use hooks have run (in this thread, or another's run is waited for)."""
        if self._state is None:
            with self._loading:
                if self._state is None:
                    self._state = self._find_backend()
        _run_first_use_hooks(self)
        return self._state

    def _find_backend(self) -> tuple[Any, str, str, tuple[type[BaseException], ...]]:
        keyring = _keyring()
        backend = self._given
        explicit = backend is not None or _chosen_explicitly()
        load_error = ""
        if backend is None:
            try:
                backend = keyring.get_keyring()
            except Exception as exc:     # a misnamed PYTHON_KEYRING_BACKEND, a broken plugin, ...
                load_error = f"the keyring backend failed to load ({type(exc).__name__}: {exc})"
                log.warning("%s", load_error)
                backend = keyring.backends.fail.Keyring()
        if isinstance(backend, keyring.backends.chainer.ChainerBackend) and not explicit:
            # keyring chains every viable backend, plain-text files included:
            # keep the best real keychain alone (the one the chain writes to)
            secure = [b for b in backend.backends if not _assess(b, explicit)]
            backend = secure[0] if secure else backend
        name = _backend_label(backend)
        problem = load_error or _assess(backend, explicit)
        if problem:
            log.info("keychain unusable (%s): %s", name, problem)
        return backend, name, problem, _backend_errors()

    @property
    def backend(self) -> "keyring.backend.KeyringBackend":
        return self._load()[0]

    @property
    def backend_name(self) -> str:
        return self._load()[1]

    @property
    def problem(self) -> str:
        return self._load()[2]

    @property
    def usable(self) -> bool:
        return not self._load()[2]

    @property
    def _errors(self) -> tuple[type[BaseException], ...]:
        return self._load()[3]

    # --- keychain --------------------------------------------------------------
    def get(self, provider: str) -> str | None:
        """The key stored in the keychain for `provider`, or None."""
        if not self.usable:
            return None
        provider = provider.lower()
        cached = self._cache.get(provider)
        if cached is not None and time.monotonic() - cached[0] < self.cache_s:
            return cached[1]
        try:
            key = self.backend.get_password(SERVICE, provider) or None
        except self._errors as exc:
            log.warning("cannot read the %s key from the keychain (%s): %s",
                        provider, self.backend_name, type(exc).__name__)
            return None
        self._cache[provider] = (time.monotonic(), key)
        return key

    def set(self, provider: str, key: str) -> None:
        provider = provider.lower()
        if not providers.is_valid_name(provider) or provider == INDEX_ENTRY:
            raise ValueError(f"not a provider name: {provider!r} (lower case letters, digits, '.', '_', '-')")
        key = key.strip()
        if not key:
            raise ValueError("the key is empty")
        if any(ch in key for ch in "\r\n\0"):
            raise ValueError("the key contains a line break or NUL byte")
        if not self.usable:
            raise KeychainUnavailable(self.advice(provider, self.problem))
        self._cache.pop(provider, None)
        try:
            self.backend.set_password(SERVICE, provider, key)
        except self._errors as exc:
            raise KeychainUnavailable(self.advice(
                provider, f"storing the key failed: {type(exc).__name__}: {exc}")) from None
        self._update_index(add=provider)

    def delete(self, provider: str) -> bool:
        """Remove the keychain entry; False when there was none (or no keychain)."""
        provider = provider.lower()
        if not self.usable:
            return False
        self._cache.pop(provider, None)
        try:
            self.backend.delete_password(SERVICE, provider)
            deleted = True
        except _keyring().errors.PasswordDeleteError:
            deleted = False
        except self._errors as exc:
            log.warning("cannot delete the %s key (%s): %s", provider, self.backend_name, exc)
            return False
        self._update_index(remove=provider)
        return deleted

    # --- lookups ---------------------------------------------------------------
    def set_for_session(self, provider: str, key: str) -> None:
        """A key held in this process's memory only, until the app closes: for a
        trial, or when there is no keychain. It wins over the keychain."""
        key = key.strip()
        if not key:
            raise ValueError("the key is empty")
        if any(ch in key for ch in "\r\n\0"):
            raise ValueError("the key contains a line break or NUL byte")
        self._session[provider.lower()] = key

    def resolve(self, provider: str) -> tuple[str | None, str]:
        """(key, source): a key for this session, then the keychain, then the provider's
        environment variables; (None, "none") when none has one."""
        session = getattr(self, "_session", {}).get(provider.lower())
        if session:
            return session, "session"
        key = self.get(provider)
        if key:
            return key, "keychain"
        for name in providers.env_vars(provider):
            value = env_key(name)          # set now, or moved out of os.environ (core/key_env.py)
            if value:
                return value, f"env:{name}"
        return None, "none"

    def list(self, extra: Iterable[str] = ()) -> list[KeyInfo]:
        """Providers that have a key (keychain or environment), never the key itself.
        `extra` adds names to probe, e.g. the custom endpoints of the settings."""
        names = dict.fromkeys([*self._indexed(), *providers.PROVIDERS, *(n.lower() for n in extra)])
        found = []
        for name in names:
            key, source = self.resolve(name)
            if key:
                found.append(KeyInfo(name, source, mask(key)))
        return found

    def key_for_model(self, model: str, settings: Any = None, *, api_base: str | None = None,
                      key_from: str | None = None) -> str | None:
        """The key a call to `model` at `api_base` may carry: core.routing.route decides
        (the URL decides the key; an ad-hoc URL nobody owns gets none unless `key_from`)."""
        from core.routing import route
        endpoints = list(getattr(settings, "endpoints", None) or [])
        return route(model, api_base=api_base, endpoints=endpoints, keys=self, key_from=key_from).key

    # --- the index of stored names ------------------------------------------
    def _indexed(self) -> list[str]:
        raw = self.get(INDEX_ENTRY) or ""
        return [n for n in raw.split(",") if providers.is_valid_name(n)]

    def _update_index(self, *, add: str | None = None, remove: str | None = None) -> None:
        before = self._indexed()
        names = [n for n in before if n != remove]
        if add and add not in names:
            names.append(add)
        if names == before:
            return
        self._cache.pop(INDEX_ENTRY, None)
        try:
            if names:
                self.backend.set_password(SERVICE, INDEX_ENTRY, ",".join(sorted(names)))
            else:
                self.backend.delete_password(SERVICE, INDEX_ENTRY)
        except self._errors as exc:   # the index is a convenience only
            log.warning("cannot update the list of stored providers (%s): %s", self.backend_name, exc)

    def advice(self, provider: str, problem: str) -> str:
        env = " or ".join(providers.env_vars(provider))
        return (f"No usable keychain to store the {provider} key ({self.backend_name}): {problem}. "
                "On Linux, install and unlock a Secret Service provider (gnome-keyring or KWallet; "
                "e.g. `sudo apt install gnome-keyring` and log in to a desktop session). "
                f"Or set the environment variable {env} instead. "
                "RLM Studio never stores keys in plain text.")



def _run_first_use_hooks(store: KeyStore) -> None:
    """Another thread's first access waits for them; a hook's own accesses do not (RLock)."""
    with _first_use_lock:
        while _first_use:
            hook = _first_use.pop(0)
            try:
                hook(store)
            except Exception:          # a failed move is tried again at the next start, as before
                log.exception("a keychain first-use step failed")
