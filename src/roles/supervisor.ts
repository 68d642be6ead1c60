import { setMaxListeners } from 'node:events';
import type { Logger } from '../observability/logger.ts';

/**
 * How a task's exit is judged (divine's `TaskExitGuard`, reference §12):
 * - `critical`: it must run until shutdown. Its death marks its health flag dead (so `/health`
 *   answers 503) and stops the process with exit status 1, so an orchestrator restarts it.
 * - `fatal`: not reported in `/health`, but an unexpected exit still stops the process with status 1.
 * - `tolerated`: may return early (a disabled cleanup task); a throw still stops the process.
 */
export type TaskKind = 'critical' | 'fatal' | 'tolerated';

/** A long-running task: resolves when it has stopped; must stop soon after `signal` aborts. */
export type TaskBody = (signal: AbortSignal) => Promise<void>;

export interface TaskStatus {
  name: string;
  kind: TaskKind;
  alive: boolean;
  error?: string;
}

/**
 * Runs the tasks of the roles a process hosts and decides what each exit means. The process-level
 * reaction (exit 1) belongs to the caller: {@link Supervisor.stopped} resolves with whether an
 * unexpected exit happened.
 */
export class Supervisor {
  private readonly controller = new AbortController();
  private readonly tasks = new Map<string, TaskStatus>();
  private readonly running = new Set<Promise<void>>();
  private unexpected = false;
  private resolveStopped!: (unexpected: boolean) => void;
  /** Resolves once shutdown began (requested or forced by a task failure), with `unexpectedExit`. */
  readonly stopped: Promise<boolean> = new Promise((resolve) => (this.resolveStopped = resolve));

  constructor(private readonly logger: Logger) {
    // Every task's waits listen on this one signal (each wait removes its listener when it ends),
    // so a process with a dozen tasks has a dozen listeners at once: not the leak Node's default
    // warning at 11 suspects.
    setMaxListeners(0, this.controller.signal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get unexpectedExit(): boolean {
    return this.unexpected;
  }

  /** Start a task. Names are unique; a critical task's name is its `/health` flag. */
  spawn(name: string, kind: TaskKind, body: TaskBody): void {
    if (this.tasks.has(name)) throw new Error(`task ${name} already running`);
    const status: TaskStatus = { name, kind, alive: true };
    this.tasks.set(name, status);
    const run = (async () => {
      try {
        await body(this.controller.signal);
        if (this.controller.signal.aborted || kind === 'tolerated') {
          this.logger.debug({ task: name }, 'task stopped');
          return;
        }
        this.fail(status, new Error('exited before shutdown was requested'));
      } catch (err) {
        if (this.controller.signal.aborted && isAbort(err)) return;
        this.fail(status, err);
      }
    })();
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /**
   * This supervisor as seen by one app's roles (tenancy): the same tasks, signal and shutdown,
   * but every task it spawns is named `{name}@{scope}`, so two apps' tasks of one kind sit side
   * by side (and `/health` names the app of a dead one).
   */
  scoped(scope: string): Supervisor {
    const view = Object.create(this) as Supervisor;
    view.spawn = (name, kind, body) => this.spawn(`${name}@${scope}`, kind, body);
    return view;
  }

  private fail(status: TaskStatus, err: unknown): void {
    if (status.kind === 'critical') status.alive = false;
    status.error = err instanceof Error ? err.message : String(err);
    this.unexpected = true;
    this.logger.error({ task: status.name, err: status.error }, 'task died; stopping the service');
    this.shutdown();
  }

  /** Ask every task to stop. Idempotent. */
  shutdown(): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    this.resolveStopped(this.unexpected);
  }

  /** Wait (bounded) for every task to finish after {@link shutdown}. */
  async join(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.logger.warn(
          {
            tasks: this.list()
              .filter((t) => t.alive)
              .map((t) => t.name),
          },
          'tasks still running at shutdown deadline',
        );
        resolve();
      }, timeoutMs);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.running]).then(() => undefined), timeout]);
    clearTimeout(timer);
  }

  list(): TaskStatus[] {
    return [...this.tasks.values()].map((t) => ({ ...t }));
  }

  /** Health flags of critical tasks, by task name. */
  criticalFlags(): Record<string, boolean> {
    const flags: Record<string, boolean> = {};
    for (const t of this.tasks.values()) if (t.kind === 'critical') flags[t.name] = t.alive;
    return flags;
  }
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.message === 'aborted');
}
