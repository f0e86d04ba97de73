import { type Db, type Logger } from '@intake/shared/base';
import { addRefusals } from './refusals.repository';

/**
 * The posts ingest refused with 429 rate-limited, counted per form and UTC day for its owner
 * (`rate_limit_refusals`): added up in the process and written once a second in one statement,
 * so a flood of refused posts costs Postgres one upsert a second, not one per post. A form
 * deleted meanwhile is skipped. What a process had not written when it stops is written by `stop`.
 */
export class RefusalCounter {
  private pending = new Map<string, { refused: number; last: Date }>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly everyMs = 1000,
  ) {}

  /** One refused post of `formId` at `at`. */
  add(formId: string, at: Date): void {
    const key = `${formId} ${at.toISOString().slice(0, 10)}`;
    const counted = this.pending.get(key);
    if (counted) {
      counted.refused += 1;
      if (at > counted.last) counted.last = at;
    } else this.pending.set(key, { refused: 1, last: at });
    this.timer ??= setTimeout(() => void this.flush(), this.everyMs).unref();
  }

  /** Writes what was counted (one write at a time); a failed write is logged and its counts dropped. */
  flush(): Promise<void> {
    this.timer = undefined;
    const rows = [...this.pending];
    this.pending = new Map();
    if (rows.length === 0) return this.writing;
    this.writing = this.writing.then(() =>
      addRefusals(this.db, rows).then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err, forms: rows.length }, 'could not count refused posts'),
      ),
    );
    return this.writing;
  }

  /** Writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.flush();
  }
}
