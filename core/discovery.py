"""Find local OpenAI-compatible model servers on this computer.

    servers = await discover(extra_ports=[5001], timeout_s=0.5)
    for s in servers:
        s.found, s.kind, s.name, s.base_url, s.models, s.error

Only 127.0.0.1 is asked, on the usual ports of Ollama (11434), LM Studio
(1234), llama.cpp (8080) and vLLM (8000), plus any port the caller adds.
Every port is probed at the same time with a short timeout, so the whole
check takes about `timeout_s` even when nothing runs. Proxies from the
environment are ignored (trust_env=False): nothing leaves the machine.

A probe never raises: a port where no model server answers comes back with
`found == False` and the reason in `error` ("nothing is listening", "no
answer within 0.5 s", "answered HTTP 404", "answered, but not with a model
list").

`check_endpoint(url, key)` asks one configured endpoint (any host, the user's own URL)
for GET {url}/models with the key as a bearer token, for Settings > Endpoints' Test
connection and Fetch models; it too never raises and says what went wrong.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
DEFAULT_TIMEOUT_S = 0.5


@dataclass(frozen=True)
class ServerKind:
    key: str          # ollama | lmstudio | llamacpp | vllm | openai
    name: str         # what the user reads
    port: int


KNOWN_SERVERS: tuple[ServerKind, ...] = (
    ServerKind("ollama", "Ollama", 11434),
    ServerKind("lmstudio", "LM Studio", 1234),
    ServerKind("llamacpp", "llama.cpp", 8080),
    ServerKind("vllm", "vLLM", 8000),
)
_BY_KEY = {k.key: k for k in KNOWN_SERVERS}
_OWNED_BY = {"llamacpp": "llamacpp", "vllm": "vllm", "ollama": "ollama", "library": "ollama"}


@dataclass(frozen=True)
class LocalServer:
    kind: str                       # ollama | lmstudio | llamacpp | vllm | openai
    name: str                       # "Ollama", "OpenAI-compatible server"
    port: int
    base_url: str                   # http://127.0.0.1:11434/v1 (what litellm's api_base wants)
    models: tuple[str, ...] = ()
    error: str = ""                 # "" when a model server answered
    duration_ms: float = 0.0

    @property
    def found(self) -> bool:
        return not self.error

    @property
    def endpoint_name(self) -> str:
        """A name for the settings' endpoint ("ollama", "ollama-11500", "local-5001")."""
        known = _BY_KEY.get(self.kind)
        if known is None:
            return f"local-{self.port}"
        return self.kind if known.port == self.port else f"{self.kind}-{self.port}"

    @property
    def label(self) -> str:
        return f"{self.name} on port {self.port}"


@dataclass
class _Probe:
    port: int
    kind: ServerKind | None
    models: list[str] = field(default_factory=list)
    answered_as: str = ""           # a kind learnt from the answer


def ports_to_probe(extra_ports: Iterable[int] = ()) -> list[tuple[int, ServerKind | None]]:
    """The usual ports, then the caller's (deduplicated, valid ones only)."""
    seen: dict[int, ServerKind | None] = {k.port: k for k in KNOWN_SERVERS}
    for port in extra_ports:
        try:
            port = int(port)
        except (TypeError, ValueError):
            log.warning("discovery: ignoring the port %r (not a number)", port)
            continue
        if 0 < port < 65536:
            seen.setdefault(port, None)
        else:
            log.warning("discovery: ignoring the port %r (out of range)", port)
    return list(seen.items())


async def discover(extra_ports: Iterable[int] = (), *, timeout_s: float = DEFAULT_TIMEOUT_S,
                   known: bool = True) -> list[LocalServer]:
    """Probe every port at once; one LocalServer per port, found ones first.
    `known=False` skips the usual ports (only `extra_ports`)."""
    import httpx
    targets = ports_to_probe(extra_ports)
    if not known:
        wanted = {int(p) for p in extra_ports}
        targets = [(p, k) for p, k in targets if p in wanted]
    limits = httpx.Limits(max_connections=len(targets) * 2 or 1)
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s), trust_env=False,
                                 follow_redirects=False, limits=limits) as client:
        results = await asyncio.gather(*(probe(client, port, kind, timeout_s)
                                         for port, kind in targets))
    return sorted(results, key=lambda s: (not s.found,))


