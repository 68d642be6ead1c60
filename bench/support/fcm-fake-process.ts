/**
 * The FCM fake in a process of its own, so a benchmark's service and its fake provider do not
 * share one event loop. The parent talks to it over IPC:
 *   child → `{ ready: { baseUrl, credentialsPath } }`
 *   parent → `{ report: true }`   child → `{ received: Array<[eventId, token, receivedAtMs]> }`
 *   parent → `{ count: true }`    child → `{ accepted: number }` (a cheap progress poll: a report
 *                                 of 100,000 messages is megabytes of IPC JSON each time)
 *   parent → `{ stop: true }`     child exits
 * Usage: fork this file with argv [latencyMs, credentialsDir] and `--import tsx`.
 */
import { startFcmFake } from '../../test/support/fcm-fake.ts';

const [latency = '20', dir = '/tmp'] = process.argv.slice(2);
const fake = await startFcmFake({ latencyMs: Number(latency), record: 'summary' });
const credentialsPath = fake.writeCredentials(dir);
process.send?.({ ready: { baseUrl: fake.baseUrl, credentialsPath } });

async function onMessage(message: { report?: boolean; count?: boolean; stop?: boolean }): Promise<void> {
  if (message.count) process.send?.({ accepted: fake.summaries.length });
  if (message.report) {
    process.send?.({ received: fake.summaries, peakStreams: fake.stats.peakConcurrentSendStreams });
  }
  if (message.stop) {
    await fake.stop();
    process.exit(0);
  }
}

process.on('message', (message: { report?: boolean; count?: boolean; stop?: boolean }) => void onMessage(message));
