// V8's sampling profiler for a process whose command line a benchmark owns (`--cpu-prof` is not
// allowed in NODE_OPTIONS): load it with `--import` and the profile of the whole process life is
// written at exit to /tmp/np-cpu.PID.cpuprofile, for `bench/support/profile-report.mjs`.
//
//   node --import tsx bench/campaign/run.ts --store sqlite \
//     "--node-options=--import $PWD/bench/support/cpu-profile-import.mjs"
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

/** Sampling interval, µs (V8's default is 1,000; finer costs the profiled process more). */
const SAMPLING_INTERVAL_US = 500;

const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
session.post('Profiler.start');

// A session on the process's own thread answers synchronously, so this works inside 'exit'.
process.on('exit', () => {
  session.post('Profiler.stop', (err, result) => {
    if (!err) writeFileSync(`/tmp/np-cpu.${process.pid}.cpuprofile`, JSON.stringify(result.profile));
  });
});
