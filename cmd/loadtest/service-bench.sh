#!/usr/bin/env bash
# service-bench.sh measures stored evaluations against one or more server
# binaries, alternating them in the same minutes (BENCHMARKS.md, issue 13):
# for each round and each binary it creates a fresh database, makes an
# ingest key, starts the server, runs cmd/loadtest with -pid and -pg-db
# (CPU per request of server, Postgres and load generator, throughput,
# p50/p90/p99, status codes), counts the stored results and the CPU per
# stored result, stops the server and drops the database.
#
#	go build -o /tmp/old-server ./cmd/server   # in the old checkout
#	go build -o /tmp/new-server ./cmd/server
#	go build -o /tmp/loadtest ./cmd/loadtest
#	go build -o /tmp/toolscore ./cmd/toolscore
#	cmd/loadtest/service-bench.sh -r 3 old=/tmp/old-server new=/tmp/new-server -- -rate 2000 -duration 20s
#
# Options: -r ROUNDS (default 3); -l LOADTEST binary (default
# /tmp/loadtest); -t TOOLSCORE CLI binary (default /tmp/toolscore); -p
# PGURL base (default postgres://postgres@127.0.0.1:5432); -a ADDR
# (default 127.0.0.1:18080). Arguments after -- go to the load test
# (-url and -pid are set by the script). Each line of output is
# "LABEL round N: " and the load test's report, preceded by the load
# average.
set -euo pipefail

rounds=3
loadtest=/tmp/loadtest
cli=/tmp/toolscore
pg=postgres://postgres@127.0.0.1:5432
addr=127.0.0.1:18080
while getopts "r:l:t:p:a:" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	l) loadtest=$OPTARG ;;
	t) cli=$OPTARG ;;
	p) pg=$OPTARG ;;
	a) addr=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
servers=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	servers+=("$1")
	shift
done
[ $# -gt 0 ] && shift
if [ ${#servers[@]} -eq 0 ]; then
	echo "usage: $0 [-r ROUNDS] LABEL=SERVER_BINARY... -- LOADTEST_ARGS" >&2
	exit 2
fi

pid=
db=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ -n "$db" ]; then
		psql "$pg/postgres?sslmode=disable" -qAtc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
	fi
	pid= db=
}
trap cleanup EXIT

for round in $(seq 1 "$rounds"); do
	for s in "${servers[@]}"; do
		label=${s%%=*} bin=${s#*=}
		if curl -fsS "http://$addr/healthz" >/dev/null 2>&1; then
			echo "$0: something already serves $addr; stop it or pass -a" >&2
			exit 1
		fi
		db=svcbench_$$_${round}_${label//[^a-zA-Z0-9]/_}
		psql "$pg/postgres?sslmode=disable" -qAtc "CREATE DATABASE $db" >/dev/null
		url="$pg/$db?sslmode=disable"
		key=$(DATABASE_URL=$url "$cli" keys create --project default --scope ingest,read,contracts:write --name bench 2>/dev/null)
		DATABASE_URL=$url TOOLSCORE_ADDR=$addr TOOLSCORE_LOG_LEVEL=warn "$bin" >"/tmp/svcbench_$$.log" 2>&1 &
		pid=$!
		for _ in $(seq 1 100); do
			curl -fsS "http://$addr/readyz" >/dev/null 2>&1 && break
			sleep 0.1
		done
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		out=$(TOOLSCORE_API_KEY=$key "$loadtest" -url "http://$addr" -pid "$pid" -pg-db "$db" "$@" | tail -n 1)
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "$0: $label exited; its log:" >&2
			cat "/tmp/svcbench_$$.log" >&2
			exit 1
		fi
		rows=$(psql "$url" -qAtc "SELECT count(*) FROM results")
		# CPU per stored result: requests that timed out on the client
		# may still have been graded and stored, and refused ones cost
		# little, so per request understates a run that was overloaded.
		per_row=$(echo "$out" | awk -v rows="$rows" '{
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^requests=/) { split($i, a, "="); n = a[2] }
				if ($i ~ /^(server|postgres|loadgen)=[0-9]+us$/) { split($i, a, "="); sub(/us$/, "", a[2]); c[a[1]] = a[2] }
			}
			if (rows > 0 && n > 0) printf "cpu_per_stored: server=%.0fus postgres=%.0fus loadgen=%.0fus", c["server"]*n/rows, c["postgres"]*n/rows, c["loadgen"]*n/rows
		}')
		echo "$label round $round (load $load): $out stored_rows=$rows $per_row"
		cleanup
	done
done
