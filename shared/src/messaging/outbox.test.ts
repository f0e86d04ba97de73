import net from 'node:net';
import { AckPolicy, DeliverPolicy } from 'nats';
import pg from 'pg';
import { eventually, startTestRelay, useTestPlatform } from '../testing';
import { enqueueEvent, outboxRow, startOutbox, type OutboxEvent } from './outbox';

const realQuery = pg.Client.prototype.query;

type Connection = pg.Client & { processID?: number };

/** Records every statement sent on a pg connection (the relay talks to Postgres through pg directly) until `restore()`. */
function recordQueries(): { sent: { connection: Connection; text: string }[]; restore(): void } {
  const sent: { connection: Connection; text: string }[] = [];
  const spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
    this: Connection,
    ...args: unknown[]
  ) {
    const first = args[0] as string | { text?: string };
    sent.push({ connection: this, text: typeof first === 'string' ? first : (first.text ?? '') });
    return realQuery.apply(this, args as never) as never;
  });
  return { sent, restore: () => spy.mockRestore() };
}

const platform = useTestPlatform();

async function published(): Promise<{ id: string; body: Record<string, unknown> }[]> {
  const durable = `probe_${Date.now()}`;
  await platform.nats.jsm.consumers.add(platform.nats.names.eventsStream, {
    durable_name: durable,
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
  });
  const consumer = await platform.nats.js.consumers.get(platform.nats.names.eventsStream, durable);
  const messages: { id: string; body: Record<string, unknown> }[] = [];
  const info = await platform.nats.jsm.streams.info(platform.nats.names.eventsStream);
  for (let i = 0; i < info.state.messages; i++) {
    const msg = await consumer.next({ expires: 1000 });
    if (msg) messages.push({ id: msg.headers?.get('Nats-Msg-Id') ?? '', body: msg.json() });
  }
  await platform.nats.jsm.consumers.delete(platform.nats.names.eventsStream, durable);
  return messages;
}
const publishedIds = async () => (await published()).map((m) => m.id);

/** An outbox row committed without waking anyone (as ingest writes them), and its event as published. */
async function written(subject: string, payload: Record<string, unknown>, agoMs = 0): Promise<OutboxEvent> {
  const row = outboxRow({ subject, payload });
  await platform.db('outbox').insert({
    ...row,
    payload: JSON.stringify(row.payload),
    created_at: platform.db.raw(`now() - make_interval(secs => ${agoMs / 1000})`),
  });
  return { event_id: row.event_id, subject, payload: JSON.stringify(row.payload), headers: row.headers };
}
const rowOf = (event: OutboxEvent) => platform.db('outbox').where({ event_id: event.event_id }).first();
/** A relay whose LISTEN connection is refused (as while disconnected), polling every 20 ms with a 60 s hold. */
const relayWithoutListen = () =>
  startOutbox({
    db: platform.db,
    nats: platform.nats,
    logger: platform.logger,
    relay: { databaseUrl: 'postgres://postgres@127.0.0.1:1/nowhere', pollMs: 20, holdMs: 60_000 },
  });

describe('outbox relay: publishing', () => {
  it('publishes committed events once, with the event id as Nats-Msg-Id, and nothing from rolled-back transactions', async () => {
    const committed = await platform.db.transaction((trx) =>
      enqueueEvent(trx, { subject: 'submission.created', payload: { n: 1 } }),
    );
    let rolledBack = '';
    await platform.db
      .transaction(async (trx) => {
        rolledBack = await enqueueEvent(trx, { subject: 'submission.created', payload: { n: 2 } });
        throw new Error('rollback');
      })
      .catch(() => undefined);
    expect(rolledBack).toMatch(/^evt_/);
    const relay = startTestRelay(platform);
    try {
      // published, then removed in the same transaction
      await eventually(async () => (await platform.db('outbox').where({ event_id: committed }).first()) === undefined);
      // a second drain finds nothing more to publish for it
      await relay.drain();
      const ids = await publishedIds();
      expect(ids.filter((id) => id === committed)).toHaveLength(1);
      expect(ids).not.toContain(rolledBack);
      // A second publish of the same event (a relay crash after publishing, before marking) is deduplicated by JetStream.
      const ack = await platform.nats.js.publish(platform.nats.names.subject('submission.created'), '{}', {
        msgID: committed,
      });
      expect(ack.duplicate).toBe(true);
    } finally {
      await relay.stop();
    }
  });

  it('publishes an event too large for NATS without its fields, drops one it cannot shrink, and goes on with the rest', async () => {
    const big = 'x'.repeat(1100 * 1024); // over the server's max_payload (1 MiB by default)
    const [large, hopeless, small] = await platform.db.transaction(async (trx) => [
      await enqueueEvent(trx, {
        subject: 'submission.created',
        payload: { submission_id: 'sub_large', payload: { essay: big } },
      }),
      await enqueueEvent(trx, { subject: 'submission.created', payload: { submission_id: 'sub_hopeless', note: big } }),
      await enqueueEvent(trx, {
        subject: 'submission.created',
        payload: { submission_id: 'sub_small', payload: { name: 'Ada' } },
      }),
    ]);
    const relay = startTestRelay(platform);
    try {
      await eventually(
        async () => (await platform.db('outbox').whereIn('event_id', [large, hopeless, small])).length === 0,
        { message: 'the three rows taken' },
      );
      const messages = await published();
      expect(messages.find((m) => m.id === large)?.body).toEqual({
        event_id: large,
        submission_id: 'sub_large',
        payload: {},
        payload_omitted: true,
      });
      expect(messages.find((m) => m.id === small)?.body).toEqual({
        event_id: small,
        submission_id: 'sub_small',
        payload: { name: 'Ada' },
      });
      expect(messages.map((m) => m.id)).not.toContain(hopeless);
    } finally {
      await relay.stop();
    }
  });
});

