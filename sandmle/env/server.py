"""``sandmle env serve``: the step-wise environment over OpenEnv's protocol, and whole episodes.

OpenEnv (PyPI ``openenv-core``) defines the wire format: a WebSocket session at ``/ws`` per
client, each with its own environment, JSON messages ``reset`` / ``step`` / ``state`` /
``close``; OpenEnv's ``EnvClient`` (and TRL, SkyRL and others through it) speak it. The server
registers OpenEnv's routes in its production mode: no stateless ``/reset`` or ``/step`` over
HTTP, which would start and kill a sandbox per call. A disconnected client's session is
destroyed, and with it the episode's worker and sandbox; a silent one is reaped after
``idle_timeout_s``.

``POST /episodes`` runs one whole episode of any scaffold (search trees included) against the
caller's OpenAI-compatible endpoint and answers with its model calls, grade and reward.

Bound to 127.0.0.1 unless told otherwise; on any other address a token is required, sent as
``Authorization: Bearer <token>`` (``sandmle.env.client.SandmleEnvClient`` does).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Request

# isort: off
import sandmle.env._openenv  # noqa: F401 - first: OpenEnv without its web UI
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.types import (
    Action,
    ConcurrencyConfig,
    EnvironmentMetadata,
    Observation,
    State,
)

# isort: on
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from sandmle.env import protocol
from sandmle.env.environment import Busy, Environment, PackTasks, Slots
from sandmle.env.process import reap
from sandmle.errors import SandmleError
from sandmle.harness.exposure import token_ok
from sandmle.specs.environment import EnvSettings

logger = logging.getLogger(__name__)
NAME = "sandmle"


class SandmleAction(Action, protocol.Action):
    """One policy turn (``sandmle.env.protocol.Action``) as OpenEnv's action type."""


class SandmleObservation(Observation, protocol.Observation):
    """The environment's answer (``sandmle.env.protocol.Observation``) as OpenEnv's type."""


class SandmleOpenEnv(OpenEnvEnvironment[SandmleAction, SandmleObservation, State]):
    """One WebSocket session's environment, over ``sandmle.env.environment.Environment``."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, settings: EnvSettings, tasks: PackTasks, slots: Slots) -> None:
        super().__init__()
        self.core = Environment(settings, tasks, slots)
        self.loop: asyncio.AbstractEventLoop | None = None

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        index: int | None = None,
        **kwargs: Any,
    ) -> SandmleObservation:
        self.loop = asyncio.get_running_loop()
        if kwargs:
            raise ValueError(f"reset takes task, index, seed, episode_id; not {', '.join(kwargs)}")
        observation = await self.core.reset(
            task=task, index=index, seed=seed, episode_id=episode_id
        )
        return SandmleObservation(**observation.model_dump())

    async def step_async(
        self, action: SandmleAction, timeout_s: float | None = None, **kwargs: Any
    ) -> SandmleObservation:
        turn = action.model_dump(include=set(protocol.Action.model_fields), exclude_none=True)
        observation = await self.core.step(turn)
        return SandmleObservation(**observation.model_dump())

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Any:
        raise NotImplementedError("sandmle's environment is async: use reset_async")

    def step(self, action: SandmleAction, timeout_s: float | None = None, **kwargs: Any) -> Any:
        raise NotImplementedError("sandmle's environment is async: use step_async")

    @property
    def state(self) -> State:
        return State(**self.core.state())

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=NAME,
            description="sandmle's MLE tasks: a Kaggle-style task in a sandbox, graded on the host",
            version=_version(),
        )

    def close(self) -> None:
        """Called by OpenEnv from a worker thread when the session ends (also on disconnect):
        the episode is closed on its event loop, as its asyncio objects require."""
        loop = self.loop
        if loop is None or loop.is_closed() or _on_loop(loop):
            self.core.close()
            return
        done = threading.Event()

        def close_on_loop() -> None:
            try:
                self.core.close()
            finally:
                done.set()

        loop.call_soon_threadsafe(close_on_loop)
        if not done.wait(timeout=10):  # the loop is stuck or stopping: kill directly
            self.core.close()


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _version() -> str:
    from importlib.metadata import version

    return version("sandmle")


class QuietDisconnect:
    """ASGI middleware: a client that closes its WebSocket is the normal end of a session, not
    an error (OpenEnv 0.3's handler lets starlette's ``WebSocketDisconnect`` escape its final
    ``close``, which the server would log as a traceback per client)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


