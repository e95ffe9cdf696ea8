"""SkyRL's way in: ``skyrl_gym.make("sandmle")``, then init/step as SkyRL's generator calls them.

``python skyrl_client.py URL EPISODES PARALLEL`` prints one JSON line per episode.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

import skyrl_gym
from outside_client import TURNS  # run as a script: its folder is on sys.path

from sandmle.env.skyrl import register


def episode(url: str, index: int) -> dict:
    env = skyrl_gym.make("sandmle", extras={"extra_info": {"url": url, "index": index % 2}})
    messages, info = env.init([{"role": "user", "content": "a SkyRL dataset row"}])
    out = {
        "tools": [t["function"]["name"] for t in info["tools"]],
        "roles": [m["role"] for m in messages],
    }
    for turn in TURNS:
        step = env.step(turn)
        if step["done"]:
            break
    env.close()
    return {
        **out,
        "done": step["done"],
        "reward": step["reward"],
        **step["metadata"],
        "metrics": env.get_metrics(),
    }


def main() -> None:
    register()
    url, episodes, parallel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with ThreadPoolExecutor(parallel) as pool:
        for result in pool.map(lambda i: episode(url, i), range(episodes)):
            print(json.dumps(result), flush=True)
    assert "sandmle.training" not in sys.modules


if __name__ == "__main__":
    main()
