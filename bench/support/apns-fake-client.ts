/** The parent side of `apns-fake-process.ts`: start the APNs fake in a child process and talk to it. */
import { fork } from 'node:child_process';

export interface ApnsFakeProcess {
  baseUrl: string;
  keyPath: string;
  keyId: string;
  teamId: string;
  bundleId: string;
  pid: number;
  report(): Promise<{ accepted: number; requests: number; providerTokensSeen: number }>;
  stop(): Promise<void>;
}

type Ready = Omit<ApnsFakeProcess, 'pid' | 'report' | 'stop'>;

export async function startApnsFakeProcess(latencyMs: number, keyDir: string): Promise<ApnsFakeProcess> {
  const child = fork(new URL('./apns-fake-process.ts', import.meta.url), [String(latencyMs), keyDir], { execArgv: ['--import', 'tsx'] });
  const ready = await new Promise<Ready>((resolve) => child.once('message', (m: { ready: Ready }) => resolve(m.ready)));
  return {
    ...ready,
    pid: child.pid as number,
    report: () =>
      new Promise((resolve) => {
        child.once('message', (m: { accepted: number; requests: number; providerTokensSeen: number }) => resolve(m));
        child.send({ report: true });
      }),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ stop: true });
      }),
  };
}
