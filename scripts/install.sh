#!/usr/bin/env bash
# The README's install: a virtual environment at .venv with the lock for this platform, every package
# pinned (so --no-deps). Linux: requirements.lock, plus torch's CUDA runtime where an NVIDIA driver is
# present; macOS on Apple silicon: requirements-macos-arm64.lock (MLX's Metal build). The other files are
# written from requirements.lock by `python -m scripts.make_locks`.
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -s)-$(uname -m)" in
  Darwin-arm64) lock=requirements-macos-arm64.lock ;;
  Linux-*) lock=requirements.lock ;;
  *) echo "install.sh: no lock for $(uname -s) $(uname -m); the locks cover Linux and macOS on Apple silicon" >&2
     exit 1 ;;
esac
python3.11 -m venv .venv
.venv/bin/pip install --no-deps -r "$lock"
if [ "$lock" = requirements.lock ] && command -v nvidia-smi >/dev/null 2>&1; then
  echo "install.sh: NVIDIA driver found: adding torch's CUDA runtime (requirements-cuda-runtime.txt)"
  .venv/bin/pip install -c requirements.lock -r requirements-cuda-runtime.txt
fi
