// Times every better-sqlite3 statement of a process, per SQL text: calls, total and mean wall
// time (a statement runs on the main thread, so this is the main thread's time in SQLite, the
// timer's own overhead of ~1 µs a call included). Load it into a service with `--import`:
//
//   node --import tsx bench/campaign/run.ts --store sqlite \
//     "--node-options=--import $PWD/bench/support/sqlite-statement-timer.mjs"
//
// The table is written when the process exits, to /tmp/np-sqlite-statements.PID.txt, the
// statements sorted by total time. A transaction function's BEGIN/COMMIT/SAVEPOINT statements
// are prepared inside better-sqlite3 and do not pass through here; the group commit's
// `BEGIN IMMEDIATE` and `COMMIT` (src/store/sqlite/group-commit.ts) are ordinary statements and do.
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';

const probe = new Database(':memory:');
const Statement = Object.getPrototypeOf(probe.prepare('SELECT 1'));
probe.close();

/** SQL text (whitespace collapsed, cut) → { calls, ns }. */
const totals = new Map();
const startedNs = process.hrtime.bigint();

for (const method of ['run', 'get', 'all', 'iterate']) {
  const original = Statement[method];
  Statement[method] = function timed(...args) {
    const t = process.hrtime.bigint();
    try {
      return original.apply(this, args);
    } finally {
      const ns = process.hrtime.bigint() - t;
      const key = `${method} ${this.source.replace(/\s+/g, ' ').trim().slice(0, 140)}`;
      const entry = totals.get(key);
      if (entry) {
        entry.calls += 1;
        entry.ns += ns;
      } else totals.set(key, { calls: 1, ns });
    }
  };
}

process.on('exit', () => {
  const rows = [...totals].sort((a, b) => Number(b[1].ns - a[1].ns));
  const allNs = rows.reduce((sum, [, e]) => sum + e.ns, 0n);
  const lines = [
    `process ${process.pid}: ${(Number(process.hrtime.bigint() - startedNs) / 1e9).toFixed(1)} s alive, ` +
      `${(Number(allNs) / 1e9).toFixed(2)} s in statements`,
    'total ms    calls      µs/call  statement',
    ...rows.map(
      ([key, e]) =>
        `${(Number(e.ns) / 1e6).toFixed(0).padStart(8)} ${String(e.calls).padStart(9)} ${(Number(e.ns) / 1e3 / e.calls).toFixed(1).padStart(10)}  ${key}`,
    ),
  ];
  writeFileSync(`/tmp/np-sqlite-statements.${process.pid}.txt`, `${lines.join('\n')}\n`);
});