describe('outbox relay: what it could not publish or commit', () => {
  it('keeps what it could not publish, rolls its claim back and leaves the connection usable', async () => {
    // No stream takes this subject: JetStream refuses the publish, as it would while the stream is missing.
    const stuck = await platform.db.transaction((trx) => enqueueEvent(trx, { subject: 'nowhere.test', payload: {} }));
    const queries = recordQueries();
    const relay = startTestRelay(platform, 60_000);
    try {
      expect(await relay.drain()).toBe(0);
      expect(await relay.drain()).toBe(0);
      expect(await platform.db('outbox').where({ event_id: stuck }).first()).toBeDefined();
      // No transaction was left open on the connections the relay used (other suites share the database). The
      // relay's own drain at its start may be between its statements at the moment of a look, so a transaction
      // counts as left open only if it stays open.
      const claimers = new Set(
        queries.sent.filter((q) => q.text.includes('DELETE FROM outbox')).map((q) => Number(q.connection.processID)),
      );
      expect(claimers.size).toBeGreaterThan(0);
      const open = () =>
        platform
          .db('pg_stat_activity')
          .whereIn('pid', [...claimers])
          .whereIn('state', ['idle in transaction', 'idle in transaction (aborted)'])
          .select('pid', 'state');
      await eventually(async () => (await open()).length === 0, {
        timeoutMs: 5_000,
        message: 'no transaction left open on the relay’s connections',
      });
    } finally {
      queries.restore();
      await relay.stop();
      await platform.db('outbox').where({ event_id: stuck }).delete();
    }
  });

  it('keeps a batch whose connection broke before its commit, and publishes it once with the next', async () => {
    const event = await platform.db.transaction((trx) =>
      enqueueEvent(trx, { subject: 'submission.created', payload: { n: 4 } }),
    );
    // The first claim's server process is killed once its rows are claimed: its COMMIT and ROLLBACK both fail.
    let killed = false;
    const query = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(async function (
      this: Connection,
      ...args: unknown[]
    ) {
      const result = await (realQuery.apply(this, args as never) as unknown as Promise<unknown>);
      if (!killed && typeof args[0] === 'string' && args[0].includes('DELETE FROM outbox')) {
        killed = true;
        await platform.db.raw('SELECT pg_terminate_backend(?)', [Number(this.processID)]);
      }
      return result as never;
    });
    const relay = startTestRelay(platform, 60_000);
    try {
      await eventually(() => killed, { message: 'a claim was made' });
      query.mockRestore();
      await eventually(
        async () => {
          await relay.drain();
          return (await platform.db('outbox').where({ event_id: event }).first()) === undefined;
        },
        { message: 'published by a later batch' },
      );
      expect((await publishedIds()).filter((id) => id === event)).toHaveLength(1);
    } finally {
      query.mockRestore();
      await relay.stop();
    }
  });
});

