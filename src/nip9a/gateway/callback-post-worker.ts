/**
 * Worker thread body of {@link CallbackPostThreads}: the callback POSTs of the gateway through
 * this thread's own undici dispatcher (callback-post.ts, so the request is the same on either
 * side of the setting). Receives arrays of `{ id, url, body, timeoutMs }` and answers
 * `{ answers: [{ id, result }] }` with the POSTs finished in one turn, in the order they finished.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createCallbackPoster, type AttemptResult } from './callback-post.ts';
import type { ThreadPostAnswers, ThreadPostRequest } from './callback-post-threads.ts';

const { connectionsPerOrigin, allowLoopback } = workerData as { connectionsPerOrigin: number; allowLoopback: boolean };
const poster = createCallbackPoster({ connectionsPerOrigin, allowLoopback });
let finished: ThreadPostAnswers['answers'] = [];
let answerScheduled = false;

function answer(id: number, result: AttemptResult): void {
  finished.push({ id, result });
  if (answerScheduled) return;
  answerScheduled = true;
  setImmediate(() => {
    answerScheduled = false;
    const answers = finished;
    finished = [];
    parentPort?.postMessage({ answers } satisfies ThreadPostAnswers);
  });
}

parentPort?.on('message', (requests: ThreadPostRequest[]) => {
  for (const { id, url, body, timeoutMs } of requests) {
    // `post` never rejects (every failure is a result); the catch keeps a bug from going silent.
    poster.post(url, body, timeoutMs).then(
      (result) => answer(id, result),
      (err: unknown) => answer(id, { kind: 'network', message: err instanceof Error ? err.message : String(err) }),
    );
  }
});