async def probe(client: Any, port: int, kind: ServerKind | None,
                timeout_s: float = DEFAULT_TIMEOUT_S) -> LocalServer:
    """Ask one port for its models: /v1/models, and Ollama's /api/tags too."""
    started = time.monotonic()
    state = _Probe(port, kind)
    paths = ["/v1/models"] + (["/api/tags"] if kind is not None and kind.key == "ollama" else [])
    answers = await asyncio.gather(*(_get(client, port, path, timeout_s) for path in paths))
    errors = []
    for path, (data, error) in zip(paths, answers):
        if error:
            errors.append(error)
            continue
        models, answered_as, error = _models_in(path, data)
        if error:
            errors.append(error)
            continue
        state.models.extend(m for m in models if m not in state.models)
        state.answered_as = state.answered_as or answered_as
    found = len(errors) < len(paths)
    kind_key = state.answered_as or (kind.key if kind else "openai")
    name = _BY_KEY[kind_key].name if kind_key in _BY_KEY else "OpenAI-compatible server"
    elapsed = (time.monotonic() - started) * 1000
    error = "" if found else _best_error(errors)
    if found:
        log.info("discovery: %s on port %d with %d models", name, port, len(state.models))
    return LocalServer(kind=kind_key, name=name, port=port,
                       base_url=f"http://{HOST}:{port}/v1", models=tuple(state.models),
                       error=error, duration_ms=round(elapsed, 1))


async def _get(client: Any, port: int, path: str, timeout_s: float) -> tuple[Any, str]:
    """(parsed JSON, "") or (None, why not)."""
    import httpx
    url = f"http://{HOST}:{port}{path}"
    try:
        response = await client.get(url)
    except httpx.ConnectError:
        return None, "nothing is listening"
    except httpx.TimeoutException:
        return None, f"no answer within {timeout_s:g} s"
    except (httpx.HTTPError, OSError) as exc:
        return None, f"the connection failed ({type(exc).__name__})"
    if response.status_code != 200:
        return None, f"answered HTTP {response.status_code} to {path}"
    try:
        return response.json(), ""
    except ValueError:
        return None, f"answered {path}, but not with a model list (not JSON)"


def _models_in(path: str, data: Any) -> tuple[list[str], str, str]:
    """(model ids, the kind the answer reveals, error)."""
    if path == "/api/tags":
        items = data.get("models") if isinstance(data, dict) else None
        if not isinstance(items, list):
            return [], "", "answered /api/tags, but not with a model list"
        names = [str(m.get("name") or m.get("model")) for m in items
                 if isinstance(m, dict) and (m.get("name") or m.get("model"))]
        return names, "ollama", ""
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return [], "", f"answered {path}, but not with a model list"
    ids, owners = [], set()
    for item in items:
        if isinstance(item, dict) and item.get("id"):
            ids.append(str(item["id"]))
            owners.add(str(item.get("owned_by") or "").lower())
    answered_as = next((_OWNED_BY[o] for o in owners if o in _OWNED_BY), "")
    return ids, answered_as, ""


def _best_error(errors: list[str]) -> str:
    """The most telling reason: an answer that was wrong beats silence."""
    for error in errors:
        if error.startswith("answered"):
            return error
    return errors[0] if errors else "no answer"


def summary(servers: Iterable[LocalServer]) -> str:
    """One line for logs and the CLI: what was found, what was not."""
    found = [f"{s.label} ({len(s.models)} models)" for s in servers if s.found]
    return "; ".join(found) if found else "no local model server found"


