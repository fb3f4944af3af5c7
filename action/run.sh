#!/usr/bin/env bash
# The grading step of the toolscore GitHub Action (../action.yml). It reads
# the action's inputs from INPUT_* variables (as action.yml maps them), runs
# toolscore eval (expectation and traces) or toolscore harness (suite), saves
# the JSON results, appends the Markdown report to $GITHUB_STEP_SUMMARY,
# sets the step's outputs in $GITHUB_OUTPUT, and exits with toolscore's
# status: 0 pass, 1 FAIL (or, with a baseline, a regression), 2 error.
# action/action_test.go runs it as a runner would.
set -uo pipefail

ts=${TOOLSCORE_BIN:-toolscore}
results=${INPUT_RESULTS:-toolscore-results.json}
markdown=${INPUT_MARKDOWN:-toolscore-report.md}
html=${INPUT_HTML:-}
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT

args=(--markdown "$markdown")
[ -n "$html" ] && args+=(--html "$html")
if [ -n "${INPUT_BASELINE:-}" ]; then
  args+=(--baseline "$INPUT_BASELINE")
  [ -n "${INPUT_MAX_DROP:-}" ] && args+=(--max-drop "$INPUT_MAX_DROP")
fi

usage() {
  echo "toolscore: $1" >"$errors"
  status=2
}

status=0
rm -f "$markdown"
if [ -n "${INPUT_SUITE:-}" ]; then
  agents=0
  [ -n "${INPUT_AGENT_COMMAND:-}" ] && { args+=(--agent-cmd "$INPUT_AGENT_COMMAND"); agents=$((agents + 1)); }
  [ -n "${INPUT_AGENT_URL:-}" ] && { args+=(--agent-url "$INPUT_AGENT_URL"); agents=$((agents + 1)); }
  [ -n "${INPUT_RECORDED_TRACES:-}" ] && { args+=(--traces "$INPUT_RECORDED_TRACES"); agents=$((agents + 1)); }
  if [ "$agents" -ne 1 ]; then
    usage "the suite input needs exactly one of agent-command, agent-url and recorded-traces"
  elif [ -n "${INPUT_MIN_SCORE:-}" ]; then
    usage "min-score is for eval: a suite gives each task's passing score"
  else
    "$ts" harness "$INPUT_SUITE" --json "${args[@]}" >"$results" 2>"$errors"
    status=$?
  fi
elif [ -z "${INPUT_EXPECTATION:-}" ] || [ -z "${INPUT_TRACES//[[:space:]]/}" ]; then
  usage "give the expectation and traces inputs (eval), or suite (harness)"
else
  [ -n "${INPUT_MIN_SCORE:-}" ] && args+=(--min-score "$INPUT_MIN_SCORE")
  [ "${INPUT_EACH_LINE:-false}" = true ] && args+=(--each-line)
  args+=(--format "${INPUT_FORMAT:-auto}")
  # One path per line: a line that names an existing file or directory as
  # a whole is that path (it may hold spaces); any other line is split at
  # white space. Patterns are not expanded.
  traces=()
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line#"${line%%[![:space:]]*}"}
    line=${line%"${line##*[![:space:]]}"}
    if [ -z "$line" ]; then
      continue
    elif [ -e "$line" ]; then
      traces+=("$line")
    else
      set -f
      # shellcheck disable=SC2206
      words=($line)
      set +f
      traces+=("${words[@]}")
    fi
  done <<<"$INPUT_TRACES"
  "$ts" eval --json "${args[@]}" "$INPUT_EXPECTATION" "${traces[@]}" >"$results" 2>"$errors"
  status=$?
fi
# What toolscore printed comes from traces and files: the runner reads no
# workflow command in it.
stop=toolscore-$$-$RANDOM$RANDOM
verbatim() {
  echo "::stop-commands::$stop"
  cat "$@"
  echo "::$stop::"
}
verbatim "$errors" >&2

case $status in
  0) verdict=pass ;;
  1) verdict=fail ;;
  *) verdict=error ;;
esac

summary=${GITHUB_STEP_SUMMARY:-/dev/null}
if [ -s "$markdown" ]; then
  cat "$markdown" >>"$summary"
  echo "::group::toolscore report"
  verbatim "$markdown"
  echo "::endgroup::"
fi
if [ "$verdict" = error ]; then
  {
    # A fence longer than any run of backticks in the errors.
    fence='```'
    while grep -qF -- "$fence" "$errors"; do fence="$fence\`"; done
    echo "## toolscore: error"
    echo
    echo "$fence"
    cat "$errors"
    echo "$fence"
  } >>"$summary"
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "verdict=$verdict"
    echo "exit-code=$status"
    echo "results=$results"
  } >>"$GITHUB_OUTPUT"
fi

case $verdict in
  pass) echo "toolscore: PASS" ;;
  fail)
    if [ -n "${INPUT_BASELINE:-}" ]; then
      echo "::error title=toolscore::a regression against the baseline ${INPUT_BASELINE} (see the job summary)"
    else
      echo "::error title=toolscore::FAIL (see the job summary)"
    fi
    ;;
  error)
    # The message's %, CR and LF escaped as workflow commands want them.
    message=$(head -n 1 "$errors")
    message=${message//'%'/'%25'}
    message=${message//$'\r'/'%0D'}
    echo "::error title=toolscore::${message//$'\n'/'%0A'}"
    ;;
esac
exit "$status"
