// A node:test reporter that writes one JSON line per finished test (file, name, pass, fail or
// skip, and for a failure its first error line, for a skip its reason; a skipped suite is one
// line, since its tests never run), for scripts/run-tests.mjs to summarise after the run and
// for scripts/test-stress.mjs to count per file. The human-readable output stays the spec reporter's.
export default async function* outcomes(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    // A suite that failed only because a test inside it failed adds nothing to the summary.
    if (event.type === 'test:fail' && data.details?.error?.failureType === 'subtestsFailed') continue;
    if (data.details?.type === 'suite' && !data.skip) continue;
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
    if (line.outcome === 'skip' && typeof data.skip === 'string') line.reason = data.skip.slice(0, 300);
    yield `${JSON.stringify(line)}\n`;
  }
}
