# Helpers for native/test/gpu-check.sh (sourced; bash). Expects T (temp dir), B (native/build),
# BIN (built helpers), CUENV (environment for CUDA programs), RUN_S set by the caller.

say() { printf '[%4ds] %s\n' "$SECONDS" "$*"; }

# jget FILE KEY: the first number after "KEY": (compact or python's "KEY": spacing), else na
jget() {
  local v
  v=$(sed -n "s/.*\"$2\": *\(-\{0,1\}[0-9][0-9.e+-]*\).*/\1/p" "$1" 2>/dev/null | head -n1)
  echo "${v:-na}"
}

# sget FILE KEY: a key=value counter from a limiter stats file (TL_STATS_FILE)
sget() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n1; }

# stats_brief NAME: the limiter counters worth a look, on one line
stats_brief() {
  local f=$T/$1.stats k out=""
  [ -f "$f" ] || { echo "(no stats file)"; return; }
  for k in launches throttled throttled_ns granted_ns charged_ns cost_ns samples gated gate_timeouts gate_off kernels ns_per_block swapped unswapped failopen; do
    out="$out $k=$(sget "$f" "$k")"
  done
  echo "${out# }"
}

# calc EXPR [FORMAT]: floating point through awk; "na" if EXPR mentions na (jget's "missing")
calc() {
  case "$1" in *na*|"") echo na; return ;; esac
  awk "BEGIN { printf \"${2:-%.3f}\", ($1) }"   # parenthesised: a bare > would redirect
}

# median3: the middle of three numbers on stdin, na if any is na
median3() {
  local v
  v=$(cat)
  case "$v" in *na*) echo na ;; *) printf '%s\n' "$v" | sort -g | sed -n 2p ;; esac
}

# lim NAME: the environment that preloads the limiter, connected to this check's tokend
lim() { echo "LD_PRELOAD=$B/liblimiter.so TL_TOKEND_SOCKET=$T/s TL_LOG=$T/$1.log TL_STATS_FILE=$T/$1.stats"; }

# spawn NAME DEADLINE_S CMD...: starts CMD in the background with stdout in $T/NAME.json, and
# sets SPAWNED to its pid. The pid is CMD's own (exec), so SET_QUOTA by pid reaches it; a
# watchdog kills it after DEADLINE_S (timeout(1) would put its own pid in between).
spawn() {
  local name=$1 deadline=$2
  shift 2
  ( exec "$@" ) >"$T/$name.json" 2>"$T/$name.err" &
  SPAWNED=$!
  # the watchdog ends by itself within 0.2 s of the program
  ( timeout "$deadline" tail -s 0.2 --pid="$SPAWNED" -f /dev/null >/dev/null 2>&1 || kill -KILL "$SPAWNED" 2>/dev/null ) &
}

# quota PID REQUEST LIMIT: SET_QUOTA through tokend's control socket; prints the answer
quota() { "$BIN/tlctl" "$T/c" quota "$1" "$2" "$3" | tee -a "$T/control.log"; }

# share_run LABEL SECONDS Q1 [Q2]: one or two 1 ms spin probes under the limiter at these
# quotas (request = limit), started together; prints the used shares and records the errors
share_run() {
  local label=$1 secs=$2 pids=() names=() qs=() i q line="" err
  shift 2
  i=0
  for q in "$@"; do
    names+=("${label}_$i"); qs+=("$q")
    # shellcheck disable=SC2046  # lim's words are NAME=VALUE pairs without spaces
    spawn "${label}_$i" $((${secs%.*} + 60)) env "${CUENV[@]}" STUB_KERNEL_US=1000 $(lim "${label}_$i") \
      "$BIN/probe" --mode spin --seconds "$secs" --kernel-us 1000
    pids+=("$SPAWNED")
    quota "$SPAWNED" "$q" "$q" >/dev/null
    i=$((i + 1))
  done
  wait "${pids[@]}" 2>/dev/null
  for i in "${!names[@]}"; do
    local used
    used=$(jget "$T/${names[$i]}.json" used)
    [ "$used" != na ] || { say "  ${names[$i]}: $(head -c 300 "$T/${names[$i]}.json" "$T/${names[$i]}.err")"; }
    err=$(calc "($used - ${qs[$i]}) * 100" "%.2f")
    held=$(calc "$(sget "$T/${names[$i]}.stats" throttled_ns) / ($secs * 1e9)" "%.3f")
    case "$err" in
      -*) err=${err#-}
          # below its quota and never held by the limiter: the device gave it no more (time slicing)
          if [ "$(calc "$held < 0.02 && $err > 1" "%d")" = 1 ]; then
            line="$line q=${qs[$i]} used=$used short=${err}pts held=$held (device-limited, not counted);"
            say "  ${names[$i]} limiter: $(stats_brief "${names[$i]}")"
            continue
          fi ;;
    esac
    line="$line q=${qs[$i]} used=$used err=${err}pts held=$held;"
    SHARE_ERRS+=("$err")
    say "  ${names[$i]} limiter: $(stats_brief "${names[$i]}")"
  done
  say "share $label:${line%;}"
}

# max_of VALUES...: the largest, or na when any is na or none is given
max_of() {
  [ $# -gt 0 ] || { echo na; return; }
  case " $* " in *" na "*) echo na; return ;; esac
  printf '%s\n' "$@" | sort -g | tail -n1
}

# cleanup: everything this check started, then the temp dir (trap EXIT)
cleanup() {
  local p
  for p in $(jobs -p); do kill -KILL "$p" 2>/dev/null; done
  if [ -n "${MPS_ON:-}" ]; then
    echo quit | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
    MPS_ON=
  fi
  if [ -n "${TOKEND:-}" ]; then kill "$TOKEND" 2>/dev/null; wait "$TOKEND" 2>/dev/null; fi
  if [ -n "${GPU_CHECK_LOGS:-}" ]; then mkdir -p "$GPU_CHECK_LOGS" && cp -r "$T"/. "$GPU_CHECK_LOGS"/ 2>/dev/null; fi
  if [ -n "${GPU_CHECK_KEEP:-}" ]; then echo "gpu-check: kept $T" >&2; else rm -rf "$T"; fi
}
