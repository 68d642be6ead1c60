// A node:test reporter that writes one JSON line per finished test (file, name, pass or fail, and
// for a failure its first error line), for scripts/run-tests.mjs to summarise after the run and
// for scripts/test-stress.mjs to count per file. The human-readable output stays the spec reporter's.
export default async function* outcomes(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    // A suite that failed only because a test inside it failed adds nothing to the summary.
    if (event.type === 'test:fail' && data.details?.error?.failureType === 'subtestsFailed') continue;
    if (data.details?.type === 'suite') continue;
    const line = {
      file: data.file ?? null,
      line: data.line ?? null,
      name: data.name,
      outcome: event.type === 'test:pass' ? (data.skip ? 'skip' : 'pass') : 'fail',
    };
    if (line.outcome === 'fail') {
      const error = data.details?.error;
      const cause = error?.cause ?? error;
      line.error = String(cause?.message ?? cause ?? 'failed')
        .split('\n')[0]
        .slice(0, 300);
    }
    yield `${JSON.stringify(line)}\n`;
  }
}