@dataclass(frozen=True)
class EndpointCheck:
    """What GET {url}/models answered: the model ids, or why there are none."""
    url: str
    models: tuple[str, ...] = ()
    error: str = ""                  # "" when the server answered with a model list
    status: int | None = None        # the HTTP status, when there was an answer
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error

    def summary(self) -> str:
        """"Reached: 3 models" or the reason, as Settings > Endpoints shows it."""
        if self.error:
            return self.error
        count = len(self.models)
        return f"Reached: {count} model{'s' if count != 1 else ''}"


async def check_endpoint(url: str, key: str = "", *, timeout_s: float = 5.0) -> EndpointCheck:
    """GET {url}/models with `key` (if any) as the bearer token. Proxies from the environment
    are used only for a remote host: a loopback or private address is asked directly."""
    import httpx
    from core.endpoint_cost import by_address
    base = url.strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        return EndpointCheck(url, error="The URL must start with http:// or https:// "
                                        "(e.g. http://127.0.0.1:1234/v1).")
    target = base + "/models"
    headers = {"Authorization": f"Bearer {key.strip()}"} if key.strip() else {}
    started = time.monotonic()

    def done(**fields: Any) -> EndpointCheck:
        return EndpointCheck(url, duration_ms=round((time.monotonic() - started) * 1000, 1), **fields)

    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s), trust_env=not by_address(base),
                                     follow_redirects=True) as client:
            response = await client.get(target, headers=headers)
    except httpx.ConnectError as exc:
        refused = _refused(exc)
        why = "the connection was refused: nothing is listening there" if refused else \
            f"could not connect ({exc or type(exc).__name__})"
        return done(error=f"Not reached: {why}. Is the server running, and is the port right?")
    except httpx.TimeoutException:
        return done(error=f"Not reached: no answer within {timeout_s:g} s.")
    except httpx.InvalidURL as exc:
        return done(error=f"Not a usable URL: {exc}.")
    except (httpx.HTTPError, OSError) as exc:
        return done(error=f"Not reached: the connection failed ({type(exc).__name__}: {exc}).")
    status = response.status_code
    if status in (401, 403):
        what = "a key" if not headers else "this key"
        return done(status=status, error=f"Reached, but the server refused {what} (HTTP {status}). "
                                         "Check the key, and tick Needs a key.")
    if status != 200:
        return done(status=status, error=f"Reached, but GET {target} answered HTTP {status}: "
                                         "is this the OpenAI-compatible base URL (often ending in /v1)?")
    try:
        data = response.json()
    except ValueError:
        data = None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return done(status=status, error=f"Reached, but {target} did not answer with an OpenAI-compatible "
                                         "model list: is this the server's /v1 URL?")
    ids = [str(i["id"]) for i in items if isinstance(i, dict) and i.get("id")]
    return done(status=status, models=tuple(dict.fromkeys(ids)))


def _refused(exc: BaseException) -> bool:
    """A connection refused somewhere in the chain (httpx words it "All connection attempts failed")."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


_PARAMS = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")
STRONG_ROOT_B = 7.0        # the Guide: models under ~7B struggle as root


def model_size_b(name: str) -> float | None:
    """Billions of parameters from a model name ("qwen2.5-coder:7b" -> 7.0), if it says."""
    found = _PARAMS.findall(name.rsplit("/", 1)[-1])
    return float(found[-1]) if found else None


def root_and_sub(models: list[str], chosen: str) -> tuple[str, str]:
    """(root, sub) for a server's models when the user picks `chosen`: a strong root
    and a small sub, as the Guide advises. A small `chosen` becomes the sub beside the
    largest model of the server; a large one is the root, beside the smallest."""
    sized = [(model_size_b(m), m) for m in models]
    known = [(b, m) for b, m in sized if b is not None]
    own = model_size_b(chosen)
    if own is None or not known:
        return chosen, chosen
    if own < STRONG_ROOT_B:
        bigger = max(known)
        return (bigger[1], chosen) if bigger[0] > own else (chosen, chosen)
    smaller = min(known)
    return (chosen, smaller[1]) if smaller[0] < own else (chosen, chosen)
