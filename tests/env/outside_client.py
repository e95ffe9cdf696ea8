"""An outside client: OpenEnv's own ``GenericEnvClient``, no sandmle import at all.

``python outside_client.py URL EPISODES PARALLEL`` runs that many episodes (each: look at the
data, copy the sample submission, submit) and prints one JSON line per episode; ``hold URL``
resets one episode, prints ``ready`` and waits to be killed.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from openenv.core.generic_client import GenericEnvClient

COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"
CALLS = [
    ("bash", {"command": "ls /home/data"}),
    ("bash", {"command": COPY}),
    ("submit", {"answer": "x"}),
]
TURNS = [f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in CALLS]


def episode(url: str, index: int) -> dict:
    start = time.monotonic()
    with GenericEnvClient(base_url=url, message_timeout_s=900).sync() as env:
        result = env.reset(index=index % 2, episode_id=f"outside-{index}")
        steps = 0
        while not result.done and steps < len(TURNS):
            result = env.step({"text": TURNS[steps]})
            steps += 1
        state = env.state()
    obs = result.observation
    return {
        "episode": obs["episode_id"], "task": obs["task"], "done": result.done,
        "reward": result.reward, "components": obs["components"], "error": obs["error"],
        "steps": state["step_count"], "seconds": round(time.monotonic() - start, 1),
    }  # fmt: skip


def hold(url: str) -> None:
    with GenericEnvClient(base_url=url, message_timeout_s=900).sync() as env:
        env.reset(index=0, episode_id="held")
        print("ready", flush=True)
        time.sleep(3600)


def main() -> None:
    if sys.argv[1] == "hold":
        hold(sys.argv[2])
        return
    url, episodes, parallel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with ThreadPoolExecutor(parallel) as pool:
        for result in pool.map(lambda i: episode(url, i), range(episodes)):
            print(json.dumps(result), flush=True)
    assert not any(m == "sandmle" or m.startswith("sandmle.") for m in sys.modules)


if __name__ == "__main__":
    main()
