# Shared by scripts/run and scripts/test: a project-local virtualenv, reinstalled only when
# pyproject.toml changes.
ensure_venv() {
  local extra="${1:-}"
  local python="${PYTHON:-}"
  if [ -z "$python" ]; then
    for candidate in python3.11 python3; do
      if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
        python="$candidate"; break
      fi
    done
  fi
  if [ -z "$python" ]; then
    echo "Seatkeeper needs Python 3.11 (set PYTHON=/path/to/python3.11)." >&2
    exit 2
  fi
  if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
  fi
  local spec="."
  [ -n "$extra" ] && spec=".[$extra]"
  local stamp=".venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)-${extra:-base}"
  # An install with extras (./scripts/test's "dev") has the base packages too.
  if [ -z "$extra" ] && compgen -G ".venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)-*" >/dev/null; then
    return 0
  fi
  if [ ! -f "$stamp" ]; then
    echo "Installing Seatkeeper ($spec) into .venv ..." >&2
    if ! { .venv/bin/python -m pip install --upgrade pip && .venv/bin/python -m pip install -e "$spec"; } \
        > .venv/install.log 2>&1; then
      tail -n 40 .venv/install.log >&2
      echo "Installation failed; the full log is in .venv/install.log" >&2
      exit 1
    fi
    touch "$stamp"
  fi
}

# The translations (locale/*/LC_MESSAGES/*.po) are compiled at install time, never committed.
compile_messages() {
  .venv/bin/python scripts/compile_messages.py
}
