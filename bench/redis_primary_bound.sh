# One sale, one primary: the hold filters' Lua TAKE and the gate's SET NX against one redis-server
# (docs/performance.md, capacity model). Run from the repository root under
# flock /work/wt/bench.lock bash bench/redis_primary_bound.sh
set -e
D=$(mktemp -d); P=27311
redis-server --port $P --bind 127.0.0.1 --save "" --appendonly no --dir $D --daemonize no >/dev/null 2>&1 &
PID=$!; sleep 0.5
redis-cli -p $P HSET "hold:b:{41}:left:ECONOMY" n 100000000 at 0 pending 0 >/dev/null
SHA=$(redis-cli -p $P SCRIPT LOAD "$(.venv/bin/python -c 'from bookings.availability_scripts import TAKE; print(TAKE)' 2>/dev/null || python3 -c 'import sys; sys.path.insert(0,"."); exec(open("bookings/availability_scripts.py").read()); print(TAKE)')")
echo "TAKE sha $SHA"
redis-benchmark -p $P -n 200000 -c 50 -P 1 -q EVALSHA $SHA 1 "hold:b:{41}:left:ECONOMY" 1
redis-benchmark -p $P -n 200000 -c 50 -P 1 -q SET "hold:b:{41}:seat:__rand_int__" x PX 15000 NX
kill $PID; rm -rf $D
