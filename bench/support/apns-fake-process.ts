/**
 * The APNs fake in a process of its own (like `fcm-fake-process.ts`), so a benchmark's client and
 * the fake do not share one event loop. IPC:
 *   child → `{ ready: { baseUrl, keyPath, keyId, teamId, bundleId } }`
 *   parent → `{ report: true }`   child → `{ accepted, requests, providerTokensSeen }`
 *   parent → `{ stop: true }`     child exits
 * Usage: fork this file with argv [latencyMs, keyDir] and `--import tsx`.
 */
import { startApnsFake } from '../../test/support/apns-fake.ts';

const [latency = '20', dir = '/tmp'] = process.argv.slice(2);
const fake = await startApnsFake({ latencyMs: Number(latency), record: 'summary' });
const keyPath = fake.writeKey(dir);
process.send?.({ ready: { baseUrl: fake.baseUrl, keyPath, keyId: fake.keyId, teamId: fake.teamId, bundleId: fake.bundleId } });

async function handle(message: { report?: boolean; stop?: boolean }): Promise<void> {
  if (message.report) {
    process.send?.({ accepted: fake.stats.accepted, requests: fake.stats.requests, providerTokensSeen: fake.stats.providerTokensSeen });
  }
  if (message.stop) {
    await fake.stop();
    process.exit(0);
  }
}

process.on('message', (message: { report?: boolean; stop?: boolean }) => {
  void handle(message);
});