describe('outbox relay: its commits and polls', () => {
  it('deletes what it published in a transaction that does not wait for the WAL flush', async () => {
    // A delete lost in a Postgres crash only publishes its events again, which JetStream drops by
    // their Nats-Msg-Id (the first test): so the relay's commits need not share ingest's flushes.
    const { sent, restore } = recordQueries();
    const event = await platform.db.transaction((trx) =>
      enqueueEvent(trx, { subject: 'submission.created', payload: { n: 3 } }),
    );
    const relay = startTestRelay(platform);
    try {
      await eventually(async () => (await platform.db('outbox').where({ event_id: event }).first()) === undefined);
    } finally {
      await relay.stop();
      restore();
    }
    const claims = sent.filter((q) => q.text.includes('DELETE FROM outbox'));
    expect(claims.length).toBeGreaterThan(0);
    for (const claim of claims) {
      // The claim opens its transaction and sets the commit's mode in the same round trip, before it deletes.
      const statements = claim.text.split(';').map((s) => s.trim());
      expect(statements.slice(0, 2)).toEqual(['BEGIN', 'SET LOCAL synchronous_commit = off']);
      // ... and the transaction ends on that connection with the next statement sent on it.
      const after = sent.slice(sent.indexOf(claim) + 1).find((q) => q.connection === claim.connection);
      expect(after?.text).toBe('COMMIT');
    }
  });

  it('leaves young rows to the process that wrote them: its poll takes only rows older than the hold, a wake takes all', async () => {
    const queries = recordQueries();
    // Its notifications cannot reach it: the poll alone takes rows.
    const relay = relayWithoutListen();
    try {
      await relay.drain(); // what earlier tests left
      const young = await written('submission.created', { n: 'young' });
      const old = await written('submission.created', { n: 'old' }, 61_000);
      const polls = () => queries.sent.filter((q) => q.text.includes('WHERE created_at < now()')).length;
      const pollsBefore = polls();
      await eventually(async () => (await rowOf(old)) === undefined, { message: 'the poll publishes the old row' });
      await eventually(async () => polls() >= pollsBefore + 3, { message: 'three more polls' });
      expect(await rowOf(young)).toBeDefined();
      expect(await publishedIds()).not.toContain(young.event_id);
      // A wake (NOTIFY) publishes every row, young ones too.
      await relay.drain();
      expect(await rowOf(young)).toBeUndefined();
      expect((await publishedIds()).filter((id) => id === young.event_id || id === old.event_id)).toHaveLength(2);
    } finally {
      queries.restore();
      await relay.stop();
    }
  });
});

describe('outbox relay: at its start, and from memory', () => {
  it('publishes at its start what was written before it, young rows too, though LISTEN is refused', async () => {
    const before = await written('submission.created', { n: 'before the relay' });
    const relay = relayWithoutListen();
    try {
      await eventually(async () => (await rowOf(before)) === undefined, { message: 'the start publishes the row' });
      expect((await publishedIds()).filter((id) => id === before.event_id)).toHaveLength(1);
    } finally {
      await relay.stop();
    }
  });

  it('publishes committed events from memory and removes their rows; an event it cannot publish keeps its row', async () => {
    const committed = startOutbox({ db: platform.db, nats: platform.nats, logger: platform.logger });
    const stuck = await written('nowhere.test', { n: 'stuck' });
    try {
      const events = [
        await written('submission.created', { n: 'one', text: 'ünïcode' }),
        await written('submission.created', { n: 'two' }),
      ];
      committed.publish(events);
      await eventually(
        async () =>
          (
            await platform.db('outbox').whereIn(
              'event_id',
              events.map((e) => e.event_id),
            )
          ).length === 0,
        {
          message: 'both rows removed',
        },
      );
      const messages = await published();
      for (const event of events) {
        const copies = messages.filter((m) => m.id === event.event_id);
        expect(copies).toHaveLength(1);
        expect(copies[0]?.body).toEqual(JSON.parse(event.payload));
      }
      // No stream takes this subject: JetStream refuses it, as while the stream is missing.
      committed.publish([stuck]);
    } finally {
      await committed.stop(); // waits for the publish in flight
    }
    expect(await rowOf(stuck)).toBeDefined();
    await platform.db('outbox').where({ event_id: stuck.event_id }).delete();
  });
});

describe('outbox: stopping', () => {
  it('stops while a batch waits for its turn behind one that could not be published', async () => {
    // Each round: a batch JetStream refuses (no stream takes its subject), a second waiting behind
    // it, and stop() asked for at a different moment, the pause between the two batches included.
    for (let round = 0; round < 16; round++) {
      const committed = startOutbox({ db: platform.db, nats: platform.nats, logger: platform.logger });
      const refused = await written('nowhere.test', { n: `refused ${round}` });
      const next = await written('submission.created', { n: `next ${round}` });
      committed.publish([refused]);
      committed.publish([next]);
      await new Promise((resolve) => setTimeout(resolve, round % 8));
      const stopped = await Promise.race([
        committed.stop().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000).unref()),
      ]);
      expect({ round, stopped }).toEqual({ round, stopped: true });
    }
    await platform.db('outbox').where({ subject: 'nowhere.test' }).delete();
  });
});

describe('outbox relay: while Postgres refuses its LISTEN connection', () => {
  it('tries again once per poll, not once more for every refusal', async () => {
    // A server that takes each connection and closes it at once, as Postgres does with
    // "too many clients": the client's connect fails and the client ends, both at once.
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const pollMs = 20;
    const started = Date.now();
    const relay = startOutbox({
      db: platform.db,
      nats: platform.nats,
      logger: platform.logger,
      relay: { databaseUrl: `postgres://postgres@127.0.0.1:${port}/refused`, pollMs, holdMs: 60_000 },
    });
    try {
      await eventually(() => connections >= 10, { message: 'ten tries' });
      const polls = (Date.now() - started) / pollMs;
      expect(connections).toBeLessThanOrEqual(polls + 2);
    } finally {
      await relay.stop();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
