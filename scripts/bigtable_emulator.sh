# Sourced by scripts/test.sh and scripts/bench.sh: Google's Bigtable emulator for a script's
# lifetime.
#
# start_bigtable_emulator starts the emulator that ships with the Google Cloud CLI on a free
# loopback port, waits until it accepts connections, exports BIGTABLE_EMULATOR_HOST, and stops
# it by its process id when the calling script exits (its EXIT trap calls
# stop_bigtable_emulator; a script with an EXIT trap of its own calls that too). Without the
# CLI or its emulator it says so in one line and returns 1; an emulator that is there but does
# not start is an error (2).

stop_bigtable_emulator() {
  if [ -n "${TALLROW_EMULATOR_PID:-}" ]; then
    kill "$TALLROW_EMULATOR_PID" 2>/dev/null || true
    wait "$TALLROW_EMULATOR_PID" 2>/dev/null || true
    TALLROW_EMULATOR_PID=
  fi
  rm -f "${TALLROW_EMULATOR_LOG:-}"
}

start_bigtable_emulator() {
  local sdk emulator port attempt i
  sdk="$(gcloud info --format='value(installation.sdk_root)' 2>/dev/null || true)"
  emulator="$sdk/platform/bigtable-emulator/cbtemulator"
  if [ -z "$sdk" ] || [ ! -x "$emulator" ]; then
    echo "no Bigtable emulator (platform/bigtable-emulator/cbtemulator of the Google Cloud CLI): the Bigtable tests do not run"
    return 1
  fi
  TALLROW_EMULATOR_LOG="$(mktemp -t tallrow-cbtemulator.XXXXXX)"
  # The port is free when asked; another process may take it before the emulator binds, so
  # a failed start is tried again on a new port.
  for attempt in 1 2 3; do
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    # The emulator is a Go program holding every row on its heap; collecting garbage less
    # often nearly halves its CPU time per request at a quickstart's size (about 6 GB then).
    GOGC=400 "$emulator" -host 127.0.0.1 -port "$port" >"$TALLROW_EMULATOR_LOG" 2>&1 &
    TALLROW_EMULATOR_PID=$!
    trap stop_bigtable_emulator EXIT
    for i in $(seq 1 300); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        export BIGTABLE_EMULATOR_HOST="127.0.0.1:$port"
        echo "Bigtable emulator on $BIGTABLE_EMULATOR_HOST (pid $TALLROW_EMULATOR_PID)"
        return 0
      fi
      if ! kill -0 "$TALLROW_EMULATOR_PID" 2>/dev/null; then
        break
      fi
      sleep 0.1
    done
    kill "$TALLROW_EMULATOR_PID" 2>/dev/null || true
    wait "$TALLROW_EMULATOR_PID" 2>/dev/null || true
  done
  echo "the Bigtable emulator did not start: $(tr '\n' ' ' <"$TALLROW_EMULATOR_LOG")" >&2
  stop_bigtable_emulator
  return 2
}
