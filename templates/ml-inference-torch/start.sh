#!/bin/sh
# Picks the Python that has torch: $MLFAAS_PYTHON, else the GPU machine's venv, else Debian's
# /usr/bin/python3 (python3-torch); the `python3` first on PATH may be a build without torch.
cd "$(dirname "$0")" || exit 1
export PYTHONDONTWRITEBYTECODE=1
if [ -n "$MLFAAS_PYTHON" ]; then py="$MLFAAS_PYTHON"
elif [ -x /opt/torch/.venv/bin/python3 ]; then py=/opt/torch/.venv/bin/python3
else py=/usr/bin/python3
fi
exec "$py" -u main.py "$@"
