/** The parent side of `fcm-fake-process.ts`: start the FCM fake in a child process and talk to it. */
import { fork } from 'node:child_process';

export interface FcmFakeProcess {
  baseUrl: string;
  credentialsPath: string;
  /** The fake's process id (to read its CPU time). */
  pid: number;
  /** Every message the fake accepted: `[eventId, token, receivedAtMs]`, and the peak stream count. */
  report(): Promise<{ received: Array<[string, string, number]>; peakStreams: number }>;
  /** How many messages the fake accepted so far (a progress poll without the report's megabytes). */
  accepted(): Promise<number>;
  stop(): Promise<void>;
}

export async function startFcmFakeProcess(latencyMs: number, credentialsDir: string): Promise<FcmFakeProcess> {
  const child = fork(new URL('./fcm-fake-process.ts', import.meta.url), [String(latencyMs), credentialsDir], {
    execArgv: ['--import', 'tsx'],
  });
  const ready = await new Promise<{ baseUrl: string; credentialsPath: string }>((resolve) =>
    child.once('message', (m: { ready: { baseUrl: string; credentialsPath: string } }) => resolve(m.ready)),
  );
  return {
    ...ready,
    pid: child.pid as number,
    report: () =>
      new Promise((resolve) => {
        child.once('message', (m: { received: Array<[string, string, number]>; peakStreams: number }) => resolve(m));
        child.send({ report: true });
      }),
    accepted: () =>
      new Promise((resolve) => {
        child.once('message', (m: { accepted: number }) => resolve(m.accepted));
        child.send({ count: true });
      }),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ stop: true });
      }),
  };
}
