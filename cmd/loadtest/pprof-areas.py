#!/usr/bin/env python3
"""pprof-areas.py TRACES [-v]: the percent of a server CPU profile's samples
in each area (handler parts, store writer, runtime scheduler, net/http,
socket syscalls, GC, ...), each sample put in the first area whose test
its stack meets (BENCHMARKS.md, "Service CPU outside the handler").
TRACES is the text of `go tool pprof -traces PROFILE`; -v also prints the
heaviest leaf frames of each area.
"""
import collections
import re
import sys


def samples(path):
    """Yields (milliseconds, [frame, ...] leaf first) for each sample."""
    cur = None
    for line in open(path):
        if line.startswith('-----------+'):
            if cur:
                yield cur
            cur = None
            continue
        m = re.match(r'^\s+([\d.]+)(ms|s|us)\s+(\S.*)$', line)
        if m and cur is None:
            v = float(m.group(1)) * {'ms': 1, 's': 1000, 'us': 0.001}[m.group(2)]
            cur = [v, [m.group(3).replace(' (inline)', '')]]
        elif cur is not None and line.strip():
            cur[1].append(line.strip().replace(' (inline)', ''))
    if cur:
        yield cur


def has(stack, *subs):
    return any(s in f for f in stack for s in subs)


GC = ('runtime.gcBgMarkWorker', 'runtime.bgsweep', 'runtime.bgscavenge', 'runtime.gcAssistAlloc',
      'runtime.gcStart', 'runtime.gcMarkDone', 'runtime.gcMarkTermination', 'runtime.(*sweepLocked).sweep',
      'runtime.sweepone', 'runtime.deductSweepCredit')
SCHED = ('runtime.mcall', 'runtime.schedule', 'runtime.findRunnable', 'runtime.sysmon', 'runtime.mstart0',
         'runtime.wakep', 'runtime.startm', 'runtime.notewakeup', 'runtime.ready', 'runtime.goready',
         'runtime.gopark', 'runtime.netpoll', 'runtime.exitsyscall', 'runtime.entersyscall',
         'runtime.reentersyscall', 'runtime.morestack', 'runtime.newproc', 'runtime.goexit0',
         'runtime.injectglist', 'runtime.handoffp', 'runtime.retake')
SOCKET = ('syscall.write', 'syscall.read', 'internal/poll', 'EpollWait')


def area(st):
    if has(st, *GC):
        return 'gc (mark, sweep, assists)'
    if has(st, *SCHED):
        return 'runtime scheduler (park/wake/futex/netpoll/syscall enter-exit)'
    if has(st, 'go.uber.org/zap'):
        return 'logging (zap)'
    if has(st, 'prometheus'):
        return 'metrics (prometheus)'
    if has(st, 'internal/store.', 'jackc/pgx', 'jackc/puddle'):
        return 'store writer + pgx'
    if has(st, 'api.(*Server).createEvaluation'):
        if has(st, *SOCKET):
            return 'socket read/write syscalls'
        if has(st, 'api.(*Server).readBody'):
            return 'handler: read body'
        if has(st, 'engine.Evaluate'):
            return 'handler: engine.Evaluate'
        if has(st, 'format.'):
            return 'handler: trace format parse'
        if has(st, 'contractCache).parseBody', 'jsondoc.Parse'):
            return 'handler: request parse'
        if has(st, 'resultjson', 'api.writeEvaluation', 'api.sendWhole', 'appendJSON', 'encode'):
            return 'handler: encode/answer'
        return 'handler: other'
    if has(st, *SOCKET):
        return 'socket read/write syscalls'
    if has(st, 'net/http', 'bufio', 'net/textproto'):
        return 'net/http (outside handler)'
    if has(st, 'runtime.mallocgc', 'runtime.memclr'):
        return 'malloc (other)'
    return 'other'


def main():
    tot = collections.Counter()
    leaves = collections.defaultdict(collections.Counter)
    for v, st in samples(sys.argv[1]):
        a = area(st)
        tot[a] += v
        leaves[a][st[0] + ' <- ' + (st[1] if len(st) > 1 else '')] += v
    s = sum(tot.values())
    print(f'total {s / 1000:.2f}s')
    for a, v in tot.most_common():
        print(f'{100 * v / s:5.1f}%  {a}')
        if '-v' in sys.argv:
            for f, w in leaves[a].most_common(6):
                print(f'        {100 * w / s:4.1f}% {f}')


if __name__ == '__main__':
    main()
