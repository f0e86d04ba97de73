import type { Logger } from '../base/logger';
import type { Worker } from './platform';

/**
 * Runs `task` every `intervalMs` without overlapping runs (a tick while one runs is skipped); a failure is logged as
 * `failure` and retried at the next tick. `stop()` ends the timer and waits for a run in progress.
 */
export function startPeriodic(props: {
  intervalMs: number;
  logger: Logger;
  failure: string;
  task: () => Promise<unknown>;
}): Worker {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= props
      .task()
      .catch((err) => props.logger.warn({ err }, props.failure))
      .finally(() => (running = undefined));
  }, props.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