class TokenGate:
    """ASGI middleware: every HTTP request and WebSocket handshake carries the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            sent = dict(scope.get("headers") or []).get(b"authorization", b"")
            given = sent.decode("latin-1").removeprefix("Bearer ")
            if not token_ok(given, self.token):
                await _refuse(scope, send)
                return
        await self.app(scope, receive, send)


async def _refuse(scope: Scope, send: Send) -> None:
    if scope["type"] == "websocket":  # a handshake refused before accept: HTTP 403
        await send({"type": "websocket.close", "code": 1008, "reason": "missing or wrong token"})
        return
    body = b'{"detail": "missing or wrong token"}'
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


DISCONNECT_POLL_S = 1.0


def whole_episodes(
    settings: EnvSettings, tasks: PackTasks, slots: Slots
) -> Callable[[protocol.WholeRequest, Request], Awaitable[protocol.WholeEpisode]]:
    """``POST /episodes``: one whole episode per request, for scaffolds whose control loop
    cannot be stepped (search trees). A client that hangs up ends its episode: worker and
    sandbox killed, slot freed."""

    async def run(body: protocol.WholeRequest, request: Request) -> protocol.WholeEpisode:
        env = Environment(settings, tasks, slots)
        episode = asyncio.ensure_future(env.whole(body))
        try:
            while not episode.done():
                await asyncio.wait({episode}, timeout=DISCONNECT_POLL_S)
                if not episode.done() and await request.is_disconnected():
                    episode.cancel()
            return await episode
        except Busy as exc:
            raise HTTPException(status_code=503, detail=str(exc)) from None
        except (SandmleError, ValueError) as exc:
            raise HTTPException(status_code=400, detail=str(exc).splitlines()[0]) from None
        finally:
            await env.aclose()

    return run


def build_app(settings: EnvSettings, token: str | None = None) -> FastAPI:
    """The server's app: OpenEnv's routes over sandmle's environment, behind ``token`` if set.

    Reaps what a previous server with the same state folder left (workers, sandboxes,
    folders) before it serves.
    """
    tasks = PackTasks(settings)
    env = Environment(settings, tasks, Slots(1, 0, 0))  # only for the state folder
    reaped = reap(env.state_dir)
    if reaped:
        logger.warning("reaped %d episode(s) a previous server left running", reaped)
    slots = Slots(settings.max_episodes, settings.max_waiting, settings.queue_timeout_s)

    def factory() -> SandmleOpenEnv:
        return SandmleOpenEnv(settings, tasks, slots)

    server = HTTPEnvServer(
        env=factory,
        action_cls=SandmleAction,
        observation_cls=SandmleObservation,
        # no session reaper of OpenEnv's: it counts a step's run time as idleness; the
        # environment's own idle clock stops while a step runs, and a dead peer is caught
        # by the WebSocket's ping
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=settings.max_episodes + settings.max_waiting + 1,
            session_timeout=None,
        ),
    )
    app = FastAPI(title="sandmle environment server", docs_url=None, redoc_url=None)
    server.register_routes(app, mode="production")
    app.add_api_route(
        "/episodes",
        whole_episodes(settings, tasks, slots),
        methods=["POST"],
        response_model=protocol.WholeEpisode,
    )
    app.add_middleware(QuietDisconnect)
    if token:
        app.add_middleware(TokenGate, token=token)
    return app
