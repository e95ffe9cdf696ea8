"""The Ray pool's throughput and overhead, on a local multi-node cluster. Prints JSON.

A ``ray.cluster_utils.Cluster`` (a head with no CPU, then worker nodes added one by one, each
its own raylet, each with room for one environment actor) runs:

1. **Real episodes** on 1 and on 2 worker nodes: each episode is a sandmle episode (worker
   process, bwrap sandbox, grading) driven by a scripted policy (list the data, copy the sample
   submission, submit), ``--episodes`` of them, ``--slots`` per actor. On one machine the
   worker nodes share its cores, so this bounds what a second node adds here.
2. **Simulated episodes** on 1, 2 and 4 worker nodes: the same pool and calls, but an actor
   whose reset and steps sleep (``--sleep`` seconds per episode in all) instead of running a
   sandbox: the pool's scaling with nodes when the work is not this machine's CPUs.
3. **Scheduling overhead** per episode: the sleeping actor with no sleep, one episode at a time
   (a lease, reset, three steps, close: the pool's own cost per episode).

Usage: python bench/ray_pool.py [--episodes N] [--slots K] [--sim-episodes N] [--sleep S]

``--address HOST:PORT`` runs the real episodes on a cluster already started (``ray start``, as
docs/scale-out.md shows) instead: ``--actors`` actors of ``--slots`` each, one per worker node
that declares ``{"sandmle_env": 1}``, and names the nodes that ran them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
from ray.cluster_utils import Cluster

from sandmle.env.pool import RayPool
from sandmle.env.protocol import Action, Observation
from sandmle.specs.environment import EnvSettings
from sandmle.specs.episode import EpisodeSpec
from sandmle.specs.training import RolloutRay

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "competitions"
TASKS = ["plant-watering", "bike-rentals"]
COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"
SCRIPT = [
    '<tool_call>{"name": "bash", "arguments": {"command": "ls /home/data"}}</tool_call>',
    '<tool_call>{"name": "bash", "arguments": {"command": "%s"}}</tool_call>' % COPY,  # noqa: UP031
    '<tool_call>{"name": "submit", "arguments": {"answer": "x"}}</tool_call>',
]


class SleepingHost:
    """An ``EnvironmentHost`` stand-in whose episodes sleep: reset and each of the three steps
    take ``share`` seconds and answer a fixed observation (no process, no sandbox)."""

    share = 0.0

    def __init__(self, settings: EnvSettings, name: str) -> None:
        self.name = name
        self.node = {"actor": name, "node_id": ray.get_runtime_context().get_node_id()}

    def where(self) -> dict[str, Any]:
        return dict(self.node)

    async def reset(self, episode_id: str, task: str | None = None) -> Observation:
        await asyncio.sleep(self.share)
        return Observation(episode_id=episode_id, task=task or "")

    async def step(self, episode_id: str, action: Action) -> Observation:
        await asyncio.sleep(self.share)
        done = action.text == SCRIPT[-1]
        return Observation(episode_id=episode_id, done=done, reward=1.0 if done else None)

    async def close(self, episode_id: str) -> None:
        return None

    def shutdown(self) -> None:
        return None


async def _one(pool: RayPool, index: int) -> dict[str, Any]:
    """One scripted episode on the pool: its wall time, time to first observation, node."""
    start = time.perf_counter()
    async with pool.lease() as actor:
        episode_id = f"bench-{index}"
        first = await actor.handle.reset.remote(episode_id, task=TASKS[index % 2])
        ready = time.perf_counter() - start
        observation = first
        for text in SCRIPT:
            if observation.done:
                break
            observation = await actor.handle.step.remote(episode_id, Action(text=text))
        await actor.handle.close.remote(episode_id)
    return {
        "seconds": time.perf_counter() - start, "first_observation": ready,
        "node": actor.node["node_id"], "reward": observation.reward, "error": observation.error,
    }  # fmt: skip


async def _run(pool: RayPool, episodes: int, at_once: int) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(at_once)

    async def one(i: int) -> dict[str, Any]:
        async with gate:
            return await _one(pool, i)

    return list(await asyncio.gather(*(one(i) for i in range(episodes))))


def measure(env: EnvSettings, pool_settings: RolloutRay, episodes: int, host: type) -> dict:
    """Episodes per minute (and medians) of ``episodes`` on a fresh pool; the pool is ended."""
    pool = RayPool(env, pool_settings, host=host)
    try:
        slots = pool_settings.actors * pool_settings.episodes_per_actor
        start = time.perf_counter()
        runs = asyncio.run(_run(pool, episodes, slots))
        wall = time.perf_counter() - start
    finally:
        pool.shutdown()
    failed = [r["error"] for r in runs if r["error"] is not None or r["reward"] is None]
    return {
        "episodes": episodes, "actors": pool_settings.actors,
        "slots_per_actor": pool_settings.episodes_per_actor, "wall_s": round(wall, 2),
        "episodes_per_minute": round(60 * episodes / wall, 2),
        "median_episode_s": round(statistics.median(r["seconds"] for r in runs), 3),
        "median_first_observation_s": round(
            statistics.median(r["first_observation"] for r in runs), 3
        ),
        "nodes_used": len({r["node"] for r in runs}),
        "episodes_by_node": {n[:12]: sum(r["node"] == n for r in runs)
                             for n in sorted({r["node"] for r in runs})},
        "failed": len(failed),
        "first_failure": failed[0] if failed else None,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--slots", type=int, default=2, help="episodes per actor")
    parser.add_argument("--sim-episodes", type=int, default=64)
    parser.add_argument("--sim-slots", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=2.0, help="simulated seconds per episode")
    parser.add_argument("--overhead-episodes", type=int, default=30)
    parser.add_argument("--address", help="a running cluster's head (real episodes only)")
    parser.add_argument("--actors", type=int, default=2, help="with --address: actors to start")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    for name in TASKS:
        shutil.copytree(FIXTURES / name, root / "pack" / name)
    episode = EpisodeSpec.model_validate({"max_turns": 5, "limits": {"time_limit": 300}})
    env = EnvSettings(pack=str(root / "pack"), episode=episode, log_dir=str(root / "logs"))
    if args.address:
        print(json.dumps(on_cluster(args, env, root)))
        return
    sleeping = type("Sleeping", (SleepingHost,), {"share": args.sleep / 4})  # reset + 3 steps
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    results: dict[str, Any] = {"machine": "2 shared cores (other jobs running), one host"}
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        real: dict[str, Any] = {}
        sim: dict[str, Any] = {}
        for nodes in (1, 2, 4):
            while len(cluster.worker_nodes) < nodes:
                cluster.add_node(num_cpus=2, resources={"sandmle_env": 1})
            cluster.wait_for_nodes()
            pool = RolloutRay(
                actors=nodes, resources={"sandmle_env": 1}, log_dir=str(root / "logs")
            )
            if nodes <= 2:
                real_pool = pool.model_copy(update={"episodes_per_actor": args.slots})
                real[str(nodes)] = measure(env, real_pool, args.episodes, _host())
            sim_pool = pool.model_copy(
                update={"episodes_per_actor": args.sim_slots, "cpus_per_episode": 0.5}
            )
            sim[str(nodes)] = measure(env, sim_pool, args.sim_episodes, sleeping)
            sim[str(nodes)]["ideal_episodes_per_minute"] = round(
                60 * nodes * args.sim_slots / args.sleep, 2
            )
        one = RolloutRay(actors=1, episodes_per_actor=1, resources={"sandmle_env": 1})
        overhead = measure(env, one, args.overhead_episodes, SleepingHost)
        results |= {
            "real_episodes_by_worker_nodes": real,
            "simulated_episodes_by_worker_nodes": {"sleep_s_per_episode": args.sleep, **sim},
            "scheduling_overhead_ms_per_episode": round(overhead["median_episode_s"] * 1000, 1),
            "scheduling_overhead_detail": overhead,
        }
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(results))


def on_cluster(args: argparse.Namespace, env: EnvSettings, root: Path) -> dict[str, Any]:
    """Real episodes on the running cluster at ``args.address``: the figures and the nodes."""
    ray.init(address=args.address, log_to_driver=False)
    try:
        nodes = [n for n in ray.nodes() if n["Alive"]]
        pool = RolloutRay(
            actors=args.actors, episodes_per_actor=args.slots, resources={"sandmle_env": 1},
            log_dir=str(root / "logs"), start_timeout_s=120,
        )  # fmt: skip
        figures = measure(env, pool, args.episodes, _host())
        return {
            "address": args.address,
            "nodes": [
                {
                    "node_id": n["NodeID"][:12],
                    "cpus": n["Resources"].get("CPU", 0),
                    "sandmle_env": n["Resources"].get("sandmle_env", 0),
                }
                for n in nodes
            ],  # fmt: skip
            "real_episodes": figures,
        }
    finally:
        ray.shutdown()
        shutil.rmtree(root, ignore_errors=True)


def _host() -> type:
    from sandmle.env.pool import EnvironmentHost

    return EnvironmentHost


if __name__ == "__main__":
    main()
