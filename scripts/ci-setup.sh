#!/usr/bin/env bash
# Installs the machine packages the test suite uses beyond Go: tmux (live
# view tests), Chromium (HTML report tests), python hdrh (interval log
# interoperability), and checks for a JDK 17 and Maven (Cassandra, HBase).
# Tests that need a missing tool skip with a message; the integration
# scripts fail loudly when a server cannot be installed.
set -uo pipefail
need=()
command -v tmux >/dev/null || need+=(tmux)
command -v chromium >/dev/null || need+=(chromium)
command -v promtool >/dev/null || need+=(prometheus)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  echo "ci-setup: installing ${need[*]}"
  timeout 600 apt-get update -qq >/dev/null 2>&1 || echo "ci-setup: apt-get update failed"
  for p in "${need[@]}"; do
    timeout 600 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
      || echo "ci-setup: could not install $p (tests that need it will skip)"
  done
fi
python3 -c 'import hdrh' 2>/dev/null || timeout 300 python3 -m pip install -q hdrhistogram >/dev/null 2>&1 \
  || echo "ci-setup: could not install the hdrh Python package (its interoperability test will skip)"
python3 -c "import ansible" 2>/dev/null || timeout 300 python3 -m pip install -q ansible-core >/dev/null 2>&1 || echo "ci-setup: could not install ansible-core (the playbook syntax test will skip)"
command -v mvn >/dev/null || echo "ci-setup: WARNING: mvn not found; Cassandra/HBase integration tests need it"
exit 0
